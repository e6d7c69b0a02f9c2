package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cairn-store/cairn/internal/localcluster"
)

// TestSubresourceChangesKeepLastModified: S3 changes of an object's ACL or tags rewrite its
// metadata under a new timestamp (so that they win over the replicas' older copies), yet S3
// keeps the object's Last-Modified for them, in HEAD, in ListObjectsV2 and in ListObjectVersions;
// the listings' entries carry it across the cluster (container updates, their queue, the
// listing replicas). A copy of the object onto itself that replaces its metadata is a new write
// to S3, and moves it.
func TestSubresourceChangesKeepLastModified(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster of processes")
	}
	_, c := start(t, localcluster.Config{Storage: 3, Proxies: 2, Replicas: 3})
	ctx := context.Background()
	bucket := "lastmod"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("data"),
		Metadata: map[string]string{"m": "1"}}); err != nil {
		t.Fatal(err)
	}
	type seen struct{ head, listed, version time.Time }
	look := func(what string) seen {
		t.Helper()
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
		if err != nil {
			t.Fatalf("%s: HEAD: %v", what, err)
		}
		l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
		if err != nil || len(l.Contents) != 1 {
			t.Fatalf("%s: ListObjectsV2: %+v, %v", what, l, err)
		}
		v, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
		if err != nil || len(v.Versions) != 1 {
			t.Fatalf("%s: ListObjectVersions: %+v, %v", what, v, err)
		}
		return seen{aws.ToTime(h.LastModified), aws.ToTime(l.Contents[0].LastModified), aws.ToTime(v.Versions[0].LastModified)}
	}
	written := look("written")
	// Last-Modified in HEAD has whole seconds: changes a second later would show.
	time.Sleep(1100 * time.Millisecond)
	if _, err := c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String(bucket), Key: aws.String("k"), ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if got := look("after PutObjectAcl"); got != written {
		t.Errorf("after PutObjectAcl: %+v, want %+v", got, written)
	}
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("k"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}}}}); err != nil {
		t.Fatal(err)
	}
	if got := look("after PutObjectTagging"); got != written {
		t.Errorf("after PutObjectTagging: %+v, want %+v", got, written)
	}
	// The changes themselves were made: the ACL and the tags read back.
	acl, err := c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	if err != nil || len(acl.Grants) < 2 {
		t.Errorf("ACL after the changes: %+v, %v", acl, err)
	}
	if tags, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("k")}); err != nil || len(tags.TagSet) != 1 {
		t.Errorf("tags after the changes: %+v, %v", tags, err)
	}

	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), CopySource: aws.String(bucket + "/k"),
		MetadataDirective: types.MetadataDirectiveReplace, Metadata: map[string]string{"m": "2"}}); err != nil {
		t.Fatal(err)
	}
	copied := look("after a copy onto itself")
	if !copied.head.After(written.head) || !copied.listed.After(written.listed) || !copied.version.After(written.version) {
		t.Errorf("a copy onto itself replacing the metadata: %+v, want all after %+v", copied, written)
	}
}
