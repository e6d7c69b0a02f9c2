package badinput

import (
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/server"
)

// TestBadSSEHeaders: server-side encryption headers S3 refuses are refused with S3's codes,
// and store nothing: an unknown algorithm, an SSE-C key of the wrong length or whose MD5 does
// not match, SSE and SSE-C together, a KMS key ID without aws:kms, an unknown KMS key, a bad
// encryption context, a bad bucket encryption document; and SSE-C over plain HTTP unless the
// server allows it.
func TestBadSSEHeaders(t *testing.T) {
	s := startTuned(t, "", func(c *server.Config) { c.SSECAllowHTTP = true })
	const bucket = "badsse"
	s.createBucket(bucket)
	s.put(bucket, "victim", []byte("the object"))
	before := s.snapshot(bucket)

	key := strings.Repeat("k", 32)
	keyB64 := base64.StdEncoding.EncodeToString([]byte(key))
	sum := md5.Sum([]byte(key))
	md5B64Key := base64.StdEncoding.EncodeToString(sum[:])
	short := base64.StdEncoding.EncodeToString([]byte("short key"))
	shortSum := md5.Sum([]byte("short key"))
	ssec := func(alg, k, m string) []string {
		return []string{"X-Amz-Server-Side-Encryption-Customer-Algorithm", alg, "X-Amz-Server-Side-Encryption-Customer-Key", k, "X-Amz-Server-Side-Encryption-Customer-Key-Md5", m}
	}
	cases := []struct {
		name   string
		hdr    []string
		status int
		code   string
	}{
		{"unknown algorithm", []string{"X-Amz-Server-Side-Encryption", "AES512"}, 400, "InvalidArgument"},
		{"DSSE", []string{"X-Amz-Server-Side-Encryption", "aws:kms:dsse"}, 400, "InvalidArgument"},
		{"SSE-C key too short", ssec("AES256", short, base64.StdEncoding.EncodeToString(shortSum[:])), 400, "InvalidArgument"},
		{"SSE-C MD5 mismatch", ssec("AES256", keyB64, md5B64([]byte("other"))), 400, "InvalidArgument"},
		{"SSE-C key not base64", ssec("AES256", "!!!", md5B64Key), 400, "InvalidArgument"},
		{"SSE-C without MD5", ssec("AES256", keyB64, "")[:4], 400, "InvalidArgument"},
		{"SSE-C unknown algorithm", ssec("AES512", keyB64, md5B64Key), 400, "InvalidEncryptionAlgorithmError"},
		{"SSE and SSE-C", append(ssec("AES256", keyB64, md5B64Key), "X-Amz-Server-Side-Encryption", "AES256"), 400, "InvalidArgument"},
		{"KMS key without aws:kms", []string{"X-Amz-Server-Side-Encryption", "AES256", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "abc"}, 400, "InvalidArgument"},
		{"unknown KMS key", []string{"X-Amz-Server-Side-Encryption", "aws:kms", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "11111111-2222-3333-4444-555555555555"}, 400, "KMS.NotFoundException"},
		{"bad encryption context", []string{"X-Amz-Server-Side-Encryption", "aws:kms", "X-Amz-Server-Side-Encryption-Context", "not base64!"}, 400, "InvalidArgument"},
	}
	for _, c := range cases {
		r := s.call(http.MethodPut, bucket, "victim", "", []byte("replacement"), c.hdr...)
		expectError(t, "PUT with "+c.name, r, c.status, c.code)
		r = s.call(http.MethodPost, bucket, "victim", "uploads", nil, c.hdr...)
		expectError(t, "CreateMultipartUpload with "+c.name, r, c.status, c.code)
	}
	// A bad bucket encryption document is refused and sets nothing.
	for _, doc := range []string{
		`<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>DES</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`,
		`<ServerSideEncryptionConfiguration></ServerSideEncryptionConfiguration>`,
		`<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>aws:kms</SSEAlgorithm><KMSMasterKeyID>nope</KMSMasterKeyID></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`,
	} {
		r := s.call(http.MethodPut, bucket, "", "encryption", []byte(doc))
		if r.Status < 400 || r.Status >= 500 {
			t.Errorf("PutBucketEncryption %s: %s, want a 4xx", doc, r)
		}
	}
	expectError(t, "GetBucketEncryption after refusals", s.call(http.MethodGet, bucket, "", "encryption", nil), 404, "ServerSideEncryptionConfigurationNotFoundError")
	s.expectUnchanged("after refused SSE headers", bucket, before)

	// Without --sse-c-allow-http, SSE-C over plain HTTP is refused as S3 refuses it.
	plain := startServer(t, "")
	plain.createBucket(bucket)
	plain.put(bucket, "victim", []byte("the object"))
	before = plain.snapshot(bucket)
	r := plain.call(http.MethodPut, bucket, "victim", "", []byte("replacement"), ssec("AES256", keyB64, md5B64Key)...)
	expectError(t, "SSE-C over HTTP", r, 400, "InvalidRequest")
	if !strings.Contains(string(r.Body), "secure connection") {
		t.Errorf("SSE-C over HTTP: %s", r.Body)
	}
	expectError(t, "SSE-C GET over HTTP", plain.call(http.MethodGet, bucket, "victim", "", nil, ssec("AES256", keyB64, md5B64Key)...), 400, "InvalidRequest")
	plain.expectUnchanged("after SSE-C over HTTP", bucket, before)
}
