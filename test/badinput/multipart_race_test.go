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
	rest, answer := s.sendInTwo(t, http.MethodPut, s.url(bucket, "obj", "partNumber=1&uploadId="+id), second, 50*KiB)

	complete := fmt.Sprintf(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>`, etag)
	r = s.call(http.MethodPost, bucket, "obj", "uploadId="+id, []byte(complete))
	if r.Status != http.StatusOK {
		t.Fatalf("CompleteMultipartUpload: %s", r)
	}
	rest()
	expectError(t, "UploadPart that outlived its upload", <-answer, http.StatusNotFound, "NoSuchUpload")

	got := s.call(http.MethodGet, bucket, "obj", "", nil)
	if got.Status != http.StatusOK || !bytes.Equal(got.Body, first) {
		t.Fatalf("completed object after the late part: status %d, %d bytes, same=%v", got.Status, len(got.Body), bytes.Equal(got.Body, first))
	}
}

// createUpload starts a multipart upload of bucket/key and returns its ID.
func (s *testServer) createUpload(t *testing.T, bucket, key string) string {
	t.Helper()
	r := s.call(http.MethodPost, bucket, key, "uploads", nil)
	id := between(string(r.Body), "<UploadId>", "</UploadId>")
	if r.Status != http.StatusOK || id == "" {
		t.Fatalf("CreateMultipartUpload: %s", r)
	}
	return id
}

// uploadPart stores part n and returns its ETag.
func (s *testServer) uploadPart(t *testing.T, bucket, key, id string, n int, data []byte) string {
	t.Helper()
	r := s.call(http.MethodPut, bucket, key, fmt.Sprintf("partNumber=%d&uploadId=%s", n, id), data)
	if r.Status != http.StatusOK || r.Header.Get("ETag") == "" {
		t.Fatalf("UploadPart %d: %s", n, r)
	}
	return r.Header.Get("ETag")
}

func completeBody(etags ...string) []byte {
	var b bytes.Buffer
	b.WriteString("<CompleteMultipartUpload>")
	for i, e := range etags {
		fmt.Fprintf(&b, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", i+1, e)
	}
	b.WriteString("</CompleteMultipartUpload>")
	return b.Bytes()
}

// An Abort racing a Complete of the same upload: exactly one wins, the other answers
// NoSuchUpload, and a completed object always reads back whole.
func TestAbortRacingCompleteHasOneWinner(t *testing.T) {
	s := startServer(t, "")
	const bucket = "abortrace"
	s.createBucket(bucket)
	completed, aborted := 0, 0
	for round := range 30 {
		key := fmt.Sprintf("obj%02d", round)
		id := s.createUpload(t, bucket, key)
		data := randomBytes(64 * KiB)
		etag := s.uploadPart(t, bucket, key, id, 1, data)

		var complete, abort response
		done := make(chan struct{})
		go func() {
			defer close(done)
			abort = s.call(http.MethodDelete, bucket, key, "uploadId="+id, nil)
		}()
		complete = s.call(http.MethodPost, bucket, key, "uploadId="+id, completeBody(etag))
		<-done

		switch {
		case complete.Status == http.StatusOK && abort.Status == http.StatusNotFound:
			completed++
			expectError(t, "the Abort that lost", abort, http.StatusNotFound, "NoSuchUpload")
			s.expectObject("completed object", bucket, key, data)
		case abort.Status == http.StatusNoContent && complete.Status == http.StatusNotFound:
			aborted++
			expectError(t, "the Complete that lost", complete, http.StatusNotFound, "NoSuchUpload")
			s.expectNoKey("aborted upload", bucket, key)
		default:
			t.Fatalf("round %d: Complete %s\nAbort %s\nwant exactly one winner", round, complete, abort)
		}
		// Nothing of the upload is left: its parts went with the loser or into the object.
		expectError(t, "ListParts of the ended upload", s.call(http.MethodGet, bucket, key, "uploadId="+id, nil), http.StatusNotFound, "NoSuchUpload")
	}
	t.Logf("completed %d, aborted %d", completed, aborted)
	if r := s.call(http.MethodGet, bucket, "", "uploads", nil); strings.Contains(string(r.Body), "<Upload>") {
		t.Fatalf("uploads left after every race ended: %s", r.Body)
	}
}

// Two Completes of one upload at once both succeed with the same object, as a retried
// completion does.
func TestConcurrentCompletesAgree(t *testing.T) {
	s := startServer(t, "")
	const bucket = "completerace"
	s.createBucket(bucket)
	for round := range 10 {
		key := fmt.Sprintf("obj%02d", round)
		id := s.createUpload(t, bucket, key)
		data := randomBytes(32 * KiB)
		etag := s.uploadPart(t, bucket, key, id, 1, data)
		answers := make(chan response, 2)
		for range 2 {
			go func() { answers <- s.call(http.MethodPost, bucket, key, "uploadId="+id, completeBody(etag)) }()
		}
		a, b := <-answers, <-answers
		if a.Status != http.StatusOK || b.Status != http.StatusOK {
			t.Fatalf("round %d: concurrent Completes: %s\n%s", round, a, b)
		}
		if ea, eb := between(string(a.Body), "<ETag>", "</ETag>"), between(string(b.Body), "<ETag>", "</ETag>"); ea != eb || ea == "" {
			t.Fatalf("round %d: the Completes disagree: %q vs %q", round, ea, eb)
		}
		s.expectObject("completed object", bucket, key, data)
	}
}

// A part uploaded twice: the newer upload is the part, the older one is not completable, and
// the completed object holds the newer bytes.
func TestReuploadedPartReplacesTheOlder(t *testing.T) {
	s := startServer(t, "")
	const bucket = "reupload"
	s.createBucket(bucket)
	id := s.createUpload(t, bucket, "obj")
	first, second := randomBytes(20*KiB), randomBytes(30*KiB)
	oldETag := s.uploadPart(t, bucket, "obj", id, 1, first)
	newETag := s.uploadPart(t, bucket, "obj", id, 1, second)
	r := s.call(http.MethodGet, bucket, "obj", "uploadId="+id, nil)
	if n := strings.Count(string(r.Body), "<Part>"); r.Status != http.StatusOK || n != 1 || !strings.Contains(string(r.Body), strings.Trim(newETag, `"`)) {
		t.Fatalf("ListParts after a re-upload: want one part with ETag %s: %s", newETag, r)
	}
	expectError(t, "Complete naming the replaced part", s.call(http.MethodPost, bucket, "obj", "uploadId="+id, completeBody(oldETag)), http.StatusBadRequest, "InvalidPart")
	expectStatus(t, "Complete naming the newer part", s.call(http.MethodPost, bucket, "obj", "uploadId="+id, completeBody(newETag)), http.StatusOK)
	s.expectObject("completed object", bucket, "obj", second)
}

// An Abort that lands while a Complete's body is still arriving wins (the Complete has not
// claimed the upload yet): the Complete then answers NoSuchUpload, not InvalidPart, and no
// object appears.
func TestAbortDuringCompleteBodyWins(t *testing.T) {
	s := startServer(t, "")
	const bucket = "abortbody"
	s.createBucket(bucket)
	id := s.createUpload(t, bucket, "obj")
	etag := s.uploadPart(t, bucket, "obj", id, 1, randomBytes(10*KiB))

	// Whitespace pads the document past the client's write buffer, so that the server sees the
	// request (and looks the upload up) before the Abort.
	body := append(bytes.Repeat([]byte(" "), 16*KiB), completeBody(etag)...)
	rest, answer := s.sendInTwo(t, http.MethodPost, s.url(bucket, "obj", "uploadId="+id), body, 12*KiB)
	for s.metricSum("cairn_http_requests_in_flight ") < 1 {
		time.Sleep(time.Millisecond)
	}
	expectStatus(t, "Abort while the Complete's body arrives", s.call(http.MethodDelete, bucket, "obj", "uploadId="+id, nil), http.StatusNoContent)
	rest()
	expectError(t, "Complete of the aborted upload", <-answer, http.StatusNotFound, "NoSuchUpload")
	s.expectNoKey("aborted upload", bucket, "obj")
}

// sendInTwo sends a signed request (unsigned payload) whose body arrives in two goes: the first
// n bytes now, the rest when the caller calls rest. answer delivers the response.
func (s *testServer) sendInTwo(t *testing.T, method, url string, body []byte, n int) (rest func(), answer <-chan response) {
	t.Helper()
	pr, pw := io.Pipe()
	req := newRequest(t, method, url, nil)
	req.Body, req.ContentLength = pr, int64(len(body))
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	sign(t, req, rootCred, time.Now(), nil)
	ch := make(chan response, 1)
	go func() { ch <- s.send(req) }()
	if _, err := pw.Write(body[:n]); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := pw.Write(body[n:]); err != nil {
			t.Fatal(err)
		}
		pw.Close()
	}, ch
}
