package badinput

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// TestAuthFailuresChangeNothing sends an overwriting PUT, a DELETE and a GET of an existing
// object with every kind of bad credentials: each gets its exact 403 code, the object and the
// listing stay as they were, and no object bytes leak into an error.
func TestAuthFailuresChangeNothing(t *testing.T) {
	s := startServer(t, "")
	const bucket = "auth"
	s.createBucket(bucket)
	old := randomBytes(4 * KiB)
	s.put(bucket, "victim", old)
	s.put(bucket, "other", []byte("other"))
	before := s.snapshot(bucket)
	evil := []byte(strings.Repeat("overwritten!", 100))

	wrongSecret := sigv4.Credential{AccessKey: accessKey, SecretKey: "not-the-secret"}
	unknownKey := sigv4.Credential{AccessKey: "NOSUCHACCESSKEY", SecretKey: secretKey}
	now := time.Now()

	cases := []struct {
		name   string
		status int
		code   string
		// build returns a ready-to-send request for method on the victim.
		build func(t *testing.T, method string, body []byte) *http.Request
	}{
		{"wrong secret", http.StatusForbidden, "SignatureDoesNotMatch", func(t *testing.T, m string, body []byte) *http.Request {
			req := newRequest(t, m, s.url(bucket, "victim", ""), body)
			sign(t, req, wrongSecret, now, body)
			return req
		}},
		{"unknown access key", http.StatusForbidden, "InvalidAccessKeyId", func(t *testing.T, m string, body []byte) *http.Request {
			req := newRequest(t, m, s.url(bucket, "victim", ""), body)
			sign(t, req, unknownKey, now, body)
			return req
		}},
		{"anonymous", http.StatusForbidden, "AccessDenied", func(t *testing.T, m string, body []byte) *http.Request {
			return newRequest(t, m, s.url(bucket, "victim", ""), body)
		}},
		{"signature of another body", http.StatusForbidden, "SignatureDoesNotMatch", func(t *testing.T, m string, body []byte) *http.Request {
			req := newRequest(t, m, s.url(bucket, "victim", ""), body)
			sign(t, req, rootCred, now, body)
			// A header added after signing that the signature names: tampering.
			req.Header.Set("X-Amz-Date", now.Add(time.Second).UTC().Format("20060102T150405Z"))
			return req
		}},
		{"clock 20 minutes fast", http.StatusForbidden, "RequestTimeTooSkewed", func(t *testing.T, m string, body []byte) *http.Request {
			req := newRequest(t, m, s.url(bucket, "victim", ""), body)
			sign(t, req, rootCred, now.Add(20*time.Minute), body)
			return req
		}},
		{"clock 20 minutes slow", http.StatusForbidden, "RequestTimeTooSkewed", func(t *testing.T, m string, body []byte) *http.Request {
			req := newRequest(t, m, s.url(bucket, "victim", ""), body)
			sign(t, req, rootCred, now.Add(-20*time.Minute), body)
			return req
		}},
		{"expired presigned URL", http.StatusForbidden, "AccessDenied", func(t *testing.T, m string, body []byte) *http.Request {
			u, err := sigv4.Presign(newRequest(t, m, s.url(bucket, "victim", ""), nil), rootCred, region, now.Add(-2*time.Hour), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return newRequest(t, m, u, body)
		}},
		{"presigned URL dated 20 minutes ahead", http.StatusForbidden, "AccessDenied", func(t *testing.T, m string, body []byte) *http.Request {
			u, err := sigv4.Presign(newRequest(t, m, s.url(bucket, "victim", ""), nil), rootCred, region, now.Add(20*time.Minute), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return newRequest(t, m, u, body)
		}},
		{"presigned URL with a wrong signature", http.StatusForbidden, "SignatureDoesNotMatch", func(t *testing.T, m string, body []byte) *http.Request {
			u, err := sigv4.Presign(newRequest(t, m, s.url(bucket, "victim", ""), nil), wrongSecret, region, now, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return newRequest(t, m, u, body)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.send(c.build(t, http.MethodPut, evil))
			expectError(t, "PUT", r, c.status, c.code)
			r = s.send(c.build(t, http.MethodDelete, nil))
			expectError(t, "DELETE", r, c.status, c.code)
			r = s.send(c.build(t, http.MethodGet, nil))
			expectError(t, "GET", r, c.status, c.code)
			if strings.Contains(string(r.Body), string(old[:16])) {
				t.Errorf("GET with bad credentials leaked object bytes")
			}
			s.expectUnchanged(c.name, bucket, before)
		})
	}

	// The control: a presigned URL that is valid works, so the failures above are the
	// credentials' fault and not the test's.
	u, err := sigv4.Presign(newRequest(t, http.MethodGet, s.url(bucket, "victim", ""), nil), rootCred, region, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r := s.send(newRequest(t, http.MethodGet, u, nil))
	if r.Status != http.StatusOK || string(r.Body) != string(old) {
		t.Errorf("valid presigned GET: %s", r)
	}
}
