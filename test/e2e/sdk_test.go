package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

const (
	KiB = 1 << 10
	MiB = 1 << 20
)

// randBytes returns n deterministic pseudo-random bytes for seed.
func randBytes(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func md5Hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

func crc32B64(b []byte) string {
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(out[:])
}

// apiCode returns the S3 error code of err, or "" if err is not an API error.
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func newBucket(t *testing.T, ctx context.Context, c *s3.Client, prefix string) string {
	t.Helper()
	name := prefix + "-" + RandomKey(6)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("CreateBucket %s: %v", name, err)
	}
	return name
}

func getBytes(ctx context.Context, c *s3.Client, bucket, key string, optFns ...func(*s3.GetObjectInput)) ([]byte, *s3.GetObjectOutput, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	for _, f := range optFns {
		f(in)
	}
	out, err := c.GetObject(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	b, err := ReadAllClose(out.Body)
	return b, out, err
}

// headerRecorder is an HTTP client that remembers the headers of the requests it sends.
type headerRecorder struct {
	mu   sync.Mutex
	reqs []http.Header
	next *http.Client
}

func (h *headerRecorder) Do(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.reqs = append(h.reqs, r.Header.Clone())
	h.mu.Unlock()
	return h.next.Do(r)
}

func (h *headerRecorder) last() http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reqs[len(h.reqs)-1]
}

func TestSDKObjectLifecycle(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client()
	bucket := newBucket(t, ctx, c, "sdk")

	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("HeadBucket: %v", err)
	}
	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatalf("ListBuckets: %v", err)
	}
	found := false
	for _, b := range lb.Buckets {
		found = found || aws.ToString(b.Name) == bucket
	}
	if !found {
		t.Fatalf("ListBuckets does not list %s: %+v", bucket, lb.Buckets)
	}

	sizes := []int{0, 1, 4 * KiB, 70 * KiB, 5 * MiB}
	want := map[string][]byte{}
	for i, n := range sizes {
		key := fmt.Sprintf("obj/size-%08d", n)
		body := randBytes(int64(i+1), n)
		want[key] = body
		out, err := c.PutObject(ctx, &s3.PutObjectInput{
			Bucket:      aws.String(bucket),
			Key:         aws.String(key),
			Body:        bytes.NewReader(body),
			ContentType: aws.String("application/x-cairn-test"),
			Metadata:    map[string]string{"size": fmt.Sprint(n), "color": "blue"},
		})
		if err != nil {
			t.Fatalf("PutObject %s (%d bytes): %v", key, n, err)
		}
		if got, exp := strings.Trim(aws.ToString(out.ETag), `"`), md5Hex(body); got != exp {
			t.Errorf("PutObject %s: ETag %q, want md5 %q", key, got, exp)
		}
		if out.ChecksumCRC32 != nil && *out.ChecksumCRC32 != crc32B64(body) {
			t.Errorf("PutObject %s: x-amz-checksum-crc32 %q, want %q", key, *out.ChecksumCRC32, crc32B64(body))
		}
	}

	// The 20 MiB object goes up as a 4-part multipart upload through the transfer manager.
	bigKey := "obj/multipart-20MiB"
	big := randBytes(99, 20*MiB)
	want[bigKey] = big
	tm := transfermanager.New(c, func(o *transfermanager.Options) {
		o.PartSizeBytes = 5 * MiB
		o.MultipartUploadThreshold = 5 * MiB
		o.Concurrency = 3
	})
	up, err := tm.UploadObject(ctx, &transfermanager.UploadObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(bigKey), Body: bytes.NewReader(big),
	})
	if err != nil {
		t.Fatalf("transfermanager UploadObject 20 MiB: %v", err)
	}
	if aws.ToString(up.UploadID) == "" {
		t.Errorf("20 MiB upload was not multipart (no upload id)")
	}
	var partMD5s []byte
	for off := 0; off < len(big); off += 5 * MiB {
		s := md5.Sum(big[off:min(off+5*MiB, len(big))])
		partMD5s = append(partMD5s, s[:]...)
	}
	if got, exp := strings.Trim(aws.ToString(up.ETag), `"`), md5Hex(partMD5s)+"-4"; got != exp {
		t.Errorf("multipart ETag %q, want %q (md5 of part md5s, -4)", got, exp)
	}

	for key, body := range want {
		got, out, err := getBytes(ctx, c, bucket, key, func(in *s3.GetObjectInput) { in.ChecksumMode = types.ChecksumModeEnabled })
		if err != nil {
			t.Fatalf("GetObject %s: %v", key, err)
		}
		if !bytes.Equal(got, body) {
			t.Errorf("GetObject %s: %d bytes (md5 %s), want %d bytes (md5 %s)", key, len(got), md5Hex(got), len(body), md5Hex(body))
		}
		if key != bigKey {
			if ct := aws.ToString(out.ContentType); ct != "application/x-cairn-test" {
				t.Errorf("GetObject %s: Content-Type %q", key, ct)
			}
			if out.Metadata["color"] != "blue" || out.Metadata["size"] != fmt.Sprint(len(body)) {
				t.Errorf("GetObject %s: metadata %v", key, out.Metadata)
			}
		}
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("HeadObject %s: %v", key, err)
		}
		if aws.ToInt64(h.ContentLength) != int64(len(body)) {
			t.Errorf("HeadObject %s: Content-Length %d, want %d", key, aws.ToInt64(h.ContentLength), len(body))
		}
	}

	// A range inside the multipart object, across a part boundary.
	rng, _, err := getBytes(ctx, c, bucket, bigKey, func(in *s3.GetObjectInput) {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", 5*MiB-10, 5*MiB+9))
	})
	if err != nil {
		t.Fatalf("ranged GetObject: %v", err)
	}
	if !bytes.Equal(rng, big[5*MiB-10:5*MiB+10]) {
		t.Errorf("ranged GetObject across part boundary: got %x", rng)
	}

	// Listings: everything, paged, and with a delimiter.
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var listed []string
	pages := 0
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("ListObjectsV2 page %d: %v", pages, err)
		}
		pages++
		for _, o := range page.Contents {
			listed = append(listed, aws.ToString(o.Key))
			if n := aws.ToInt64(o.Size); n != int64(len(want[aws.ToString(o.Key)])) {
				t.Errorf("listing: %s has size %d, want %d", aws.ToString(o.Key), n, len(want[aws.ToString(o.Key)]))
			}
		}
		if pages > 10 {
			t.Fatalf("ListObjectsV2 with MaxKeys=2 does not end")
		}
	}
	if strings.Join(listed, ",") != strings.Join(keys, ",") {
		t.Errorf("ListObjectsV2 paged by 2: %v, want %v", listed, keys)
	}
	if pages != (len(keys)+1)/2 {
		t.Errorf("ListObjectsV2: %d pages of 2 for %d keys", pages, len(keys))
	}
	d, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Delimiter: aws.String("/")})
	if err != nil {
		t.Fatalf("ListObjectsV2 delimiter: %v", err)
	}
	if len(d.Contents) != 0 || len(d.CommonPrefixes) != 1 || aws.ToString(d.CommonPrefixes[0].Prefix) != "obj/" {
		t.Errorf("ListObjectsV2 delimiter '/': contents %d, prefixes %+v; want 0 and [obj/]", len(d.Contents), d.CommonPrefixes)
	}

	// Delete everything, then the bucket.
	for _, k := range keys {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)}); err != nil {
			t.Fatalf("DeleteObject %s: %v", k, err)
		}
	}
	if _, _, err := getBytes(ctx, c, bucket, keys[0]); apiCode(err) != "NoSuchKey" {
		t.Errorf("GetObject after delete: err %v, want NoSuchKey", err)
	}
	after, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("ListObjectsV2 after delete: %v", err)
	}
	if len(after.Contents) != 0 {
		t.Errorf("ListObjectsV2 after deleting all: %d objects left", len(after.Contents))
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err == nil {
		t.Errorf("HeadBucket after DeleteBucket succeeded")
	}
}

func TestSDKChecksums(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	rec := &headerRecorder{next: &http.Client{Timeout: time.Minute}}
	c := srv.S3Client(func(o *s3.Options) { o.HTTPClient = rec })
	bucket := newBucket(t, ctx, c, "sum")

	// Default behaviour (when_supported): the SDK attaches a CRC32 to PutObject on its own.
	body := randBytes(7, 100*KiB)
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("default"), Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatalf("PutObject with the SDK's default CRC32: %v", err)
	}
	h := rec.last()
	if h.Get("X-Amz-Checksum-Crc32") == "" && !strings.Contains(strings.ToLower(h.Get("X-Amz-Trailer")), "x-amz-checksum-crc32") {
		t.Errorf("SDK sent no CRC32 (header or trailer); headers: %v", h)
	}
	if out.ChecksumCRC32 != nil && *out.ChecksumCRC32 != crc32B64(body) {
		t.Errorf("PutObject returned CRC32 %q, want %q", *out.ChecksumCRC32, crc32B64(body))
	}
	got, _, err := getBytes(ctx, c, bucket, "default", func(in *s3.GetObjectInput) { in.ChecksumMode = types.ChecksumModeEnabled })
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GetObject (checksum mode enabled): err %v, equal %v", err, bytes.Equal(got, body))
	}

	// Explicit algorithms.
	for _, alg := range []types.ChecksumAlgorithm{types.ChecksumAlgorithmCrc32c, types.ChecksumAlgorithmSha256, types.ChecksumAlgorithmSha1} {
		key := "alg-" + string(alg)
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body), ChecksumAlgorithm: alg}); err != nil {
			t.Errorf("PutObject with ChecksumAlgorithm %s: %v", alg, err)
			continue
		}
		got, _, err := getBytes(ctx, c, bucket, key)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("GetObject %s: err %v, equal %v", key, err, bytes.Equal(got, body))
		}
	}

	// A wrong checksum must be refused and store nothing.
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("bad-crc"), Body: bytes.NewReader(body), ChecksumCRC32: aws.String(crc32B64([]byte("other")))})
	if err == nil {
		t.Errorf("PutObject with a wrong x-amz-checksum-crc32 succeeded")
	} else if code := apiCode(err); code != "BadDigest" && code != "InvalidRequest" && code != "XAmzContentChecksumMismatch" {
		t.Errorf("PutObject with a wrong CRC32: code %q (%v), want BadDigest", code, err)
	}
	if _, _, err := getBytes(ctx, c, bucket, "bad-crc"); apiCode(err) != "NoSuchKey" {
		t.Errorf("object with a wrong CRC32 was stored (GET err %v)", err)
	}
	wrongMD5 := md5.Sum([]byte("other"))
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("bad-md5"), Body: bytes.NewReader(body), ContentMD5: aws.String(base64.StdEncoding.EncodeToString(wrongMD5[:]))})
	if code := apiCode(err); code != "BadDigest" {
		t.Errorf("PutObject with a wrong Content-MD5: err %v, want BadDigest", err)
	}
	if _, _, err := getBytes(ctx, c, bucket, "bad-md5"); apiCode(err) != "NoSuchKey" {
		t.Errorf("object with a wrong Content-MD5 was stored (GET err %v)", err)
	}
}

func TestSDKPresignedURLs(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client()
	bucket := newBucket(t, ctx, c, "presign")
	pc := s3.NewPresignClient(c)
	body := randBytes(3, 300*KiB)

	put, err := pc.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("via-url")}, s3.WithPresignExpires(10*time.Minute))
	if err != nil {
		t.Fatalf("PresignPutObject: %v", err)
	}
	req, _ := http.NewRequestWithContext(ctx, put.Method, put.URL, bytes.NewReader(body))
	for k, v := range put.SignedHeader {
		if !strings.EqualFold(k, "Host") {
			req.Header[k] = v
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("presigned PUT: %v", err)
	}
	rb, _ := ReadAllClose(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("presigned PUT: %s\n%s", resp.Status, rb)
	}
	got, _, err := getBytes(ctx, c, bucket, "via-url")
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GetObject after presigned PUT: err %v, equal %v", err, bytes.Equal(got, body))
	}

	get, err := pc.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("via-url")}, s3.WithPresignExpires(10*time.Minute))
	if err != nil {
		t.Fatalf("PresignGetObject: %v", err)
	}
	resp, err = http.Get(get.URL)
	if err != nil {
		t.Fatalf("presigned GET: %v", err)
	}
	got, _ = ReadAllClose(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
		t.Fatalf("presigned GET: %s, %d bytes, equal %v", resp.Status, len(got), bytes.Equal(got, body))
	}

	// A tampered signature and an expired URL are refused.
	tampered := strings.Replace(get.URL, "X-Amz-Signature=", "X-Amz-Signature=0", 1)
	tampered = tampered[:strings.Index(tampered, "X-Amz-Signature=")+len("X-Amz-Signature=")+64]
	if code, status := fetchError(t, tampered); status != http.StatusForbidden || code != "SignatureDoesNotMatch" {
		t.Errorf("presigned GET with a wrong signature: %d %s, want 403 SignatureDoesNotMatch", status, code)
	}
	short, err := pc.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("via-url")}, s3.WithPresignExpires(1*time.Second))
	if err != nil {
		t.Fatalf("PresignGetObject: %v", err)
	}
	time.Sleep(2500 * time.Millisecond)
	if code, status := fetchError(t, short.URL); status != http.StatusForbidden {
		t.Errorf("expired presigned GET: %d %s, want 403", status, code)
	}
}

// fetchError GETs url without credentials and returns the S3 error code and HTTP status.
func fetchError(t *testing.T, url string) (code string, status int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	b, _ := ReadAllClose(resp.Body)
	s := string(b)
	if i := strings.Index(s, "<Code>"); i >= 0 {
		if j := strings.Index(s[i:], "</Code>"); j >= 0 {
			code = s[i+len("<Code>") : i+j]
		}
	}
	return code, resp.StatusCode
}

func TestAuthFailures(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client()
	bucket := newBucket(t, ctx, c, "auth")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("secret data")}); err != nil {
		t.Fatal(err)
	}

	for _, path := range []string{"/", "/" + bucket, "/" + bucket + "/k"} {
		if code, status := fetchError(t, srv.Endpoint+path); status != http.StatusForbidden || code != "AccessDenied" {
			t.Errorf("anonymous GET %s: %d %q, want 403 AccessDenied", path, status, code)
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.Endpoint+"/"+bucket+"/anon", strings.NewReader("x"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous PUT: %s, want 403", resp.Status)
	}

	wrong := NewS3Client(srv.Endpoint, srv.AccessKey, srv.SecretKey+"x", NoRetries)
	_, err = wrong.ListBuckets(ctx, &s3.ListBucketsInput{})
	if code := apiCode(err); code != "SignatureDoesNotMatch" {
		t.Errorf("ListBuckets with a wrong secret: %v, want SignatureDoesNotMatch", err)
	}
	unknown := NewS3Client(srv.Endpoint, "NOSUCHKEY0000000", srv.SecretKey, NoRetries)
	_, err = unknown.ListBuckets(ctx, &s3.ListBucketsInput{})
	if code := apiCode(err); code != "InvalidAccessKeyId" {
		t.Errorf("ListBuckets with an unknown access key: %v, want InvalidAccessKeyId", err)
	}
	// Signed with the right keys, but the body does not match the signed payload hash.
	req, _ = http.NewRequest(http.MethodPut, srv.Endpoint+"/"+bucket+"/tampered", bytes.NewReader([]byte("tampered")))
	sum := "0000000000000000000000000000000000000000000000000000000000000000"
	resp, err = srv.SignedRequestWithHash(ctx, req, sum)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ReadAllClose(resp.Body)
	if resp.StatusCode == http.StatusOK {
		t.Errorf("PUT whose body does not match x-amz-content-sha256 succeeded")
	} else if !strings.Contains(string(b), "XAmzContentSHA256Mismatch") && !strings.Contains(string(b), "BadDigest") {
		t.Logf("PUT with a mismatched payload hash: %s %s", resp.Status, b)
	}
	if _, _, err := getBytes(ctx, c, bucket, "tampered"); apiCode(err) != "NoSuchKey" {
		t.Errorf("object with a mismatched payload hash was stored (GET err %v)", err)
	}
}
