package objclient_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/objclient"
)

// swiftEnv returns the v1 auth settings of a real Swift to test against, from
// CAIRN_TEST_SWIFT_AUTH (e.g. http://127.0.0.1:8080/auth/v1.0), CAIRN_TEST_SWIFT_USER and
// CAIRN_TEST_SWIFT_KEY (default test:tester / testing, tempauth's test user); without
// CAIRN_TEST_SWIFT_AUTH the test is skipped.
func swiftEnv(t *testing.T) (authURL, user, key string) {
	t.Helper()
	authURL = os.Getenv("CAIRN_TEST_SWIFT_AUTH")
	if authURL == "" {
		t.Skip("no Swift to test against: set CAIRN_TEST_SWIFT_AUTH=http://127.0.0.1:8080/auth/v1.0 " +
			"(and CAIRN_TEST_SWIFT_USER, CAIRN_TEST_SWIFT_KEY unless test:tester/testing); start one with test/peers/swift/setup.sh (as root; docs/testing.md)")
	}
	user, key = os.Getenv("CAIRN_TEST_SWIFT_USER"), os.Getenv("CAIRN_TEST_SWIFT_KEY")
	if user == "" {
		user = "test:tester"
	}
	if key == "" {
		key = "testing"
	}
	return authURL, user, key
}

func swiftClient(t *testing.T, cfg objclient.Config) objclient.Client {
	t.Helper()
	cfg.Protocol = objclient.ProtocolSwift
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 4
	}
	c, err := objclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestSwiftV1Auth(t *testing.T) {
	authURL, user, key := swiftEnv(t)
	c := swiftClient(t, objclient.Config{AuthURL: authURL, User: user, Key: key})
	if c.Protocol() != objclient.ProtocolSwift || c.Endpoint() != authURL {
		t.Fatalf("before auth: protocol %q endpoint %q", c.Protocol(), c.Endpoint())
	}
	contract(t, c, uniqueBucket("objclient"))
	if ep := c.Endpoint(); !strings.Contains(ep, "/v1/") {
		t.Errorf("after auth the endpoint is the storage URL, got %q", ep)
	}
}

// v1Token authenticates by hand, as a user of token mode would have.
func v1Token(t *testing.T, authURL, user, key string) (token, storageURL string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, authURL, nil)
	req.Header.Set("X-Auth-User", user)
	req.Header.Set("X-Auth-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	token, storageURL = resp.Header.Get("X-Auth-Token"), resp.Header.Get("X-Storage-Url")
	if resp.StatusCode != 200 || token == "" || storageURL == "" {
		t.Fatalf("auth: %s, token %q, storage URL %q", resp.Status, token, storageURL)
	}
	return token, storageURL
}

func TestSwiftTokenMode(t *testing.T) {
	authURL, user, key := swiftEnv(t)
	token, storageURL := v1Token(t, authURL, user, key)
	c := swiftClient(t, objclient.Config{Token: token, StorageURL: storageURL + "/"})
	if c.Endpoint() != storageURL {
		t.Fatalf("endpoint %q, want %q", c.Endpoint(), storageURL)
	}
	contract(t, c, uniqueBucket("objclient-token"))
}

func TestSwiftCheckMessages(t *testing.T) {
	authURL, user, key := swiftEnv(t)
	ctx := context.Background()

	bad := swiftClient(t, objclient.Config{AuthURL: authURL, User: user, Key: key + "-wrong"})
	err := bad.Check(ctx, "", false)
	if err == nil || err.Error() != authURL+" rejected the credentials (401 Unauthorized); check --user and --key" {
		t.Errorf("bad key: %v", err)
	}
	_, err = bad.Get(ctx, "c", "o", objclient.GetOptions{})
	var oe *objclient.Error
	if !errors.As(err, &oe) || oe.Op != "auth" || oe.Status != 401 || oe.Code != "" ||
		!strings.HasPrefix(oe.Message, "Unauthorized") {
		t.Errorf("bad key, get: %#v", err)
	}

	_, storageURL := v1Token(t, authURL, user, key)
	badToken := swiftClient(t, objclient.Config{Token: "AUTH_tk0000", StorageURL: storageURL})
	err = badToken.Check(ctx, "anything", false)
	if err == nil || err.Error() != storageURL+" rejected the credentials (401 Unauthorized); check --token and --storage-url" {
		t.Errorf("bad token: %v", err)
	}

	good := swiftClient(t, objclient.Config{AuthURL: authURL, User: user, Key: key})
	missing := uniqueBucket("objclient-missing")
	err = good.Check(ctx, missing, false)
	if err == nil || err.Error() != `container "`+missing+`" does not exist at `+storageURL {
		t.Errorf("missing container: %v", err)
	}
	_, err = good.Head(ctx, missing, "o")
	if !objclient.IsNotFound(err) || objclient.ErrorKind(err) != "404 Not Found" {
		t.Errorf("head in a missing container: %v (kind %q)", err, objclient.ErrorKind(err))
	}
	_, err = good.Get(ctx, missing, "o", objclient.GetOptions{})
	if !errors.As(err, &oe) || oe.Message != "Not Found The resource could not be found." {
		t.Errorf("get in a missing container: %#v", err)
	}

	wrongPath := swiftClient(t, objclient.Config{AuthURL: strings.TrimSuffix(authURL, "/auth/v1.0") + "/nowhere", User: user, Key: key})
	if err := wrongPath.Check(ctx, "", false); err == nil || !strings.Contains(err.Error(), "check --auth-url") {
		t.Errorf("wrong auth path: %v", err)
	}
}

// TestSwiftRejectedManifest: Swift validates a manifest against its segments and names every
// bad one in a multi-line plain-text body; the error must carry those lines.
func TestSwiftRejectedManifest(t *testing.T) {
	authURL, user, key := swiftEnv(t)
	ctx := context.Background()
	c := swiftClient(t, objclient.Config{AuthURL: authURL, User: user, Key: key})
	bucket := uniqueBucket("objclient-manifest")
	t.Cleanup(func() { removeBucket(t, c, bucket) })
	if err := c.CreateBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	id, err := c.StartUpload(ctx, bucket, "k", objclient.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.UploadPart(ctx, bucket, "k", id, 1, bytes.NewReader([]byte("hello")), 5)
	if err != nil {
		t.Fatal(err)
	}
	p.ETag = "00000000000000000000000000000000"
	_, err = c.CompleteUpload(ctx, bucket, "k", id, []objclient.Part{p})
	var oe *objclient.Error
	if !errors.As(err, &oe) || oe.Status != 400 || !strings.Contains(oe.Message, "Etag Mismatch") {
		t.Errorf("complete with a wrong ETag: %#v", err)
	}
	if _, err := c.CompleteUpload(ctx, bucket, "k", "k/slo/1/", []objclient.Part{p}); !objclient.IsNotFound(err) {
		t.Errorf("complete of an upload never started: %v", err)
	}
	if _, err := c.ListParts(ctx, bucket, "k", "other/slo/1/"); err == nil || !strings.Contains(err.Error(), "not a Swift upload ID") {
		t.Errorf("upload ID of another key: %v", err)
	}
	if err := c.AbortUpload(ctx, bucket, "k", id); err != nil {
		t.Fatal(err)
	}
}
