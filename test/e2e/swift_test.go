package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// swiftUser is a Swift v1 session against a server.
type swiftUser struct {
	t          *testing.T
	token, url string
}

// swiftAuth authenticates over Swift v1 auth and returns the answer's status with the session.
func swiftAuth(t *testing.T, endpoint, user, key string) (int, *swiftUser) {
	t.Helper()
	req, _ := http.NewRequest("GET", endpoint+"/auth/v1.0", nil)
	req.Header.Set("X-Auth-User", user)
	req.Header.Set("X-Auth-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, &swiftUser{t: t, token: resp.Header.Get("X-Auth-Token"), url: resp.Header.Get("X-Storage-Url")}
}

func swiftLogin(t *testing.T, endpoint, user, key string) *swiftUser {
	t.Helper()
	status, u := swiftAuth(t, endpoint, user, key)
	if status != 200 || !strings.HasPrefix(u.token, "AUTH_tk") {
		t.Fatalf("Swift auth as %s: %d", user, status)
	}
	return u
}

// do sends a request to the session's storage URL + path (or to url itself when it starts
// with http).
func (u *swiftUser) do(method, path string, hdr map[string]string, body []byte) (int, http.Header, []byte) {
	u.t.Helper()
	url := u.url + path
	if strings.HasPrefix(path, "http") {
		url = path
	}
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("X-Auth-Token", u.token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		u.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func (u *swiftUser) must(method, path string, hdr map[string]string, body []byte, want int) (http.Header, []byte) {
	u.t.Helper()
	status, h, b := u.do(method, path, hdr, body)
	if status != want {
		u.t.Fatalf("Swift %s %s: %d, want %d: %s", method, path, status, want, b)
	}
	return h, b
}

// TestSwiftBinary drives the Swift API of the real binary: the root user, a tenant made with
// cairn admin, S3 and Swift on the same objects, 403 across tenants, tokens lost on restart
// while the data stays, and cairn's own client over Swift.
func TestSwiftBinary(t *testing.T) {
	SkipShort(t)
	dataDir := t.TempDir()
	s := Start(t, Options{DataDir: dataDir})
	root := newCLI(t, s)
	root.ok("admin", "account", "create", "acme")
	root.ok("admin", "account", "create", "other")
	alice := root.createUser("acme:alice", "--admin")
	olga := root.createUser("other:olga", "--admin")

	if status, _ := swiftAuth(t, s.Endpoint, "acme:alice", "wrong"); status != 401 {
		t.Fatalf("bad key: %d", status)
	}
	a := swiftLogin(t, s.Endpoint, "acme:alice", alice.SwiftKey)
	if a.url != s.Endpoint+"/v1/AUTH_acme" {
		t.Fatalf("storage URL %q", a.url)
	}
	a.must("PUT", "/photos", map[string]string{"X-Container-Meta-Owner": "alice"}, nil, 201)
	data := bytes.Repeat([]byte("cairn"), 100_000)
	a.must("PUT", "/photos/2026/cat.jpg", map[string]string{"X-Object-Meta-Kind": "cat", "Content-Type": "image/jpeg"}, data, 201)
	h, b := a.must("GET", "/photos/2026/cat.jpg", nil, nil, 200)
	if !bytes.Equal(b, data) || h.Get("X-Object-Meta-Kind") != "cat" || h.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("GET: %d bytes, %v", len(b), h)
	}
	_, b = a.must("GET", "/photos?format=json&delimiter=/", nil, nil, 200)
	if string(b) != `[{"subdir":"2026/"}]` {
		t.Fatalf("listing %s", b)
	}

	// Alice's S3 keys see the same bucket and object.
	ctx := Context(t)
	as3 := NewS3Client(s.Endpoint, alice.AccessKey, alice.SecretKey, NoRetries)
	got, out, err := getBytes(ctx, as3, "photos", "2026/cat.jpg")
	if err != nil || !bytes.Equal(got, data) || out.Metadata["kind"] != "cat" {
		t.Fatalf("S3 GET of the Swift object: %v %v", out, err)
	}
	if _, err := as3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("photos"), Key: aws.String("from-s3"),
		Body: strings.NewReader("s3 bytes"), Metadata: map[string]string{"src": "s3"}}); err != nil {
		t.Fatal(err)
	}
	h, b = a.must("GET", "/photos/from-s3", nil, nil, 200)
	if string(b) != "s3 bytes" || h.Get("X-Object-Meta-Src") != "s3" {
		t.Fatalf("Swift GET of the S3 object: %q %v", b, h)
	}

	// Another tenant: its own account, and 403 on alice's.
	o := swiftLogin(t, s.Endpoint, "other:olga", olga.SwiftKey)
	o.must("GET", a.url, nil, nil, 403)
	o.must("GET", a.url+"/photos/2026/cat.jpg", nil, nil, 403)
	o.must("PUT", a.url+"/photos/evil", nil, []byte("x"), 403)
	if status, _, b := o.do("GET", "", nil, nil); status != 204 || len(b) != 0 {
		t.Fatalf("olga's own empty account: %d %q", status, b)
	}
	// The root user reaches every account.
	r := swiftLogin(t, s.Endpoint, "root:root", s.SecretKey)
	if r.url != s.Endpoint+"/v1/AUTH_root" {
		t.Fatalf("root storage URL %q", r.url)
	}
	r.must("HEAD", a.url+"/photos/2026/cat.jpg", nil, nil, 200)

	// cairn's own client over Swift.
	c := newCLI(t, s)
	c.writeFile("note.txt", []byte("written by cairn put over swift"))
	swift := []string{"--protocol", "swift", "--auth-url", s.Endpoint + "/auth/v1.0", "--user", "acme:alice", "--key", alice.SwiftKey}
	c.ok(append([]string{"put"}, append(swift, "note.txt", "photos/notes/")...)...)
	if out, _ := c.ok(append([]string{"ls"}, append(swift, "photos/notes/")...)...); !strings.Contains(out, "note.txt") {
		t.Fatalf("cairn ls over swift: %q", out)
	}
	_, b = a.must("GET", "/photos/notes/note.txt", nil, nil, 200)
	if string(b) != "written by cairn put over swift" {
		t.Fatalf("object put by cairn: %q", b)
	}
	// A large upload by cairn over Swift is a static large object; it reads back whole
	// through cairn get, Swift and S3.
	big := randBytes(7, 64<<20+123) // cairn moves files in parts from 64 MiB
	c.writeFile("big.bin", big)
	c.ok(append([]string{"put"}, append(swift, "--part-size", "16MiB", "big.bin", "photos/big.bin")...)...)
	h, b = a.must("GET", "/photos/big.bin", nil, nil, 200)
	if !bytes.Equal(b, big) || h.Get("X-Static-Large-Object") != "True" {
		t.Fatalf("cairn's SLO through Swift: %d bytes, %v", len(b), h)
	}
	c.ok(append([]string{"get"}, append(swift, "photos/big.bin", "big.out")...)...)
	if !bytes.Equal(c.readFile("big.out"), big) {
		t.Fatal("cairn get over swift returned other bytes")
	}
	if got, _, err := getBytes(ctx, as3, "photos", "big.bin"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("S3 GET of the SLO: %d bytes, %v", len(got), err)
	}
	_, b = a.must("DELETE", "/photos/big.bin?multipart-manifest=delete", nil, nil, 200)
	if !strings.HasPrefix(string(b), "Number Deleted: 6\n") { // five segments and the manifest
		t.Fatalf("SLO delete: %q", b)
	}
	if status, _, b := a.do("GET", "/photos_segments", nil, nil); status != 204 {
		t.Fatalf("segments left: %d %q", status, b)
	}
	a.must("DELETE", "/photos_segments", nil, nil, 204)

	// A restart keeps tokens (they are signed, not kept in memory) and everything else.
	if err := s.Stop(StopTimeout); err != nil {
		t.Fatal(err)
	}
	s2 := Start(t, Options{DataDir: dataDir, AccessKey: s.AccessKey, SecretKey: s.SecretKey})
	stale := &swiftUser{t: t, token: a.token, url: s2.Endpoint + "/v1/AUTH_acme"}
	stale.must("GET", "/photos", nil, nil, 200)
	a2 := swiftLogin(t, s2.Endpoint, "acme:alice", alice.SwiftKey)
	h, _ = a2.must("HEAD", "/photos", nil, nil, 204)
	if h.Get("X-Container-Meta-Owner") != "alice" || h.Get("X-Container-Object-Count") != "3" {
		t.Fatalf("container after restart: %v", h)
	}
	_, b = a2.must("GET", "/photos/2026/cat.jpg", nil, nil, 200)
	if !bytes.Equal(b, data) {
		t.Fatal("object changed across the restart")
	}
	a2.must("DELETE", "/photos", nil, nil, 409)
	for _, n := range []string{"2026/cat.jpg", "from-s3", "notes/note.txt"} {
		a2.must("DELETE", "/photos/"+n, nil, nil, 204)
	}
	a2.must("DELETE", "/photos", nil, nil, 204)
}
