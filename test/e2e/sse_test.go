package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// ssecKey is an SSE-C key with the headers' values.
type ssecKey struct{ key, md5 string }

func newSSECKey(t *testing.T) ssecKey {
	k := randomBytes(t, 32)
	s := md5.Sum(k)
	return ssecKey{base64.StdEncoding.EncodeToString(k), base64.StdEncoding.EncodeToString(s[:])}
}

func (k ssecKey) put(in *s3.PutObjectInput) {
	in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(k.key), aws.String(k.md5)
}

func (k ssecKey) get(in *s3.GetObjectInput) {
	in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(k.key), aws.String(k.md5)
}

func (k ssecKey) head(in *s3.HeadObjectInput) {
	in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(k.key), aws.String(k.md5)
}

func md5B64(b []byte) string { s := md5.Sum(b); return base64.StdEncoding.EncodeToString(s[:]) }

func putWith(t *testing.T, ctx context.Context, c *s3.Client, bucket, key string, data []byte, opt func(*s3.PutObjectInput)) *s3.PutObjectOutput {
	t.Helper()
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)}
	if opt != nil {
		opt(in)
	}
	out, err := c.PutObject(ctx, in)
	if err != nil {
		t.Fatalf("PutObject %s: %v", key, err)
	}
	return out
}

func mustGet(t *testing.T, ctx context.Context, c *s3.Client, bucket, key string, want []byte, opts ...func(*s3.GetObjectInput)) *s3.GetObjectOutput {
	t.Helper()
	got, out, err := getBytes(ctx, c, bucket, key, opts...)
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("GET %s: %d bytes, not the %d written", key, len(got), len(want))
	}
	return out
}

// fileHolding reports a file under dir whose bytes contain pattern ("" if none).
func fileHolding(t *testing.T, dir string, pattern []byte) string {
	t.Helper()
	found := ""
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, pattern) {
			found = p
		}
		return nil
	})
	return found
}

// TestSSE drives server-side encryption through the real binary (and, in CI, a cluster):
// SSE-S3, SSE-KMS with keys made by `cairn admin kms`, SSE-C (allowed over HTTP by flag),
// bucket default encryption, ranges at segment edges, copies between modes, multipart
// uploads, a versioned bucket, Swift reads, plaintext sizes in every listing, no plaintext on
// disk, and a restart after which everything still decrypts.
func TestSSE(t *testing.T) {
	SkipShort(t)
	ctx, cancel := context.WithTimeout(Context(t), 10*time.Minute)
	defer cancel()
	data := t.TempDir()
	opts := Options{DataDir: data, Args: []string{"--sse-c-allow-http"}}
	srv := Start(t, opts)
	c := srv.S3Client()
	bucket := newBucket(t, ctx, c, "sse")

	// SSE-S3: ETag is the plaintext's MD5, sizes are the plaintext's, the header comes back.
	big := randomBytes(t, 3*65536+17)
	out := putWith(t, ctx, c, bucket, "s3", big, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 })
	if out.ServerSideEncryption != types.ServerSideEncryptionAes256 || aws.ToString(out.ETag) != `"`+md5Hex(big)+`"` {
		t.Fatalf("PUT SSE-S3: %q %q", out.ServerSideEncryption, aws.ToString(out.ETag))
	}
	g := mustGet(t, ctx, c, bucket, "s3", big)
	if g.ServerSideEncryption != types.ServerSideEncryptionAes256 || aws.ToInt64(g.ContentLength) != int64(len(big)) || aws.ToString(g.ETag) != `"`+md5Hex(big)+`"` {
		t.Fatalf("GET SSE-S3: %q %d %q", g.ServerSideEncryption, aws.ToInt64(g.ContentLength), aws.ToString(g.ETag))
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("s3")})
	if err != nil || aws.ToInt64(h.ContentLength) != int64(len(big)) || h.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("HEAD SSE-S3: %v", err)
	}
	for _, r := range [][2]int{{0, 0}, {65535, 65536}, {65536, 65536 + 10}, {65530, 2*65536 + 5}, {len(big) - 1, len(big) - 1}, {1, len(big) - 1}} {
		rng := fmt.Sprintf("bytes=%d-%d", r[0], r[1])
		got, out, err := getBytes(ctx, c, bucket, "s3", func(in *s3.GetObjectInput) { in.Range = aws.String(rng) })
		if err != nil || !bytes.Equal(got, big[r[0]:r[1]+1]) {
			t.Fatalf("GET %s: %v", rng, err)
		}
		if want := fmt.Sprintf("bytes %d-%d/%d", r[0], r[1], len(big)); aws.ToString(out.ContentRange) != want {
			t.Fatalf("GET %s: Content-Range %q, want %q", rng, aws.ToString(out.ContentRange), want)
		}
	}
	if got, _, err := getBytes(ctx, c, bucket, "s3", func(in *s3.GetObjectInput) { in.Range = aws.String("bytes=-5") }); err != nil || !bytes.Equal(got, big[len(big)-5:]) {
		t.Fatalf("suffix range: %v", err)
	}
	if _, _, err := getBytes(ctx, c, bucket, "s3", func(in *s3.GetObjectInput) { in.Range = aws.String(fmt.Sprintf("bytes=%d-", len(big)+10)) }); apiCode(err) != "InvalidRange" {
		t.Fatalf("range past the plaintext: %v", err)
	}
	// A conditional write compares the ETag the client was given (the plaintext's MD5).
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("s3"), Body: bytes.NewReader(big),
		ServerSideEncryption: types.ServerSideEncryptionAes256, IfMatch: aws.String(`"` + md5Hex(big) + `"`)}); err != nil {
		t.Fatalf("If-Match with the served ETag: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("s3"), Body: bytes.NewReader([]byte("x")),
		IfMatch: aws.String(`"` + md5Hex([]byte("x")) + `"`)}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-Match with another ETag: %v", err)
	}
	// An unencrypted control object, to show the search for plaintext on disk can find it.
	plain := randomBytes(t, 300_000)
	putWith(t, ctx, c, bucket, "plain", plain, nil)
	putWith(t, ctx, c, bucket, "empty", nil, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 })
	mustGet(t, ctx, c, bucket, "empty", []byte{})

	// SSE-KMS with a key made through `cairn admin kms`, and with the default key.
	root := newCLI(t, srv)
	created, _ := root.ok("admin", "kms", "create", "--alias", "e2e", "--json")
	var kk struct {
		ID      string `json:"id"`
		Enabled bool   `json:"enabled"`
	}
	if err := json.Unmarshal([]byte(created), &kk); err != nil || kk.ID == "" || !kk.Enabled {
		t.Fatalf("kms create printed %q: %v", created, err)
	}
	kmsData := randomBytes(t, 70_000)
	out = putWith(t, ctx, c, bucket, "kms", kmsData, func(in *s3.PutObjectInput) {
		in.ServerSideEncryption, in.SSEKMSKeyId = types.ServerSideEncryptionAwsKms, aws.String(kk.ID)
	})
	if out.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(out.SSEKMSKeyId) != kk.ID || aws.ToString(out.ETag) == `"`+md5Hex(kmsData)+`"` {
		t.Fatalf("PUT SSE-KMS: %q %q, ETag %s (not the MD5, as AWS's)", out.ServerSideEncryption, aws.ToString(out.SSEKMSKeyId), aws.ToString(out.ETag))
	}
	// Content-MD5 is still checked against the plaintext.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("kms-md5"), Body: bytes.NewReader(kmsData),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, ContentMD5: aws.String(md5B64(kmsData))}); err != nil {
		t.Fatalf("SSE-KMS PUT with the right Content-MD5: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("kms-md5"), Body: bytes.NewReader(kmsData),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, ContentMD5: aws.String(md5B64([]byte("other")))}); apiCode(err) != "BadDigest" {
		t.Fatalf("SSE-KMS PUT with a wrong Content-MD5: %v", err)
	}
	putWith(t, ctx, c, bucket, "kms-alias", kmsData, func(in *s3.PutObjectInput) {
		in.ServerSideEncryption, in.SSEKMSKeyId = types.ServerSideEncryptionAwsKms, aws.String("alias/e2e")
	})
	putWith(t, ctx, c, bucket, "kms-default", kmsData, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAwsKms })
	if g := mustGet(t, ctx, c, bucket, "kms", kmsData); aws.ToString(g.SSEKMSKeyId) != kk.ID {
		t.Fatalf("GET SSE-KMS key %q", aws.ToString(g.SSEKMSKeyId))
	}
	mustGet(t, ctx, c, bucket, "kms-default", kmsData)
	if list, _ := root.ok("admin", "kms", "list"); !bytes.Contains([]byte(list), []byte("aws/s3")) {
		t.Fatalf("kms list has no default key aws/s3:\n%s", list)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("nokey"), Body: bytes.NewReader([]byte("x")),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String("11111111-2222-3333-4444-555555555555")}); apiCode(err) != "KMS.NotFoundException" {
		t.Fatalf("PUT under an unknown KMS key: %v", err)
	}
	root.ok("admin", "kms", "disable", kk.ID)
	// In a cluster the change reaches the other proxies within the tenant store's poll.
	_, _, err = getBytes(ctx, c, bucket, "kms")
	for end := time.Now().Add(tenantPropagation()); apiCode(err) != "KMS.DisabledException" && time.Now().Before(end); {
		time.Sleep(200 * time.Millisecond)
		_, _, err = getBytes(ctx, c, bucket, "kms")
	}
	if apiCode(err) != "KMS.DisabledException" {
		t.Fatalf("GET under a disabled key: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("kms2"), Body: bytes.NewReader([]byte("x")),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String(kk.ID)}); apiCode(err) != "KMS.DisabledException" {
		t.Fatalf("PUT under a disabled key: %v", err)
	}
	root.ok("admin", "kms", "enable", "alias/e2e")
	_, _, err = getBytes(ctx, c, bucket, "kms-alias")
	for end := time.Now().Add(tenantPropagation()); err != nil && time.Now().Before(end); {
		time.Sleep(200 * time.Millisecond)
		_, _, err = getBytes(ctx, c, bucket, "kms-alias")
	}
	mustGet(t, ctx, c, bucket, "kms-alias", kmsData)

	// SSE-C: the key is needed to read; a wrong one is refused; the ETag is not the MD5.
	ck := newSSECKey(t)
	cData := randomBytes(t, 140_000)
	out = putWith(t, ctx, c, bucket, "ssec", cData, ck.put)
	if aws.ToString(out.SSECustomerKeyMD5) != ck.md5 || aws.ToString(out.ETag) == `"`+md5Hex(cData)+`"` {
		t.Fatalf("PUT SSE-C: key MD5 %q, ETag %q", aws.ToString(out.SSECustomerKeyMD5), aws.ToString(out.ETag))
	}
	if _, _, err := getBytes(ctx, c, bucket, "ssec"); apiCode(err) != "InvalidRequest" {
		t.Fatalf("GET SSE-C without the key: %v", err)
	}
	if _, _, err := getBytes(ctx, c, bucket, "ssec", newSSECKey(t).get); apiCode(err) != "AccessDenied" {
		t.Fatalf("GET SSE-C with another key: %v", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("ssec")}); err == nil {
		t.Fatal("HEAD SSE-C without the key succeeded")
	}
	hin := &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("ssec")}
	ck.head(hin)
	if h, err := c.HeadObject(ctx, hin); err != nil || aws.ToInt64(h.ContentLength) != int64(len(cData)) || aws.ToString(h.SSECustomerKeyMD5) != ck.md5 {
		t.Fatalf("HEAD SSE-C: %v", err)
	}
	mustGet(t, ctx, c, bucket, "ssec", cData, ck.get)
	if got, _, err := getBytes(ctx, c, bucket, "ssec", ck.get, func(in *s3.GetObjectInput) { in.Range = aws.String("bytes=65530-65545") }); err != nil || !bytes.Equal(got, cData[65530:65546]) {
		t.Fatalf("ranged GET SSE-C: %v", err)
	}
	if _, _, err := getBytes(ctx, c, bucket, "s3", ck.get); apiCode(err) != "InvalidRequest" {
		t.Fatalf("GET SSE-S3 with an SSE-C key: %v", err)
	}

	// Copies between modes: SSE-C -> SSE-KMS, SSE-S3 -> plain, plain -> SSE-C, and in place.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("c2kms"), CopySource: aws.String(bucket + "/ssec"),
		CopySourceSSECustomerAlgorithm: aws.String("AES256"), CopySourceSSECustomerKey: aws.String(ck.key), CopySourceSSECustomerKeyMD5: aws.String(ck.md5),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String(kk.ID)}); err != nil {
		t.Fatalf("copy SSE-C to SSE-KMS: %v", err)
	}
	mustGet(t, ctx, c, bucket, "c2kms", cData)
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("c2x"), CopySource: aws.String(bucket + "/ssec")}); err == nil {
		t.Fatal("copy of an SSE-C source without its key succeeded")
	}
	toPlain := randomBytes(t, 70_000) // copied out in the clear: not searched for on disk
	putWith(t, ctx, c, bucket, "toplain", toPlain, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 })
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("s2plain"), CopySource: aws.String(bucket + "/toplain")}); err != nil {
		t.Fatalf("copy SSE-S3 to plain: %v", err)
	}
	if g := mustGet(t, ctx, c, bucket, "s2plain", toPlain); g.ServerSideEncryption != "" {
		t.Fatalf("plain copy says %q", g.ServerSideEncryption)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("plain"), CopySource: aws.String(bucket + "/plain"),
		ServerSideEncryption: types.ServerSideEncryptionAes256}); err != nil {
		t.Fatalf("copy in place to encrypt: %v", err)
	}
	if g := mustGet(t, ctx, c, bucket, "plain", plain); g.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("in-place copy not encrypted: %q", g.ServerSideEncryption)
	}
	putWith(t, ctx, c, bucket, "control", plain, nil)

	// Multipart SSE-S3, with a part copied from an SSE-C source.
	part1 := randomBytes(t, 5<<20)
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mp"), ServerSideEncryption: types.ServerSideEncryptionAes256})
	if err != nil || cu.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("CreateMultipartUpload: %v", err)
	}
	p1, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(part1)})
	if err != nil {
		t.Fatalf("UploadPart: %v", err)
	}
	p2, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(bucket), Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(2),
		CopySource: aws.String(bucket + "/ssec"), CopySourceRange: aws.String("bytes=100-70099"),
		CopySourceSSECustomerAlgorithm: aws.String("AES256"), CopySourceSSECustomerKey: aws.String(ck.key), CopySourceSSECustomerKeyMD5: aws.String(ck.md5)})
	if err != nil {
		t.Fatalf("UploadPartCopy: %v", err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mp"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: p1.ETag}, {PartNumber: aws.Int32(2), ETag: p2.CopyPartResult.ETag}}}}); err != nil {
		t.Fatalf("CompleteMultipartUpload: %v", err)
	}
	whole := append(bytes.Clone(part1), cData[100:70100]...)
	if g := mustGet(t, ctx, c, bucket, "mp", whole); g.ServerSideEncryption != types.ServerSideEncryptionAes256 || aws.ToInt64(g.ContentLength) != int64(len(whole)) {
		t.Fatalf("GET multipart: %q %d", g.ServerSideEncryption, aws.ToInt64(g.ContentLength))
	}
	edge := fmt.Sprintf("bytes=%d-%d", len(part1)-70000, len(part1)+100)
	if got, _, err := getBytes(ctx, c, bucket, "mp", func(in *s3.GetObjectInput) { in.Range = aws.String(edge) }); err != nil || !bytes.Equal(got, whole[len(part1)-70000:len(part1)+101]) {
		t.Fatalf("GET %s of multipart: %v", edge, err)
	}
	if got, _, err := getBytes(ctx, c, bucket, "mp", func(in *s3.GetObjectInput) { in.PartNumber = aws.Int32(2) }); err != nil || !bytes.Equal(got, cData[100:70100]) {
		t.Fatalf("GET partNumber=2: %v", err)
	}

	// Bucket default encryption.
	if _, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String(bucket)}); apiCode(err) != "ServerSideEncryptionConfigurationNotFoundError" {
		t.Fatalf("GetBucketEncryption of a bucket without: %v", err)
	}
	if _, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: aws.String(bucket), ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{
		Rules: []types.ServerSideEncryptionRule{{ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String(kk.ID)}, BucketKeyEnabled: aws.Bool(true)}}}}); err != nil {
		t.Fatalf("PutBucketEncryption: %v", err)
	}
	ge, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String(bucket)})
	if err != nil || len(ge.ServerSideEncryptionConfiguration.Rules) != 1 || aws.ToString(ge.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.KMSMasterKeyID) != kk.ID {
		t.Fatalf("GetBucketEncryption: %v", err)
	}
	dflt := randomBytes(t, 1000)
	if out := putWith(t, ctx, c, bucket, "default", dflt, nil); out.ServerSideEncryption != types.ServerSideEncryptionAwsKms || !aws.ToBool(out.BucketKeyEnabled) {
		t.Fatalf("PUT into a bucket with default encryption: %q %v", out.ServerSideEncryption, aws.ToBool(out.BucketKeyEnabled))
	}
	if h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("default")}); err != nil || aws.ToString(h.SSEKMSKeyId) != kk.ID {
		t.Fatalf("HEAD of a default-encrypted object: %v", err)
	}
	if _, err := c.DeleteBucketEncryption(ctx, &s3.DeleteBucketEncryptionInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("DeleteBucketEncryption: %v", err)
	}
	if out := putWith(t, ctx, c, bucket, "after", dflt, nil); out.ServerSideEncryption != "" {
		t.Fatalf("PUT after DeleteBucketEncryption: %q", out.ServerSideEncryption)
	}

	// A browser form upload asks for SSE-S3 with a field.
	pc := s3.NewPresignClient(c)
	pp, err := pc.PresignPostObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("form")}, func(o *s3.PresignPostOptions) {
		o.Expires = 10 * time.Minute
		o.Conditions = []any{map[string]string{"x-amz-server-side-encryption": "AES256"}}
	})
	if err != nil {
		t.Fatalf("PresignPostObject: %v", err)
	}
	formData := randomBytes(t, 140_000)
	if status, code, resp := sendForm(t, ctx, pp.URL, pp.Values, [][2]string{{"x-amz-server-side-encryption", "AES256"}}, "f.bin", bytes.NewReader(formData)); status != 204 ||
		resp.Header.Get("X-Amz-Server-Side-Encryption") != "AES256" || resp.Header.Get("ETag") != `"`+md5Hex(formData)+`"` {
		t.Fatalf("POST form with SSE-S3: %d %s %q", status, code, resp.Header.Get("ETag"))
	}
	if g := mustGet(t, ctx, c, bucket, "form", formData); g.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("GET of the form upload: %q", g.ServerSideEncryption)
	}

	// Listings show plaintext sizes and, for SSE-S3, the plaintext MD5.
	want := map[string]int64{"s3": int64(len(big)), "kms": int64(len(kmsData)), "ssec": int64(len(cData)), "mp": int64(len(whole)), "empty": 0, "default": 1000, "form": int64(len(formData))}
	l2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, o := range l2.Contents {
		if n, ok := want[aws.ToString(o.Key)]; ok {
			seen++
			if aws.ToInt64(o.Size) != n {
				t.Errorf("ListObjectsV2 %s: size %d, want %d", aws.ToString(o.Key), aws.ToInt64(o.Size), n)
			}
		}
		if aws.ToString(o.Key) == "s3" && aws.ToString(o.ETag) != `"`+md5Hex(big)+`"` {
			t.Errorf("ListObjectsV2 s3: ETag %s", aws.ToString(o.ETag))
		}
	}
	if seen != len(want) {
		t.Fatalf("ListObjectsV2 shows %d of %d encrypted objects", seen, len(want))
	}

	// A versioned bucket: versions decrypt after an overwrite, and after the current one is
	// removed (the one before is current again).
	vb := newBucket(t, ctx, c, "ssev")
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(vb), VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	v1, v2 := randomBytes(t, 100_000), randomBytes(t, 66_000)
	id1 := aws.ToString(putWith(t, ctx, c, vb, "k", v1, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 }).VersionId)
	id2 := aws.ToString(putWith(t, ctx, c, vb, "k", v2, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAwsKms }).VersionId)
	mustGet(t, ctx, c, vb, "k", v2)
	mustGetVersion(t, ctx, c, vb, "k", id1, v1)
	mustGetVersion(t, ctx, c, vb, "k", id2, v2)
	vers, _ := listVersions(t, ctx, c, vb, "", 100)
	for _, v := range vers {
		if n := aws.ToInt64(v.Size); (aws.ToString(v.VersionId) == id1 && n != int64(len(v1))) || (aws.ToString(v.VersionId) == id2 && n != int64(len(v2))) {
			t.Fatalf("ListObjectVersions %s: size %d", aws.ToString(v.VersionId), n)
		}
	}
	if l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(vb)}); err != nil || len(l.Contents) != 1 || aws.ToInt64(l.Contents[0].Size) != int64(len(v2)) {
		t.Fatalf("listing of the versioned bucket: %v", err)
	}
	if err := deleteVersion(ctx, c, vb, "k", id2, false); err != nil {
		t.Fatalf("delete the current version: %v", err)
	}
	mustGet(t, ctx, c, vb, "k", v1)

	// Swift reads SSE-S3 and SSE-KMS objects as their plaintext and refuses SSE-C ones.
	swiftChecks(t, ctx, srv, kk.ID)

	// No plaintext on disk: the unencrypted control is found, the encrypted objects are not.
	if err := srv.Stop(StopTimeout); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if fileHolding(t, data, plain[1000:1064]) == "" {
		t.Fatal("the unencrypted control object's bytes are nowhere on disk: the search cannot see anything")
	}
	for name, b := range map[string][]byte{"s3": big, "kms": kmsData, "ssec": cData, "mp": part1, "v1": v1, "form": formData} {
		if f := fileHolding(t, data, b[1000:1064]); f != "" {
			t.Fatalf("plaintext of %s found on disk in %s", name, f)
		}
	}

	// After a restart everything still decrypts.
	srv = Start(t, opts)
	c = srv.S3Client()
	mustGet(t, ctx, c, bucket, "s3", big)
	mustGet(t, ctx, c, bucket, "kms", kmsData)
	mustGet(t, ctx, c, bucket, "ssec", cData, ck.get)
	mustGet(t, ctx, c, bucket, "mp", whole)
	mustGet(t, ctx, c, vb, "k", v1)
}

// swiftChecks writes encrypted objects through S3 into a tenant's bucket and reads them
// through Swift: SSE-S3 and SSE-KMS objects as their plaintext (whole and ranged), listed at
// their plaintext sizes; an SSE-C object refused.
func swiftChecks(t *testing.T, ctx context.Context, srv *Server, kmsID string) {
	t.Helper()
	root := newCLI(t, srv)
	root.ok("admin", "account", "create", "ssesw")
	alice := root.createUser("ssesw:alice", "--admin")
	c := NewS3Client(srv.Endpoint, alice.AccessKey, alice.SecretKey)
	bucket := newBucket(t, ctx, c, "ssesw")
	s3Data, kmsData, cData := randomBytes(t, 150_000), randomBytes(t, 5000), randomBytes(t, 10)
	putWith(t, ctx, c, bucket, "s3", s3Data, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 })
	putWith(t, ctx, c, bucket, "kms", kmsData, func(in *s3.PutObjectInput) {
		in.ServerSideEncryption, in.SSEKMSKeyId = types.ServerSideEncryptionAwsKms, aws.String(kmsID)
	})
	putWith(t, ctx, c, bucket, "ssec", cData, newSSECKey(t).put)
	// The classic bucket policy that requires encryption sees the header.
	pol := newBucket(t, ctx, c, "ssepol")
	if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(pol), Policy: aws.String(`{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:PutObject",
		"Resource":"arn:aws:s3:::` + pol + `/*","Condition":{"StringNotEquals":{"s3:x-amz-server-side-encryption":"AES256"}}}]}`)}); err != nil {
		t.Fatalf("PutBucketPolicy: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(pol), Key: aws.String("k"), Body: bytes.NewReader([]byte("x"))}); apiCode(err) != "AccessDenied" {
		t.Fatalf("unencrypted PUT under a policy that requires SSE-S3: %v", err)
	}
	putWith(t, ctx, c, pol, "k", []byte("x"), func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 })
	sw := swiftLogin(t, srv.Endpoint, "ssesw:alice", alice.SwiftKey)
	if _, b := sw.must("GET", "/"+bucket+"/s3", nil, nil, 200); !bytes.Equal(b, s3Data) {
		t.Fatal("Swift GET of an SSE-S3 object: not its plaintext")
	}
	if h, b := sw.must("GET", "/"+bucket+"/s3", map[string]string{"Range": "bytes=65530-65541"}, nil, 206); !bytes.Equal(b, s3Data[65530:65542]) ||
		h.Get("Content-Range") != fmt.Sprintf("bytes 65530-65541/%d", len(s3Data)) {
		t.Fatalf("Swift ranged GET of an SSE-S3 object: %q", h.Get("Content-Range"))
	}
	if _, b := sw.must("GET", "/"+bucket+"/kms", nil, nil, 200); !bytes.Equal(b, kmsData) {
		t.Fatal("Swift GET of an SSE-KMS object: not its plaintext")
	}
	if h, _ := sw.must("HEAD", "/"+bucket+"/s3", nil, nil, 200); h.Get("Content-Length") != strconv.Itoa(len(s3Data)) || h.Get("Etag") != md5Hex(s3Data) {
		t.Fatalf("Swift HEAD of an SSE-S3 object: %q %q", h.Get("Content-Length"), h.Get("Etag"))
	}
	if status, _, b := sw.do("GET", "/"+bucket+"/ssec", nil, nil); status != 400 || bytes.Equal(b, cData) {
		t.Fatalf("Swift GET of an SSE-C object: %d", status)
	}
	// An encrypted object cannot be a static large object's segment (its stored bytes would be
	// served as they are), nor be copied through Swift.
	if status, _, _ := sw.do("PUT", "/"+bucket+"/slo?multipart-manifest=put", nil, []byte(`[{"path": "/`+bucket+`/s3"}]`)); status != 400 {
		t.Fatalf("SLO of an encrypted segment: %d", status)
	}
	if status, _, _ := sw.do("PUT", "/"+bucket+"/copy", map[string]string{"X-Copy-From": bucket + "/s3"}, nil); status != 400 {
		t.Fatalf("Swift copy of an encrypted object: %d", status)
	}
	// Versions of an S3 versioned bucket read through Swift, current and by version-id.
	vb := newBucket(t, ctx, c, "sseswv")
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(vb), VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	w1, w2 := randomBytes(t, 70_000), randomBytes(t, 1000)
	id1 := aws.ToString(putWith(t, ctx, c, vb, "k", w1, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 }).VersionId)
	putWith(t, ctx, c, vb, "k", w2, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 })
	if _, b := sw.must("GET", "/"+vb+"/k", nil, nil, 200); !bytes.Equal(b, w2) {
		t.Fatal("Swift GET of an encrypted current version: not its plaintext")
	}
	if _, b := sw.must("GET", "/"+vb+"/k?version-id="+id1, nil, nil, 200); !bytes.Equal(b, w1) {
		t.Fatal("Swift GET ?version-id of an encrypted version: not its plaintext")
	}
	_, listing := sw.must("GET", "/"+bucket+"?format=json", nil, nil, 200)
	var entries []struct {
		Name  string `json:"name"`
		Bytes int64  `json:"bytes"`
	}
	if err := json.Unmarshal(listing, &entries); err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int64{"s3": int64(len(s3Data)), "kms": int64(len(kmsData)), "ssec": int64(len(cData))}
	for _, e := range entries {
		if e.Bytes != sizes[e.Name] {
			t.Errorf("Swift listing %s: %d bytes, want %d", e.Name, e.Bytes, sizes[e.Name])
		}
	}
}

// runBinary runs cairn to its end (bounded) and returns what it printed.
func runBinary(t *testing.T, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(Context(t), time.Minute)
	defer cancel()
	return exec.CommandContext(ctx, Binary(t), args...).CombinedOutput()
}

// TestSSEMasterKeyAndTamper (embedded default): a byte flipped in an encrypted object's data
// file fails its GET, never returning other bytes; a server started with another master key
// refuses to read what the first one wrote, and the right key reads it again.
func TestSSEMasterKeyAndTamper(t *testing.T) {
	SkipShort(t)
	if ClusterTopology() != nil {
		t.Skip("flips bytes and changes the master key of the embedded default")
	}
	ctx := Context(t)
	data := filepath.Join(t.TempDir(), "data")
	srv := Start(t, Options{DataDir: data})
	c := srv.S3Client()
	bucket := newBucket(t, ctx, c, "tamper")
	big := randomBytes(t, 2<<20)
	small := randomBytes(t, 100)
	putWith(t, ctx, c, bucket, "big", big, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 })
	putWith(t, ctx, c, bucket, "small", small, func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 })
	if err := srv.Stop(StopTimeout); err != nil {
		t.Fatal(err)
	}
	keyFile := data + ".master-key"
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("generated master key %s: %v", keyFile, err)
	}
	// Another master key: the objects are refused, not garbled.
	other := filepath.Join(t.TempDir(), "other.key")
	os.WriteFile(other, []byte(hex.EncodeToString(randomBytes(t, 32))+"\n"), 0o600)
	srv = Start(t, Options{DataDir: data, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Args: []string{"--sse-master-key-file", other}})
	c = srv.S3Client(NoRetries)
	if _, _, err := getBytes(ctx, c, bucket, "small"); apiCode(err) != "InternalError" {
		t.Fatalf("GET under another master key: %v", err)
	}
	srv.Stop(StopTimeout)
	// A bad key file stops the server with a clear message.
	bad := filepath.Join(t.TempDir(), "bad.key")
	os.WriteFile(bad, []byte("not a key"), 0o600)
	out, err := runBinary(t, "server", "--data", data, "--listen", "127.0.0.1:0", "--sse-master-key-file", bad)
	if err == nil || !bytes.Contains(out, []byte("master key")) {
		t.Fatalf("server with a bad master key file: %v\n%s", err, out)
	}

	var files []string
	filepath.WalkDir(filepath.Join(data, "devices", "d0", "objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".data" {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("data files %q, want the big object's", files)
	}
	FlipByte(t, files[0], 300_000)
	srv = Start(t, Options{DataDir: data, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Args: []string{"--audit-interval", "-1s"}})
	c = srv.S3Client(NoRetries)
	mustGet(t, ctx, c, bucket, "small", small)
	got, _, err := getBytes(ctx, c, bucket, "big")
	if err == nil {
		t.Fatal("GET of a tampered encrypted object succeeded")
	}
	if !bytes.Equal(got, big[:len(got)]) {
		t.Fatal("GET of a tampered encrypted object returned bytes that are not the object's")
	}
	for _, rng := range []string{"bytes=0-100", "bytes=299000-301000"} {
		got, _, err := getBytes(ctx, c, bucket, "big", func(in *s3.GetObjectInput) { in.Range = aws.String(rng) })
		if rng == "bytes=0-100" && (err != nil || !bytes.Equal(got, big[:101])) {
			// The range before the damage may be served or refused (the store checks the whole
			// file), but never wrong.
			if err == nil {
				t.Fatalf("GET %s: wrong bytes", rng)
			}
		}
		if rng != "bytes=0-100" && err == nil {
			t.Fatalf("GET %s over the damage succeeded", rng)
		}
	}
}

// TestSSEMultipartKeptAsVersion: an encrypted multipart object written before versioning is
// kept as a version when it is overwritten (the version store copies its parts into one
// object); that version still decrypts, whole and by range, in every encryption mode.
func TestSSEMultipartKeptAsVersion(t *testing.T) {
	srv := Start(t, Options{Args: []string{"--sse-c-allow-http"}})
	ctx := Context(t)
	c := srv.S3Client(NoRetries)
	bucket := newBucket(t, ctx, c, "ssemp")
	customer := newSSECKey(t)
	modes := map[string]struct {
		create func(*s3.CreateMultipartUploadInput)
		part   func(*s3.UploadPartInput)
		get    func(*s3.GetObjectInput)
	}{
		"sse-s3": {create: func(in *s3.CreateMultipartUploadInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 }},
		"sse-c": {
			create: func(in *s3.CreateMultipartUploadInput) {
				in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(customer.key), aws.String(customer.md5)
			},
			part: func(in *s3.UploadPartInput) {
				in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), aws.String(customer.key), aws.String(customer.md5)
			},
			get: customer.get,
		},
	}
	for name, m := range modes {
		key := "mp-" + name
		parts := [][]byte{randomBytes(t, 5<<20+17), randomBytes(t, 70_000)}
		cin := &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)}
		m.create(cin)
		up, err := c.CreateMultipartUpload(ctx, cin)
		if err != nil {
			t.Fatalf("%s: CreateMultipartUpload: %v", name, err)
		}
		var done []types.CompletedPart
		for i, p := range parts {
			pin := &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)}
			if m.part != nil {
				m.part(pin)
			}
			out, err := c.UploadPart(ctx, pin)
			if err != nil {
				t.Fatalf("%s: UploadPart: %v", name, err)
			}
			done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag})
		}
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
			t.Fatalf("%s: CompleteMultipartUpload: %v", name, err)
		}
	}
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	for name, m := range modes {
		key := "mp-" + name
		whole, err := getAll(ctx, c, bucket, key, "", m.get)
		if err != nil {
			t.Fatalf("%s: GET before the overwrite: %v", name, err)
		}
		putWith(t, ctx, c, bucket, key, []byte("newer"), nil)
		vs, _ := listVersions(t, ctx, c, bucket, key, 1000)
		if len(vs) != 2 {
			t.Fatalf("%s: %d versions, want 2", name, len(vs))
		}
		kept := aws.ToString(vs[1].VersionId)
		got, err := getAll(ctx, c, bucket, key, kept, m.get)
		if err != nil || !bytes.Equal(got, whole) {
			t.Fatalf("%s: the kept version: %v (%d bytes, want %d)", name, err, len(got), len(whole))
		}
		// A range across the parts' boundary.
		from := int64(5<<20 + 17 - 100)
		got, err = getAll(ctx, c, bucket, key, kept, m.get, func(in *s3.GetObjectInput) { in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", from, from+199)) })
		if err != nil || !bytes.Equal(got, whole[from:from+200]) {
			t.Fatalf("%s: a range of the kept version: %v", name, err)
		}
	}
}

func getAll(ctx context.Context, c *s3.Client, bucket, key, version string, opts ...func(*s3.GetObjectInput)) ([]byte, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if version != "" {
		in.VersionId = aws.String(version)
	}
	for _, o := range opts {
		if o != nil {
			o(in)
		}
	}
	out, err := c.GetObject(ctx, in)
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}
