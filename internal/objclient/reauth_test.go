package objclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type countingTransport struct {
	next    http.RoundTripper
	authURL string
	auths   atomic.Int32
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.String() == t.authURL {
		t.auths.Add(1)
	}
	return t.next.RoundTrip(r)
}

// TestSwiftReauthentication expires the token of a v1 client (Swift answers an unknown token
// exactly as an expired one: 401) under concurrent workers: every request must succeed after
// one new authentication, not one per worker.
func TestSwiftReauthentication(t *testing.T) {
	authURL := os.Getenv("CAIRN_TEST_SWIFT_AUTH")
	if authURL == "" {
		t.Skip("no Swift to test against: set CAIRN_TEST_SWIFT_AUTH=http://127.0.0.1:8080/auth/v1.0")
	}
	user, key := os.Getenv("CAIRN_TEST_SWIFT_USER"), os.Getenv("CAIRN_TEST_SWIFT_KEY")
	if user == "" {
		user, key = "test:tester", "testing"
	}
	cl, err := New(Config{Protocol: ProtocolSwift, AuthURL: authURL, User: user, Key: key, Concurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := cl.(*swiftClient)
	ct := &countingTransport{next: c.hc.Transport, authURL: authURL}
	c.hc.Transport = ct

	ctx := context.Background()
	bucket := fmt.Sprintf("objclient-reauth-%d", time.Now().UnixNano())
	if err := c.Check(ctx, bucket, true); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for i := range 16 {
			c.Delete(ctx, bucket, fmt.Sprintf("o%d", i))
		}
		c.Delete(ctx, bucket, "streamed")
		if err := c.DeleteBucket(ctx, bucket); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	if n := ct.auths.Load(); n != 1 {
		t.Fatalf("%d authentications for the first request", n)
	}

	expire := func() {
		c.mu.Lock()
		c.token = "AUTH_tk" + strings.Repeat("0", 32)
		c.mu.Unlock()
	}
	expire()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			body := []byte(fmt.Sprintf("object %d", i))
			_, err := c.Put(ctx, bucket, fmt.Sprintf("o%d", i), bytes.NewReader(body), int64(len(body)), PutOptions{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("put after the token expired: %v", err)
		}
	}
	if n := ct.auths.Load(); n != 2 {
		t.Errorf("%d authentications, want 2 (one new token for all workers)", n)
	}

	// A body that cannot be rewound is not sent twice: the request fails, the next one works.
	expire()
	_, err = c.Put(ctx, bucket, "streamed", io.MultiReader(strings.NewReader("abc")), 3, PutOptions{})
	if ErrorKind(err) != "401 Unauthorized" {
		t.Errorf("put of a one-shot body with an expired token: %v", err)
	}
	if _, err := c.Put(ctx, bucket, "streamed", io.MultiReader(strings.NewReader("abc")), 3, PutOptions{}); err != nil {
		t.Errorf("put after re-authentication: %v", err)
	}
	var buf bytes.Buffer
	if _, err := c.Get(ctx, bucket, "o3", GetOptions{W: &buf}); err != nil || buf.String() != "object 3" {
		t.Errorf("get: %q, %v", buf.String(), err)
	}
	if n := ct.auths.Load(); n != 3 {
		t.Errorf("%d authentications, want 3", n)
	}
}
