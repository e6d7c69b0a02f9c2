package badinput

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/test/e2e"
)

// TestPrivateObjectInPublicBucket: a bucket made public-read to publish its listing holds an
// object put private. Every way of asking for that object's bytes or its metadata, anonymous or
// by another account's user, by plain GET, HEAD, ranges, parts, versions, attributes, ACL,
// tags, copies, a presigned URL of the wrong key or odd spellings of its path, answers 403 and
// leaks none of its bytes, while the listing stays public and the owner's reads work.
func TestPrivateObjectInPublicBucket(t *testing.T) {
	s := startServer(t, "")
	ctx := e2e.Context(t)
	adm, err := admin.NewClient(admin.ClientConfig{Endpoint: s.endpoint, AccessKey: accessKey, SecretKey: secretKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateAccount(ctx, "stranger"); err != nil {
		t.Fatal(err)
	}
	creds, err := adm.CreateUser(ctx, "stranger", "eve", true)
	if err != nil {
		t.Fatal(err)
	}
	eve := sigv4.Credential{AccessKey: creds.AccessKey, SecretKey: creds.SecretKey}

	secret := bytes.Repeat([]byte("top secret bytes "), 64)
	expectStatus(t, "create public-read bucket", s.call(http.MethodPut, "pub", "", "", nil, "x-amz-acl", "public-read"), 200)
	expectStatus(t, "put private object", s.call(http.MethodPut, "pub", "secret", "", secret, "x-amz-acl", "private", "x-amz-tagging", "k=v"), 200)
	expectStatus(t, "put public object", s.call(http.MethodPut, "pub", "open", "", []byte("open bytes"), "x-amz-acl", "public-read"), 200)
	expectStatus(t, "create eve's bucket", s.signedBy(eve, http.MethodPut, "/eves", nil), 200)

	// The listing is public; the object is listed, as S3 lists it.
	if r := s.send(newRequest(t, http.MethodGet, s.endpoint+"/pub", nil)); r.Status != 200 || !bytes.Contains(r.Body, []byte("<Key>secret</Key>")) {
		t.Fatalf("anonymous listing: %s", r)
	}
	if r := s.send(newRequest(t, http.MethodGet, s.endpoint+"/pub/open", nil)); r.Status != 200 || string(r.Body) != "open bytes" {
		t.Fatalf("anonymous GET of the public object: %s", r)
	}

	reads := []struct {
		method, path string
		hdr          []string
	}{
		{http.MethodGet, "/pub/secret", nil},
		{http.MethodHead, "/pub/secret", nil},
		{http.MethodGet, "/pub/secret", []string{"Range", "bytes=0-9"}},
		{http.MethodGet, "/pub/secret", []string{"Range", "bytes=-5"}},
		{http.MethodGet, "/pub/secret?partNumber=1", nil},
		{http.MethodGet, "/pub/secret?versionId=null", nil},
		{http.MethodGet, "/pub/secret?response-content-type=text/plain", nil},
		{http.MethodGet, "/pub/secret?attributes", []string{"x-amz-object-attributes", "ETag,ObjectSize"}},
		{http.MethodGet, "/pub/secret?acl", nil},
		{http.MethodGet, "/pub/secret?tagging", nil},
		{http.MethodGet, "/pub/secret", []string{"If-Match", "*"}},
		{http.MethodGet, "/pub/%73ecret", nil},
		{http.MethodGet, "/pub/./secret", nil},
		{http.MethodGet, "/pub/open/../secret", nil},
		{http.MethodGet, "/pub//secret", nil},
	}
	for _, who := range []string{"anonymous", "another account"} {
		for _, rd := range reads {
			req := newRequest(t, rd.method, s.endpoint+rd.path, nil)
			req.URL.Opaque = "//" + s.host + rd.path // send the path exactly as written
			for i := 0; i+1 < len(rd.hdr); i += 2 {
				req.Header.Set(rd.hdr[i], rd.hdr[i+1])
			}
			if who != "anonymous" {
				sign(t, req, eve, time.Now(), nil)
			}
			r := s.send(req)
			if r.Status == 200 || r.Status == 206 || bytes.Contains(r.Body, []byte("top secret")) {
				t.Errorf("%s %s %s %v: %s", who, rd.method, rd.path, rd.hdr, r)
			} else if r.Status != 403 && r.Status != 404 && r.Status != 400 {
				t.Errorf("%s %s %s %v: %s, want 403 (or 400/404 for a path that names another key)", who, rd.method, rd.path, rd.hdr, r)
			}
		}
	}
	// Copies read the source as its reader: eve's copy into her own bucket, and a part copy.
	expectError(t, "eve's copy of the private object", s.signedBy(eve, http.MethodPut, "/eves/stolen", nil, "x-amz-copy-source", "/pub/secret"), 403, "AccessDenied")
	up := s.signedBy(eve, http.MethodPost, "/eves/mp?uploads", nil)
	expectStatus(t, "eve's upload", up, 200)
	id := between(string(up.Body), "<UploadId>", "</UploadId>")
	expectError(t, "eve's part copy of the private object", s.signedBy(eve, http.MethodPut, "/eves/mp?partNumber=1&uploadId="+url.QueryEscape(id), nil,
		"x-amz-copy-source", "/pub/secret"), 403, "AccessDenied")
	if r := s.signedBy(eve, http.MethodGet, "/eves/stolen", nil); r.Status != 404 {
		t.Errorf("eve's bucket holds a copy: %s", r)
	}
	// A URL presigned by eve reads nothing either.
	req := newRequest(t, http.MethodGet, s.endpoint+"/pub/secret", nil)
	signed, err := sigv4.Presign(req, eve, region, time.Now(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.send(newRequest(t, http.MethodGet, signed, nil)); r.Status != 403 {
		t.Errorf("eve's presigned URL: %s", r)
	}
	// The owner reads it, byte for byte.
	s.expectObject("the owner's read", "pub", "secret", secret)
}

// signedBy sends a request signed by cred; hdr pairs are set first.
func (s *testServer) signedBy(cred sigv4.Credential, method, path string, body []byte, hdr ...string) response {
	s.t.Helper()
	req := newRequest(s.t, method, s.endpoint+path, body)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	sign(s.t, req, cred, time.Now(), body)
	return s.send(req)
}
