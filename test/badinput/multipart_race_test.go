package badinput

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// A part still streaming when its upload completes must not be stored: it would overwrite a
// segment the completed object owns, and every read of that object would fail.
func TestPartStreamingAcrossCompleteIsRefused(t *testing.T) {
	s := startServer(t, "")
	const bucket = "mprace"
	s.createBucket(bucket)
	r := s.call(http.MethodPost, bucket, "obj", "uploads", nil)
	id := between(string(r.Body), "<UploadId>", "</UploadId>")
	if r.Status != http.StatusOK || id == "" {
		t.Fatalf("CreateMultipartUpload: %s", r)
	}
	first := randomBytes(100 * KiB)
	r = s.call(http.MethodPut, bucket, "obj", "partNumber=1&uploadId="+id, first)
	etag := r.Header.Get("ETag")
	if r.Status != http.StatusOK || etag == "" {
		t.Fatalf("UploadPart 1: %s", r)
	}

	// Part 1 again, with other bytes, sent slowly: half now, half after the Complete.
	second := randomBytes(100 * KiB)
	pr, pw := io.Pipe()
	req := newRequest(t, http.MethodPut, s.url(bucket, "obj", "partNumber=1&uploadId="+id), nil)
	req.Body, req.ContentLength = pr, int64(len(second))
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	sign(t, req, rootCred, time.Now(), nil)
	answer := make(chan response, 1)
	go func() { answer <- s.send(req) }()
	if _, err := pw.Write(second[:50*KiB]); err != nil {
		t.Fatal(err)
	}

	complete := fmt.Sprintf(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>`, etag)
	r = s.call(http.MethodPost, bucket, "obj", "uploadId="+id, []byte(complete))
	if r.Status != http.StatusOK {
		t.Fatalf("CompleteMultipartUpload: %s", r)
	}
	if _, err := pw.Write(second[50*KiB:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	expectError(t, "UploadPart that outlived its upload", <-answer, http.StatusNotFound, "NoSuchUpload")

	got := s.call(http.MethodGet, bucket, "obj", "", nil)
	if got.Status != http.StatusOK || !bytes.Equal(got.Body, first) {
		t.Fatalf("completed object after the late part: status %d, %d bytes, same=%v", got.Status, len(got.Body), bytes.Equal(got.Body, first))
	}
}
