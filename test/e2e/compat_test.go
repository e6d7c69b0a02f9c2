package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// answer is a raw response: status, headers and body.
type answer struct {
	status int
	hdr    http.Header
	body   string
}

func (a answer) has(parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(a.body, p) {
			return false
		}
	}
	return true
}

func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ReadAllClose(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func signed(t *testing.T, srv *Server, req *http.Request, body []byte) answer {
	t.Helper()
	resp, err := srv.SignedRequest(Context(t), req, body)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ReadAllClose(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// TestS3CompatErrorCodes: the answers ceph/s3-tests and AWS expect for grants by e-mail,
// digests and checksums that fail, malformed Authorization headers, non-ASCII user metadata
// and aws-chunked in Content-Encoding, from the real binary.
func TestS3CompatErrorCodes(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client(NoRetries)
	bucket := newBucket(t, ctx, c, "compat")
	url := srv.Endpoint + "/" + bucket

	t.Run("grant by e-mail", func(t *testing.T) {
		// test_bucket_acl_grant_email_not_exist: no account has an e-mail address.
		_, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(bucket), GrantRead: aws.String(`emailAddress="doesnotexist@dreamhost.com.invalid"`)})
		if apiCode(err) != "UnresolvableGrantByEmailAddress" {
			t.Errorf("x-amz-grant-read by e-mail: %v", err)
		}
		owner := "root"
		_, err = c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(bucket), AccessControlPolicy: &types.AccessControlPolicy{
			Owner: &types.Owner{ID: &owner},
			Grants: []types.Grant{{Permission: types.PermissionFullControl, Grantee: &types.Grantee{
				Type: types.TypeAmazonCustomerByEmail, EmailAddress: aws.String("doesnotexist@dreamhost.com.invalid")}}},
		}})
		if apiCode(err) != "UnresolvableGrantByEmailAddress" {
			t.Errorf("AccessControlPolicy by e-mail: %v", err)
		}
	})

	t.Run("Content-MD5", func(t *testing.T) {
		// test_object_create_bad_md5_invalid_short, _bad, _empty.
		for _, tc := range []struct{ md5, code string }{
			{"YWJyYWNhZGFicmE=", "InvalidDigest"},
			{"rL0Y20xC+Fzt72VPzMSk2A==", "BadDigest"},
			{"", "InvalidDigest"},
			{"AWS HAHAHA", "InvalidDigest"},
		} {
			req, _ := http.NewRequest("PUT", url+"/md5", strings.NewReader("bar"))
			req.Header["Content-Md5"] = []string{tc.md5}
			if a := signed(t, srv, req, []byte("bar")); a.status != 400 || !a.has("<Code>"+tc.code+"</Code>") {
				t.Errorf("Content-MD5 %q: %d %s", tc.md5, a.status, a.body)
			}
		}
	})

	t.Run("x-amz-checksum", func(t *testing.T) {
		body := bytes.Repeat([]byte("A"), 1024)
		// test_object_checksum_sha256: a value that is not a SHA-256 is BadDigest.
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("sum"), Body: bytes.NewReader(body),
			ChecksumAlgorithm: types.ChecksumAlgorithmSha256, ChecksumSHA256: aws.String("bad")})
		if apiCode(err) != "BadDigest" {
			t.Errorf("SHA256 'bad': %v", err)
		}
		// A well-formed value that does not match is BadDigest with S3's text.
		for _, alg := range []string{"Crc32", "Sha256"} {
			other := base64.StdEncoding.EncodeToString(make([]byte, map[string]int{"Crc32": 4, "Sha256": 32}[alg]))
			req, _ := http.NewRequest("PUT", url+"/sum", bytes.NewReader(body))
			req.Header.Set("X-Amz-Checksum-"+alg, other)
			name := strings.ToUpper(alg)
			if a := signed(t, srv, req, body); a.status != 400 || !a.has("<Code>BadDigest</Code>", "The "+name+" you specified did not match the calculated checksum.") {
				t.Errorf("%s mismatch: %d %s", alg, a.status, a.body)
			}
		}
		// test_multipart_checksum_sha256: the completion's checksum is the object's.
		up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mp"), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
		if err != nil {
			t.Fatal(err)
		}
		part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("mp"), UploadId: up.UploadId, PartNumber: aws.Int32(1),
			Body: bytes.NewReader(body), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
		if err != nil {
			t.Fatal(err)
		}
		parts := &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, ChecksumSHA256: part.ChecksumSHA256, PartNumber: aws.Int32(1)}}}
		complete := func(sum string) error {
			_, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mp"), UploadId: up.UploadId,
				ChecksumSHA256: aws.String(sum), MultipartUpload: parts})
			return err
		}
		if err := complete("bad"); apiCode(err) != "BadDigest" {
			t.Errorf("completion with SHA256 'bad': %v", err)
		}
		if err := complete(base64.StdEncoding.EncodeToString(make([]byte, 32)) + "-1"); apiCode(err) != "BadDigest" {
			t.Errorf("completion with another composite SHA256: %v", err)
		}
		partSum, _ := base64.StdEncoding.DecodeString(aws.ToString(part.ChecksumSHA256))
		whole := sha256.Sum256(partSum)
		composite := base64.StdEncoding.EncodeToString(whole[:]) + "-1"
		if err := complete(composite); err != nil {
			t.Errorf("completion with the composite SHA256: %v", err)
		}
	})

	t.Run("Authorization", func(t *testing.T) {
		now := time.Now().UTC()
		amzDate := now.Format("20060102T150405Z")
		scope := srv.AccessKey + "/" + now.Format("20060102") + "/us-east-1/s3/aws4_request"
		sig := strings.Repeat("0", 64)
		for _, tc := range []struct {
			name, authz   string
			status        int
			code, message string
			element       string // an element the body must hold
		}{
			{"no Signature", "AWS4-HMAC-SHA256 Credential=" + scope + ", SignedHeaders=host;x-amz-date", 400, "AuthorizationHeaderMalformed",
				"The authorization header is malformed; the authorization header requires three components: Credential, SignedHeaders, and Signature.", ""},
			{"no Credential", "AWS4-HMAC-SHA256 SignedHeaders=host;x-amz-date, Signature=" + sig, 400, "AuthorizationHeaderMalformed", "requires three components", ""},
			{"no SignedHeaders", "AWS4-HMAC-SHA256 Credential=" + scope + ", Signature=" + sig, 400, "AuthorizationHeaderMalformed", "requires three components", ""},
			{"another service", "AWS4-HMAC-SHA256 Credential=" + strings.Replace(scope, "/s3/", "/ec2/", 1) + ", SignedHeaders=host;x-amz-date, Signature=" + sig, 400,
				"AuthorizationHeaderMalformed", `incorrect service &#34;ec2&#34;. This endpoint belongs to &#34;s3&#34;.`, ""},
			{"another region", "AWS4-HMAC-SHA256 Credential=" + strings.Replace(scope, "us-east-1", "eu-west-1", 1) + ", SignedHeaders=host;x-amz-date, Signature=" + sig, 400,
				"AuthorizationHeaderMalformed", "the region &#39;eu-west-1&#39; is wrong; expecting &#39;us-east-1&#39;", "<Region>us-east-1</Region>"},
			{"a short credential", "AWS4-HMAC-SHA256 Credential=" + srv.AccessKey + "/x, SignedHeaders=host;x-amz-date, Signature=" + sig, 400,
				"AuthorizationHeaderMalformed", "the Credential is mal-formed", ""},
			{"unknown algorithm", "AWS4-HMAC-SHA512 Credential=" + scope, 400, "InvalidArgument", "Unsupported Authorization Type",
				"<ArgumentName>Authorization</ArgumentName><ArgumentValue>AWS4-HMAC-SHA512 Credential=" + scope + "</ArgumentValue>"},
			{"Bearer", "Bearer token", 400, "InvalidArgument", "Unsupported Authorization Type", "<ArgumentName>Authorization</ArgumentName>"},
			// test_object_create_bad_authorization_invalid_aws2.
			{"SigV2 without a colon", "AWS HAHAHA", 400, "InvalidArgument", "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature", "<ArgumentName>Authorization</ArgumentName>"},
			{"a wrong signature", "AWS4-HMAC-SHA256 Credential=" + scope + ", SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=" + sig, 403, "SignatureDoesNotMatch", "", ""},
		} {
			req, _ := http.NewRequest("PUT", url+"/auth", strings.NewReader("bar"))
			req.Header.Set("Authorization", tc.authz)
			req.Header.Set("X-Amz-Date", amzDate)
			req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
			a := do(t, req)
			if a.status != tc.status || !a.has("<Code>"+tc.code+"</Code>", tc.message, tc.element) {
				t.Errorf("%s: %d %s", tc.name, a.status, a.body)
			}
		}
		// test_object_create_bad_authorization_empty / _none: no credentials, AccessDenied.
		for _, authz := range []string{"", "-"} {
			req, _ := http.NewRequest("PUT", url+"/auth", strings.NewReader("bar"))
			if authz == "" {
				req.Header["Authorization"] = []string{""}
			}
			if a := do(t, req); a.status != 403 || !a.has("<Code>AccessDenied</Code>") {
				t.Errorf("Authorization %q: %d %s", authz, a.status, a.body)
			}
		}
	})

	t.Run("RFC 2047 metadata", func(t *testing.T) {
		req, _ := http.NewRequest("PUT", url+"/meta", strings.NewReader("bar"))
		req.Header.Set("X-Amz-Meta-Word", "=?UTF-8?B?w6lsw6h2ZQ==?=")
		req.Header.Set("X-Amz-Meta-Plain", "mymeta")
		req.Header.Set("X-Amz-Meta-Latin1", "Hello World\xe9")
		if a := signed(t, srv, req, []byte("bar")); a.status != 200 {
			t.Fatalf("PUT: %d %s", a.status, a.body)
		}
		out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("meta")})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"word": "=?UTF-8?B?w6lsw6h2ZQ==?=", "plain": "mymeta", "latin1": "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?="}
		for k, v := range want {
			if out.Metadata[k] != v {
				t.Errorf("x-amz-meta-%s: %q, want %q", k, out.Metadata[k], v)
			}
		}
		// Written through the SDK as UTF-8: answered as one encoded-word.
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("meta2"), Body: strings.NewReader("x"), Metadata: map[string]string{"city": "Zürich"}})
		if err != nil {
			t.Fatal(err)
		}
		req, _ = http.NewRequest("GET", url+"/meta2", nil)
		if a := signed(t, srv, req, nil); a.hdr.Get("X-Amz-Meta-City") != "=?UTF-8?B?WsO8cmljaA==?=" {
			t.Errorf("GET x-amz-meta-city: %q", a.hdr.Get("X-Amz-Meta-City"))
		}
	})

	t.Run("aws-chunked in Content-Encoding", func(t *testing.T) {
		for _, tc := range []struct{ sent, stored string }{{"aws-chunked,gzip", "gzip"}, {"aws-chunked", ""}, {"gzip, aws-chunked", "gzip"}} {
			data := []byte("compressed, say")
			body := awsChunkedBody(data, 64*KiB, "x-amz-checksum-crc32", crc32B64(data))
			req, _ := http.NewRequest("PUT", url+"/enc", bytes.NewReader(body))
			req.ContentLength = int64(len(body))
			req.Header.Set("Content-Encoding", tc.sent)
			req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(len(data)))
			req.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
			resp, err := srv.SignedRequestWithHash(ctx, req, "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := ReadAllClose(resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("PUT with Content-Encoding %q: %s %s", tc.sent, resp.Status, b)
			}
			out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("enc")})
			if err != nil {
				t.Fatal(err)
			}
			if got := aws.ToString(out.ContentEncoding); got != tc.stored {
				t.Errorf("Content-Encoding %q stored as %q, want %q", tc.sent, got, tc.stored)
			}
		}
	})
}

// TestS3CORSBinary: bucket CORS through the real binary: configuration, preflights routed to
// S3 (and /v1/ ones still to Swift), and the headers of actual and presigned requests.
func TestS3CORSBinary(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client(NoRetries)
	bucket := newBucket(t, ctx, c, "cors")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("v")}); err != nil {
		t.Fatal(err)
	}
	preflight := func(path, origin, method string) answer {
		req, _ := http.NewRequest("OPTIONS", srv.Endpoint+path, nil)
		req.Header.Set("Origin", origin)
		if method != "" {
			req.Header.Set("Access-Control-Request-Method", method)
		}
		return do(t, req)
	}
	if _, err := c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String(bucket)}); apiCode(err) != "NoSuchCORSConfiguration" {
		t.Fatalf("GetBucketCors without one: %v", err)
	}
	_, err := c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(bucket), CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{{
		AllowedOrigins: []string{"https://*.app.example"}, AllowedMethods: []string{"GET", "PUT"}, AllowedHeaders: []string{"*"},
		ExposeHeaders: []string{"ETag"}, MaxAgeSeconds: aws.Int32(120),
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String(bucket)})
	if err != nil || len(out.CORSRules) != 1 || out.CORSRules[0].AllowedOrigins[0] != "https://*.app.example" {
		t.Fatalf("GetBucketCors: %v %+v", err, out)
	}
	a := preflight("/"+bucket+"/k", "https://www.app.example", "PUT")
	if a.status != 200 || a.hdr.Get("Access-Control-Allow-Origin") != "https://www.app.example" || a.hdr.Get("Access-Control-Max-Age") != "120" ||
		a.hdr.Get("Access-Control-Allow-Methods") != "GET, PUT" || a.hdr.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("preflight: %d %v %s", a.status, a.hdr, a.body)
	}
	if a := preflight("/"+bucket+"/k", "https://evil.example", "PUT"); a.status != 403 || !a.has("<Code>AccessForbidden</Code>", "<ResourceType>OBJECT</ResourceType>") {
		t.Errorf("preflight from another origin: %d %s", a.status, a.body)
	}
	if a := preflight("/"+bucket+"/k", "https://www.app.example", ""); a.status != 400 {
		t.Errorf("preflight without a method: %d %s", a.status, a.body)
	}
	// An unsigned OPTIONS under /v1/ is still Swift's (no such account: Swift's own answer).
	if a := preflight("/v1/AUTH_nobody/c", "https://www.app.example", "GET"); strings.Contains(a.body, "<Code>") {
		t.Errorf("OPTIONS under /v1/ answered by S3: %d %s", a.status, a.body)
	}
	// A presigned GET from the allowed origin gets the headers.
	pre, err := s3.NewPresignClient(c).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", pre.URL, nil)
	req.Header.Set("Origin", "https://www.app.example")
	if a := do(t, req); a.status != 200 || a.body != "v" || a.hdr.Get("Access-Control-Allow-Origin") != "https://www.app.example" || a.hdr.Get("Access-Control-Expose-Headers") != "ETag" {
		t.Errorf("presigned GET: %d %v", a.status, a.hdr)
	}
	if a := preflight(strings.TrimPrefix(pre.URL, srv.Endpoint), "https://www.app.example", "GET"); a.status != 200 {
		t.Errorf("preflight of the presigned URL: %d %s", a.status, a.body)
	}
	if _, err := c.DeleteBucketCors(ctx, &s3.DeleteBucketCorsInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if a := preflight("/"+bucket+"/k", "https://www.app.example", "GET"); a.status != 403 || !a.has("CORS is not enabled for this bucket.") {
		t.Errorf("preflight after DeleteBucketCors: %d %s", a.status, a.body)
	}
}
