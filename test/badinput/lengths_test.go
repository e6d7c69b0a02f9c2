package badinput

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestWrongLengthsAndCopySources: declared lengths that are missing, malformed or over S3's 5 GiB
// limit, and copy sources that are malformed, hostile or missing, each get their S3 error
// without touching the destination; a multi-object delete reports a bad key on its own.
func TestWrongLengthsAndCopySources(t *testing.T) {
	s := startServer(t, "")
	const bucket = "lengths"
	s.createBucket(bucket)
	old := []byte("the destination's old version")
	s.put(bucket, "dst", old)
	s.put(bucket, "src", []byte("source"))
	before := s.snapshot(bucket)

	// A plain PUT declaring more than 5 GiB is refused from its headers, before any body.
	req := newRequest(t, http.MethodPut, s.url(bucket, "dst", ""), nil)
	req.ContentLength = 6 << 30
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	sign(t, req, rootCred, time.Now(), nil)
	c := s.dial()
	c.Write(rawHead(req, 6<<30))
	c.SetReadDeadline(time.Now().Add(60 * time.Second)) // safety net only
	r, err := readRawResponse(t, c, req)
	c.Close()
	if err != nil {
		t.Fatalf("PUT declaring 6 GiB: no answer: %v", err)
	}
	expectError(t, "PUT declaring 6 GiB", r, http.StatusBadRequest, "EntityTooLarge")

	// aws-chunked with a missing, malformed or too large x-amz-decoded-content-length.
	for _, c := range []struct {
		decoded, status, code string
	}{
		{"", "400", "MissingSecurityHeader"},
		// The malformed values get IncompleteBody (sigv4's choice; S3's own code is undocumented).
		{"abc", "400", "IncompleteBody"},
		{"-5", "400", "IncompleteBody"},
		{"99999999999999999999", "400", "IncompleteBody"},
		{"6000000000", "400", "EntityTooLarge"},
	} {
		body := []byte("0;chunk-signature=" + strings.Repeat("0", 64) + "\r\n\r\n")
		req := newRequest(t, http.MethodPut, s.url(bucket, "dst", ""), body)
		req.Header.Set("X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
		req.Header.Set("Content-Encoding", "aws-chunked")
		if c.decoded != "" {
			req.Header.Set("X-Amz-Decoded-Content-Length", c.decoded)
		}
		sign(t, req, rootCred, time.Now(), nil)
		r := s.send(req)
		if got := r.Code; r.Status != http.StatusBadRequest || got != c.code {
			t.Errorf("aws-chunked PUT with x-amz-decoded-content-length %q: got %s, want %s %s", c.decoded, r, c.status, c.code)
		}
	}

	for _, c := range []struct {
		source string
		status int
		code   string
	}{
		{"/" + bucket + "/nosuch", 404, "NoSuchKey"},
		{"/nosuchbucket/src", 404, "NoSuchBucket"},
		{"/" + bucket, 400, "InvalidArgument"},
		{"/" + bucket + "/", 400, "InvalidArgument"},
		{"/%00mpu%00" + bucket + "/x", 400, "InvalidBucketName"}, // the hidden multipart container
		{"/" + bucket + "/a%00b", 400, "InvalidArgument"},
		{"/" + bucket + "/%FF", 400, "InvalidURI"},
		{"/" + bucket + "/%zz", 404, "NoSuchKey"}, // a '%' starting no escape is taken as it is, as Swift's s3api does
		{"/" + bucket + "/" + strings.Repeat("k", 1025), 400, "KeyTooLongError"},
		{"/" + bucket + "/src?versionId=123", 400, "InvalidArgument"},
		{"/" + bucket + "/../" + bucket + "/src", 404, "NoSuchKey"}, // a key "../lengths/src", not a path
	} {
		r := s.call(http.MethodPut, bucket, "dst", "", nil, "X-Amz-Copy-Source", c.source)
		expectError(t, "CopyObject from "+c.source, r, c.status, c.code)
	}
	s.expectUnchanged("after refused writes", bucket, before)

	// A multi-object delete with a bad key among good ones: the bad one is reported, the
	// others are deleted, the request as a whole succeeds.
	s.put(bucket, "gone", []byte("to delete"))
	body := []byte("<Delete><Object><Key>" + strings.Repeat("k", 1025) + "</Key></Object><Object><Key>gone</Key></Object>" +
		"<Object><Key>src</Key><VersionId>v1</VersionId></Object></Delete>")
	r = s.call(http.MethodPost, bucket, "", "delete", body, "Content-Md5", md5B64(body))
	var res struct {
		Deleted []string `xml:"Deleted>Key"`
		Errors  []struct {
			Key  string `xml:"Key"`
			Code string `xml:"Code"`
		} `xml:"Error"`
	}
	if r.Status != http.StatusOK || xml.Unmarshal(r.Body, &res) != nil {
		t.Fatalf("DeleteObjects with bad keys: %s", r)
	}
	codes := map[string]string{}
	for _, e := range res.Errors {
		codes[e.Key] = e.Code
	}
	if len(res.Deleted) != 1 || res.Deleted[0] != "gone" {
		t.Errorf("DeleteObjects deleted %q, want only gone", res.Deleted)
	}
	want := map[string]string{strings.Repeat("k", 1025): "KeyTooLongError", "src": "NoSuchVersion"}
	for k, code := range want {
		if codes[k] != code {
			t.Errorf("DeleteObjects: key %.20q reported %q, want %s", k, codes[k], code)
		}
	}
	s.expectNoKey("deleted", bucket, "gone")

	// An empty key refuses the whole request (Swift's s3api: UserKeyMustBeSpecified); nothing
	// in it is deleted.
	body = []byte("<Delete><Object><Key>dst</Key></Object><Object><Key></Key></Object></Delete>")
	r = s.call(http.MethodPost, bucket, "", "delete", body, "Content-Md5", md5B64(body))
	expectError(t, "DeleteObjects with an empty key", r, http.StatusBadRequest, "UserKeyMustBeSpecified")
	s.expectUnchanged("after DeleteObjects with bad keys", bucket, before)
	s.expectObject("after everything", bucket, "dst", old)
}
