package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// swiftVersion is an entry of a Swift ?versions listing.
type swiftVersion struct {
	Name        string `json:"name"`
	VersionID   string `json:"version_id"`
	IsLatest    bool   `json:"is_latest"`
	Bytes       int64  `json:"bytes"`
	Hash        string `json:"hash"`
	ContentType string `json:"content_type"`
}

func (u *swiftUser) versions(path string) []swiftVersion {
	u.t.Helper()
	_, b := u.must("GET", path, nil, nil, 200)
	var out []swiftVersion
	if err := json.Unmarshal(b, &out); err != nil {
		u.t.Fatalf("versions listing %s: %v: %s", path, err, b)
	}
	return out
}

// TestSwiftObjectVersioning drives Swift's object versioning (X-Versions-Enabled) on the real
// binary: enabling, versions and their IDs, delete markers, ?versions listings, reads and
// deletes by version-id, and the one state S3 and Swift share.
func TestSwiftObjectVersioning(t *testing.T) {
	SkipShort(t)
	s := Start(t, Options{DataDir: t.TempDir()})
	root := newCLI(t, s)
	root.ok("admin", "account", "create", "acme")
	alice := root.createUser("acme:alice", "--admin")
	a := swiftLogin(t, s.Endpoint, "acme:alice", alice.SwiftKey)
	ctx := Context(t)
	as3 := NewS3Client(s.Endpoint, alice.AccessKey, alice.SecretKey, NoRetries)

	// Enable: the container says so, through Swift and through S3.
	a.must("PUT", "/docs", map[string]string{"X-Versions-Enabled": "true"}, nil, 201)
	h, _ := a.must("HEAD", "/docs", nil, nil, 204)
	if h.Get("X-Versions-Enabled") != "True" {
		t.Fatalf("X-Versions-Enabled %q", h.Get("X-Versions-Enabled"))
	}
	if v, err := as3.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("docs")}); err != nil || v.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("S3 sees versioning %q: %v", v.Status, err)
	}

	// Versions: each PUT answers its ID; GET answers the current one and where it is.
	h, _ = a.must("PUT", "/docs/a", nil, []byte("one"), 201)
	id1 := h.Get("X-Object-Version-Id")
	h, _ = a.must("PUT", "/docs/a", map[string]string{"Content-Type": "text/two"}, []byte("two!"), 201)
	id2 := h.Get("X-Object-Version-Id")
	if id1 == "" || id2 == "" || id1 == id2 {
		t.Fatalf("version IDs %q %q", id1, id2)
	}
	h, b := a.must("GET", "/docs/a", nil, nil, 200)
	if string(b) != "two!" || h.Get("X-Object-Version-Id") != id2 || !strings.HasSuffix(h.Get("Content-Location"), "/docs/a?version-id="+id2) {
		t.Fatalf("GET current: %q %v", b, h)
	}
	if _, b = a.must("GET", "/docs/a?version-id="+id1, nil, nil, 200); string(b) != "one" {
		t.Fatalf("GET version 1: %q", b)
	}
	// The container listing shows the current version's bytes; the bytes used count them all.
	_, b = a.must("GET", "/docs?format=json", nil, nil, 200)
	var listed []map[string]any
	if err := json.Unmarshal(b, &listed); err != nil || len(listed) != 1 || listed[0]["bytes"] != float64(4) || listed[0]["version_symlink"] != true {
		t.Fatalf("listing %s", b)
	}
	if h, _ = a.must("HEAD", "/docs", nil, nil, 204); h.Get("X-Container-Bytes-Used") != "7" {
		t.Fatalf("bytes used %q", h.Get("X-Container-Bytes-Used"))
	}

	// A delete writes a marker; the object is gone, its versions stay.
	h, _ = a.must("DELETE", "/docs/a", nil, nil, 204)
	marker := h.Get("X-Object-Version-Id")
	a.must("GET", "/docs/a", nil, nil, 404)
	h, _ = a.must("HEAD", "/docs/a?version-id="+marker, nil, nil, 404)
	if h.Get("X-Object-Version-Id") != marker || h.Get("Content-Type") != "application/x-deleted;swift_versions_deleted=1" {
		t.Fatalf("HEAD of the delete marker: %v", h)
	}
	vs := a.versions("/docs?versions")
	if len(vs) != 3 || vs[0].VersionID != marker || !vs[0].IsLatest || vs[1].VersionID != id2 || vs[1].IsLatest ||
		vs[1].ContentType != "text/two" || vs[1].Bytes != 4 || vs[2].VersionID != id1 {
		t.Fatalf("versions %+v", vs)
	}
	if rev := a.versions("/docs?versions&reverse=true"); len(rev) != 3 || rev[0].VersionID != id1 || rev[2].VersionID != marker || !rev[2].IsLatest {
		t.Fatalf("reverse versions %+v", rev)
	}
	if page := a.versions("/docs?versions&marker=a&version_marker=" + id2); len(page) != 1 || page[0].VersionID != id1 {
		t.Fatalf("versions after %s: %+v", id2, page)
	}
	a.must("GET", "/docs?versions&version_marker="+id2, nil, nil, 400)
	a.must("GET", "/docs?versions&format=xml", nil, nil, 406)

	// PUT ?version-id makes a version current again; DELETE ?version-id removes one for good.
	a.must("PUT", "/docs/a?version-id="+id1, nil, nil, 201)
	if _, b = a.must("GET", "/docs/a", nil, nil, 200); string(b) != "one" {
		t.Fatalf("after restoring version 1: %q", b)
	}
	h, _ = a.must("DELETE", "/docs/a?version-id="+id2, nil, nil, 204)
	if h.Get("X-Object-Version-Id") != id2 || h.Get("X-Object-Current-Version-Id") != id1 {
		t.Fatalf("DELETE version 2: %v", h)
	}
	a.must("GET", "/docs/a?version-id="+id2, nil, nil, 404)
	a.must("POST", "/docs/a?version-id="+id1, nil, nil, 400)
	a.must("GET", "/plain-nothing?versions", nil, nil, 404)

	// Deleting the container waits for its versions.
	a.must("DELETE", "/docs", nil, nil, 409)

	// The same state through S3: S3 sees Swift's versions, Swift sees S3's.
	out, err := as3.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("docs")})
	if err != nil || len(out.Versions) != 1 || aws.ToString(out.Versions[0].VersionId) != id1 || !aws.ToBool(out.Versions[0].IsLatest) || len(out.DeleteMarkers) != 1 {
		t.Fatalf("S3 versions of the Swift container: %v %+v", err, out)
	}
	if _, err := as3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bucket")}); err != nil {
		t.Fatal(err)
	}
	if _, err := as3.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("bucket"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	put, err := as3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bucket"), Key: aws.String("k"), Body: strings.NewReader("from s3")})
	if err != nil {
		t.Fatal(err)
	}
	if h, _ = a.must("HEAD", "/bucket", nil, nil, 204); h.Get("X-Versions-Enabled") != "True" {
		t.Fatalf("Swift sees S3's versioning as %q", h.Get("X-Versions-Enabled"))
	}
	h, b = a.must("GET", "/bucket/k", nil, nil, 200)
	if string(b) != "from s3" || h.Get("X-Object-Version-Id") != aws.ToString(put.VersionId) {
		t.Fatalf("Swift GET of the S3 version: %q %v (S3 said %q)", b, h, aws.ToString(put.VersionId))
	}
	h, _ = a.must("PUT", "/bucket/k", nil, []byte("from swift"), 201)
	swiftID := h.Get("X-Object-Version-Id")
	if vs := a.versions("/bucket?versions"); len(vs) != 2 || vs[0].VersionID != swiftID || vs[1].VersionID != aws.ToString(put.VersionId) {
		t.Fatalf("Swift versions of the S3 bucket: %+v", vs)
	}
	got, _, err := getBytes(ctx, as3, "bucket", "k")
	if err != nil || string(got) != "from swift" {
		t.Fatalf("S3 GET of the Swift version: %q %v", got, err)
	}
	// Suspended through Swift is suspended for S3.
	a.must("POST", "/bucket", map[string]string{"X-Versions-Enabled": "false"}, nil, 204)
	if v, err := as3.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("bucket")}); err != nil || v.Status != types.BucketVersioningStatusSuspended {
		t.Fatalf("S3 sees suspended versioning as %q: %v", v.Status, err)
	}

	// The legacy modes and this one exclude each other.
	a.must("PUT", "/archive", nil, nil, 201)
	a.must("PUT", "/legacy", map[string]string{"X-Versions-Location": "archive"}, nil, 201)
	a.must("POST", "/legacy", map[string]string{"X-Versions-Enabled": "true"}, nil, 400)
	a.must("POST", "/docs", map[string]string{"X-History-Location": "archive"}, nil, 400)
}
