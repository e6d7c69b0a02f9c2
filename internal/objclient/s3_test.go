package objclient_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/objclient"
	"github.com/cairn-store/cairn/internal/testserver"
)

// startCairn runs a real Cairn (storage, proxy, S3 front end) in this test process.
func startCairn(t *testing.T) string { return testserver.Start(t, "objclient", "objclient-secret") }

func s3Client(t *testing.T, ep, secret string) objclient.Client {
	t.Helper()
	c, err := objclient.New(objclient.Config{Endpoint: ep, AccessKey: "objclient", SecretKey: secret, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestS3AgainstCairn(t *testing.T) {
	ep := startCairn(t)
	c := s3Client(t, ep, "objclient-secret")
	if c.Protocol() != objclient.ProtocolS3 || c.Endpoint() != ep {
		t.Fatalf("protocol %q endpoint %q", c.Protocol(), c.Endpoint())
	}
	contract(t, c, uniqueBucket("objclient"))
}

func TestS3CheckMessages(t *testing.T) {
	ep := startCairn(t)
	ctx := context.Background()
	good := s3Client(t, ep, "objclient-secret")
	if err := good.Check(ctx, "checked", true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { good.DeleteBucket(context.Background(), "checked") })
	if err := good.Check(ctx, "checked", false); err != nil {
		t.Fatal(err)
	}

	err := good.Check(ctx, "no-such-bucket", false)
	if err == nil || err.Error() != `bucket "no-such-bucket" does not exist at `+ep {
		t.Errorf("missing bucket: %v", err)
	}

	bad := s3Client(t, ep, "wrong-secret")
	for _, bucket := range []string{"", "checked"} {
		err := bad.Check(ctx, bucket, false)
		if err == nil || !strings.Contains(err.Error(), "rejected the credentials (403 SignatureDoesNotMatch)") ||
			!strings.Contains(err.Error(), "--secret-key") {
			t.Errorf("bad secret, bucket %q: %v", bucket, err)
		}
	}
	_, err = bad.Get(ctx, "checked", "x", objclient.GetOptions{})
	if k := objclient.ErrorKind(err); k != "403 SignatureDoesNotMatch" {
		t.Errorf("error kind %q of %v", k, err)
	}

	// A port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	down := s3Client(t, closed, "x")
	err = down.Check(ctx, "b", false)
	if err == nil || !strings.HasPrefix(err.Error(), "cannot reach "+closed+": ") {
		t.Errorf("closed port: %v", err)
	}
	if k := objclient.ErrorKind(err); k != "connection refused" {
		t.Errorf("closed port: kind %q", k)
	}
}

// TestS3AnswersCairnCannotGive covers answers a correct store only gives under failure, so a
// stand-in server gives them on purpose.
func TestS3AnswersCairnCannotGive(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/b/short":
			// Promise 100 bytes, send 10, hang up.
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(200)
			w.Write(bytes.Repeat([]byte("x"), 10))
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case r.Method == http.MethodPost && r.URL.Query().Has("uploadId"):
			// S3 sends 200 before assembling, then reports failure in the body.
			w.WriteHeader(200)
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
				`<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`))
		case r.URL.Path == "/b/html":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			w.Write([]byte("<html><body><h1>502 Bad Gateway</h1>\nThe upstream went away.</body></html>\n"))
		default:
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	c := s3Client(t, srv.URL, "s")
	ctx := context.Background()

	_, err := c.Get(ctx, "b", "short", objclient.GetOptions{})
	if !errors.Is(err, objclient.ErrShortBody) || objclient.ErrorKind(err) != "short body" {
		t.Errorf("short body: %v (kind %q)", err, objclient.ErrorKind(err))
	}

	_, err = c.CompleteUpload(ctx, "b", "k", "u1", []objclient.Part{{Number: 1, ETag: "e"}})
	var oe *objclient.Error
	if !errors.As(err, &oe) || oe.Code != "InternalError" || oe.Op != "complete-upload" || objclient.ErrorKind(err) != "200 InternalError" {
		t.Errorf("200 with an error body: %v", err)
	}

	_, err = c.Head(ctx, "b", "html")
	if !errors.As(err, &oe) || oe.Status != 502 || oe.Message != "" || objclient.ErrorKind(err) != "502 Bad Gateway" {
		t.Errorf("HEAD 502: %#v", err)
	}
	_, err = c.Get(ctx, "b", "html", objclient.GetOptions{})
	if !errors.As(err, &oe) || oe.Message != "502 Bad Gateway; The upstream went away." {
		t.Errorf("GET 502 with HTML: %#v", err)
	}
}

// BucketLocation is sent as CreateBucket's LocationConstraint: the server takes a policy it has
// and refuses one it does not, which it could only do having read it.
func TestS3BucketLocation(t *testing.T) {
	ep := startCairn(t)
	for _, c := range []struct {
		location string
		ok       bool
	}{{"us-east-1:Policy-0", true}, {"us-east-1:tin <&>", false}} {
		cl, err := objclient.New(objclient.Config{Endpoint: ep, AccessKey: "objclient", SecretKey: "objclient-secret", BucketLocation: c.location})
		if err != nil {
			t.Fatal(err)
		}
		err = cl.CreateBucket(context.Background(), uniqueBucket("located"))
		cl.Close()
		var oe *objclient.Error
		if c.ok && err != nil || !c.ok && (!errors.As(err, &oe) || oe.Code != "InvalidLocationConstraint") {
			t.Errorf("location %q: %v", c.location, err)
		}
	}
}
