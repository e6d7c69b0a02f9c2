package e2e

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// listVersions lists every version and delete marker of a bucket's key prefix, in listing
// order, pageSize entries a page (so that small pages exercise the version markers).
func listVersions(t *testing.T, ctx context.Context, c *s3.Client, bucket, prefix string, pageSize int32) (versions []types.ObjectVersion, markers []types.DeleteMarkerEntry) {
	t.Helper()
	var km, vm *string
	for pages := 0; ; pages++ {
		out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(prefix), MaxKeys: aws.Int32(pageSize), KeyMarker: km, VersionIdMarker: vm})
		if err != nil {
			t.Fatalf("ListObjectVersions: %v", err)
		}
		versions = append(versions, out.Versions...)
		markers = append(markers, out.DeleteMarkers...)
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		km, vm = out.NextKeyMarker, out.NextVersionIdMarker
		if pages > 100 {
			t.Fatal("version listing does not end")
		}
	}
	return versions, markers
}

func mustPut(t *testing.T, ctx context.Context, c *s3.Client, bucket, key string, data []byte) *s3.PutObjectOutput {
	t.Helper()
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)})
	if err != nil {
		t.Fatalf("PutObject %s: %v", key, err)
	}
	return out
}

func mustGetVersion(t *testing.T, ctx context.Context, c *s3.Client, bucket, key, id string, want []byte) {
	t.Helper()
	got, out, err := getBytes(ctx, c, bucket, key, func(in *s3.GetObjectInput) {
		if id != "" {
			in.VersionId = aws.String(id)
		}
	})
	if err != nil {
		t.Fatalf("GET %s version %q: %v", key, id, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("GET %s version %q: %q, want %q", key, id, got, want)
	}
	if id != "" && aws.ToString(out.VersionId) != id {
		t.Fatalf("GET %s version %q answered version %q", key, id, aws.ToString(out.VersionId))
	}
}

// TestS3Versioning works through S3 bucket versioning with the AWS SDK against the real binary
// (and, in CI, against a cluster): versions, delete markers, reads and deletes of versions,
// listings and their paging, copies, multipart uploads, multi-delete, suspension, conditional
// writes and a bucket that cannot be deleted while it keeps versions.
func TestS3Versioning(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client()
	bucket := newBucket(t, ctx, c, "vers")

	v0 := []byte("written before versioning was on")
	if out := mustPut(t, ctx, c, bucket, "k", v0); out.VersionId != nil {
		t.Fatalf("an unversioned bucket's PUT answered version %q", aws.ToString(out.VersionId))
	}
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatalf("enable versioning: %v", err)
	}
	if v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)}); err != nil || v.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("GetBucketVersioning: %v, %q", err, v.Status)
	}
	// The object written before is still there, as the null version, and read as it was.
	mustGetVersion(t, ctx, c, bucket, "k", "null", v0)

	v1, v2 := []byte("version one"), []byte("version two, longer")
	id1 := aws.ToString(mustPut(t, ctx, c, bucket, "k", v1).VersionId)
	id2 := aws.ToString(mustPut(t, ctx, c, bucket, "k", v2).VersionId)
	if id1 == "" || id2 == "" || id1 == id2 || id1 == "null" {
		t.Fatalf("version IDs %q, %q", id1, id2)
	}
	mustGetVersion(t, ctx, c, bucket, "k", "", v2)
	mustGetVersion(t, ctx, c, bucket, "k", id2, v2)
	mustGetVersion(t, ctx, c, bucket, "k", id1, v1)
	if _, out, _ := getBytes(ctx, c, bucket, "k"); aws.ToString(out.VersionId) != id2 {
		t.Fatalf("current version answered as %q, want %q", aws.ToString(out.VersionId), id2)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), VersionId: aws.String(id1)})
	if err != nil || aws.ToInt64(h.ContentLength) != int64(len(v1)) || aws.ToString(h.ETag) != `"`+md5Hex(v1)+`"` {
		t.Fatalf("HEAD version 1: %v %+v", err, h)
	}
	// The null version, overwritten while versioning is on, became a version of its own (as
	// Swift's object versioning keeps it): three versions, newest first, the newest current.
	vs, dms := listVersions(t, ctx, c, bucket, "k", 1000)
	if len(vs) != 3 || len(dms) != 0 || aws.ToString(vs[0].VersionId) != id2 || !aws.ToBool(vs[0].IsLatest) ||
		aws.ToString(vs[1].VersionId) != id1 || aws.ToBool(vs[1].IsLatest) || aws.ToInt64(vs[2].Size) != int64(len(v0)) || aws.ToBool(vs[2].IsLatest) {
		t.Fatalf("versions: %+v", vs)
	}
	id0 := aws.ToString(vs[2].VersionId)
	mustGetVersion(t, ctx, c, bucket, "k", id0, v0)
	if aws.ToString(vs[0].ETag) != `"`+md5Hex(v2)+`"` || aws.ToInt64(vs[0].Size) != int64(len(v2)) {
		t.Fatalf("current version listed as %+v", vs[0])
	}
	// Tags belong to a version: the one named, else the current one.
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("k"), VersionId: aws.String(id1),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("v"), Value: aws.String("one")}}}}); err != nil {
		t.Fatalf("PutObjectTagging of version 1: %v", err)
	}
	if tg, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("k"), VersionId: aws.String(id1)}); err != nil || len(tg.TagSet) != 1 || aws.ToString(tg.VersionId) != id1 {
		t.Fatalf("GetObjectTagging of version 1: %v %+v", err, tg)
	}
	if tg, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("k")}); err != nil || len(tg.TagSet) != 0 || aws.ToString(tg.VersionId) != id2 {
		t.Fatalf("GetObjectTagging of the current version: %v %+v", err, tg)
	}
	mustGetVersion(t, ctx, c, bucket, "k", id1, v1)
	// A plain listing lists the current version's size and ETag.
	lo, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil || len(lo.Contents) != 1 || aws.ToInt64(lo.Contents[0].Size) != int64(len(v2)) || aws.ToString(lo.Contents[0].ETag) != `"`+md5Hex(v2)+`"` {
		t.Fatalf("ListObjectsV2: %v %+v", err, lo.Contents)
	}

	// A delete writes a delete marker: the key reads as missing, its versions stay.
	del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	if err != nil || !aws.ToBool(del.DeleteMarker) || aws.ToString(del.VersionId) == "" {
		t.Fatalf("DELETE: %v %+v", err, del)
	}
	markerID := aws.ToString(del.VersionId)
	if _, _, err := getBytes(ctx, c, bucket, "k"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("GET after the delete: %v", err)
	}
	// The key's current version is the marker, and a HEAD says so.
	req, _ := http.NewRequestWithContext(ctx, http.MethodHead, srv.Endpoint+"/"+bucket+"/k", nil)
	if resp, err := srv.SignedRequest(ctx, req, nil); err != nil || resp.StatusCode != 404 || resp.Header.Get("x-amz-delete-marker") != "true" || resp.Header.Get("x-amz-version-id") != markerID {
		t.Fatalf("HEAD of a deleted key: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	mustGetVersion(t, ctx, c, bucket, "k", id1, v1)
	if _, _, err := getBytes(ctx, c, bucket, "k", func(in *s3.GetObjectInput) { in.VersionId = aws.String(markerID) }); apiCode(err) != "MethodNotAllowed" {
		t.Fatalf("GET of the delete marker: %v", err)
	}
	vs, dms = listVersions(t, ctx, c, bucket, "", 1000)
	if len(vs) != 3 || len(dms) != 1 || aws.ToString(dms[0].VersionId) != markerID || !aws.ToBool(dms[0].IsLatest) || aws.ToBool(vs[0].IsLatest) {
		t.Fatalf("after the delete: versions %+v, markers %+v", vs, dms)
	}
	if lo, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)}); err != nil || len(lo.Contents) != 0 {
		t.Fatalf("ListObjectsV2 after the delete: %v %+v", err, lo.Contents)
	}
	// Removing the delete marker brings the newest version back.
	dv, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), VersionId: aws.String(markerID)})
	if err != nil || !aws.ToBool(dv.DeleteMarker) || aws.ToString(dv.VersionId) != markerID {
		t.Fatalf("DELETE of the marker: %v %+v", err, dv)
	}
	mustGetVersion(t, ctx, c, bucket, "k", "", v2)
	// Removing the current version makes the one before it current.
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), VersionId: aws.String(id2)}); err != nil {
		t.Fatalf("DELETE version 2: %v", err)
	}
	mustGetVersion(t, ctx, c, bucket, "k", "", v1)
	if _, _, err := getBytes(ctx, c, bucket, "k", func(in *s3.GetObjectInput) { in.VersionId = aws.String(id2) }); apiCode(err) != "NoSuchVersion" {
		t.Fatalf("GET of a deleted version: %v", err)
	}
	// Bad version IDs.
	if _, _, err := getBytes(ctx, c, bucket, "k", func(in *s3.GetObjectInput) { in.VersionId = aws.String("not-a-version") }); apiCode(err) != "InvalidArgument" {
		t.Fatalf("GET with a malformed version ID: %v", err)
	}

	// Copies: from a version (x-amz-copy-source-version-id), into a new version.
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("copy"), CopySource: aws.String(bucket + "/k?versionId=" + id0)})
	if err != nil || aws.ToString(cp.CopySourceVersionId) != id0 || aws.ToString(cp.VersionId) == "" {
		t.Fatalf("CopyObject from a version: %v %+v", err, cp)
	}
	mustGetVersion(t, ctx, c, bucket, "copy", "", v0)
	cp, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("copy"), CopySource: aws.String(bucket + "/k")})
	if err != nil || aws.ToString(cp.CopySourceVersionId) != id1 {
		t.Fatalf("CopyObject of the current version: %v %+v", err, cp)
	}
	mustGetVersion(t, ctx, c, bucket, "copy", "", v1)

	// A multipart upload makes a version too.
	part := bytes.Repeat([]byte("m"), 5*MiB)
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mpu")})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for i, p := range [][]byte{part, []byte("tail")} {
		res, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("mpu"), UploadId: up.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: res.ETag})
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mpu"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil || aws.ToString(done.VersionId) == "" {
		t.Fatalf("CompleteMultipartUpload: %v %+v", err, done)
	}
	mustGetVersion(t, ctx, c, bucket, "mpu", aws.ToString(done.VersionId), append(slices.Clone(part), "tail"...))
	mpu2 := mustPut(t, ctx, c, bucket, "mpu", []byte("small now"))
	mustGetVersion(t, ctx, c, bucket, "mpu", aws.ToString(done.VersionId), append(slices.Clone(part), "tail"...))
	mustGetVersion(t, ctx, c, bucket, "mpu", aws.ToString(mpu2.VersionId), []byte("small now"))

	// Conditional writes hold against the current version.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: bytes.NewReader([]byte("x")), IfNoneMatch: aws.String("*")}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-None-Match: * over a versioned object: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: bytes.NewReader([]byte("x")), IfMatch: aws.String(`"` + md5Hex(v2) + `"`)}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-Match of an old version: %v", err)
	}
	v3 := []byte("version three")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: bytes.NewReader(v3), IfMatch: aws.String(`"` + md5Hex(v1) + `"`)}); err != nil {
		t.Fatalf("If-Match of the current version: %v", err)
	}
	mustGetVersion(t, ctx, c, bucket, "k", "", v3)

	// Paging one version at a time lists exactly what one page lists.
	all, allMarkers := listVersions(t, ctx, c, bucket, "", 1000)
	paged, pagedMarkers := listVersions(t, ctx, c, bucket, "", 1)
	ids := func(vs []types.ObjectVersion) (out []string) {
		for _, v := range vs {
			out = append(out, aws.ToString(v.Key)+" "+aws.ToString(v.VersionId))
		}
		return out
	}
	if !slices.Equal(ids(all), ids(paged)) || len(allMarkers) != len(pagedMarkers) || len(all) != 7 {
		t.Fatalf("paged versions %v, one page %v", ids(paged), ids(all))
	}

	// Multi-delete: a version by ID, and a key (a delete marker).
	md, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("k"), VersionId: aws.String(id0)}, {Key: aws.String("copy")}}}})
	if err != nil || len(md.Deleted) != 2 || len(md.Errors) != 0 {
		t.Fatalf("DeleteObjects: %v %+v", err, md)
	}
	for _, d := range md.Deleted {
		switch aws.ToString(d.Key) {
		case "k":
			if aws.ToString(d.VersionId) != id0 {
				t.Errorf("deleted %+v", d)
			}
		case "copy":
			if !aws.ToBool(d.DeleteMarker) || aws.ToString(d.DeleteMarkerVersionId) == "" {
				t.Errorf("deleted %+v", d)
			}
		}
	}
	if _, _, err := getBytes(ctx, c, bucket, "k", func(in *s3.GetObjectInput) { in.VersionId = aws.String(id0) }); apiCode(err) != "NoSuchVersion" {
		t.Fatalf("GET of a version deleted by DeleteObjects: %v", err)
	}

	// Suspended: writes are the null version again, the versions stay.
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}}); err != nil {
		t.Fatal(err)
	}
	if v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)}); err != nil || v.Status != types.BucketVersioningStatusSuspended {
		t.Fatalf("GetBucketVersioning: %v, %q", err, v.Status)
	}
	v4 := []byte("null again")
	if out := mustPut(t, ctx, c, bucket, "k", v4); aws.ToString(out.VersionId) != "null" {
		t.Fatalf("PUT while suspended: version %q", aws.ToString(out.VersionId))
	}
	mustGetVersion(t, ctx, c, bucket, "k", "null", v4)
	mustGetVersion(t, ctx, c, bucket, "k", id1, v1)

	// A bucket keeping versions is not empty; it is once every version is gone.
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); apiCode(err) != "BucketNotEmpty" {
		t.Fatalf("DeleteBucket with versions: %v", err)
	}
	vs, dms = listVersions(t, ctx, c, bucket, "", 1000)
	var objs []types.ObjectIdentifier
	for _, v := range vs {
		objs = append(objs, types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
	}
	for _, m := range dms {
		objs = append(objs, types.ObjectIdentifier{Key: m.Key, VersionId: m.VersionId})
	}
	md, err = c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: objs}})
	if err != nil {
		t.Fatalf("DeleteObjects of every version: %v", err)
	}
	for _, e := range md.Errors {
		t.Errorf("DeleteObjects of every version: %s %s: %s %s", aws.ToString(e.Key), aws.ToString(e.VersionId), aws.ToString(e.Code), aws.ToString(e.Message))
	}
	if vs, dms = listVersions(t, ctx, c, bucket, "", 1000); len(vs)+len(dms) != 0 {
		t.Fatalf("left: %+v %+v", vs, dms)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err == nil {
		t.Fatal("the bucket is still there")
	}
}

// TestS3VersioningEdges: failures and orders that once left a key stuck, deleted objects come
// back, or two versions latest (found in review).
func TestS3VersioningEdges(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client(NoRetries)
	bucket := newBucket(t, ctx, c, "edges")
	enable := func(status types.BucketVersioningStatus) {
		t.Helper()
		if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
			VersioningConfiguration: &types.VersioningConfiguration{Status: status}}); err != nil {
			t.Fatal(err)
		}
	}

	// A versioned write over a null version that fails (a wrong Content-MD5) after the null
	// version was kept does not block the key: the next write works, the null is kept once.
	mustPut(t, ctx, c, bucket, "k", []byte("null version"))
	enable(types.BucketVersioningStatusEnabled)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: bytes.NewReader([]byte("x")),
		ContentMD5: aws.String("1B2M2Y8AsgTpgAmY7PhCfg==")}); apiCode(err) != "BadDigest" {
		t.Fatalf("PUT with a wrong Content-MD5: %v", err)
	}
	v1 := aws.ToString(mustPut(t, ctx, c, bucket, "k", []byte("one")).VersionId)
	v2 := aws.ToString(mustPut(t, ctx, c, bucket, "k", []byte("two")).VersionId)
	vs, _ := listVersions(t, ctx, c, bucket, "k", 1000)
	if len(vs) != 3 {
		t.Fatalf("versions after a failed write: %d, want 3 (the null kept once, one, two)", len(vs))
	}

	// An object ACL set on a versioned write is the current version's, and decides reads.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("pub"), Body: bytes.NewReader([]byte("public")), ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(srv.Endpoint + "/" + bucket + "/pub"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("anonymous GET of a public-read version: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}

	// Paging one entry at a time marks exactly one latest entry per key, as one page does.
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	latest := func(size int32) int {
		vs, ms := listVersions(t, ctx, c, bucket, "", size)
		n := 0
		for _, v := range vs {
			if aws.ToBool(v.IsLatest) {
				n++
			}
		}
		for _, m := range ms {
			if aws.ToBool(m.IsLatest) {
				n++
			}
		}
		return n
	}
	if one, paged := latest(1000), latest(1); one != 2 || paged != 2 {
		t.Fatalf("latest entries: %d in one page, %d paged one by one; want 2 (k's marker, pub)", one, paged)
	}

	// A delete while suspended leaves no current version; removing an older version then must
	// not bring the deleted object back.
	_, markers := listVersions(t, ctx, c, bucket, "k", 1000)
	if len(markers) != 1 {
		t.Fatalf("delete markers of k: %d", len(markers))
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), VersionId: markers[0].VersionId}); err != nil {
		t.Fatal(err)
	}
	mustGetVersion(t, ctx, c, bucket, "k", "", []byte("two"))
	enable(types.BucketVersioningStatusSuspended)
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), VersionId: aws.String(v1)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := getBytes(ctx, c, bucket, "k"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("GET of a key deleted while suspended, after removing an older version: %v", err)
	}
	mustGetVersion(t, ctx, c, bucket, "k", v2, []byte("two"))

	// Copying an object written before versioning onto itself (new metadata) makes a version
	// and keeps the null version as it was.
	sc := newBucket(t, ctx, c, "selfcopy")
	mustPut(t, ctx, c, sc, "n", []byte("before versioning"))
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(sc),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(sc), Key: aws.String("n"), CopySource: aws.String(sc + "/n"),
		MetadataDirective: types.MetadataDirectiveReplace, Metadata: map[string]string{"color": "blue"}})
	if err != nil {
		t.Fatalf("self-copy: %v", err)
	}
	if id := aws.ToString(cp.VersionId); id == "" || id == "null" {
		t.Fatalf("self-copy in a versioned bucket answered version %q, want a new one", id)
	}
	vs, _ = listVersions(t, ctx, c, sc, "n", 1000)
	if len(vs) != 2 || aws.ToString(vs[0].VersionId) != aws.ToString(cp.VersionId) {
		t.Fatalf("versions after a self-copy of the null version: %d, want the copy's and the kept one", len(vs))
	}
	// (The null version kept has its timestamp as ID once overwritten, as in Swift's s3api.)
	kept := aws.ToString(vs[1].VersionId)
	old, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(sc), Key: aws.String("n"), VersionId: aws.String(kept)})
	if err != nil {
		t.Fatalf("HEAD of the kept version after a self-copy: %v", err)
	}
	if old.Metadata["color"] != "" {
		t.Fatalf("the kept version after a self-copy has the copy's metadata %v", old.Metadata)
	}
	if cur, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(sc), Key: aws.String("n")}); err != nil || cur.Metadata["color"] != "blue" {
		t.Fatalf("the current version after a self-copy: %v", err)
	}
	mustGetVersion(t, ctx, c, sc, "n", kept, []byte("before versioning"))

	// A version made current again by a restore lists with its own time, as HEAD shows it.
	older := aws.ToString(mustPut(t, ctx, c, sc, "r", []byte("older")).VersionId)
	time.Sleep(1100 * time.Millisecond) // Last-Modified has whole seconds
	newer := aws.ToString(mustPut(t, ctx, c, sc, "r", []byte("newer")).VersionId)
	time.Sleep(1100 * time.Millisecond)
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(sc), Key: aws.String("r"), VersionId: aws.String(newer)}); err != nil {
		t.Fatal(err)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(sc), Key: aws.String("r")})
	if err != nil || aws.ToString(head.VersionId) != older {
		t.Fatalf("HEAD after removing the newest version: %v (version %q, want %q)", err, aws.ToString(head.VersionId), older)
	}
	lo, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(sc), Prefix: aws.String("r")})
	if err != nil || len(lo.Contents) != 1 {
		t.Fatalf("list: %v", err)
	}
	if listed := aws.ToTime(lo.Contents[0].LastModified).Truncate(time.Second); !listed.Equal(aws.ToTime(head.LastModified)) {
		t.Errorf("restored version listed as modified %v, HEAD says %v", listed, aws.ToTime(head.LastModified))
	}

	// A delimiter rolls keys up on the key only, never inside a version's stored name (the key,
	// then its inverted timestamp: digits and '.'), whichever delimiter a client picks.
	enable(types.BucketVersioningStatusEnabled)
	dl := newBucket(t, ctx, c, "delim")
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(dl),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"plain", "plain", "dir/a", "dir/a", "v1.txt", "x"} {
		mustPut(t, ctx, c, dl, k, []byte(k))
	}
	for _, tc := range []struct {
		delimiter string
		keys      []string // the versions' keys listed, in order
		prefixes  []string
	}{
		{"/", []string{"plain", "plain", "v1.txt", "x"}, []string{"dir/"}},
		{"1", []string{"dir/a", "dir/a", "plain", "plain", "x"}, []string{"v1"}},
		{".", []string{"dir/a", "dir/a", "plain", "plain", "x"}, []string{"v1."}},
		{"0", []string{"dir/a", "dir/a", "plain", "plain", "v1.txt", "x"}, nil},
	} {
		for _, size := range []int32{1000, 1} {
			var keys, prefixes []string
			var km, vm *string
			for pages := 0; ; pages++ {
				out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(dl), Delimiter: aws.String(tc.delimiter),
					MaxKeys: aws.Int32(size), KeyMarker: km, VersionIdMarker: vm})
				if err != nil {
					t.Fatalf("ListObjectVersions delimiter %q: %v", tc.delimiter, err)
				}
				for _, v := range out.Versions {
					keys = append(keys, aws.ToString(v.Key))
				}
				for _, p := range out.CommonPrefixes {
					prefixes = append(prefixes, aws.ToString(p.Prefix))
				}
				if !aws.ToBool(out.IsTruncated) || pages > 50 {
					break
				}
				km, vm = out.NextKeyMarker, out.NextVersionIdMarker
			}
			if !slices.Equal(keys, tc.keys) || !slices.Equal(prefixes, tc.prefixes) {
				t.Errorf("delimiter %q, pages of %d: versions of %q and prefixes %q; want %q and %q", tc.delimiter, size, keys, prefixes, tc.keys, tc.prefixes)
			}
		}
	}
}
