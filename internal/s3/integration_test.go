package s3_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/ring"
	cairns3 "github.com/cairn-store/cairn/internal/s3"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/storage"
)

const (
	testAccessKey = "AKIDCAIRNTEST"
	testSecretKey = "cairn-test-secret-key"
)

// stack is a whole Cairn in one process: a storage node on a temporary directory, the proxy
// over it, and the S3 handler on an httptest server.
type stack struct {
	srv    *httptest.Server
	client *s3.Client
}

func newStack(t *testing.T) *stack { t.Helper(); return newStackWrapped(t, nil) }

// newStackWrapped is newStack with the S3 handler wrapped in wrap (nil: not wrapped), for a test
// that watches its requests.
func newStackWrapped(t *testing.T, wrap func(http.Handler) http.Handler) *stack {
	t.Helper()
	node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	px, err := proxy.New(proxy.Config{Ring: ring.SingleDevice("local", "d0", 6, ""), Dialer: nodeclient.Local{Client: node}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := cairns3.New(cairns3.Config{
		Proxy:       px,
		Credentials: sigv4.StaticStore{testAccessKey: {AccessKey: testAccessKey, SecretKey: testSecretKey, Account: "acct", Admin: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var served http.Handler = h
	if wrap != nil {
		served = wrap(h)
	}
	srv := httptest.NewServer(served)
	t.Cleanup(srv.Close)
	return &stack{srv: srv, client: newClient(srv.URL, testSecretKey)}
}

func newClient(endpoint, secret string) *s3.Client {
	return s3.New(s3.Options{
		Region:                     "us-east-1",
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(testAccessKey, secret, ""),
		Retryer:                    aws.NopRetryer{},
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenSupported,
	})
}

// ctxT is a test's context. Its bound only catches a hang: a loaded machine may take many times
// as long as an idle one for a whole test.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// wantCode fails unless err is an S3 API error with the given code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want %s, got %v", code, err)
	}
	if ae.ErrorCode() != code {
		t.Fatalf("want %s, got %s (%v)", code, ae.ErrorCode(), err)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func put(t *testing.T, c *s3.Client, bucket, key string, data []byte) *s3.PutObjectOutput {
	t.Helper()
	out, err := c.PutObject(ctxT(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(data)})
	mustOK(t, err)
	return out
}

func get(t *testing.T, c *s3.Client, in *s3.GetObjectInput) ([]byte, *s3.GetObjectOutput) {
	t.Helper()
	out, err := c.GetObject(ctxT(t), in)
	mustOK(t, err)
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	mustOK(t, err)
	return b, out
}

func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

func TestBuckets(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)

	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("Bad_Name")})
	wantCode(t, err, "InvalidBucketName")
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("192.168.1.1")})
	wantCode(t, err, "InvalidBucketName")

	mustOK(t, func() error {
		_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("alpha")})
		return err
	}())
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("alpha")})
	wantCode(t, err, "BucketAlreadyOwnedByYou")
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("beta"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "eu-west-1"}})
	mustOK(t, err)
	// REGION:POLICY names a storage policy; this server has one, Policy-0.
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("gamma"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "us-east-1:gold"}})
	wantCode(t, err, "InvalidLocationConstraint")
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("gamma"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "us-east-1:policy-0"}})
	mustOK(t, err)
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("gamma")})
	mustOK(t, err)

	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	mustOK(t, err)
	if len(lb.Buckets) != 2 || *lb.Buckets[0].Name != "alpha" || *lb.Buckets[1].Name != "beta" || lb.Owner == nil || *lb.Owner.ID != "acct" {
		t.Fatalf("ListBuckets: %+v", lb)
	}
	_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("alpha")})
	mustOK(t, err)
	_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("nope")})
	var nf *types.NotFound
	if !errors.As(err, &nf) {
		t.Fatalf("HeadBucket of a missing bucket: %v", err)
	}
	loc, err := c.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: aws.String("alpha")})
	mustOK(t, err)
	if loc.LocationConstraint != "" {
		t.Fatalf("location %q", loc.LocationConstraint)
	}
	_, err = c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("alpha")})
	mustOK(t, err)
	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("alpha")})
	mustOK(t, err)
	if v.Status != "" {
		t.Fatalf("versioning %q", v.Status)
	}
	_, err = c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("alpha")})
	wantCode(t, err, "NoSuchBucketPolicy")
	_, err = c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("alpha"),
		VersioningConfiguration: &types.VersioningConfiguration{MFADelete: types.MFADeleteEnabled, Status: types.BucketVersioningStatusEnabled}})
	wantCode(t, err, "NotImplemented")

	put(t, c, "alpha", "k", []byte("x"))
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("alpha")})
	wantCode(t, err, "BucketNotEmpty")
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("alpha"), Key: aws.String("k")})
	mustOK(t, err)
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("alpha")})
	mustOK(t, err)
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("alpha")})
	wantCode(t, err, "NoSuchBucket")
	_, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("alpha")})
	wantCode(t, err, "NoSuchBucket")
}

func TestObjects(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("objs")})
	mustOK(t, err)
	data := []byte("hello, cairn object store")
	key := "dir/sub dir/ünïcode+plus.txt"
	out, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("objs"), Key: &key, Body: bytes.NewReader(data),
		ContentType: aws.String("text/plain"), CacheControl: aws.String("max-age=60"),
		ContentDisposition: aws.String("attachment"), Metadata: map[string]string{"Color": "blue"},
	})
	mustOK(t, err)
	if *out.ETag != `"`+md5hex(data)+`"` || out.ChecksumCRC32 == nil {
		t.Fatalf("PutObject: etag %s crc %v", *out.ETag, out.ChecksumCRC32)
	}

	b, g := get(t, c, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: &key, ChecksumMode: types.ChecksumModeEnabled})
	if !bytes.Equal(b, data) || *g.ContentType != "text/plain" || *g.CacheControl != "max-age=60" || g.Metadata["color"] != "blue" ||
		*g.ContentDisposition != "attachment" || g.ChecksumCRC32 == nil || *g.ChecksumCRC32 != *out.ChecksumCRC32 {
		t.Fatalf("GetObject: %q %+v", b, g)
	}

	b, g = get(t, c, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: &key, Range: aws.String("bytes=7-11")})
	if string(b) != "cairn" || *g.ContentRange != fmt.Sprintf("bytes 7-11/%d", len(data)) {
		t.Fatalf("range: %q %v", b, *g.ContentRange)
	}
	b, _ = get(t, c, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: &key, Range: aws.String("bytes=-5")})
	if string(b) != "store" {
		t.Fatalf("suffix range: %q", b)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: &key, Range: aws.String("bytes=1000-")})
	wantCode(t, err, "InvalidRange")

	b, g = get(t, c, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: &key, ResponseContentType: aws.String("application/x-test")})
	if *g.ContentType != "application/x-test" {
		t.Fatalf("response-content-type: %v", *g.ContentType)
	}

	// Conditionals.
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: &key, IfMatch: aws.String(`"0123"`)})
	wantCode(t, err, "PreconditionFailed")
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: &key, IfNoneMatch: out.ETag})
	wantCode(t, err, "NotModified")
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("objs"), Key: &key, IfModifiedSince: aws.Time(time.Now().Add(time.Hour))})
	wantCode(t, err, "NotModified")
	get(t, c, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: &key, IfMatch: out.ETag, IfUnmodifiedSince: aws.Time(time.Now().Add(-time.Hour))})
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: &key, IfUnmodifiedSince: aws.Time(time.Now().Add(-time.Hour))})
	wantCode(t, err, "PreconditionFailed")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("objs"), Key: &key, Body: bytes.NewReader(data), IfNoneMatch: aws.String("*")})
	wantCode(t, err, "PreconditionFailed")

	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("objs"), Key: &key})
	mustOK(t, err)
	if *h.ContentLength != int64(len(data)) || *h.ETag != *out.ETag || h.LastModified == nil {
		t.Fatalf("HeadObject: %+v", h)
	}

	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: aws.String("missing")})
	wantCode(t, err, "NoSuchKey")
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("nobucket"), Key: aws.String("missing")})
	wantCode(t, err, "NoSuchBucket")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("nobucket"), Key: aws.String("k"), Body: bytes.NewReader(data)})
	wantCode(t, err, "NoSuchBucket")
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("objs"), Key: aws.String("missing")})
	var nf *types.NotFound
	if !errors.As(err, &nf) {
		t.Fatalf("HeadObject of a missing key: %v", err)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("objs"), Key: aws.String(strings.Repeat("k", 1025)), Body: bytes.NewReader(data)})
	wantCode(t, err, "KeyTooLongError")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("objs"), Key: aws.String("big-meta"), Body: bytes.NewReader(data),
		Metadata: map[string]string{"a": strings.Repeat("v", 2100)}})
	wantCode(t, err, "MetadataTooLarge")

	// Empty object.
	put(t, c, "objs", "empty", nil)
	b, _ = get(t, c, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: aws.String("empty")})
	if len(b) != 0 {
		t.Fatalf("empty object: %q", b)
	}

	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("objs"), Key: &key})
	mustOK(t, err)
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("objs"), Key: &key})
	mustOK(t, err) // absent: still 204
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("objs"), Key: &key})
	wantCode(t, err, "NoSuchKey")
}

func TestCopy(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("src")})
	mustOK(t, err)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("dst")})
	mustOK(t, err)
	data := []byte("copy me please")
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("src"), Key: aws.String("a b+c"), Body: bytes.NewReader(data),
		ContentType: aws.String("text/x-src"), Metadata: map[string]string{"m": "1"}})
	mustOK(t, err)

	co, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("copy"), CopySource: aws.String("src/a%20b%2Bc")})
	mustOK(t, err)
	if *co.CopyObjectResult.ETag != `"`+md5hex(data)+`"` {
		t.Fatalf("copy etag %s", *co.CopyObjectResult.ETag)
	}
	b, g := get(t, c, &s3.GetObjectInput{Bucket: aws.String("dst"), Key: aws.String("copy")})
	if !bytes.Equal(b, data) || *g.ContentType != "text/x-src" || g.Metadata["m"] != "1" {
		t.Fatalf("copied: %q %+v", b, g)
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("copy2"), CopySource: aws.String("src/a%20b%2Bc"),
		MetadataDirective: types.MetadataDirectiveReplace, ContentType: aws.String("text/x-new"), Metadata: map[string]string{"n": "2"}})
	mustOK(t, err)
	_, g = get(t, c, &s3.GetObjectInput{Bucket: aws.String("dst"), Key: aws.String("copy2")})
	if *g.ContentType != "text/x-new" || g.Metadata["n"] != "2" || g.Metadata["m"] != "" {
		t.Fatalf("REPLACE: %+v", g)
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("copy"), CopySource: aws.String("dst/copy")})
	wantCode(t, err, "InvalidRequest")
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("copy"), CopySource: aws.String("dst/copy"),
		MetadataDirective: types.MetadataDirectiveReplace, Metadata: map[string]string{"self": "yes"}})
	mustOK(t, err)
	b, g = get(t, c, &s3.GetObjectInput{Bucket: aws.String("dst"), Key: aws.String("copy")})
	if !bytes.Equal(b, data) || g.Metadata["self"] != "yes" {
		t.Fatalf("self copy: %q %+v", b, g)
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("x"), CopySource: aws.String("src/a%20b%2Bc"),
		CopySourceIfMatch: aws.String(`"nope"`)})
	wantCode(t, err, "PreconditionFailed")
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("x"), CopySource: aws.String("src/missing")})
	wantCode(t, err, "NoSuchKey")
}

func TestListObjects(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("list")})
	mustOK(t, err)
	keys := []string{"a/1", "a/2", "b", "c/x/1", "c/y", "d", "e f"}
	for _, k := range keys {
		put(t, c, "list", k, []byte(k))
	}
	// V2, everything, paged by 2.
	var got []string
	var token *string
	pages := 0
	for {
		out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("list"), MaxKeys: aws.Int32(2), ContinuationToken: token})
		mustOK(t, err)
		pages++
		for _, o := range out.Contents {
			got = append(got, *o.Key)
		}
		if *out.KeyCount != int32(len(out.Contents)) {
			t.Fatalf("KeyCount %d for %d keys", *out.KeyCount, len(out.Contents))
		}
		if aws.ToString(out.ContinuationToken) != aws.ToString(token) || (token == nil) != (out.ContinuationToken == nil) {
			t.Fatalf("ContinuationToken %v echoed as %v", token, out.ContinuationToken)
		}
		if !*out.IsTruncated {
			break
		}
		token = out.NextContinuationToken
	}
	// An empty token is no token, and is echoed (as start-after is).
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("list"), ContinuationToken: aws.String("")})
	mustOK(t, err)
	if out.ContinuationToken == nil || *out.ContinuationToken != "" || len(out.Contents) != len(keys) {
		t.Errorf("an empty continuation token: echoed %v, %d keys", out.ContinuationToken, len(out.Contents))
	}
	if strings.Join(got, ",") != strings.Join(keys, ",") || pages != 4 {
		t.Fatalf("V2 paged: %v in %d pages", got, pages)
	}
	// V2 with a delimiter, paged by 2: common prefixes count and are not repeated.
	var entries []string
	token = nil
	for {
		out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("list"), Delimiter: aws.String("/"), MaxKeys: aws.Int32(2), ContinuationToken: token})
		mustOK(t, err)
		for _, p := range out.CommonPrefixes {
			entries = append(entries, "P:"+*p.Prefix)
		}
		for _, o := range out.Contents {
			entries = append(entries, *o.Key)
		}
		if !*out.IsTruncated {
			break
		}
		token = out.NextContinuationToken
	}
	if strings.Join(entries, ",") != "P:a/,b,P:c/,d,e f" {
		t.Fatalf("V2 delimiter: %v", entries)
	}
	out, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("list"), Prefix: aws.String("c/"), Delimiter: aws.String("/"), StartAfter: aws.String("a")})
	mustOK(t, err)
	if len(out.CommonPrefixes) != 1 || *out.CommonPrefixes[0].Prefix != "c/x/" || len(out.Contents) != 1 || *out.Contents[0].Key != "c/y" {
		t.Fatalf("V2 prefix: %+v", out)
	}
	// V1 with marker; NextMarker only with a delimiter.
	v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String("list"), Marker: aws.String("b"), MaxKeys: aws.Int32(2)})
	mustOK(t, err)
	if len(v1.Contents) != 2 || *v1.Contents[0].Key != "c/x/1" || !*v1.IsTruncated || v1.NextMarker != nil || v1.Contents[0].Owner == nil {
		t.Fatalf("V1: %+v", v1)
	}
	v1, err = c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String("list"), Delimiter: aws.String("/"), MaxKeys: aws.Int32(1)})
	mustOK(t, err)
	if v1.NextMarker == nil || *v1.NextMarker != "a/" {
		t.Fatalf("V1 NextMarker: %+v", v1)
	}
	enc, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("list"), Prefix: aws.String("e"), EncodingType: types.EncodingTypeUrl})
	mustOK(t, err)
	if len(enc.Contents) != 1 || *enc.Contents[0].Key != "e%20f" {
		t.Fatalf("encoding-type=url: %+v", enc.Contents)
	}

	// Multi-object delete.
	del, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("list"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("a/1")}, {Key: aws.String("never-was")}, {Key: aws.String("b")},
	}}})
	mustOK(t, err)
	if len(del.Deleted) != 3 || len(del.Errors) != 0 {
		t.Fatalf("DeleteObjects: %+v", del)
	}
	del, err = c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("list"), Delete: &types.Delete{Quiet: aws.Bool(true), Objects: []types.ObjectIdentifier{{Key: aws.String("d")}}}})
	mustOK(t, err)
	if len(del.Deleted) != 0 {
		t.Fatalf("quiet DeleteObjects: %+v", del)
	}
	out, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("list")})
	mustOK(t, err)
	if *out.KeyCount != 4 {
		t.Fatalf("after delete: %d keys", *out.KeyCount)
	}
}

func TestMultipart(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("mpu")})
	mustOK(t, err)
	part1 := bytes.Repeat([]byte("1"), 5<<20)
	part2 := []byte("the last part")

	for _, alg := range []types.ChecksumAlgorithm{"", types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmCrc64nvme} {
		key := "big/" + string(alg)
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mpu"), Key: &key,
			ContentType: aws.String("application/x-big"), Metadata: map[string]string{"k": "v"}, ChecksumAlgorithm: alg})
		mustOK(t, err)
		up1, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("mpu"), Key: &key, UploadId: cr.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(part1), ChecksumAlgorithm: alg})
		mustOK(t, err)
		up2, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("mpu"), Key: &key, UploadId: cr.UploadId, PartNumber: aws.Int32(2), Body: bytes.NewReader(part2), ChecksumAlgorithm: alg})
		mustOK(t, err)
		lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("mpu"), Key: &key, UploadId: cr.UploadId})
		mustOK(t, err)
		if len(lp.Parts) != 2 || *lp.Parts[1].Size != int64(len(part2)) {
			t.Fatalf("ListParts: %+v", lp.Parts)
		}
		lu, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("mpu")})
		mustOK(t, err)
		if len(lu.Uploads) != 1 || *lu.Uploads[0].Key != key || *lu.Uploads[0].UploadId != *cr.UploadId {
			t.Fatalf("ListMultipartUploads: %+v", lu.Uploads)
		}
		parts := []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: up1.ETag, ChecksumCRC32: up1.ChecksumCRC32, ChecksumCRC64NVME: up1.ChecksumCRC64NVME},
			{PartNumber: aws.Int32(2), ETag: up2.ETag, ChecksumCRC32: up2.ChecksumCRC32, ChecksumCRC64NVME: up2.ChecksumCRC64NVME},
		}
		_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("mpu"), Key: &key, UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{parts[1], parts[0]}}})
		wantCode(t, err, "InvalidPartOrder")
		_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("mpu"), Key: &key, UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up2.ETag}}}})
		wantCode(t, err, "InvalidPart")
		done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("mpu"), Key: &key, UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
		mustOK(t, err)
		s1, s2 := md5.Sum(part1), md5.Sum(part2)
		wantETag := fmt.Sprintf(`"%x-2"`, md5.Sum(append(s1[:], s2[:]...)))
		if *done.ETag != wantETag {
			t.Fatalf("multipart ETag %s, want %s", *done.ETag, wantETag)
		}
		b, g := get(t, c, &s3.GetObjectInput{Bucket: aws.String("mpu"), Key: &key, ChecksumMode: types.ChecksumModeEnabled})
		if !bytes.Equal(b, append(append([]byte{}, part1...), part2...)) || *g.ETag != wantETag || *g.ContentType != "application/x-big" || g.Metadata["k"] != "v" {
			t.Fatalf("GET multipart: %d bytes, %+v", len(b), g)
		}
		if alg == types.ChecksumAlgorithmCrc64nvme && (g.ChecksumCRC64NVME == nil || g.ChecksumType != types.ChecksumTypeFullObject) {
			t.Fatalf("full-object CRC64NVME missing: %+v", g)
		}
		b, _ = get(t, c, &s3.GetObjectInput{Bucket: aws.String("mpu"), Key: &key, PartNumber: aws.Int32(2)})
		if !bytes.Equal(b, part2) {
			t.Fatalf("partNumber=2: %q", b)
		}
		b, _ = get(t, c, &s3.GetObjectInput{Bucket: aws.String("mpu"), Key: &key, Range: aws.String(fmt.Sprintf("bytes=%d-%d", len(part1)-2, len(part1)+2))})
		if string(b) != "11the" {
			t.Fatalf("range across parts: %q", b)
		}
		// Completed: the upload is gone; a retried completion still answers.
		_, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("mpu"), Key: &key, UploadId: cr.UploadId})
		wantCode(t, err, "NoSuchUpload")
		_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("mpu"), Key: &key, UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
		mustOK(t, err)
	}

	// Too-small parts, abort, upload part copy.
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("small")})
	mustOK(t, err)
	var etags []*string
	for i := 1; i <= 2; i++ {
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("mpu"), Key: aws.String("small"), UploadId: cr.UploadId, PartNumber: aws.Int32(int32(i)), Body: bytes.NewReader(part2)})
		mustOK(t, err)
		etags = append(etags, up.ETag)
	}
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("small"), UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: etags[0]}, {PartNumber: aws.Int32(2), ETag: etags[1]}}}})
	wantCode(t, err, "EntityTooSmall")
	pc, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("mpu"), Key: aws.String("small"), UploadId: cr.UploadId, PartNumber: aws.Int32(3),
		CopySource: aws.String("mpu/big/"), CopySourceRange: aws.String("bytes=5242878-5242885")})
	mustOK(t, err)
	if *pc.CopyPartResult.ETag != `"`+md5hex([]byte("11the la"))+`"` {
		t.Fatalf("UploadPartCopy etag %s", *pc.CopyPartResult.ETag)
	}
	_, err = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("small"), UploadId: cr.UploadId})
	mustOK(t, err)
	_, err = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("small"), UploadId: cr.UploadId})
	wantCode(t, err, "NoSuchUpload")
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("mpu"), Key: aws.String("small"), UploadId: cr.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(part2)})
	wantCode(t, err, "NoSuchUpload")

	// Deleting the multipart objects empties the bucket, parts included.
	for _, k := range []string{"big/", "big/CRC32", "big/CRC64NVME"} {
		_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("mpu"), Key: aws.String(k)})
		mustOK(t, err)
	}
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("mpu")})
	mustOK(t, err)
}

// rawRequest sends a request signed (or not) by hand, for cases the SDK will not produce.
func rawRequest(t *testing.T, st *stack, method, path string, body []byte, hdr map[string]string, sign bool) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, st.srv.URL+path, bytes.NewReader(body))
	mustOK(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if sign {
		mustOK(t, sigv4.SignRequest(req, sigv4.Credential{AccessKey: testAccessKey, SecretKey: testSecretKey}, "us-east-1", time.Now()))
	}
	resp, err := http.DefaultClient.Do(req)
	mustOK(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestAuthAndBadInput(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("auth")})
	mustOK(t, err)

	resp, body := rawRequest(t, st, "GET", "/auth", nil, nil, false)
	if resp.StatusCode != 403 || !strings.Contains(body, "<Code>AccessDenied</Code>") || resp.Header.Get("X-Amz-Request-Id") == "" {
		t.Fatalf("anonymous: %d %s", resp.StatusCode, body)
	}
	resp, body = rawRequest(t, st, "GET", "/auth", nil, map[string]string{"Authorization": "AWS " + testAccessKey + ":c2lnbmF0dXJl", "Date": time.Now().UTC().Format(http.TimeFormat)}, false)
	if resp.StatusCode != 403 || !strings.Contains(body, "<Code>SignatureDoesNotMatch</Code>") {
		t.Fatalf("bad SigV2: %d %s", resp.StatusCode, body)
	}
	_, err = newClient(st.srv.URL, "wrong-secret").ListBuckets(ctx, &s3.ListBucketsInput{})
	wantCode(t, err, "SignatureDoesNotMatch")

	resp, body = rawRequest(t, st, "PUT", "/auth/k", []byte("data"), map[string]string{"Content-MD5": "AAAAAAAAAAAAAAAAAAAAAA=="}, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "<Code>BadDigest</Code>") {
		t.Fatalf("bad Content-MD5: %d %s", resp.StatusCode, body)
	}
	resp, body = rawRequest(t, st, "PUT", "/auth/k", []byte("data"), map[string]string{"X-Amz-Checksum-Crc32": "AAAAAA=="}, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "<Code>BadDigest</Code>") {
		t.Fatalf("bad CRC32: %d %s", resp.StatusCode, body)
	}
	resp, body = rawRequest(t, st, "PUT", "/auth/k", []byte("data"), map[string]string{"X-Amz-Content-Sha256": strings.Repeat("0", 64)}, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "XAmzContentSHA256Mismatch") {
		t.Fatalf("bad sha256: %d %s", resp.StatusCode, body)
	}
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("auth"), Key: aws.String("k")})
	if err == nil {
		t.Fatal("a PUT with a bad digest stored the object")
	}
	resp, body = rawRequest(t, st, "PUT", "/auth?tagging", []byte("<Tagging/>"), nil, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "<Code>MalformedXML</Code>") {
		t.Fatalf("PUT ?tagging without a TagSet: %d %s", resp.StatusCode, body)
	}
	resp, body = rawRequest(t, st, "PUT", "/newbucket", []byte("<CreateBucketConfiguration><Loc"), nil, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "MalformedXML") {
		t.Fatalf("malformed CreateBucketConfiguration: %d %s", resp.StatusCode, body)
	}
	resp, body = rawRequest(t, st, "POST", "/auth?delete", []byte("<Delete><Object><Key>a</Key></Object></Delete>"), nil, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "Content-MD5") {
		t.Fatalf("multi-delete without an integrity header: %d %s", resp.StatusCode, body)
	}
	resp, body = rawRequest(t, st, "GET", "/auth/%FF", nil, nil, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "InvalidURI") {
		t.Fatalf("invalid UTF-8 key: %d %s", resp.StatusCode, body)
	}
	// Presigned GET.
	put(t, c, "auth", "shared", []byte("via presigned url"))
	ps, err := s3.NewPresignClient(c).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("auth"), Key: aws.String("shared")})
	mustOK(t, err)
	r, err := http.Get(ps.URL)
	mustOK(t, err)
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || string(b) != "via presigned url" {
		t.Fatalf("presigned GET: %d %q", r.StatusCode, b)
	}
}

// TestStreamingOverTLS makes the SDK send what it sends to real S3 over HTTPS: an aws-chunked
// body (STREAMING-UNSIGNED-PAYLOAD-TRAILER) with the CRC32 in a trailer.
func TestStreamingOverTLS(t *testing.T) {
	st := newStack(t)
	var payloadModes []string
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			payloadModes = append(payloadModes, r.Header.Get("X-Amz-Content-Sha256"))
		}
		st.srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(tlsSrv.Close)
	c := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(tlsSrv.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(testAccessKey, testSecretKey, ""),
		Retryer:     aws.NopRetryer{}, HTTPClient: tlsSrv.Client(),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
	})
	ctx := ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("tls")})
	mustOK(t, err)
	data := bytes.Repeat([]byte("streamed "), 100000)
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("tls"), Key: aws.String("s"), Body: bytes.NewReader(data), ContentEncoding: aws.String("gzip")})
	mustOK(t, err)
	if out.ChecksumCRC32 == nil {
		t.Fatal("no CRC32 in the answer")
	}
	if last := payloadModes[len(payloadModes)-1]; !strings.HasPrefix(last, "STREAMING-") {
		t.Fatalf("the SDK did not stream: x-amz-content-sha256 %q", last)
	}
	b, g := get(t, c, &s3.GetObjectInput{Bucket: aws.String("tls"), Key: aws.String("s"), ChecksumMode: types.ChecksumModeEnabled})
	if !bytes.Equal(b, data) || *g.ChecksumCRC32 != *out.ChecksumCRC32 || *g.ContentEncoding != "gzip" {
		t.Fatalf("streamed object: %d bytes, %+v", len(b), g)
	}
}

// ListBuckets pages with max-buckets, and a page that ends at the last bucket carries no
// continuation token (clients would otherwise ask for an empty page).
func TestListBucketsPaging(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	for _, b := range []string{"page-a", "page-b", "page-c", "page-d"} {
		_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)})
		mustOK(t, err)
	}
	var names []string
	var token *string
	pages := 0
	for {
		out, err := c.ListBuckets(ctx, &s3.ListBucketsInput{MaxBuckets: aws.Int32(2), ContinuationToken: token})
		mustOK(t, err)
		pages++
		for _, b := range out.Buckets {
			names = append(names, aws.ToString(b.Name))
		}
		if out.ContinuationToken == nil || *out.ContinuationToken == "" {
			break
		}
		token = out.ContinuationToken
	}
	if strings.Join(names, ",") != "page-a,page-b,page-c,page-d" || pages != 2 {
		t.Fatalf("listed %v in %d pages, want the four buckets in 2", names, pages)
	}
}
