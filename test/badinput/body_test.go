package badinput

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBodyIntegrityMismatch overwrites an existing key (inline and file size) with bodies that
// fail a check only the whole body can decide: the declared SHA-256, Content-MD5 or CRC32 is of
// other bytes, or is malformed; an aws-chunked chunk signature is wrong; the chunked body holds
// more or fewer bytes than it declares. Each gets its S3 error, and the old object stays.
func TestBodyIntegrityMismatch(t *testing.T) {
	s := startServer(t, "")
	const bucket = "integrity"
	s.createBucket(bucket)

	other := []byte("some other bytes")
	cases := []struct {
		name   string
		hdr    func(data []byte) []string
		status int
		code   string
	}{
		{"x-amz-content-sha256 of other bytes", func([]byte) []string {
			return []string{"X-Amz-Content-Sha256", sha256Hex(other)}
		}, http.StatusBadRequest, "XAmzContentSHA256Mismatch"},
		{"Content-MD5 of other bytes", func([]byte) []string {
			return []string{"Content-Md5", md5B64(other)}
		}, http.StatusBadRequest, "BadDigest"},
		{"Content-MD5 not base64", func([]byte) []string {
			return []string{"Content-Md5", "not*base64"}
		}, http.StatusBadRequest, "InvalidDigest"},
		{"Content-MD5 of the wrong length", func([]byte) []string {
			return []string{"Content-Md5", "AAAA"}
		}, http.StatusBadRequest, "InvalidDigest"},
		{"x-amz-checksum-crc32 of other bytes", func([]byte) []string {
			return []string{"X-Amz-Checksum-Crc32", crc32B64(other)}
		}, http.StatusBadRequest, "BadDigest"},
		{"x-amz-checksum-crc32 and a matching MD5 but wrong CRC", func(d []byte) []string {
			return []string{"Content-Md5", md5B64(d), "X-Amz-Checksum-Crc32", crc32B64(other)}
		}, http.StatusBadRequest, "BadDigest"},
		// s3-tests' test_object_checksum_sha256 expects BadDigest for a value that is no
		// checksum ("bad"), with AWS's text "Value for x-amz-checksum-crc32 header is invalid.".
		{"x-amz-checksum-crc32 malformed", func([]byte) []string {
			return []string{"X-Amz-Checksum-Crc32", "!!!"}
		}, http.StatusBadRequest, "BadDigest"},
		{"unsigned payload with Content-MD5 of other bytes", func([]byte) []string {
			return []string{"X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD", "Content-Md5", md5B64(other)}
		}, http.StatusBadRequest, "BadDigest"},
	}
	for _, size := range []int{4 * KiB, 2 * MiB} {
		key := fmt.Sprintf("victim-%d", size)
		old := randomBytes(size)
		s.put(bucket, key, old)
		before := s.snapshot(bucket)
		for _, c := range cases {
			t.Run(fmt.Sprintf("%d/%s", size, c.name), func(t *testing.T) {
				data := randomBytes(size)
				r := s.call(http.MethodPut, bucket, key, "", data, c.hdr(data)...)
				expectError(t, "PUT", r, c.status, c.code)
				r = s.call(http.MethodPut, bucket, "new-"+key, "", data, c.hdr(data)...)
				expectError(t, "PUT of a new key", r, c.status, c.code)
				s.expectUnchanged(c.name, bucket, before)
			})
		}

		t.Run(fmt.Sprintf("%d/aws-chunked", size), func(t *testing.T) {
			chunk := max(size/4, 1*KiB)
			data := randomBytes(size)
			framed := func(cs *chunkSigner, data []byte) []byte {
				var b []byte
				for off := 0; off < len(data); off += chunk {
					b = append(b, cs.chunk(data[off:min(off+chunk, len(data))])...)
				}
				return append(b, cs.chunk(nil)...)
			}
			streamingPut := func(declared int, build func(cs *chunkSigner) []byte, estimate int) response {
				req := newRequest(t, http.MethodPut, s.url(bucket, key, ""), nil)
				req.ContentLength = int64(estimate)
				cs := newChunkSigner(t, req, declared, time.Now())
				body := build(cs)
				if len(body) != estimate {
					t.Fatalf("framed %d bytes, estimated %d", len(body), estimate)
				}
				req.Body = io.NopCloser(bytes.NewReader(body))
				return s.send(req)
			}
			// A chunk signed for other bytes.
			r := streamingPut(size, func(cs *chunkSigner) []byte {
				b := framed(cs, data)
				i := bytes.Index(b, []byte("\r\n")) + 2
				b[i] ^= 0xff // first data byte of the first chunk
				return b
			}, chunkedLength(size, chunk))
			expectError(t, "aws-chunked PUT with a tampered chunk", r, http.StatusForbidden, "SignatureDoesNotMatch")
			// Fewer decoded bytes declared than sent.
			r = streamingPut(size-1, func(cs *chunkSigner) []byte { return framed(cs, data) }, chunkedLength(size, chunk))
			expectError(t, "aws-chunked PUT longer than x-amz-decoded-content-length", r, http.StatusBadRequest, "IncompleteBody")
			// More decoded bytes declared than sent.
			r = streamingPut(size+1, func(cs *chunkSigner) []byte { return framed(cs, data) }, chunkedLength(size, chunk))
			expectError(t, "aws-chunked PUT shorter than x-amz-decoded-content-length", r, http.StatusBadRequest, "IncompleteBody")
			s.expectUnchanged("aws-chunked", bucket, before)
		})

		// The body goes on past Content-Length: the server stores exactly Content-Length bytes
		// or nothing. With a payload hash over the whole body, the first Content-Length bytes
		// do not match it; the excess arrives as a garbage next request on the connection.
		t.Run(fmt.Sprintf("%d/body longer than Content-Length", size), func(t *testing.T) {
			data := randomBytes(size + 100)
			for _, hdr := range [][]string{
				{"X-Amz-Content-Sha256", sha256Hex(data)},
				{"X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD", "Content-Md5", md5B64(data)},
				{"X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD", "X-Amz-Checksum-Crc32", crc32B64(data)},
			} {
				req := newRequest(t, http.MethodPut, s.url(bucket, key, ""), nil)
				req.ContentLength = int64(size)
				for i := 0; i < len(hdr); i += 2 {
					req.Header.Set(hdr[i], hdr[i+1])
				}
				sign(t, req, rootCred, time.Now(), nil)
				c := s.dial()
				go func() {
					c.Write(rawHead(req, int64(size)))
					c.Write(data)
				}()
				c.SetReadDeadline(time.Now().Add(60 * time.Second)) // safety net only
				r, err := readRawResponse(t, c, req)
				c.Close()
				if err != nil {
					t.Fatalf("%v: no answer: %v", hdr, err)
				}
				want := "BadDigest"
				if strings.HasPrefix(hdr[1], "UNSIGNED") == false {
					want = "XAmzContentSHA256Mismatch"
				}
				expectError(t, fmt.Sprintf("PUT with %v and a longer body", hdr), r, http.StatusBadRequest, want)
			}
			s.expectUnchanged("longer body", bucket, before)
		})
	}

	// A body without a length (Transfer-Encoding: chunked) is refused, as S3 does.
	data := randomBytes(4 * KiB)
	req := newRequest(t, http.MethodPut, s.url(bucket, "no-length", ""), nil)
	req.Body = io.NopCloser(bytes.NewReader(data))
	req.ContentLength = -1
	sign(t, req, rootCred, time.Now(), data)
	expectError(t, "PUT with Transfer-Encoding: chunked", s.send(req), http.StatusLengthRequired, "MissingContentLength")
	s.expectNoKey("after PUT without a length", bucket, "no-length")

	// Multipart parts are checked the same way, and a bad part leaves no part behind.
	r := s.call(http.MethodPost, bucket, "mp", "uploads", nil)
	uploadID := between(string(r.Body), "<UploadId>", "</UploadId>")
	if r.Status != http.StatusOK || uploadID == "" {
		t.Fatalf("CreateMultipartUpload: %s", r)
	}
	for _, c := range cases {
		data := randomBytes(64 * KiB)
		r := s.call(http.MethodPut, bucket, "mp", "partNumber=1&uploadId="+uploadID, data, c.hdr(data)...)
		expectError(t, "UploadPart with "+c.name, r, c.status, c.code)
	}
	r = s.call(http.MethodGet, bucket, "mp", "uploadId="+uploadID, nil)
	if r.Status != http.StatusOK || strings.Contains(string(r.Body), "<Part>") {
		t.Errorf("ListParts after refused parts: %s", r)
	}
}

// between returns the text between the first open and the following close, or "".
func between(s, open, close string) string {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, close)
	return v
}
