package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Tagging and GetObjectAttributes against the real binary, through the AWS SDK for Go v2.

func tagSet(kv ...string) []types.Tag {
	var out []types.Tag
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return out
}

func numberedTags(n int) []types.Tag {
	var out []types.Tag
	for i := 0; i < n; i++ {
		out = append(out, types.Tag{Key: aws.String(fmt.Sprintf("k%02d", i)), Value: aws.String("v")})
	}
	return out
}

// tagMap flattens a tag set, failing on a repeated key.
func tagMap(t *testing.T, tags []types.Tag) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, tg := range tags {
		if _, dup := m[aws.ToString(tg.Key)]; dup {
			t.Fatalf("tag %q twice", aws.ToString(tg.Key))
		}
		m[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	return m
}

func objectTags(t *testing.T, ctx context.Context, c *s3.Client, bucket, key string) map[string]string {
	t.Helper()
	out, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("GetObjectTagging %s: %v", key, err)
	}
	if out.TagSet == nil {
		t.Fatalf("GetObjectTagging %s: no TagSet element", key)
	}
	return tagMap(t, out.TagSet)
}

func wantTags(t *testing.T, what string, got map[string]string, kv ...string) {
	t.Helper()
	want := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		want[kv[i]] = kv[i+1]
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: tags %v, want %v", what, got, want)
	}
}

func wantAPIError(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := apiCode(err); got != code {
		t.Fatalf("%s: %v; want %s", what, err, code)
	}
}

// rawSigned sends a request signed with the root keys and returns the status and body.
func rawSigned(t *testing.T, ctx context.Context, srv *Server, method, path string, body []byte, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, srv.Endpoint+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := srv.SignedRequest(ctx, req, body)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ReadAllClose(resp.Body)
	return resp.StatusCode, string(b)
}

func TestTaggingObjects(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client(NoRetries)
	bucket := newBucket(t, ctx, c, "tags")

	// An object written with metadata, headers and a checksum; tagging must keep all of it.
	data := randBytes(1, 100_000)
	put, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &bucket, Key: aws.String("doc"), Body: bytes.NewReader(data),
		ContentType: aws.String("text/x-cairn"), CacheControl: aws.String("max-age=60"),
		Metadata:          map[string]string{"owner": "ops", "mtime": "1700000000"},
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
	})
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	before, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String("doc"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	wantTags(t, "new object", objectTags(t, ctx, c, bucket, "doc"))
	if before.TagCount != nil {
		t.Fatalf("untagged object: x-amz-tagging-count %d", *before.TagCount)
	}

	// PutObjectTagging, and again to replace the set.
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &bucket, Key: aws.String("doc"),
		Tagging: &types.Tagging{TagSet: tagSet("project", "blue", "class", "PHI", "empty", "")}}); err != nil {
		t.Fatalf("PutObjectTagging: %v", err)
	}
	wantTags(t, "tagged", objectTags(t, ctx, c, bucket, "doc"), "project", "blue", "class", "PHI", "empty", "")
	full := tagSet("a b", "x/y=z", "ключ", "значение", "k+-=._:/@", "v@host:1")
	full = append(full, numberedTags(7)...)
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &bucket, Key: aws.String("doc"),
		Tagging: &types.Tagging{TagSet: full}}); err != nil {
		t.Fatalf("PutObjectTagging of 10 tags: %v", err)
	}
	got := objectTags(t, ctx, c, bucket, "doc")
	if !reflect.DeepEqual(got, tagMap(t, full)) {
		t.Fatalf("10 tags: %v", got)
	}

	// The bytes, ETag, checksum, content type, headers and user metadata are unchanged.
	body, out, err := getBytes(ctx, c, bucket, "doc", func(in *s3.GetObjectInput) { in.ChecksumMode = types.ChecksumModeEnabled })
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, data) {
		t.Fatal("the bytes changed after PutObjectTagging")
	}
	if aws.ToString(out.ETag) != aws.ToString(put.ETag) || aws.ToString(out.ETag) != aws.ToString(before.ETag) {
		t.Fatalf("ETag %s, was %s", aws.ToString(out.ETag), aws.ToString(put.ETag))
	}
	if aws.ToString(out.ChecksumSHA256) == "" || aws.ToString(out.ChecksumSHA256) != aws.ToString(before.ChecksumSHA256) {
		t.Fatalf("checksum %q, was %q", aws.ToString(out.ChecksumSHA256), aws.ToString(before.ChecksumSHA256))
	}
	if aws.ToString(out.ContentType) != "text/x-cairn" || aws.ToString(out.CacheControl) != "max-age=60" ||
		!reflect.DeepEqual(out.Metadata, map[string]string{"owner": "ops", "mtime": "1700000000"}) {
		t.Fatalf("metadata changed: %q %q %v", aws.ToString(out.ContentType), aws.ToString(out.CacheControl), out.Metadata)
	}
	if out.TagCount == nil || *out.TagCount != 10 {
		t.Fatalf("GET x-amz-tagging-count: %v", out.TagCount)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String("doc")})
	if err != nil || head.TagCount == nil || *head.TagCount != 10 {
		t.Fatalf("HEAD x-amz-tagging-count: %v %v", head, err)
	}

	// Refusals, with AWS's codes; the stored set is unchanged by each.
	for _, bad := range []struct {
		what string
		tags []types.Tag
		code string
	}{
		{"11 tags", numberedTags(11), "BadRequest"},
		{"a key of 129 characters", tagSet(strings.Repeat("k", 129), "v"), "InvalidTag"},
		{"a value of 257 characters", tagSet("k", strings.Repeat("v", 257)), "InvalidTag"},
		{"duplicate keys", tagSet("a", "1", "a", "2"), "InvalidTag"},
		{"the aws: prefix", tagSet("aws:cloudformation:stack", "x"), "InvalidTag"},
		{"a character outside the set", tagSet("a*b", "v"), "InvalidTag"},
		{"an empty key", tagSet("", "v"), "InvalidTag"},
	} {
		_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &bucket, Key: aws.String("doc"),
			Tagging: &types.Tagging{TagSet: bad.tags}})
		wantAPIError(t, "PutObjectTagging with "+bad.what, err, bad.code)
	}
	if got := objectTags(t, ctx, c, bucket, "doc"); len(got) != 10 {
		t.Fatalf("a refused PutObjectTagging changed the tags: %v", got)
	}
	status, resp := rawSigned(t, ctx, srv, "PUT", "/"+bucket+"/doc?tagging", []byte("<Tagging><TagSet><Tag><Key>a</Key>"), nil)
	if status != 400 || !strings.Contains(resp, "<Code>MalformedXML</Code>") {
		t.Fatalf("malformed Tagging document: %d %s", status, resp)
	}
	status, resp = rawSigned(t, ctx, srv, "PUT", "/"+bucket+"/doc?tagging",
		[]byte("<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>a</Key><Value>2</Value></Tag></TagSet></Tagging>"), nil)
	if status != 400 || !strings.Contains(resp, "<Message>Cannot provide multiple Tags with the same key</Message>") || !strings.Contains(resp, "<TagKey>a</TagKey>") {
		t.Fatalf("duplicate keys: %d %s", status, resp)
	}
	status, resp = rawSigned(t, ctx, srv, "PUT", "/"+bucket+"/doc?tagging", []byte(fmt.Sprintf("<Tagging><TagSet>%s</TagSet></Tagging>",
		strings.Repeat("<Tag><Key>k</Key><Value>v</Value></Tag>", 11))), nil)
	if status != 400 || !strings.Contains(resp, "<Message>Object tags cannot be greater than 10</Message>") {
		t.Fatalf("11 tags: %d %s", status, resp)
	}

	// versionId: null is the one version there is; any other is refused as elsewhere.
	if _, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &bucket, Key: aws.String("doc"), VersionId: aws.String("null")}); err != nil {
		t.Fatalf("GetObjectTagging versionId=null: %v", err)
	}
	_, err = c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &bucket, Key: aws.String("doc"), VersionId: aws.String("3HL4kqtJlcpXroDTDmJ"),
		Tagging: &types.Tagging{TagSet: tagSet("a", "1")}})
	wantAPIError(t, "PutObjectTagging of another version", err, "InvalidArgument")

	// A missing object or bucket.
	_, err = c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &bucket, Key: aws.String("missing")})
	wantAPIError(t, "GetObjectTagging of a missing key", err, "NoSuchKey")
	_, err = c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &bucket, Key: aws.String("missing"), Tagging: &types.Tagging{TagSet: tagSet("a", "1")}})
	wantAPIError(t, "PutObjectTagging of a missing key", err, "NoSuchKey")
	_, err = c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: &bucket, Key: aws.String("missing")})
	wantAPIError(t, "DeleteObjectTagging of a missing key", err, "NoSuchKey")
	_, err = c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("no-such-bucket-" + RandomKey(4)), Key: aws.String("k")})
	wantAPIError(t, "GetObjectTagging in a missing bucket", err, "NoSuchBucket")

	// DeleteObjectTagging empties the set and keeps the object.
	if _, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: &bucket, Key: aws.String("doc")}); err != nil {
		t.Fatalf("DeleteObjectTagging: %v", err)
	}
	wantTags(t, "after DeleteObjectTagging", objectTags(t, ctx, c, bucket, "doc"))
	if body, _, err := getBytes(ctx, c, bucket, "doc"); err != nil || !bytes.Equal(body, data) {
		t.Fatalf("the object after DeleteObjectTagging: %v", err)
	}

	// x-amz-tagging on PutObject; an overwrite without it has no tags.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("hdr"), Body: strings.NewReader("x"),
		Tagging: aws.String("team=backup&retention=30%20days&flag")}); err != nil {
		t.Fatalf("PutObject with x-amz-tagging: %v", err)
	}
	wantTags(t, "x-amz-tagging", objectTags(t, ctx, c, bucket, "hdr"), "team", "backup", "retention", "30 days", "flag", "")
	for _, bad := range []struct{ tagging, code string }{
		{"a=1&a=2", "InvalidArgument"},
		{strings.Repeat("k", 129) + "=v", "InvalidTag"},
		{"aws%3Ax=1", "InvalidTag"},
		{"k0=1&k1=1&k2=1&k3=1&k4=1&k5=1&k6=1&k7=1&k8=1&k9=1&k10=1", "BadRequest"},
	} {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("hdr"), Body: strings.NewReader("refused"), Tagging: aws.String(bad.tagging)})
		wantAPIError(t, "PutObject with x-amz-tagging "+bad.tagging, err, bad.code)
	}
	if body, _, _ := getBytes(ctx, c, bucket, "hdr"); string(body) != "x" {
		t.Fatalf("a refused PutObject stored %q", body)
	}
	put2, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("hdr"), Body: strings.NewReader("y")})
	if err != nil {
		t.Fatal(err)
	}
	_ = put2
	wantTags(t, "overwritten without x-amz-tagging", objectTags(t, ctx, c, bucket, "hdr"))
}

func TestTaggingCopyAndMultipart(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client(NoRetries)
	bucket := newBucket(t, ctx, c, "tagcopy")
	other := newBucket(t, ctx, c, "tagdest")

	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("src"), Body: strings.NewReader("source bytes"),
		Tagging: aws.String("a=1&b=2")}); err != nil {
		t.Fatal(err)
	}
	src := bucket + "/src"
	// COPY is the default, across buckets too.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &other, Key: aws.String("copy"), CopySource: &src}); err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	wantTags(t, "copy (default directive)", objectTags(t, ctx, c, other, "copy"), "a", "1", "b", "2")
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &bucket, Key: aws.String("copy"), CopySource: &src,
		TaggingDirective: types.TaggingDirectiveCopy, Tagging: aws.String("ignored=1")}); err != nil {
		t.Fatalf("CopyObject COPY: %v", err)
	}
	wantTags(t, "copy (COPY)", objectTags(t, ctx, c, bucket, "copy"), "a", "1", "b", "2")
	// REPLACE takes x-amz-tagging's, or none.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &bucket, Key: aws.String("replaced"), CopySource: &src,
		TaggingDirective: types.TaggingDirectiveReplace, Tagging: aws.String("c=3")}); err != nil {
		t.Fatalf("CopyObject REPLACE: %v", err)
	}
	wantTags(t, "copy (REPLACE)", objectTags(t, ctx, c, bucket, "replaced"), "c", "3")
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &bucket, Key: aws.String("cleared"), CopySource: &src,
		TaggingDirective: types.TaggingDirectiveReplace}); err != nil {
		t.Fatalf("CopyObject REPLACE without tags: %v", err)
	}
	wantTags(t, "copy (REPLACE, no x-amz-tagging)", objectTags(t, ctx, c, bucket, "cleared"))
	_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &bucket, Key: aws.String("bad"), CopySource: &src,
		TaggingDirective: types.TaggingDirectiveReplace, Tagging: aws.String("aws:x=1")})
	wantAPIError(t, "CopyObject REPLACE with an aws: tag", err, "InvalidTag")
	status, resp := rawSigned(t, ctx, srv, "PUT", "/"+bucket+"/bad", nil, map[string]string{"X-Amz-Copy-Source": "/" + src, "X-Amz-Tagging-Directive": "MERGE"})
	if status != 400 || !strings.Contains(resp, "<Code>InvalidArgument</Code>") {
		t.Fatalf("unknown tagging directive: %d %s", status, resp)
	}
	// A self-copy that replaces the metadata keeps the bytes and, with COPY, the tags.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &bucket, Key: aws.String("src"), CopySource: &src,
		MetadataDirective: types.MetadataDirectiveReplace, Metadata: map[string]string{"k": "v"}}); err != nil {
		t.Fatalf("self-copy: %v", err)
	}
	wantTags(t, "self-copy (COPY)", objectTags(t, ctx, c, bucket, "src"), "a", "1", "b", "2")
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &bucket, Key: aws.String("src"), CopySource: &src,
		MetadataDirective: types.MetadataDirectiveReplace, TaggingDirective: types.TaggingDirectiveReplace, Tagging: aws.String("z=9")}); err != nil {
		t.Fatalf("self-copy REPLACE: %v", err)
	}
	wantTags(t, "self-copy (REPLACE)", objectTags(t, ctx, c, bucket, "src"), "z", "9")
	if body, _, err := getBytes(ctx, c, bucket, "src"); err != nil || string(body) != "source bytes" {
		t.Fatalf("self-copies changed the bytes: %q %v", body, err)
	}

	// A multipart upload's tags are the completed object's, not the upload's until then.
	key := "big"
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key,
		Tagging: aws.String("backup=weekly&host=db1"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
	if err != nil {
		t.Fatalf("CreateMultipartUpload: %v", err)
	}
	_, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key, Tagging: aws.String("a=1&a=1")})
	wantAPIError(t, "CreateMultipartUpload with duplicate tags", err, "InvalidArgument")
	parts := [][]byte{randBytes(2, 5<<20), randBytes(3, 5<<20), randBytes(4, 1234)}
	var done []types.CompletedPart
	for i, p := range parts {
		n := int32(i + 1)
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId, PartNumber: &n,
			Body: bytes.NewReader(p), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
		if err != nil {
			t.Fatalf("UploadPart %d: %v", n, err)
		}
		done = append(done, types.CompletedPart{PartNumber: &n, ETag: out.ETag, ChecksumCRC32C: out.ChecksumCRC32C})
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
		t.Fatalf("CompleteMultipartUpload: %v", err)
	}
	wantTags(t, "completed upload", objectTags(t, ctx, c, bucket, key), "backup", "weekly", "host", "db1")
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil || head.TagCount == nil || *head.TagCount != 2 {
		t.Fatalf("HEAD of the completed upload: %v %v", head, err)
	}
	// Retagging a multipart object keeps its parts.
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &bucket, Key: &key, Tagging: &types.Tagging{TagSet: tagSet("x", "y")}}); err != nil {
		t.Fatal(err)
	}
	body, out, err := getBytes(ctx, c, bucket, key)
	if err != nil || !bytes.Equal(body, bytes.Join(parts, nil)) || aws.ToString(out.ETag) != aws.ToString(head.ETag) {
		t.Fatalf("the multipart object after PutObjectTagging: %v (ETag %s, was %s)", err, aws.ToString(out.ETag), aws.ToString(head.ETag))
	}
	if out.PartsCount == nil || *out.PartsCount != 3 {
		t.Fatalf("parts count after retagging: %v", out.PartsCount)
	}
}

func TestBucketTagging(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client(NoRetries)
	bucket := newBucket(t, ctx, c, "btags")

	_, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: &bucket})
	wantAPIError(t, "GetBucketTagging of an untagged bucket", err, "NoSuchTagSet")
	fifty := numberedTags(50)
	if _, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: &bucket, Tagging: &types.Tagging{TagSet: fifty}}); err != nil {
		t.Fatalf("PutBucketTagging of 50 tags: %v", err)
	}
	out, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: &bucket})
	if err != nil || !reflect.DeepEqual(tagMap(t, out.TagSet), tagMap(t, fifty)) {
		t.Fatalf("GetBucketTagging: %v %v", out, err)
	}
	if _, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: &bucket, Tagging: &types.Tagging{TagSet: tagSet("cost-center", "42", "owner", "ops@example.com")}}); err != nil {
		t.Fatalf("PutBucketTagging: %v", err)
	}
	out, err = c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	wantTags(t, "bucket", tagMap(t, out.TagSet), "cost-center", "42", "owner", "ops@example.com")
	for _, bad := range []struct {
		what string
		tags []types.Tag
		code string
	}{
		{"51 tags", numberedTags(51), "BadRequest"},
		{"duplicate keys", tagSet("a", "1", "a", "2"), "InvalidTag"},
		{"the aws: prefix", tagSet("aws:createdBy", "x"), "InvalidTag"},
		{"a key of 129 characters", tagSet(strings.Repeat("k", 129), "v"), "InvalidTag"},
	} {
		_, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: &bucket, Tagging: &types.Tagging{TagSet: bad.tags}})
		wantAPIError(t, "PutBucketTagging with "+bad.what, err, bad.code)
	}
	status, resp := rawSigned(t, ctx, srv, "PUT", "/"+bucket+"?tagging", []byte(fmt.Sprintf("<Tagging><TagSet>%s</TagSet></Tagging>",
		strings.Repeat("<Tag><Key>k</Key><Value>v</Value></Tag>", 51))), nil)
	if status != 400 || !strings.Contains(resp, "<Code>BadRequest</Code>") || !strings.Contains(resp, "Bucket tag count cannot be greater than 50") {
		t.Fatalf("51 bucket tags: %d %s", status, resp)
	}
	status, resp = rawSigned(t, ctx, srv, "PUT", "/"+bucket+"?tagging", []byte("<Tagging><TagSet><Tag>"), nil)
	if status != 400 || !strings.Contains(resp, "<Code>MalformedXML</Code>") {
		t.Fatalf("malformed bucket Tagging: %d %s", status, resp)
	}
	out, err = c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: &bucket})
	if err != nil || len(out.TagSet) != 2 {
		t.Fatalf("refused puts changed the bucket's tags: %v %v", out, err)
	}
	if _, err := c.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: &bucket}); err != nil {
		t.Fatalf("DeleteBucketTagging: %v", err)
	}
	_, err = c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: &bucket})
	wantAPIError(t, "GetBucketTagging after DeleteBucketTagging", err, "NoSuchTagSet")
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("the bucket after DeleteBucketTagging: %v", err)
	}
	missing := "no-such-bucket-" + RandomKey(4)
	_, err = c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: &missing, Tagging: &types.Tagging{TagSet: tagSet("a", "1")}})
	wantAPIError(t, "PutBucketTagging of a missing bucket", err, "NoSuchBucket")
}

func TestGetObjectAttributes(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client(NoRetries)
	bucket := newBucket(t, ctx, c, "attrs")
	all := []types.ObjectAttributes{types.ObjectAttributesEtag, types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts,
		types.ObjectAttributesStorageClass, types.ObjectAttributesObjectSize}

	data := randBytes(5, 4321)
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("plain"), Body: bytes.NewReader(data), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: &bucket, Key: aws.String("plain"), ObjectAttributes: all})
	if err != nil {
		t.Fatalf("GetObjectAttributes: %v", err)
	}
	if aws.ToString(out.ETag) != strings.Trim(aws.ToString(put.ETag), `"`) || aws.ToString(out.ETag) != md5Hex(data) {
		t.Fatalf("ETag %q, want %s unquoted", aws.ToString(out.ETag), aws.ToString(put.ETag))
	}
	if aws.ToInt64(out.ObjectSize) != int64(len(data)) || out.StorageClass != types.StorageClassStandard {
		t.Fatalf("size %d, storage class %q", aws.ToInt64(out.ObjectSize), out.StorageClass)
	}
	if out.Checksum == nil || aws.ToString(out.Checksum.ChecksumCRC32) != crc32B64(data) || out.Checksum.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("checksum %+v, want CRC32 %s", out.Checksum, crc32B64(data))
	}
	if out.ObjectParts != nil {
		t.Fatalf("a single-part object has ObjectParts %+v", out.ObjectParts)
	}
	if out.LastModified == nil || out.LastModified.IsZero() {
		t.Fatal("no Last-Modified")
	}
	// Only what is asked for.
	out, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: &bucket, Key: aws.String("plain"), ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectSize}})
	if err != nil || out.ETag != nil || out.Checksum != nil || out.StorageClass != "" || aws.ToInt64(out.ObjectSize) != int64(len(data)) {
		t.Fatalf("ObjectSize alone: %+v %v", out, err)
	}

	// A multipart upload with a checksum lists its parts with their checksums, page by page.
	key := "multi"
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key, ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	if err != nil {
		t.Fatal(err)
	}
	parts := [][]byte{randBytes(6, 5<<20), randBytes(7, 5<<20), randBytes(8, 777)}
	var done []types.CompletedPart
	for i, p := range parts {
		n := int32(i + 1)
		o, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId, PartNumber: &n, Body: bytes.NewReader(p), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, types.CompletedPart{PartNumber: &n, ETag: o.ETag, ChecksumSHA256: o.ChecksumSHA256})
	}
	comp, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatal(err)
	}
	out, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: &bucket, Key: &key, ObjectAttributes: all, MaxParts: aws.Int32(2)})
	if err != nil {
		t.Fatalf("GetObjectAttributes of a multipart object: %v", err)
	}
	if aws.ToString(out.ETag) != strings.Trim(aws.ToString(comp.ETag), `"`) || !strings.HasSuffix(aws.ToString(out.ETag), "-3") {
		t.Fatalf("multipart ETag %q (completion said %s)", aws.ToString(out.ETag), aws.ToString(comp.ETag))
	}
	if aws.ToInt64(out.ObjectSize) != int64(len(bytes.Join(parts, nil))) || out.Checksum == nil || out.Checksum.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("multipart size %d, checksum %+v", aws.ToInt64(out.ObjectSize), out.Checksum)
	}
	if want, _, _ := strings.Cut(aws.ToString(comp.ChecksumSHA256), "-"); aws.ToString(out.Checksum.ChecksumSHA256) != want {
		t.Fatalf("multipart checksum %q, want %q", aws.ToString(out.Checksum.ChecksumSHA256), want)
	}
	op := out.ObjectParts
	if op == nil || aws.ToInt32(op.TotalPartsCount) != 3 || !aws.ToBool(op.IsTruncated) || aws.ToInt32(op.MaxParts) != 2 ||
		aws.ToString(op.NextPartNumberMarker) != "2" || len(op.Parts) != 2 {
		t.Fatalf("first page of parts: %+v", op)
	}
	for i, p := range op.Parts {
		if aws.ToInt32(p.PartNumber) != int32(i+1) || aws.ToInt64(p.Size) != int64(len(parts[i])) || aws.ToString(p.ChecksumSHA256) != aws.ToString(done[i].ChecksumSHA256) {
			t.Fatalf("part %d: number %d size %d checksum %q, want %q", i+1, aws.ToInt32(p.PartNumber), aws.ToInt64(p.Size), aws.ToString(p.ChecksumSHA256), aws.ToString(done[i].ChecksumSHA256))
		}
	}
	out, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: &bucket, Key: &key, ObjectAttributes: all, MaxParts: aws.Int32(2), PartNumberMarker: op.NextPartNumberMarker})
	if err != nil || out.ObjectParts == nil || aws.ToBool(out.ObjectParts.IsTruncated) || len(out.ObjectParts.Parts) != 1 ||
		aws.ToInt32(out.ObjectParts.Parts[0].PartNumber) != 3 || aws.ToInt64(out.ObjectParts.Parts[0].Size) != 777 {
		t.Fatalf("second page of parts: %+v %v", out.ObjectParts, err)
	}

	// Without a checksum algorithm only the count is known per part, as S3 answers.
	key = "multi-nosum"
	up, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	done = nil
	for i, p := range parts[1:] {
		n := int32(i + 1)
		o, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId, PartNumber: &n, Body: bytes.NewReader(p)})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, types.CompletedPart{PartNumber: &n, ETag: o.ETag})
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
		t.Fatal(err)
	}
	out, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: &bucket, Key: &key, ObjectAttributes: all})
	if err != nil || out.ObjectParts == nil || aws.ToInt32(out.ObjectParts.TotalPartsCount) != 2 || len(out.ObjectParts.Parts) != 0 || out.Checksum != nil {
		t.Fatalf("multipart without checksums: %+v %v", out, err)
	}

	// Refusals.
	_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: &bucket, Key: aws.String("missing"), ObjectAttributes: all})
	wantAPIError(t, "GetObjectAttributes of a missing key", err, "NoSuchKey")
	_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: &bucket, Key: aws.String("plain"), ObjectAttributes: []types.ObjectAttributes{"Owner"}})
	wantAPIError(t, "GetObjectAttributes of an unknown attribute", err, "InvalidArgument")
	status, resp := rawSigned(t, ctx, srv, "GET", "/"+bucket+"/plain?attributes", nil, nil)
	if status != 400 || !strings.Contains(resp, "<Code>InvalidArgument</Code>") {
		t.Fatalf("GetObjectAttributes without x-amz-object-attributes: %d %s", status, resp)
	}
	status, resp = rawSigned(t, ctx, srv, "GET", "/"+bucket+"/plain?attributes", nil, map[string]string{"X-Amz-Object-Attributes": "ETag", "X-Amz-Max-Parts": "-1"})
	if status != 400 || !strings.Contains(resp, "<Code>InvalidArgument</Code>") {
		t.Fatalf("negative x-amz-max-parts: %d %s", status, resp)
	}
	_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: &bucket, Key: aws.String("plain"), ObjectAttributes: all, VersionId: aws.String("null")})
	if err != nil {
		t.Fatalf("GetObjectAttributes versionId=null: %v", err)
	}
}
