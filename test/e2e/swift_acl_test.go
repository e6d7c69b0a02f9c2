package e2e

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// TestSwiftACLsAcrossAPIs: one tenant's data stays its own through both APIs until its
// administrator grants it with a Swift container ACL; the grant then works through Swift and
// S3 alike (one decision module), for another account and for a user of the same account who
// is not its administrator; container quotas hold through both APIs.
func TestSwiftACLsAcrossAPIs(t *testing.T) {
	SkipShort(t)
	s := Start(t, Options{DataDir: t.TempDir()})
	root := newCLI(t, s)
	root.ok("admin", "account", "create", "acme")
	root.ok("admin", "account", "create", "other")
	alice := root.createUser("acme:alice", "--admin")
	carol := root.createUser("acme:carol") // not an administrator
	olga := root.createUser("other:olga", "--admin")
	ctx := Context(t)

	a := swiftLogin(t, s.Endpoint, "acme:alice", alice.SwiftKey)
	c := swiftLogin(t, s.Endpoint, "acme:carol", carol.SwiftKey)
	o := swiftLogin(t, s.Endpoint, "other:olga", olga.SwiftKey)
	anon := &swiftUser{t: t, url: a.url}
	cs3 := NewS3Client(s.Endpoint, carol.AccessKey, carol.SecretKey, NoRetries)
	os3 := NewS3Client(s.Endpoint, olga.AccessKey, olga.SecretKey, NoRetries)
	code := func(err error) string {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		if err != nil {
			return err.Error()
		}
		return "ok"
	}
	s3get := func(cl *s3.Client, key string) string {
		_, _, err := getBytes(ctx, cl, "team", key)
		return code(err)
	}

	a.must("PUT", "/team", nil, nil, 201)
	a.must("PUT", "/team/plan.txt", nil, []byte("the plan"), 201)

	// Nothing granted: nobody else gets in, through either API.
	o.must("GET", a.url+"/team/plan.txt", nil, nil, 403)
	c.must("GET", "/team/plan.txt", nil, nil, 403)
	c.must("GET", "/team", nil, nil, 403)
	c.must("PUT", "/mine", nil, nil, 403) // creating containers is for administrators
	anon.must("GET", "/team/plan.txt", nil, nil, 401)
	if got := s3get(os3, "plan.txt"); got != "NoSuchBucket" {
		t.Errorf("olga's S3 GET before the grant: %s", got)
	}
	if got := s3get(cs3, "plan.txt"); got != "AccessDenied" {
		t.Errorf("carol's S3 GET before the grant: %s", got)
	}

	// A bad ACL is refused and changes nothing.
	a.must("POST", "/team", map[string]string{"X-Container-Read": ".r:"}, nil, 400)
	h, _ := a.must("HEAD", "/team", nil, nil, 204)
	if h.Get("X-Container-Read") != "" {
		t.Fatalf("a refused ACL was stored: %v", h)
	}

	// Read granted to the other account and to carol.
	a.must("POST", "/team", map[string]string{"X-Container-Read": "other,acme:carol"}, nil, 204)
	if _, b := o.must("GET", a.url+"/team/plan.txt", nil, nil, 200); string(b) != "the plan" {
		t.Errorf("olga's Swift GET: %q", b)
	}
	if _, b := c.must("GET", a.url+"/team", nil, nil, 200); string(b) != "plan.txt\n" {
		t.Errorf("carol's listing: %q", b)
	}
	h, _ = c.must("HEAD", a.url+"/team", nil, nil, 204)
	if h.Get("X-Container-Read") != "" {
		t.Errorf("a reader sees the ACL: %v", h)
	}
	o.must("PUT", a.url+"/team/evil", nil, []byte("x"), 403)
	if got := s3get(os3, "plan.txt"); got != "ok" {
		t.Errorf("olga's S3 GET after the grant: %s", got)
	}
	if got := s3get(cs3, "plan.txt"); got != "ok" {
		t.Errorf("carol's S3 GET after the grant: %s", got)
	}
	if _, err := os3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("team"), Key: aws.String("evil"), Body: strings.NewReader("x")}); code(err) != "AccessDenied" {
		t.Errorf("olga's S3 PUT with read access only: %s", code(err))
	}

	// Write granted to carol; with a container quota in force through both APIs.
	a.must("POST", "/team", map[string]string{"X-Container-Write": "acme:carol", "X-Container-Meta-Quota-Bytes": "30"}, nil, 204)
	c.must("PUT", a.url+"/team/notes.txt", nil, []byte("carol's notes"), 201)
	c.must("PUT", a.url+"/team/big.txt", nil, []byte("far too many bytes here"), 413)
	if _, err := cs3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("team"), Key: aws.String("big.txt"), Body: strings.NewReader("far too many bytes here")}); code(err) != "QuotaExceeded" {
		t.Errorf("carol's S3 PUT past the quota: %s", code(err))
	}
	a.must("HEAD", "/team/big.txt", nil, nil, 404)

	// Public read for any referrer, listing only with .rlistings.
	anon.must("GET", "/team/plan.txt", nil, nil, 401)
	a.must("POST", "/team", map[string]string{"X-Container-Read": ".r:*"}, nil, 204)
	anon.must("GET", "/team/plan.txt", nil, nil, 200)
	anon.must("GET", "/team", nil, nil, 401)
	a.must("POST", "/team", map[string]string{"X-Container-Read": ".r:*,.rlistings"}, nil, 204)
	anon.must("GET", "/team", nil, nil, 200)
	anon.must("PUT", "/team/anon", nil, []byte("x"), 401)

	// Revoked: back to nothing.
	a.must("POST", "/team", map[string]string{"X-Remove-Container-Read": "x", "X-Remove-Container-Write": "x"}, nil, 204)
	anon.must("GET", "/team/plan.txt", nil, nil, 401)
	o.must("GET", a.url+"/team/plan.txt", nil, nil, 403)
	c.must("PUT", a.url+"/team/more", nil, []byte("x"), 403)
}

// TestSwiftExpirer: objects given an expiry vanish from reads at once and, once the expirer has
// run, from listings and usage too; an expiry removed by POST keeps the object; the queue
// survives a kill -9 between the acknowledgement and the expiry.
func TestSwiftExpirer(t *testing.T) {
	SkipShort(t)
	dataDir := t.TempDir()
	args := []string{"--expirer-interval", "200ms"}
	s := Start(t, Options{DataDir: dataDir, Args: args})
	root := newCLI(t, s)
	root.ok("admin", "account", "create", "acme")
	alice := root.createUser("acme:alice", "--admin")
	a := swiftLogin(t, s.Endpoint, "acme:alice", alice.SwiftKey)
	a.must("PUT", "/box", nil, nil, 201)
	a.must("PUT", "/box/keep", nil, []byte("kept"), 201)
	a.must("PUT", "/box/gone", map[string]string{"X-Delete-After": "1"}, []byte("short-lived"), 201)
	// Long enough to outlast any machine's delay before the POST that removes it.
	a.must("PUT", "/box/saved", map[string]string{"X-Delete-After": "600"}, []byte("saved"), 201)
	if h, _ := a.must("HEAD", "/box/saved", nil, nil, 200); h.Get("X-Delete-At") == "" {
		t.Fatal("an object PUT with X-Delete-After has no X-Delete-At")
	}
	a.must("POST", "/box/saved", map[string]string{"X-Object-Meta-Saved": "yes"}, nil, 202) // a POST without X-Delete-At removes it
	if h, _ := a.must("HEAD", "/box/saved", nil, nil, 200); h.Get("X-Delete-At") != "" {
		t.Fatalf("X-Delete-At %s after a POST without one", h.Get("X-Delete-At"))
	}
	a.must("PUT", "/box/after-kill", map[string]string{"X-Delete-After": "2"}, []byte("x"), 201)
	// kill -9 right after the acknowledgements, then restart: the queue was written first.
	s.Kill()
	s = Start(t, Options{DataDir: dataDir, AccessKey: s.AccessKey, SecretKey: s.SecretKey, Args: args})
	a = swiftLogin(t, s.Endpoint, "acme:alice", alice.SwiftKey)
	// The expirer runs every 200 ms; the bound only ends a wait for what will never happen.
	deadline := time.Now().Add(patience)
	for {
		_, b := a.must("GET", "/box", nil, nil, 200)
		if string(b) == "keep\nsaved\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listing still %q after %v", b, patience)
		}
		time.Sleep(200 * time.Millisecond)
	}
	a.must("GET", "/box/gone", nil, nil, 404)
	h, _ := a.must("HEAD", "/box", nil, nil, 204)
	if h.Get("X-Container-Object-Count") != "2" || h.Get("X-Container-Bytes-Used") != "9" {
		t.Errorf("usage after expiry: %v", h)
	}
}
