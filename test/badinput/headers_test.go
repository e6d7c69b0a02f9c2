package badinput

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawExchange writes raw bytes on a fresh connection and reads one response.
func (s *testServer) rawExchange(t *testing.T, raw []byte) (response, error) {
	t.Helper()
	c := s.dial()
	defer c.Close()
	go c.Write(raw)                                     // the server may answer (and close) before reading it all
	c.SetReadDeadline(time.Now().Add(60 * time.Second)) // a safety net, not a threshold
	return readRawResponse(t, c, nil)
}

// TestOversizedHeaders sends requests whose head is too big or broken: too many headers, one
// huge header, a huge URI, malformed header lines. net/http refuses them (431 or 400) before
// Cairn sees them; the server survives, the next request works, and nothing stored changes.
func TestOversizedHeaders(t *testing.T) {
	s := startServer(t, "")
	const bucket = "headers"
	s.createBucket(bucket)
	s.put(bucket, "victim", []byte("the victim"))
	before := s.snapshot(bucket)

	signedPut := func(extra func(*http.Request)) []byte {
		body := []byte("overwritten")
		req := newRequest(t, http.MethodPut, s.url(bucket, "victim", ""), body)
		extra(req)
		sign(t, req, rootCred, time.Now(), body)
		return append(rawHead(req, int64(len(body))), body...)
	}
	cases := []struct {
		name   string
		raw    []byte
		status int
	}{
		{"20,000 headers", signedPut(func(r *http.Request) {
			for i := range 20000 {
				r.Header.Set(fmt.Sprintf("X-Pad-%d", i), "v")
			}
		}), http.StatusRequestHeaderFieldsTooLarge},
		{"one 1 MiB header", signedPut(func(r *http.Request) {
			r.Header.Set("X-Amz-Meta-Big", strings.Repeat("b", MiB))
		}), http.StatusRequestHeaderFieldsTooLarge},
		{"a 1 MiB URI", []byte("PUT /" + bucket + "/victim?" + strings.Repeat("q", MiB) + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"),
			http.StatusRequestHeaderFieldsTooLarge},
		{"a header line without a colon", []byte("PUT /" + bucket + "/victim HTTP/1.1\r\nHost: x\r\nno colon here\r\nContent-Length: 0\r\n\r\n"),
			http.StatusBadRequest},
		{"a NUL in a header value", []byte("PUT /" + bucket + "/victim HTTP/1.1\r\nHost: x\r\nX-Amz-Meta-A: a\x00b\r\nContent-Length: 0\r\n\r\n"),
			http.StatusBadRequest},
		{"two Content-Lengths", []byte("PUT /" + bucket + "/victim HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"),
			http.StatusBadRequest},
		{"a negative Content-Length", []byte("PUT /" + bucket + "/victim HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
			http.StatusBadRequest},
		// net/http lets Transfer-Encoding win over Content-Length (RFC 9112 6.3) and hands the
		// request on: unsigned, it is denied.
		{"Content-Length and Transfer-Encoding", []byte("PUT /" + bucket + "/victim HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
			http.StatusForbidden},
		{"garbage request line", []byte("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http at all\r\n\r\n"),
			http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := s.rawExchange(t, c.raw)
			if err != nil {
				t.Fatalf("no HTTP answer: %v", err)
			}
			expectStatus(t, c.name, r, c.status)
			s.expectUnchanged("after "+c.name, bucket, before)
		})
	}

	// Many headers within the limit are a valid, signed request: it works.
	body := []byte("with many headers")
	req := newRequest(t, http.MethodPut, s.url(bucket, "many-headers", ""), body)
	for i := range 500 {
		req.Header.Set(fmt.Sprintf("X-Pad-%d", i), "v")
	}
	sign(t, req, rootCred, time.Now(), body)
	if r := s.send(req); r.Status != http.StatusOK {
		t.Errorf("PUT with 500 signed headers: %s", r)
	}
	s.expectObject("many headers", bucket, "many-headers", body)
}

// TestMetadataTooLarge: user metadata over S3's 2 KB (names plus values) is refused with
// MetadataTooLarge on PUT, CopyObject (REPLACE) and CreateMultipartUpload; exactly 2 KB works.
func TestMetadataTooLarge(t *testing.T) {
	s := startServer(t, "")
	const bucket = "metadata"
	s.createBucket(bucket)
	old := []byte("the old version")
	s.put(bucket, "victim", old)
	before := s.snapshot(bucket)

	// "big" (3 bytes) + value: 2048 bytes exactly, then one more.
	exact := strings.Repeat("v", 2048-3)
	over := exact + "v"
	tooBig := [][]string{
		{"X-Amz-Meta-Big", over},
		{"X-Amz-Meta-A", strings.Repeat("a", 1100), "X-Amz-Meta-B", strings.Repeat("b", 1100)},
	}
	many := []string{}
	for i := range 300 {
		many = append(many, fmt.Sprintf("X-Amz-Meta-K%03d", i), "vvvv")
	}
	tooBig = append(tooBig, many)

	for i, hdr := range tooBig {
		what := fmt.Sprintf("metadata set %d", i)
		r := s.call(http.MethodPut, bucket, "victim", "", []byte("new"), hdr...)
		expectError(t, what+": PUT", r, http.StatusBadRequest, "MetadataTooLarge")
		r = s.call(http.MethodPut, bucket, "victim", "", nil,
			append([]string{"X-Amz-Copy-Source", "/" + bucket + "/victim", "X-Amz-Metadata-Directive", "REPLACE"}, hdr...)...)
		expectError(t, what+": CopyObject REPLACE", r, http.StatusBadRequest, "MetadataTooLarge")
		r = s.call(http.MethodPost, bucket, "victim", "uploads", nil, hdr...)
		expectError(t, what+": CreateMultipartUpload", r, http.StatusBadRequest, "MetadataTooLarge")
	}
	// A metadata header repeated: S3 joins the values, and counts the joined size.
	req := newRequest(t, http.MethodPut, s.url(bucket, "victim", ""), []byte("new"))
	for range 200 {
		req.Header.Add("X-Amz-Meta-Rep", "0123456789")
	}
	sign(t, req, rootCred, time.Now(), []byte("new"))
	expectError(t, "PUT with a repeated metadata header", s.send(req), http.StatusBadRequest, "MetadataTooLarge")

	s.expectUnchanged("after refused metadata", bucket, before)
	r := s.call(http.MethodHead, bucket, "victim", "", nil)
	if r.Header.Get("X-Amz-Meta-Big") != "" {
		t.Errorf("refused metadata was stored")
	}
	r = s.call(http.MethodGet, bucket, "", "uploads", nil)
	if bytes.Contains(r.Body, []byte("<Upload>")) {
		t.Errorf("a refused CreateMultipartUpload left an upload: %s", r.Body)
	}

	// The limit itself is allowed.
	if r := s.call(http.MethodPut, bucket, "exact", "", []byte("x"), "X-Amz-Meta-Big", exact); r.Status != http.StatusOK {
		t.Errorf("PUT with exactly 2 KB of metadata: %s", r)
	}
	if r := s.call(http.MethodHead, bucket, "exact", "", nil); r.Header.Get("X-Amz-Meta-Big") != exact {
		t.Errorf("2 KB of metadata not stored exactly")
	}
}
