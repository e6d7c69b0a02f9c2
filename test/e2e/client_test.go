package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// cli runs the cairn binary as a user would, configured by the environment only.
type cli struct {
	t   *testing.T
	bin string
	dir string   // working directory
	env []string // CAIRN_* and XDG_CACHE_HOME
}

func newCLI(t *testing.T, s *Server) *cli {
	c := &cli{t: t, bin: Binary(t), dir: t.TempDir()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") && !strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
			c.env = append(c.env, kv)
		}
	}
	c.env = append(c.env, "CAIRN_ENDPOINT="+s.Endpoint, "CAIRN_ACCESS_KEY="+s.AccessKey, "CAIRN_SECRET_KEY="+s.SecretKey,
		"XDG_CACHE_HOME="+filepath.Join(c.dir, "cache"))
	return c
}

func (c *cli) command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = c.dir
	cmd.Env = c.env
	return cmd
}

// run runs cairn and returns its stdout, stderr and exit code.
func (c *cli) run(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	cmd := c.command(args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		c.t.Fatalf("cairn %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// ok runs cairn and fails the test unless it exits 0.
func (c *cli) ok(args ...string) (stdout, stderr string) {
	c.t.Helper()
	stdout, stderr, code := c.run(args...)
	// In a cluster a key made through one proxy reaches the others within the tenant store's
	// poll interval (docs/operations.md): a refusal of the credentials is retried that long.
	for end := time.Now().Add(tenantPropagation()); code != 0 && strings.Contains(stderr, "rejected the credentials") && time.Now().Before(end); {
		time.Sleep(200 * time.Millisecond)
		stdout, stderr, code = c.run(args...)
	}
	if code != 0 {
		c.t.Fatalf("cairn %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	return stdout, stderr
}

// fails runs cairn and checks that it fails with exactly one line on stderr containing want.
func (c *cli) fails(want string, args ...string) {
	c.t.Helper()
	var stdout, stderr string
	var code int
	var lines []string
	failedAsWanted := func() bool {
		stdout, stderr, code = c.run(args...)
		lines = strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		return code != 0 && len(lines) == 1 && strings.HasPrefix(lines[0], "cairn: ") && strings.Contains(lines[0], want)
	}
	ok := failedAsWanted()
	// In a cluster a revoked key stops working on the other proxies within the tenant store's
	// poll interval: the refusal is waited for that long.
	for end := time.Now().Add(tenantPropagation()); !ok && time.Now().Before(end); {
		time.Sleep(200 * time.Millisecond)
		ok = failedAsWanted()
	}
	if !ok {
		c.t.Errorf("cairn %s: exit %d, stderr %q, stdout %q; want a failure in one line with %q",
			strings.Join(args, " "), code, stderr, stdout, want)
	}
}

func (c *cli) writeFile(name string, data []byte) string {
	c.t.Helper()
	path := filepath.Join(c.dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		c.t.Fatal(err)
	}
	return path
}

func (c *cli) readFile(name string) []byte {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// TestClientCommands drives cairn put, ls, get and rm against a real server, as a user would:
// bytes, listings and exit codes, and one clear line for every failure.
func TestClientCommands(t *testing.T) {
	s := StartServer(t, t.TempDir())
	c := newCLI(t, s)
	const bucket = "client-e2e"

	small := randBytes(1, 100*KiB)
	large := randBytes(2, 65*MiB) // over the 64 MiB threshold: parts up, ranges down
	c.writeFile("small.bin", small)
	c.writeFile("large.bin", large)

	c.ok("mb", bucket)
	if _, stderr := c.ok("put", "small.bin", bucket); stderr != "" {
		t.Errorf("put wrote %q on stderr, which is not a terminal: want nothing", stderr)
	}
	_, stderr := c.ok("put", "-v", "--part-size", "8MiB", "--concurrency", "3", "large.bin", bucket+"/dir/")
	if !strings.Contains(stderr, "uploaded large.bin to "+bucket+"/dir/large.bin: 65.0 MiB") || !strings.Contains(stderr, "9 parts of 8.0 MiB") {
		t.Errorf("put -v summary: %q", stderr)
	}
	c.ok("put", "--content-type", "text/x-test", "--meta", "color=blue", "small.bin", bucket+"/dir/sub/small")

	// ls: buckets, one level, everything.
	if out, _ := c.ok("ls"); !regexp.MustCompile(`(?m)^` + bucket + `$`).MatchString(out) {
		t.Errorf("ls: %q lacks %s", out, bucket)
	}
	out, _ := c.ok("ls", bucket)
	want := regexp.MustCompile(`^ {20} +PRE  dir/\n\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +102400  small\.bin\n$`)
	if !want.MatchString(out) {
		t.Errorf("ls %s:\n%s", bucket, out)
	}
	out, _ = c.ok("ls", bucket+"/dir/")
	if !strings.Contains(out, "PRE  dir/sub/\n") || !strings.Contains(out, "68157440  dir/large.bin\n") {
		t.Errorf("ls %s/dir/:\n%s", bucket, out)
	}
	out, _ = c.ok("ls", "--recursive", "--json", bucket)
	var keys []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var line struct {
			Key          string    `json:"key"`
			Size         int64     `json:"size"`
			LastModified time.Time `json:"last_modified"`
			ETag         string    `json:"etag"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.ETag == "" || line.LastModified.IsZero() {
			t.Errorf("ls --json line %q: %v", sc.Text(), err)
		}
		keys = append(keys, line.Key)
	}
	if strings.Join(keys, ",") != "dir/large.bin,dir/sub/small,small.bin" {
		t.Errorf("ls --recursive --json keys: %q", keys)
	}

	// get: parallel ranges into a file, one GET to stdout, the key's name by default.
	c.ok("get", "--part-size", "8MiB", "--concurrency", "4", bucket+"/dir/large.bin", "large.out")
	if !bytes.Equal(c.readFile("large.out"), large) {
		t.Error("get of the large object: bytes differ")
	}
	if out, _ := c.ok("get", bucket+"/dir/sub/small", "-"); !bytes.Equal([]byte(out), small) {
		t.Error("get to stdout: bytes differ")
	}
	if err := os.Mkdir(filepath.Join(c.dir, "into"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.ok("get", bucket+"/dir/sub/small", "into")
	if !bytes.Equal(c.readFile("into/small"), small) {
		t.Error("get into a directory: bytes differ")
	}
	matches, _ := filepath.Glob(filepath.Join(c.dir, "*.cairn-partial*"))
	if len(matches) != 0 {
		t.Errorf("partial files left: %v", matches)
	}

	// Failures: one line, non-zero exit.
	c.fails("no such object "+bucket+"/missing", "get", bucket+"/missing")
	c.fails(`bucket "no-such-bucket" does not exist`, "ls", "no-such-bucket")
	c.fails("stat nothing-here: no such file or directory", "put", "nothing-here", bucket)
	c.fails("rejected the credentials", "ls", "--secret-key", "not-the-secret")
	c.fails("rejected the credentials", "put", "--access-key", "NOSUCHKEY", "small.bin", bucket)
	closed := closedEndpoint(t)
	c.fails("cannot reach "+closed+": connection refused", "get", "--endpoint", closed, bucket+"/small.bin")

	// rm: one object, a missing one, a prefix, then the bucket with everything in it.
	c.ok("rm", bucket+"/small.bin")
	c.fails("no such object "+bucket+"/small.bin", "rm", bucket+"/small.bin")
	out, _ = c.ok("rm", "-r", "-v", bucket+"/dir/sub")
	if out != "removed "+bucket+"/dir/sub/small\n" {
		t.Errorf("rm -r -v: %q", out)
	}
	c.fails("nothing to remove under "+bucket+"/dir/sub", "rm", "-r", bucket+"/dir/sub")
	c.fails("bucket "+bucket+" is not empty", "rb", bucket)
	c.ok("rm", "--recursive", "--bucket", bucket)
	if out, _ := c.ok("ls"); strings.Contains(out, bucket) {
		t.Errorf("ls after rm --bucket: %q", out)
	}
}

// TestClientResumeAfterInterrupt: SIGINT stops an upload with one line saying that running
// it again resumes, keeps the state file, and the rerun completes the same object.
func TestClientResumeAfterInterrupt(t *testing.T) {
	s := StartServer(t, t.TempDir())
	c := newCLI(t, s)
	const bucket = "client-resume"
	data := randBytes(3, 65*MiB)
	c.writeFile("big.bin", data)
	c.ok("mb", bucket)

	// 8 MiB parts one at a time at 4 MiB/s: the upload takes 16 s at the very least, however
	// fast the machine. The interrupt comes as soon as the store holds a part, so the rerun has
	// one to resume, while at least 14 s of the upload are left, so it cannot have finished.
	cmd := c.command("put", "--part-size", "8MiB", "--concurrency", "1", "--limit-rate", "4MiB", "big.bin", bucket)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // if the test stops early
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stillRunning := func() {
		select {
		case err := <-exited:
			t.Fatalf("put exited before the interrupt: %v, stderr %q", err, stderr.String())
		default:
		}
	}
	stateDir := filepath.Join(c.dir, "cache", "cairn", "transfers")
	var uploadID string
	eventually(t, "the upload's state file", func() bool {
		stillRunning()
		m, _ := filepath.Glob(filepath.Join(stateDir, "*.json"))
		if len(m) != 1 {
			return false
		}
		var st struct {
			UploadID string `json:"upload_id"`
		}
		raw, err := os.ReadFile(m[0])
		if err == nil && json.Unmarshal(raw, &st) == nil {
			uploadID = st.UploadID
		}
		return uploadID != ""
	})
	s3c := s.S3Client()
	eventually(t, "a part of the upload in the store", func() bool {
		stillRunning()
		parts, err := s3c.ListParts(Context(t), &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String("big.bin"), UploadId: aws.String(uploadID)})
		return err == nil && len(parts.Parts) > 0
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("interrupted put: %v, stderr %q", err, stderr.String())
	}
	if got := strings.TrimRight(stderr.String(), "\n"); got != "cairn: uploading big.bin to "+bucket+"/big.bin: interrupted; run the same command again to resume" {
		t.Errorf("interrupted put said %q", got)
	}
	if m, _ := filepath.Glob(filepath.Join(stateDir, "*.json")); len(m) != 1 {
		t.Fatalf("state files after the interrupt: %v", m)
	}

	_, summary := c.ok("put", "-v", "--part-size", "8MiB", "big.bin", bucket)
	if !strings.Contains(summary, "already there from an interrupted run") {
		t.Errorf("the rerun resumed nothing of the part the store held: %q", summary)
	}
	if m, _ := filepath.Glob(filepath.Join(stateDir, "*.json")); len(m) != 0 {
		t.Errorf("state files after the finished upload: %v", m)
	}
	c.ok("get", bucket+"/big.bin", "back.bin")
	if !bytes.Equal(c.readFile("back.bin"), data) {
		t.Error("the resumed upload differs from the file")
	}
}

// closedEndpoint is the URL of a loopback port that nothing listens on.
func closedEndpoint(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// tenantPropagation is how long a tenant change may take to reach every proxy: none on a single
// server; in a cluster, the tenant store's poll interval (2 s) on a machine that may be slow.
// It bounds waits for a change that must come, so it is generous: a wait ends when the change
// is seen, and runs out only when it never comes.
func tenantPropagation() time.Duration {
	if ClusterTopology() == nil {
		return 0
	}
	return time.Minute
}

// accountPropagation is how long a container's usage may take to show in its account's totals:
// none on a single server; in a cluster, the storage nodes' updater interval (5 s) on a machine
// that may be slow. Generous for the same reason as tenantPropagation.
func accountPropagation() time.Duration {
	if ClusterTopology() == nil {
		return 0
	}
	return 2 * time.Minute
}

// patience bounds waits for what the tests know must happen (a file appears, a daemon runs):
// far more than any machine needs, so that reaching it means the thing will not happen.
const patience = 2 * time.Minute

// eventually polls cond until it holds, and fails the test if it still does not after patience.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(patience); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", patience, what)
		}
	}
}
