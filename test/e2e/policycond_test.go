package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestPolicyConditionsPublicAccessOwnership drives bucket policy conditions, Block Public
// Access and Object Ownership through the real binary with the AWS SDK for Go v2: another
// tenant allowed only from 127.0.0.1 (in) or 10.0.0.0/8 (out), Deny unless TLS over plain
// HTTP, s3:prefix and s3:ExistingObjectTag, a public ACL and a public policy blocked, an
// existing public ACL ignored, and BucketOwnerEnforced refusing ACLs.
func TestPolicyConditionsPublicAccessOwnership(t *testing.T) {
	SkipShort(t)
	s := Start(t, Options{DataDir: t.TempDir()})
	root := newCLI(t, s)
	root.ok("admin", "account", "create", "acme")
	root.ok("admin", "account", "create", "other")
	alice := root.createUser("acme:alice", "--admin")
	olga := root.createUser("other:olga", "--admin")
	a := NewS3Client(s.Endpoint, alice.AccessKey, alice.SecretKey, NoRetries)
	o := NewS3Client(s.Endpoint, olga.AccessKey, olga.SecretKey, NoRetries)
	ctx := Context(t)
	want := func(what string, err error, code string) {
		t.Helper()
		if got := apiCode(err); got != code {
			t.Fatalf("%s: %v (code %q), want %q", what, err, got, code)
		}
	}
	ok := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// settle waits, in a cluster, until every front end's cached bucket state (5 s, the
	// access cache) has the setting just changed: a request after it may reach another node.
	// A front end trusts what it cached for 5 s from when it began reading it, so 6 s after the
	// change was acknowledged no copy from before the change is left, however slow the machine:
	// the wait is on the clock, not on anything the machine must have done meanwhile.
	settle := func() {
		if ClusterTopology() != nil {
			time.Sleep(6 * time.Second)
		}
	}
	policy := func(doc string) error {
		_, err := a.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("shared"), Policy: aws.String(doc)})
		if err == nil {
			settle()
		}
		return err
	}
	get := func(c *s3.Client, key string) error {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("shared"), Key: aws.String(key)})
		if err == nil {
			io.Copy(io.Discard, out.Body)
			out.Body.Close()
		}
		return err
	}
	anonGet := func(path string) int {
		resp, err := http.Get(s.Endpoint + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	_, err := a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("shared")})
	ok("create", err)
	for _, k := range []string{"docs/a", "docs/b", "tmp/c"} {
		_, err := a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("shared"), Key: aws.String(k), Body: strings.NewReader(k)})
		ok("put "+k, err)
	}
	_, err = a.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("shared"), Key: aws.String("docs/a"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("class"), Value: aws.String("open")}}}})
	ok("tag", err)

	// aws:SourceIp: the test talks to 127.0.0.1.
	from := func(cidr string) string {
		return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::other:root"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::shared/*","Condition":{"IpAddress":{"aws:SourceIp":"` + cidr + `"}}}]}`
	}
	ok("policy from 127.0.0.1", policy(from("127.0.0.1/32")))
	ok("other's GET from 127.0.0.1", get(o, "docs/b"))
	ok("policy from 10/8", policy(from("10.0.0.0/8")))
	want("other's GET from outside 10/8", get(o, "docs/b"), "AccessDenied")

	// s3:prefix and s3:ExistingObjectTag.
	ok("prefix and tag policy", policy(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":"other"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::shared","Condition":{"StringEquals":{"s3:prefix":"docs/"}}},
		{"Effect":"Allow","Principal":{"AWS":"other"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::shared/*","Condition":{"StringEquals":{"s3:ExistingObjectTag/class":"open"}}}]}`))
	l, err := o.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("shared"), Prefix: aws.String("docs/")})
	ok("other's listing of docs/", err)
	if len(l.Contents) != 2 {
		t.Fatalf("other's listing of docs/: %d keys", len(l.Contents))
	}
	_, err = o.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("shared"), Prefix: aws.String("tmp/")})
	want("other's listing of tmp/", err, "AccessDenied")
	ok("other's GET of an open-tagged object", get(o, "docs/a"))
	want("other's GET of an untagged object", get(o, "docs/b"), "AccessDenied")

	// Deny unless TLS: this server speaks plain HTTP, so even the owner is refused.
	ok("deny-unless-TLS policy", policy(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::shared/*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`))
	want("owner's GET over plain HTTP", get(a, "docs/a"), "AccessDenied")
	_, err = a.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("shared")})
	settle()
	ok("owner removes the policy", err)
	ok("owner's GET", get(a, "docs/a"))

	// Block Public Access.
	_, err = a.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("shared"), Key: aws.String("docs/b"), ACL: types.ObjectCannedACLPublicRead})
	ok("public-read object", err)
	if st := anonGet("/shared/docs/b"); st != 200 {
		t.Fatalf("anonymous GET of a public-read object: %d", st)
	}
	_, err = a.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String("shared"), PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{
		BlockPublicAcls: aws.Bool(true), IgnorePublicAcls: aws.Bool(true), BlockPublicPolicy: aws.Bool(true), RestrictPublicBuckets: aws.Bool(true)}})
	ok("put public access block", err)
	settle()
	if st := anonGet("/shared/docs/b"); st != 403 {
		t.Fatalf("anonymous GET of a public-read object under IgnorePublicAcls: %d", st)
	}
	_, err = a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), ACL: types.BucketCannedACLPublicRead})
	want("public bucket ACL", err, "AccessDenied")
	_, err = a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("shared"), Key: aws.String("pub"), Body: strings.NewReader("x"), ACL: types.ObjectCannedACLPublicRead})
	want("PutObject with a public ACL", err, "AccessDenied")
	want("public policy", policy(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::shared/*"}]}`), "AccessDenied")
	pab, err := a.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String("shared")})
	ok("get public access block", err)
	if c := pab.PublicAccessBlockConfiguration; !aws.ToBool(c.BlockPublicAcls) || !aws.ToBool(c.RestrictPublicBuckets) {
		t.Fatalf("public access block: %+v", c)
	}

	// Object Ownership: BucketOwnerEnforced refuses ACLs.
	_, err = a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("owned"), ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced})
	settle()
	ok("create with BucketOwnerEnforced", err)
	_, err = a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("owned"), ACL: types.BucketCannedACLPublicRead})
	want("bucket ACL under BucketOwnerEnforced", err, "AccessControlListNotSupported")
	_, err = a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("owned"), Key: aws.String("k"), Body: strings.NewReader("x"), ACL: types.ObjectCannedACLPublicRead})
	want("object ACL under BucketOwnerEnforced", err, "AccessControlListNotSupported")
	_, err = a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("owned"), Key: aws.String("k"), Body: strings.NewReader("x"), ACL: types.ObjectCannedACLBucketOwnerFullControl})
	ok("bucket-owner-full-control under BucketOwnerEnforced", err)
	oc, err := a.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String("owned")})
	ok("get ownership controls", err)
	if r := oc.OwnershipControls.Rules; len(r) != 1 || r[0].ObjectOwnership != types.ObjectOwnershipBucketOwnerEnforced {
		t.Fatalf("ownership controls: %+v", r)
	}
}
