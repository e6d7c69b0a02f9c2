package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/testserver"
	"github.com/cairn-store/cairn/internal/transfer"
)

func TestClientSplitObject(t *testing.T) {
	for _, tc := range []struct{ arg, bucket, key, protocol string }{
		{"b", "b", "", "s3"},
		{"b/", "b", "", "s3"},
		{"b/k", "b", "k", "s3"},
		{"b/dir/k/", "b", "dir/k/", "s3"},
		{"b//k", "b", "/k", "s3"},
		{"s3://b/k", "b", "k", "s3"},
		{"swift://b/dir/k", "b", "dir/k", "swift"},
		{"s3x://b/k", "s3x:", "/b/k", "s3"}, // not a scheme of ours: a bucket name, refused by the store
	} {
		var conn connFlags
		cmd := &cobra.Command{}
		conn.register(cmd.Flags())
		bucket, key, err := conn.splitObject(cmd, tc.arg)
		if err != nil || bucket != tc.bucket || key != tc.key || conn.cfg.Protocol != tc.protocol {
			t.Errorf("splitObject(%q) = %q, %q, %v, protocol %s", tc.arg, bucket, key, err, conn.cfg.Protocol)
		}
	}
	for _, bad := range []string{"/k", "s3://", "s3:///k"} {
		var conn connFlags
		cmd := &cobra.Command{}
		conn.register(cmd.Flags())
		if _, _, err := conn.splitObject(cmd, bad); err == nil {
			t.Errorf("splitObject(%q): want an error", bad)
		}
	}
	// A URL's scheme against an explicit --protocol.
	var conn connFlags
	cmd := &cobra.Command{}
	conn.register(cmd.Flags())
	cmd.Flags().Set("protocol", "swift")
	if _, _, err := conn.splitObject(cmd, "s3://b/k"); err == nil || !strings.Contains(err.Error(), "is a s3 URL, but --protocol") {
		t.Errorf("s3:// with --protocol swift: %v", err)
	}
}

// put, ls, get, mb and rb take s3:// URLs, as aws cli, s5cmd and rclone users type them.
func TestClientS3URLs(t *testing.T) {
	for _, k := range []string{"CAIRN_ENDPOINT", "CAIRN_ACCESS_KEY", "CAIRN_SECRET_KEY", "CAIRN_PROTOCOL"} {
		t.Setenv(k, "")
	}
	endpoint := testserver.Start(t, "url-root", "url-root-secret")
	dir := t.TempDir()
	file := filepath.Join(dir, "cat.txt")
	if err := os.WriteFile(file, []byte("a cat"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := runCairn(t, append(args, "--endpoint", endpoint, "--access-key", "url-root", "--secret-key", "url-root-secret")...)
		if err != nil {
			t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	run("mb", "s3://photos")
	run("put", file, "s3://photos/2026/")
	if out := run("ls", "s3://photos/2026/"); !strings.Contains(out, "2026/cat.txt") {
		t.Errorf("ls s3://photos/2026/:\n%s", out)
	}
	if out := run("ls", "s3://"); !strings.Contains(out, "photos") {
		t.Errorf("ls s3://:\n%s", out)
	}
	got := filepath.Join(dir, "back.txt")
	run("get", "s3://photos/2026/cat.txt", got)
	if b, err := os.ReadFile(got); err != nil || string(b) != "a cat" {
		t.Errorf("got %q, %v", b, err)
	}
	run("rm", "s3://photos/2026/cat.txt")
	run("rb", "s3://photos")
	if out := run("ls", "s3://"); strings.Contains(out, "photos") {
		t.Errorf("the bucket is still there:\n%s", out)
	}
}

// A local name taken from a key never leaves the directory it is put in.
func TestClientLocalPath(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ key, dst, want string }{
		{"a/b/file.txt", "", "file.txt"},
		{"../../etc/passwd", "", "passwd"},
		{"x", "-", "-"},
		{"x", "named", "named"},
		{"dir/x", dir, filepath.Join(dir, "x")},
		{"dir/x", "sub/", filepath.Join("sub", "x")},
	} {
		got, err := localPath(tc.key, tc.dst)
		if err != nil || got != tc.want {
			t.Errorf("localPath(%q, %q) = %q, %v; want %q", tc.key, tc.dst, got, err, tc.want)
		}
	}
	for _, key := range []string{"..", "a/..", "dir/", ".", "a/."} {
		if got, err := localPath(key, ""); err == nil {
			t.Errorf("localPath(%q) = %q: want an error", key, got)
		}
	}
}

func TestClientParseMetadata(t *testing.T) {
	md, err := parseMetadata([]string{"Color=blue", "empty=", "eq=a=b"})
	if err != nil || len(md) != 3 || md["color"] != "blue" || md["empty"] != "" || md["eq"] != "a=b" {
		t.Errorf("parseMetadata: %v, %v", md, err)
	}
	for _, bad := range []string{"novalue", "=x"} {
		if _, err := parseMetadata([]string{bad}); err == nil {
			t.Errorf("parseMetadata(%q): want an error", bad)
		}
	}
}

func TestClientPrintable(t *testing.T) {
	if got := printable("plain ütf-8 name"); got != "plain ütf-8 name" {
		t.Errorf("printable changed a plain name: %q", got)
	}
	if got := printable("evil\x1b[2Jname\n"); got != `"evil\x1b[2Jname\n"` {
		t.Errorf("printable of a name with control characters: %q", got)
	}
}

var barLine = regexp.MustCompile(`^(\S*)  \[(=*>? *)\]  +(\d+)%  (\S+ \S+)/s  (ETA \S+|done)$`)

func TestClientProgressBar(t *testing.T) {
	if b := newProgressBar(&bytes.Buffer{}, "x"); b != nil {
		t.Fatal("a bar on something that is not a terminal")
	}
	var none *progressBar
	none.update(1, 2) // a nil bar draws nothing, and does not panic
	none.clear()

	t0 := time.Unix(1000, 0)
	const MiB = 1 << 20
	b := &progressBar{name: "big.iso", columns: 80}
	b.line(0, 100*MiB, t0)
	line := b.line(45*MiB, 100*MiB, t0.Add(3*time.Second))
	m := barLine.FindStringSubmatch(line)
	if m == nil || m[1] != "big.iso" || m[3] != "45" || m[4] != "15.0 MiB" || m[5] != "ETA 4s" {
		t.Fatalf("bar %q (parsed %q)", line, m)
	}
	if n := utf8.RuneCountInString(line); n >= 80 {
		t.Errorf("bar of %d columns on an 80-column terminal", n)
	}
	if filled := strings.Count(m[2], "="); filled < 10 || filled > 20 {
		t.Errorf("45%% shows %d of %d", filled, len(m[2]))
	}
	line = b.line(100*MiB, 100*MiB, t0.Add(6*time.Second))
	if m := barLine.FindStringSubmatch(line); m == nil || m[3] != "100" || m[5] != "done" || strings.Contains(m[2], " ") {
		t.Errorf("finished bar %q", line)
	}

	// A long name on a narrow terminal is cut, never the line wrapped.
	b = &progressBar{name: strings.Repeat("ä", 100), columns: 60}
	line = b.line(1, 2, t0)
	if n := utf8.RuneCountInString(line); n >= 60 || !strings.Contains(line, "…") {
		t.Errorf("narrow bar (%d columns): %q", n, line)
	}
}

func TestClientSummary(t *testing.T) {
	s := summary("uploaded", "f", "b/k", transfer.Result{Size: 64 << 20, Transferred: 32 << 20, Resumed: 32 << 20,
		Parts: 4, PartSize: 16 << 20, Elapsed: 2 * time.Second})
	want := "uploaded f to b/k: 64.0 MiB in 2s (16.0 MiB/s), 4 parts of 16.0 MiB, 32.0 MiB already there from an interrupted run"
	if s != want {
		t.Errorf("summary\n got %q\nwant %q", s, want)
	}
}

// runCairn runs the command line in this process, as main would, and returns its error.
func runCairn(t *testing.T, args ...string) (stdout string, err error) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), err
}

// Bad input is one line naming the problem, found before any request where it can be.
func TestClientCommandErrors(t *testing.T) {
	for _, v := range os.Environ() {
		if name, _, _ := strings.Cut(v, "="); strings.HasPrefix(name, "CAIRN_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"put", file}, "usage: cairn put LOCAL_FILE BUCKET[/KEY]"},
		{[]string{"put", "/no/such/file", "b"}, "stat /no/such/file: no such file or directory"},
		{[]string{"put", file, "b", "--meta", "x"}, `--meta "x": want NAME=VALUE`},
		{[]string{"put", file, "bucket", "--access-key", "a"}, "s3 needs --secret-key"},
		{[]string{"put", file, "bucket", "--protocol", "ftp"}, `unknown --protocol "ftp"`},
		{[]string{"get", "bucket"}, `"bucket" names a bucket; want BUCKET/KEY`},
		{[]string{"get", "bucket/dir/"}, `key "dir/" has no file name to save it under; give LOCAL`},
		{[]string{"rm", "bucket"}, `"bucket" names a bucket: give BUCKET/KEY, or --recursive to remove everything in it`},
		{[]string{"rm", "bucket/k", "--bucket", "-r"}, "--bucket removes a whole bucket: give BUCKET alone, with --recursive"},
		{[]string{"ls", "a", "b"}, "usage: cairn ls [BUCKET[/PREFIX]]"},
		{[]string{"ls", "--access-key", "a", "--secret-key", "b", "--endpoint", "http://127.0.0.1:1"},
			"cannot reach http://127.0.0.1:1: connection refused"},
		{[]string{"ls", "--protocol", "swift", "--auth-url", "http://127.0.0.1:1/auth/v1.0", "--user", "a:b", "--key", "k"},
			"cannot reach http://127.0.0.1:1/auth/v1.0: connection refused"},
	} {
		_, err := runCairn(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("cairn %s: %v; want one line with %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}

	// The environment fills in flags that the command line does not give.
	t.Setenv("CAIRN_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("CAIRN_ACCESS_KEY", "a")
	t.Setenv("CAIRN_SECRET_KEY", "b")
	if _, err := runCairn(t, "ls"); err == nil || err.Error() != "cannot reach http://127.0.0.1:1: connection refused" {
		t.Errorf("ls configured by the environment: %v", err)
	}
}

// The client reads the AWS SDKs' configuration for what flags and CAIRN_* do not give: the
// environment's keys and endpoint, a profile's from ~/.aws (default, AWS_PROFILE, --profile,
// which comes before the environment), and never over a flag.
func TestClientAWSConfiguration(t *testing.T) {
	for _, k := range []string{"CAIRN_ENDPOINT", "CAIRN_ACCESS_KEY", "CAIRN_SECRET_KEY", "CAIRN_PROTOCOL", "CAIRN_REGION", "CAIRN_PROFILE"} {
		t.Setenv(k, "")
	}
	endpoint := testserver.Start(t, "aws-root", "aws-root-secret")
	dir := t.TempDir()
	creds, conf := filepath.Join(dir, "credentials"), filepath.Join(dir, "config")
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(creds, "[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n[cairn]\naws_access_key_id = aws-root\naws_secret_access_key=aws-root-secret\n")
	write(conf, "[default]\nregion = us-east-1\n[profile cairn]\nregion = us-east-1\nendpoint_url = "+endpoint+"\ns3 =\n  addressing_style = path\n")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	t.Setenv("AWS_CONFIG_FILE", conf)
	ls := func(args ...string) error {
		t.Helper()
		_, err := runCairn(t, append([]string{"ls"}, args...)...)
		return err
	}
	// A named profile: its keys and its endpoint.
	if err := ls("--profile", "cairn"); err != nil {
		t.Errorf("--profile cairn: %v", err)
	}
	t.Setenv("AWS_PROFILE", "cairn")
	if err := ls(); err != nil {
		t.Errorf("AWS_PROFILE=cairn: %v", err)
	}
	// The environment's keys come before AWS_PROFILE's, and --profile before the environment's.
	t.Setenv("AWS_ACCESS_KEY_ID", "env-wrong")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env-wrong")
	if err := ls(); err == nil {
		t.Error("the environment's (wrong) keys were not used over AWS_PROFILE's")
	}
	if err := ls("--profile", "cairn"); err != nil {
		t.Errorf("--profile cairn over the environment's keys: %v", err)
	}
	// Flags come before all of it; a profile that is not there is an error.
	if err := ls("--access-key", "aws-root", "--secret-key", "aws-root-secret"); err != nil {
		t.Errorf("flags over the environment: %v", err)
	}
	if err := ls("--profile", "nope"); err == nil || !strings.Contains(err.Error(), "no such profile") {
		t.Errorf("--profile nope: %v", err)
	}
	// AWS_ENDPOINT_URL with the environment's keys, no profile files.
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_ACCESS_KEY_ID", "aws-root")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-root-secret")
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	if err := ls(); err != nil {
		t.Errorf("AWS_* environment: %v", err)
	}
}

// cp and sync, as aws s3 cp and sync: a file and a directory tree up and down, only what
// differs on a second sync, --delete, and no key that would climb out of the directory.
func TestClientCpAndSync(t *testing.T) {
	for _, k := range []string{"CAIRN_ENDPOINT", "CAIRN_ACCESS_KEY", "CAIRN_SECRET_KEY", "CAIRN_PROTOCOL"} {
		t.Setenv(k, "")
	}
	endpoint := testserver.Start(t, "cp-root", "cp-root-secret")
	run := func(args ...string) (string, error) {
		return runCairn(t, append(args, "--endpoint", endpoint, "--access-key", "cp-root", "--secret-key", "cp-root-secret")...)
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	src := t.TempDir()
	write(filepath.Join(src, "a.txt"), "a")
	write(filepath.Join(src, "dir", "b.txt"), "bb")
	write(filepath.Join(src, "dir", "deep", "c.txt"), "ccc")
	must("mb", "s3://site")

	// A file, then a tree.
	must("cp", filepath.Join(src, "a.txt"), "s3://site/single/")
	if _, err := run("cp", src, "s3://site/tree"); err == nil || !strings.Contains(err.Error(), "give --recursive") {
		t.Errorf("a directory without --recursive: %v", err)
	}
	out := must("cp", "--recursive", src, "s3://site/tree")
	if strings.Count(out, "upload: ") != 3 {
		t.Errorf("cp -r up:\n%s", out)
	}
	down := t.TempDir()
	must("cp", "s3://site/single/a.txt", down)
	must("cp", "-r", "s3://site/tree", filepath.Join(down, "tree"))
	if read(filepath.Join(down, "a.txt")) != "a" || read(filepath.Join(down, "tree", "dir", "deep", "c.txt")) != "ccc" {
		t.Error("the tree did not come down whole")
	}
	// Within the store, between buckets: an object, a prefix, and a sync that copies only
	// what differs; the bytes come back the same through a download. s3:// to swift:// is
	// refused (one protocol at a time).
	must("mb", "s3://other")
	if out := must("cp", "s3://site/single/a.txt", "s3://other/copied/"); !strings.Contains(out, "copy: s3://site/single/a.txt to s3://other/copied/a.txt") {
		t.Errorf("cp within the store:\n%s", out)
	}
	if out := must("cp", "-r", "s3://site/tree", "s3://other/tree2"); strings.Count(out, "copy: ") != 3 {
		t.Errorf("cp -r within the store:\n%s", out)
	}
	back := t.TempDir()
	must("cp", "-r", "s3://other", back)
	if read(filepath.Join(back, "copied", "a.txt")) != "a" || read(filepath.Join(back, "tree2", "dir", "deep", "c.txt")) != "ccc" {
		t.Error("the copies within the store read back different bytes")
	}
	if out := must("sync", "s3://site/tree", "s3://other/tree2"); strings.Contains(out, "copy:") {
		t.Errorf("a sync within the store copied what was there:\n%s", out)
	}
	must("put", filepath.Join(src, "a.txt"), "s3://other/tree2/extra.txt")
	if out := must("sync", "--delete", "s3://site/tree", "s3://other/tree2"); !strings.Contains(out, "delete: s3://other/tree2/extra.txt") || strings.Contains(out, "copy:") {
		t.Errorf("sync --delete within the store:\n%s", out)
	}
	if _, err := run("cp", "s3://site/single/a.txt", "swift://other/x"); err == nil || !strings.Contains(err.Error(), "one protocol") {
		t.Errorf("s3:// to swift://: %v", err)
	}
	if _, err := run("cp", "s3://site", "s3://other/x"); err == nil || !strings.Contains(err.Error(), "names a bucket") {
		t.Errorf("a bucket copied without --recursive: %v", err)
	}

	// sync: nothing to do, then only the changed file; --delete removes what the source lacks.
	if out := must("sync", src, "s3://site/tree"); strings.Contains(out, "upload:") {
		t.Errorf("a second sync copied again:\n%s", out)
	}
	write(filepath.Join(src, "dir", "b.txt"), "changed")
	must("put", filepath.Join(src, "a.txt"), "s3://site/tree/extra.txt")
	out = must("sync", "--delete", src, "s3://site/tree")
	if !strings.Contains(out, "upload: "+filepath.Join(src, "dir", "b.txt")) || strings.Count(out, "upload:") != 1 ||
		!strings.Contains(out, "delete: s3://site/tree/extra.txt") {
		t.Errorf("sync --delete up:\n%s", out)
	}
	mirror := t.TempDir()
	write(filepath.Join(mirror, "stale.txt"), "old")
	must("sync", "--delete", "s3://site/tree", mirror)
	if read(filepath.Join(mirror, "dir", "b.txt")) != "changed" {
		t.Error("sync down missed the changed file")
	}
	if _, err := os.Stat(filepath.Join(mirror, "stale.txt")); !os.IsNotExist(err) {
		t.Errorf("sync --delete down kept a file the prefix lacks: %v", err)
	}
	if out := must("sync", "s3://site/tree", mirror); strings.Contains(out, "download:") {
		t.Errorf("a second sync down copied again:\n%s", out)
	}

	// A key that would climb out of the directory stops the copy before anything is written.
	must("put", filepath.Join(src, "a.txt"), "s3://site/x/../../escape.txt")
	must("put", filepath.Join(src, "a.txt"), "s3://site/x/fine.txt")
	outside := t.TempDir()
	target := filepath.Join(outside, "in")
	if _, err := run("cp", "-r", "s3://site/x", target); err == nil || !strings.Contains(err.Error(), "cannot be a path under") {
		t.Errorf("a key climbing out: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("files written around a refused copy: %v", ents)
	}
}
