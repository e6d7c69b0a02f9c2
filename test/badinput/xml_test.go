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

// billionLaughs is the classic entity-expansion bomb: a few hundred bytes naming 10^9 "lol"s.
const billionLaughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
`

// malformedDocuments are bodies no request document may be: each must get MalformedXML. The
// deep ones stay under limit bytes, so that they are parsed rather than refused for their size.
func malformedDocuments(root, inner string, limit int) map[string]string {
	depth := min(100000, limit/8)
	docs := map[string]string{
		"not XML":             "this is not XML",
		"unclosed":            "<" + root + ">" + inner,
		"wrong root":          "<Nope>" + inner + "</Nope>",
		"trailing element":    "<" + root + ">" + inner + "</" + root + "><" + root + "/>",
		"trailing text":       "<" + root + ">" + inner + "</" + root + ">garbage",
		"mismatched tags":     "<" + root + ">" + inner + "</Other>",
		"billion laughs":      billionLaughs + "<" + root + ">" + strings.ReplaceAll(inner, ">k<", ">&lol9;<") + "</" + root + ">",
		"external entity":     `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><` + root + ">" + strings.ReplaceAll(inner, ">k<", ">&xxe;<") + "</" + root + ">",
		"undefined entity":    "<" + root + ">" + strings.ReplaceAll(inner, ">k<", ">&nope;<") + "</" + root + ">",
		"invalid UTF-8":       "<" + root + ">" + strings.ReplaceAll(inner, ">k<", ">\xff\xfe<") + "</" + root + ">",
		"deep unclosed":       "<" + root + ">" + strings.Repeat("<a>", depth),
		"binary":              string(randomBytes(4 * KiB)),
		"NUL bytes":           "<" + root + ">\x00\x00" + inner + "</" + root + ">",
		"attribute flood":     "<" + root + strings.Repeat(` a="1"`, 2) + ">" + inner + "</" + root + "><x" + strings.Repeat(` b="1"`, 2) + ">",
		"comment never ended": "<" + root + ">" + inner + "<!-- ",
	}
	if depth > 10000 {
		// Well-formed, but nested deeper than any parser should follow (Go's stops at 10,000).
		docs["deep nesting"] = "<" + root + ">" + strings.Repeat("<a>", depth) + strings.Repeat("</a>", depth) + "</" + root + ">"
	}
	return docs
}

// TestMalformedXMLBodies sends broken, hostile and oversized documents to every operation that
// reads one (DeleteObjects, CompleteMultipartUpload, CreateBucket): each gets MalformedXML (or,
// when too big, MaxMessageLengthExceeded; a Delete that long is MalformedXML), nothing is deleted, completed or created, and the
// server keeps serving.
func TestMalformedXMLBodies(t *testing.T) {
	s := startServer(t, "")
	const bucket = "xml"
	s.createBucket(bucket)
	for _, k := range []string{"k", "a", "b"} {
		s.put(bucket, k, []byte("content of "+k))
	}
	before := s.snapshot(bucket)

	deleteCall := func(body []byte, hdr ...string) response {
		return s.call(http.MethodPost, bucket, "", "delete", body, append([]string{"Content-Md5", md5B64(body)}, hdr...)...)
	}

	t.Run("DeleteObjects", func(t *testing.T) {
		for name, doc := range malformedDocuments("Delete", "<Object><Key>k</Key></Object>", 2*MiB) {
			expectError(t, "DeleteObjects, "+name, deleteCall([]byte(doc)), http.StatusBadRequest, "MalformedXML")
		}
		expectError(t, "DeleteObjects, no objects", deleteCall([]byte("<Delete></Delete>")), http.StatusBadRequest, "MalformedXML")
		many := "<Delete>" + strings.Repeat("<Object><Key>k</Key></Object>", 1001) + "</Delete>"
		expectError(t, "DeleteObjects, 1001 objects", deleteCall([]byte(many)), http.StatusBadRequest, "MalformedXML")
		// S3 demands an integrity header for multi-object delete.
		good := []byte("<Delete><Object><Key>k</Key></Object></Delete>")
		expectError(t, "DeleteObjects without Content-MD5", s.call(http.MethodPost, bucket, "", "delete", good), http.StatusBadRequest, "InvalidRequest")
		expectError(t, "DeleteObjects with a wrong Content-MD5", s.call(http.MethodPost, bucket, "", "delete", good, "Content-Md5", md5B64([]byte("x"))), http.StatusBadRequest, "BadDigest")
		s.expectUnchanged("after refused DeleteObjects", bucket, before)
	})

	t.Run("CreateBucket", func(t *testing.T) {
		for name, doc := range malformedDocuments("CreateBucketConfiguration", "<LocationConstraint>k</LocationConstraint>", 64*KiB) {
			r := s.call(http.MethodPut, "newbucket", "", "", []byte(doc))
			expectError(t, "CreateBucket, "+name, r, http.StatusBadRequest, "MalformedXML")
		}
		expectError(t, "HEAD of the bucket never created", s.call(http.MethodHead, "newbucket", "", "", nil), http.StatusNotFound, "")
	})

	t.Run("CompleteMultipartUpload", func(t *testing.T) {
		r := s.call(http.MethodPost, bucket, "k", "uploads", nil)
		uploadID := between(string(r.Body), "<UploadId>", "</UploadId>")
		if uploadID == "" {
			t.Fatalf("CreateMultipartUpload: %s", r)
		}
		part := randomBytes(64 * KiB)
		r = s.call(http.MethodPut, bucket, "k", "partNumber=1&uploadId="+uploadID, part)
		if r.Status != http.StatusOK {
			t.Fatalf("UploadPart: %s", r)
		}
		etag := r.Header.Get("ETag")
		inner := "<Part><PartNumber>1</PartNumber><ETag>k</ETag></Part>"
		for name, doc := range malformedDocuments("CompleteMultipartUpload", inner, 4*MiB) {
			r := s.call(http.MethodPost, bucket, "k", "uploadId="+uploadID, []byte(doc))
			expectError(t, "CompleteMultipartUpload, "+name, r, http.StatusBadRequest, "MalformedXML")
		}
		expectError(t, "CompleteMultipartUpload, no parts",
			s.call(http.MethodPost, bucket, "k", "uploadId="+uploadID, []byte("<CompleteMultipartUpload></CompleteMultipartUpload>")),
			http.StatusBadRequest, "MalformedXML")
		expectError(t, "CompleteMultipartUpload, a part number that is not a number",
			s.call(http.MethodPost, bucket, "k", "uploadId="+uploadID, []byte("<CompleteMultipartUpload><Part><PartNumber>one</PartNumber><ETag>x</ETag></Part></CompleteMultipartUpload>")),
			http.StatusBadRequest, "MalformedXML")
		s.expectUnchanged("after refused completions", bucket, before)
		r = s.call(http.MethodGet, bucket, "k", "uploadId="+uploadID, nil)
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), strings.Trim(etag, `"`)) {
			t.Errorf("ListParts after refused completions: %s", r)
		}
		good := fmt.Sprintf("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>", etag)
		r = s.call(http.MethodPost, bucket, "k", "uploadId="+uploadID, []byte(good))
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), "<Error>") {
			t.Fatalf("the well-formed completion after the bad ones: %s", r)
		}
		s.expectObject("completed", bucket, "k", part)
		before["k"] = sha256Hex(part)
	})

	// Oversized documents: refused from Content-Length before reading, or while reading when
	// the length is unknown (Transfer-Encoding: chunked) or the body lies about it.
	t.Run("too big", func(t *testing.T) {
		for _, c := range []struct {
			name, method, key, query string
			limit                    int
			code                     string
		}{
			// A Delete document that long cannot be valid: S3 and Swift's s3api say malformed.
			{"DeleteObjects", http.MethodPost, "", "delete", 2 * MiB, "MalformedXML"},
			{"CompleteMultipartUpload", http.MethodPost, "big", "uploadId=", 4 * MiB, "MaxMessageLengthExceeded"},
			{"CreateBucket", http.MethodPut, "", "", 64 * KiB, "MaxMessageLengthExceeded"},
		} {
			b := "otherbucket"
			if c.name != "CreateBucket" {
				b = bucket
			}
			if c.name == "CompleteMultipartUpload" {
				// The upload must exist: an unknown one is NoSuchUpload before the body is read.
				r := s.call(http.MethodPost, bucket, c.key, "uploads", nil)
				uploadID := between(string(r.Body), "<UploadId>", "</UploadId>")
				if uploadID == "" {
					t.Fatalf("CreateMultipartUpload: %s", r)
				}
				c.query += uploadID
			}
			// Valid-looking XML that just goes on: padding in a comment.
			body := []byte("<Delete><!--" + strings.Repeat("x", c.limit) + "--><Object><Key>k</Key></Object></Delete>")
			r := s.call(c.method, b, c.key, c.query, body, "Content-Md5", md5B64(body))
			expectError(t, c.name+" with a declared length over the limit", r, http.StatusBadRequest, c.code)

			req := newRequest(t, c.method, s.url(b, c.key, c.query), nil)
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.ContentLength = -1 // Transfer-Encoding: chunked
			req.Header.Set("Content-Md5", md5B64(body))
			sign(t, req, rootCred, time.Now(), body)
			expectError(t, c.name+" of unknown length over the limit", s.send(req), http.StatusBadRequest, c.code)
		}
		expectError(t, "HEAD of the bucket never created", s.call(http.MethodHead, "otherbucket", "", "", nil), http.StatusNotFound, "")
	})

	s.expectUnchanged("after every bad document", bucket, before)
}
