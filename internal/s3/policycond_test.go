package s3_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/tagging"
)

// End-to-end tests of bucket policy conditions, the public access block and object ownership
// against the real server (plain HTTP on 127.0.0.1).

func putPolicy(t *testing.T, ts *tenants, bucket, doc string) error {
	t.Helper()
	_, err := ts.a.PutBucketPolicy(ctxT(t), &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(doc)})
	return err
}

// TestPolicyConditionsSourceIPAndTLS: an Allow for beta from 127.0.0.1 lets it in, from
// 10.0.0.0/8 does not; a Deny unless aws:SecureTransport refuses plain HTTP to everyone but
// leaves the owner able to remove the policy.
func TestPolicyConditionsSourceIPAndTLS(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("cond")})
	mustOK(t, err)
	putOK(t, ts.a, "cond", "k", "v")
	allowFrom := func(cidr string) string {
		return `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"beta"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::cond/*","Condition":{"IpAddress":{"aws:SourceIp":"` + cidr + `"}}}]}`
	}
	mustOK(t, putPolicy(t, ts, "cond", allowFrom("127.0.0.1/32")))
	if got, err := getString(ctx, ts.b, "cond", "k"); err != nil || got != "v" {
		t.Fatalf("beta from 127.0.0.1 under an Allow for 127.0.0.1: %q %v", got, err)
	}
	mustOK(t, putPolicy(t, ts, "cond", allowFrom("10.0.0.0/8")))
	_, err = getString(ctx, ts.b, "cond", "k")
	wantCode(t, err, "AccessDenied")
	// Not public: the Allow is tied to a private range.
	ps, err := ts.a.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("cond")})
	mustOK(t, err)
	if aws.ToBool(ps.PolicyStatus.IsPublic) {
		t.Fatal("a policy for beta is public")
	}

	// Deny unless TLS, with a public read beside it: this server speaks plain HTTP here.
	mustOK(t, putPolicy(t, ts, "cond", `{"Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::cond/*"},
		{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::cond","arn:aws:s3:::cond/*"],"Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`))
	if status, code, _ := ts.anon(t, "GET", "/cond/k", nil); status != 403 || code != "AccessDenied" {
		t.Fatalf("anonymous GET over plain HTTP under Deny-unless-TLS: %d %s", status, code)
	}
	_, err = getString(ctx, ts.a, "cond", "k")
	wantCode(t, err, "AccessDenied")
	_, err = ts.a.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("cond")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.a.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("cond")})
	mustOK(t, err)
	if got, err := getString(ctx, ts.a, "cond", "k"); err != nil || got != "v" {
		t.Fatalf("owner's GET after the policy went: %q %v", got, err)
	}

	// Deny from outside a range: NotIpAddress.
	mustOK(t, putPolicy(t, ts, "cond", `{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::cond/*","Condition":{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`))
	_, err = getString(ctx, ts.a, "cond", "k")
	wantCode(t, err, "AccessDenied")
	mustOK(t, putPolicy(t, ts, "cond", `{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::cond/*","Condition":{"NotIpAddress":{"aws:SourceIp":["10.0.0.0/8","127.0.0.0/8","::1"]}}}]}`))
	if got, err := getString(ctx, ts.a, "cond", "k"); err != nil || got != "v" {
		t.Fatalf("owner's GET from inside the range: %q %v", got, err)
	}

	// Unknown keys and operators are refused with S3's messages.
	for bad, msg := range map[string]string{
		`{"StringEquals":{"aws:Nonsense":"x"}}`:        "invalid condition key",
		`{"StringEqualsMaybe":{"s3:prefix":"x"}}`:      "Invalid Condition type",
		`{"IpAddress":{"aws:SourceIp":"10.0.0.0/99"}}`: "invalid IP",
	} {
		err := putPolicy(t, ts, "cond", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::cond/*","Condition":`+bad+`}]}`)
		wantCode(t, err, "MalformedPolicy")
		if !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", bad, err, msg)
		}
	}
}

// TestPolicyConditionsPrefixAndTags: s3:prefix limits what beta may list; s3:ExistingObjectTag
// what it may read.
func TestPolicyConditionsPrefixAndTags(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("tags")})
	mustOK(t, err)
	putOK(t, ts.a, "tags", "home/beta/x", "x")
	putOK(t, ts.a, "tags", "home/gamma/y", "y")
	_, err = ts.a.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("tags"), Key: aws.String("home/beta/x"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("Share"), Value: aws.String("beta")}}}})
	mustOK(t, err)
	mustOK(t, putPolicy(t, ts, "tags", `{"Statement":[
		{"Effect":"Allow","Principal":{"AWS":"beta"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::tags","Condition":{"StringLike":{"s3:prefix":"home/beta/*"}}},
		{"Effect":"Allow","Principal":{"AWS":"beta"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::tags/*","Condition":{"StringEquals":{"s3:ExistingObjectTag/Share":"beta"}}}]}`))

	out, err := ts.b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("tags"), Prefix: aws.String("home/beta/")})
	mustOK(t, err)
	if len(out.Contents) != 1 || aws.ToString(out.Contents[0].Key) != "home/beta/x" {
		t.Fatalf("beta's listing of its prefix: %+v", out.Contents)
	}
	_, err = ts.b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("tags"), Prefix: aws.String("home/gamma/")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("tags")})
	wantCode(t, err, "AccessDenied")

	if got, err := getString(ctx, ts.b, "tags", "home/beta/x"); err != nil || got != "x" {
		t.Fatalf("beta's GET of an object tagged for it: %q %v", got, err)
	}
	_, err = getString(ctx, ts.b, "tags", "home/gamma/y")
	wantCode(t, err, "AccessDenied")
	_, err = getString(ctx, ts.g, "tags", "home/beta/x")
	wantCode(t, err, "AccessDenied")
	// Retagging the object takes the grant away.
	_, err = ts.a.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("tags"), Key: aws.String("home/beta/x"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("Share"), Value: aws.String("nobody")}}}})
	mustOK(t, err)
	_, err = getString(ctx, ts.b, "tags", "home/beta/x")
	wantCode(t, err, "AccessDenied")
}

// TestPublicAccessBlock: BlockPublicAcls refuses public ACLs, IgnorePublicAcls makes an
// existing one grant nothing, BlockPublicPolicy refuses a public policy (not a restricted
// one), RestrictPublicBuckets makes an existing public policy the owner's only.
func TestPublicAccessBlock(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("pab")})
	mustOK(t, err)
	_, err = ts.a.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String("pab")})
	wantCode(t, err, "NoSuchPublicAccessBlockConfiguration")
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("pab"), Key: aws.String("pub"), Body: strings.NewReader("p"), ACL: types.ObjectCannedACLPublicRead})
	mustOK(t, err)
	if status, _, _ := ts.anon(t, "GET", "/pab/pub", nil); status != 200 {
		t.Fatalf("anonymous GET of a public-read object: %d", status)
	}

	putPAB := func(c types.PublicAccessBlockConfiguration) {
		t.Helper()
		_, err := ts.a.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String("pab"), PublicAccessBlockConfiguration: &c})
		mustOK(t, err)
	}
	putPAB(types.PublicAccessBlockConfiguration{BlockPublicAcls: aws.Bool(true), BlockPublicPolicy: aws.Bool(true)})
	got, err := ts.a.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String("pab")})
	mustOK(t, err)
	if c := got.PublicAccessBlockConfiguration; !aws.ToBool(c.BlockPublicAcls) || !aws.ToBool(c.BlockPublicPolicy) || aws.ToBool(c.IgnorePublicAcls) || aws.ToBool(c.RestrictPublicBuckets) {
		t.Fatalf("GetPublicAccessBlock: %+v", c)
	}
	// Others may not read or change it.
	_, err = ts.b.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String("pab")})
	wantCode(t, err, "AccessDenied")

	// BlockPublicAcls: public canned ACLs and grants refused, on the bucket and objects.
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("pab"), ACL: types.BucketCannedACLPublicRead})
	wantCode(t, err, "AccessDenied")
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("pab"), GrantRead: aws.String(`uri="http://acs.amazonaws.com/groups/global/AuthenticatedUsers"`)})
	wantCode(t, err, "AccessDenied")
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("pab"), Key: aws.String("pub2"), Body: strings.NewReader("p"), ACL: types.ObjectCannedACLPublicRead})
	wantCode(t, err, "AccessDenied")
	_, err = ts.a.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("pab"), Key: aws.String("pub"), ACL: types.ObjectCannedACLPublicReadWrite})
	wantCode(t, err, "AccessDenied")
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("pab"), GrantRead: aws.String(`id="beta"`)})
	mustOK(t, err) // not public
	// ...but the public ACL set before still works: BlockPublicAcls does not ignore.
	if status, _, _ := ts.anon(t, "GET", "/pab/pub", nil); status != 200 {
		t.Fatalf("anonymous GET with BlockPublicAcls only: %d", status)
	}

	// BlockPublicPolicy.
	publicPolicy := `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pab/*"}]}`
	wantCode(t, putPolicy(t, ts, "pab", publicPolicy), "AccessDenied")
	mustOK(t, putPolicy(t, ts, "pab", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pab/*","Condition":{"IpAddress":{"aws:SourceIp":"127.0.0.0/8"}}}]}`))

	// IgnorePublicAcls: the public object ACL now grants nothing.
	putPAB(types.PublicAccessBlockConfiguration{IgnorePublicAcls: aws.Bool(true)})
	mustOK(t, putPolicy(t, ts, "pab", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"gamma"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::pab/*"}]}`))
	if status, _, _ := ts.anon(t, "GET", "/pab/pub", nil); status != 403 {
		t.Fatalf("anonymous GET of a public-read object under IgnorePublicAcls: %d", status)
	}

	// RestrictPublicBuckets: a public policy is put (nothing blocks it now) and then restricted.
	putPAB(types.PublicAccessBlockConfiguration{})
	mustOK(t, putPolicy(t, ts, "pab", publicPolicy))
	if status, _, _ := ts.anon(t, "GET", "/pab/pub", nil); status != 200 {
		t.Fatalf("anonymous GET under a public policy: %d", status)
	}
	putPAB(types.PublicAccessBlockConfiguration{RestrictPublicBuckets: aws.Bool(true)})
	if status, _, _ := ts.anon(t, "GET", "/pab/pub", nil); status != 200 {
		// The object's own public ACL still lets everyone in: RestrictPublicBuckets is about
		// the policy.
		t.Fatalf("anonymous GET of a public-read object under RestrictPublicBuckets: %d", status)
	}
	putOK(t, ts.a, "pab", "plain", "q")
	if status, _, _ := ts.anon(t, "GET", "/pab/plain", nil); status != 403 {
		t.Fatalf("anonymous GET under a restricted public policy: %d", status)
	}
	_, err = getString(ctx, ts.g, "pab", "plain")
	wantCode(t, err, "AccessDenied")

	_, err = ts.a.DeletePublicAccessBlock(ctx, &s3.DeletePublicAccessBlockInput{Bucket: aws.String("pab")})
	mustOK(t, err)
	_, err = ts.a.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String("pab")})
	wantCode(t, err, "NoSuchPublicAccessBlockConfiguration")
	if status, _, _ := ts.anon(t, "GET", "/pab/plain", nil); status != 200 {
		t.Fatalf("anonymous GET under the public policy once unblocked: %d", status)
	}
}

// TestOwnershipControls: BucketOwnerEnforced refuses ACLs (but bucket-owner-full-control),
// ignores those already set, and GET ?acl shows the owner alone.
func TestOwnershipControls(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("own"), ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced})
	mustOK(t, err)
	oc, err := ts.a.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String("own")})
	mustOK(t, err)
	if r := oc.OwnershipControls.Rules; len(r) != 1 || r[0].ObjectOwnership != types.ObjectOwnershipBucketOwnerEnforced {
		t.Fatalf("ownership controls: %+v", r)
	}
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("own"), ACL: types.BucketCannedACLPublicRead})
	wantCode(t, err, "AccessControlListNotSupported")
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("own"), Key: aws.String("k"), Body: strings.NewReader("v"), ACL: types.ObjectCannedACLPublicRead})
	wantCode(t, err, "AccessControlListNotSupported")
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("own"), Key: aws.String("k"), Body: strings.NewReader("v"), ACL: types.ObjectCannedACLBucketOwnerFullControl})
	mustOK(t, err)
	_, err = ts.a.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("own"), Key: aws.String("k"), GrantRead: aws.String(`id="beta"`)})
	wantCode(t, err, "AccessControlListNotSupported")
	_, err = ts.a.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("own"), Key: aws.String("k"), ACL: types.ObjectCannedACLPrivate})
	mustOK(t, err)

	// A bucket with ACLs in use: switching to BucketOwnerEnforced with a bucket grant is
	// refused; with only an object's public ACL it is taken, and the ACL stops counting.
	_, err = ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("legacy")})
	mustOK(t, err)
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("legacy"), Key: aws.String("pub"), Body: strings.NewReader("p"), ACL: types.ObjectCannedACLPublicRead})
	mustOK(t, err)
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("legacy"), GrantRead: aws.String(`id="beta"`)})
	mustOK(t, err)
	enforce := &types.OwnershipControls{Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}}}
	_, err = ts.a.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: aws.String("legacy"), OwnershipControls: enforce})
	wantCode(t, err, "InvalidBucketAclWithObjectOwnership")
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("legacy"), ACL: types.BucketCannedACLPrivate})
	mustOK(t, err)
	if status, _, _ := ts.anon(t, "GET", "/legacy/pub", nil); status != 200 {
		t.Fatalf("anonymous GET of a public-read object: %d", status)
	}
	_, err = ts.a.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: aws.String("legacy"), OwnershipControls: enforce})
	mustOK(t, err)
	if status, _, _ := ts.anon(t, "GET", "/legacy/pub", nil); status != 403 {
		t.Fatalf("anonymous GET of a public-read object under BucketOwnerEnforced: %d", status)
	}
	acl, err := ts.a.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String("legacy"), Key: aws.String("pub")})
	mustOK(t, err)
	if len(acl.Grants) != 1 || acl.Grants[0].Permission != types.PermissionFullControl || aws.ToString(acl.Grants[0].Grantee.ID) != "alpha" {
		t.Fatalf("object ACL under BucketOwnerEnforced: %+v", acl.Grants)
	}
	// Back to ObjectWriter: the old ACL counts again.
	_, err = ts.a.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: aws.String("legacy"),
		OwnershipControls: &types.OwnershipControls{Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipObjectWriter}}}})
	mustOK(t, err)
	if status, _, _ := ts.anon(t, "GET", "/legacy/pub", nil); status != 200 {
		t.Fatalf("anonymous GET of a public-read object under ObjectWriter: %d", status)
	}
	_, err = ts.a.DeleteBucketOwnershipControls(ctx, &s3.DeleteBucketOwnershipControlsInput{Bucket: aws.String("legacy")})
	mustOK(t, err)
	_, err = ts.a.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String("legacy")})
	wantCode(t, err, "OwnershipControlsNotFoundError")
	_, err = ts.b.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: aws.String("legacy"), OwnershipControls: enforce})
	wantCode(t, err, "AccessDenied")
}

// The access package reads object tags under its own name for the key: it must be tagging's.
func TestObjectTagKeyAgrees(t *testing.T) {
	if access.ObjectMetaTagging != tagging.ObjectSysMetaKey {
		t.Fatalf("access.ObjectMetaTagging %q, tagging.ObjectSysMetaKey %q", access.ObjectMetaTagging, tagging.ObjectSysMetaKey)
	}
}

// TestPolicyConditionsThroughSwift: the same conditions hold for a request through Swift:
// aws:SourceIp, a Deny unless TLS, and s3:ExistingObjectTag.
func TestPolicyConditionsThroughSwift(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("swb")})
	mustOK(t, err)
	putOK(t, ts.a, "swb", "k", "v")
	putOK(t, ts.a, "swb", "t", "tagged")
	_, err = ts.a.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("swb"), Key: aws.String("t"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("open"), Value: aws.String("yes")}}}})
	mustOK(t, err)
	beta := swiftLogin(t, ts.endpoint, "beta:u", ts.swiftKey["beta"])
	url := ts.endpoint + "/v1/AUTH_alpha/swb/"
	allowFrom := func(cidr string) string {
		return `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"beta"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::swb/*","Condition":{"IpAddress":{"aws:SourceIp":"` + cidr + `"}}}]}`
	}
	mustOK(t, putPolicy(t, ts, "swb", allowFrom("127.0.0.1")))
	if status, body := beta.do(t, "GET", url+"k"); status != 200 || body != "v" {
		t.Fatalf("beta's Swift GET from 127.0.0.1: %d %q", status, body)
	}
	mustOK(t, putPolicy(t, ts, "swb", allowFrom("10.0.0.0/8")))
	if status, _ := beta.do(t, "GET", url+"k"); status != 403 {
		t.Fatalf("beta's Swift GET under an Allow for 10/8: %d", status)
	}
	mustOK(t, putPolicy(t, ts, "swb", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"beta"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::swb/*","Condition":{"StringEquals":{"s3:ExistingObjectTag/open":"yes"}}}]}`))
	if status, body := beta.do(t, "GET", url+"t"); status != 200 || body != "tagged" {
		t.Fatalf("beta's Swift GET of a tagged object: %d %q", status, body)
	}
	if status, _ := beta.do(t, "GET", url+"k"); status != 403 {
		t.Fatalf("beta's Swift GET of an untagged object: %d", status)
	}
	// A Deny unless TLS: beta is refused; the owner's administrator is not decided by the
	// policy through Swift (see docs/api.md), so only beta is checked.
	mustOK(t, putPolicy(t, ts, "swb", `{"Statement":[
		{"Effect":"Allow","Principal":{"AWS":"beta"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::swb/*"},
		{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::swb/*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`))
	if status, _ := beta.do(t, "GET", url+"k"); status != 403 {
		t.Fatalf("beta's Swift GET over plain HTTP under Deny-unless-TLS: %d", status)
	}
}

// TestPolicyConditionsRequestTags: s3:RequestObjectTagKeys and s3:RequestObjectTag decide
// PutObjectTagging from its document and PutObject from x-amz-tagging.
func TestPolicyConditionsRequestTags(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("rtags")})
	mustOK(t, err)
	putOK(t, ts.a, "rtags", "k", "v")
	mustOK(t, putPolicy(t, ts, "rtags", `{"Statement":[
		{"Effect":"Allow","Principal":{"AWS":"beta"},"Action":"s3:PutObjectTagging","Resource":"arn:aws:s3:::rtags/*","Condition":{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["team","env"]},"StringEqualsIfExists":{"s3:RequestObjectTag/env":"dev"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObjectTagging","Resource":"arn:aws:s3:::rtags/*","Condition":{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":"forbidden"}}}]}`))
	tag := func(c *s3.Client, kv ...string) error {
		var set []types.Tag
		for i := 0; i+1 < len(kv); i += 2 {
			set = append(set, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
		}
		_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("rtags"), Key: aws.String("k"), Tagging: &types.Tagging{TagSet: set}})
		return err
	}
	mustOK(t, tag(ts.b, "team", "blue"))
	mustOK(t, tag(ts.b, "team", "blue", "env", "dev"))
	wantCode(t, tag(ts.b, "team", "blue", "env", "prod"), "AccessDenied")
	wantCode(t, tag(ts.b, "owner", "beta"), "AccessDenied")
	wantCode(t, tag(ts.g, "team", "blue"), "AccessDenied")
	// The Deny holds for the owner too, from the document and from x-amz-tagging.
	wantCode(t, tag(ts.a, "forbidden", "1"), "AccessDenied")
	mustOK(t, tag(ts.a, "anything", "1"))
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("rtags"), Key: aws.String("n"), Body: strings.NewReader("n"), Tagging: aws.String("forbidden=1")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("rtags"), Key: aws.String("n"), Body: strings.NewReader("n"), Tagging: aws.String("fine=1")})
	mustOK(t, err)
	got, err := ts.a.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("rtags"), Key: aws.String("k")})
	mustOK(t, err)
	if len(got.TagSet) != 1 || aws.ToString(got.TagSet[0].Key) != "anything" {
		t.Fatalf("tags after refused changes: %+v", got.TagSet)
	}
}

// Condition keys that are request headers: the grant headers, the storage class, SSE-C's
// algorithm (as AWS documents them for PutObject). A policy naming them is accepted and
// decides on the header's value, absent when the request does not send it.
func TestPolicyConditionsOnRequestHeaders(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("hdrcond")})
	mustOK(t, err)
	mustOK(t, putPolicy(t, ts, "hdrcond", `{"Statement":[
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::hdrcond/*","Condition":{"StringLike":{"s3:x-amz-grant-read":"*AllUsers*"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::hdrcond/*","Condition":{"StringNotEquals":{"s3:x-amz-storage-class":"STANDARD"},"Null":{"s3:x-amz-storage-class":"false"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::hdrcond/sse-c/*","Condition":{"Null":{"s3:x-amz-server-side-encryption-customer-algorithm":"true"}}}]}`))
	put := func(key string, in s3.PutObjectInput) error {
		in.Bucket, in.Key, in.Body = aws.String("hdrcond"), aws.String(key), strings.NewReader("x")
		_, err := ts.a.PutObject(ctx, &in)
		return err
	}
	// A grant to everyone is refused by the policy (before the ACL itself is looked at).
	wantCode(t, put("g", s3.PutObjectInput{GrantRead: aws.String(`uri="http://acs.amazonaws.com/groups/global/AllUsers"`)}), "AccessDenied")
	// Any storage class but STANDARD is refused; none is fine.
	mustOK(t, put("a1", s3.PutObjectInput{}))
	mustOK(t, put("a2", s3.PutObjectInput{StorageClass: types.StorageClassStandard}))
	wantCode(t, put("a3", s3.PutObjectInput{StorageClass: types.StorageClassGlacier}), "AccessDenied")
	// Under sse-c/, a write without SSE-C's algorithm is refused.
	wantCode(t, put("sse-c/plain", s3.PutObjectInput{}), "AccessDenied")
}
