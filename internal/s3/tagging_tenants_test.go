package s3_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestTenantsTagging: another tenant learns nothing of a private bucket's tags; a bucket shared
// for reading and writing (ACL grants) still keeps its tags to its owner, because ACLs do not
// grant tagging (as in AWS); only a policy naming the tagging actions does.
func TestTenantsTagging(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	const bucket = "tagged-share"
	mustOK(t, firstErr(ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})))
	_, err := ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("data"), Tagging: aws.String("secret=1")})
	mustOK(t, err)
	_, err = ts.a.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(bucket), Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("cost"), Value: aws.String("7")}}}})
	mustOK(t, err)
	getTags := func(c *s3.Client) error {
		_, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("k")})
		return err
	}
	putTags := func(c *s3.Client) error {
		_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("k"),
			Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("pwned"), Value: aws.String("1")}}}})
		return err
	}
	delTags := func(c *s3.Client) error {
		_, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("k")})
		return err
	}
	bucketTags := func(c *s3.Client) error {
		_, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)})
		return err
	}
	putBucketTags := func(c *s3.Client) error {
		_, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(bucket), Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("x"), Value: aws.String("y")}}}})
		return err
	}
	delBucketTags := func(c *s3.Client) error {
		_, err := c.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: aws.String(bucket)})
		return err
	}
	all := map[string]func(*s3.Client) error{"GetObjectTagging": getTags, "PutObjectTagging": putTags, "DeleteObjectTagging": delTags,
		"GetBucketTagging": bucketTags, "PutBucketTagging": putBucketTags, "DeleteBucketTagging": delBucketTags}

	// Private: the bucket is not there for beta.
	for name, op := range all {
		t.Run("private/"+name, func(t *testing.T) { wantCode(t, op(ts.b), "NoSuchBucket") })
	}
	// Shared for reading and writing by ACL: beta reads and writes objects, never tags.
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(bucket), GrantRead: aws.String(`id="beta"`), GrantWrite: aws.String(`id="beta"`)})
	mustOK(t, err)
	_, err = ts.a.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String(bucket), Key: aws.String("k"), GrantRead: aws.String(`id="beta"`)})
	mustOK(t, err)
	if s, err := getString(ctx, ts.b, bucket, "k"); err != nil || s != "data" {
		t.Fatalf("beta cannot read the shared object: %q %v", s, err)
	}
	for name, op := range all {
		t.Run("acl/"+name, func(t *testing.T) { wantCode(t, op(ts.b), "AccessDenied") })
	}
	_, err = ts.b.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("by-beta"), Body: strings.NewReader("x"), Tagging: aws.String("a=1")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("by-beta"), Body: strings.NewReader("x")})
	mustOK(t, err)
	// Copying a tagged object copies its tags, which takes reading them.
	mustOK(t, firstErr(ts.b.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("beta-own")})))
	_, err = ts.b.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("beta-own"), Key: aws.String("copy"), CopySource: aws.String(bucket + "/k")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("beta-own"), Key: aws.String("copy"), CopySource: aws.String(bucket + "/k"),
		TaggingDirective: types.TaggingDirectiveReplace})
	mustOK(t, err)

	// A policy naming s3:GetObjectTagging lets beta read the tags, and nothing more.
	_, err = ts.a.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(`{"Statement":[{"Effect":"Allow",
		"Principal":{"AWS":"beta"},"Action":"s3:GetObjectTagging","Resource":"arn:aws:s3:::` + bucket + `/*"}]}`)})
	mustOK(t, err)
	out, err := ts.b.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	if err != nil || len(out.TagSet) != 1 || aws.ToString(out.TagSet[0].Key) != "secret" {
		t.Fatalf("beta with a policy: %+v %v", out, err)
	}
	wantCode(t, putTags(ts.b), "AccessDenied")
	wantCode(t, bucketTags(ts.b), "AccessDenied")
	// gamma, named by nothing, gets nothing.
	wantCode(t, getTags(ts.g), "AccessDenied")

	// The owner's tags are as it left them.
	out, err = ts.a.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	if err != nil || len(out.TagSet) != 1 || aws.ToString(out.TagSet[0].Value) != "1" {
		t.Fatalf("owner's object tags: %+v %v", out, err)
	}
	bt, err := ts.a.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)})
	if err != nil || len(bt.TagSet) != 1 || aws.ToString(bt.TagSet[0].Key) != "cost" {
		t.Fatalf("owner's bucket tags: %+v %v", bt, err)
	}
}

func firstErr[T any](_ T, err error) error { return err }
