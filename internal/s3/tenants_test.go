package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/testserver"
)

// tenants is a real server (storage, proxy, S3 and Swift front ends, tenant store) with three
// accounts, alpha, beta and gamma, one user each, made through the admin API.
type tenants struct {
	endpoint string
	admin    *admin.Client
	a, b, g  *s3.Client
	swiftKey map[string]string // account → the user's Swift key
}

const (
	tenantRootAK = "CAIRNTENANTROOT"
	tenantRootSK = "tenant-root-secret-key"
)

func newTenants(t *testing.T) *tenants {
	t.Helper()
	ts := &tenants{endpoint: testserver.Start(t, tenantRootAK, tenantRootSK), swiftKey: map[string]string{}}
	c, err := admin.NewClient(admin.ClientConfig{Endpoint: ts.endpoint, AccessKey: tenantRootAK, SecretKey: tenantRootSK})
	if err != nil {
		t.Fatal(err)
	}
	ts.admin = c
	ctx := ctxT(t)
	clients := map[string]**s3.Client{"alpha": &ts.a, "beta": &ts.b, "gamma": &ts.g}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		if _, err := c.CreateAccount(ctx, name); err != nil {
			t.Fatal(err)
		}
		cred, err := c.CreateUser(ctx, name, "u", true)
		if err != nil {
			t.Fatal(err)
		}
		*clients[name] = s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ts.endpoint), UsePathStyle: true,
			Credentials: credentials.NewStaticCredentialsProvider(cred.AccessKey, cred.SecretKey, ""), Retryer: aws.NopRetryer{}})
		ts.swiftKey[name] = cred.SwiftKey
	}
	return ts
}

// anon sends an unsigned request and returns the status and the S3 error code, if any.
func (ts *tenants) anon(t *testing.T, method, path string, body []byte) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.endpoint+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	code := ""
	if i := bytes.Index(b, []byte("<Code>")); i >= 0 {
		if j := bytes.Index(b[i:], []byte("</Code>")); j >= 0 {
			code = string(b[i+len("<Code>") : i+j])
		}
	}
	return resp.StatusCode, code, b
}

// wantStatus fails unless err is an HTTP answer with the given status (for HEAD requests, whose
// errors have no body and so no code).
func wantStatus(t *testing.T, what string, err error, status int) {
	t.Helper()
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != status {
		t.Fatalf("%s: %v; want HTTP %d", what, err, status)
	}
}

func putOK(t *testing.T, c *s3.Client, bucket, key, data string) {
	t.Helper()
	_, err := c.PutObject(ctxT(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader(data)})
	mustOK(t, err)
}

func getString(ctx context.Context, c *s3.Client, bucket, key string) (string, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

// TestTenantsPrivateByDefault: with nothing granted, another tenant can neither read, list,
// write nor even see a bucket (names are per account: it may have its own of the same name),
// and an anonymous caller gets AccessDenied. Through Swift the other tenant is refused too.
func TestTenantsPrivateByDefault(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("data")})
	mustOK(t, err)
	putOK(t, ts.a, "data", "k", "alpha's secret")

	_, err = ts.b.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("k")})
	wantCode(t, err, "NoSuchBucket")
	_, err = ts.b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("data")})
	wantCode(t, err, "NoSuchBucket")
	_, err = ts.b.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("data"), Key: aws.String("k")})
	wantStatus(t, "beta HEAD object", err, 404)
	_, err = ts.b.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("data")})
	wantStatus(t, "beta HEAD bucket", err, 404)
	_, err = ts.b.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("k"), Body: strings.NewReader("beta's")})
	wantCode(t, err, "NoSuchBucket")
	_, err = ts.b.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("data"), Key: aws.String("k")})
	wantCode(t, err, "NoSuchBucket")
	_, err = ts.b.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("data")})
	wantCode(t, err, "NoSuchBucket")
	_, err = ts.b.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("data"), Key: aws.String("c"), CopySource: aws.String("data/k")})
	wantCode(t, err, "NoSuchBucket")
	lb, err := ts.b.ListBuckets(ctx, &s3.ListBucketsInput{})
	mustOK(t, err)
	if len(lb.Buckets) != 0 {
		t.Fatalf("beta's ListBuckets shows %v", lb.Buckets)
	}
	for _, p := range []string{"/data/k", "/data", "/data?acl", "/"} {
		if status, code, _ := ts.anon(t, "GET", p, nil); status != 403 || code != "AccessDenied" {
			t.Errorf("anonymous GET %s: %d %s", p, status, code)
		}
	}
	if status, code, _ := ts.anon(t, "PUT", "/data/anon", []byte("x")); status != 403 || code != "AccessDenied" {
		t.Errorf("anonymous PUT: %d %s", status, code)
	}

	// Beta's own bucket of the same name is beta's, and empty; alpha's is untouched.
	_, err = ts.b.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("data")})
	mustOK(t, err)
	l, err := ts.b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("data")})
	mustOK(t, err)
	if len(l.Contents) != 0 {
		t.Fatalf("beta's data lists %v", l.Contents)
	}
	if got, err := getString(ctx, ts.a, "data", "k"); err != nil || got != "alpha's secret" {
		t.Fatalf("alpha's object: %q %v", got, err)
	}

	// Through Swift: beta's token on alpha's account is refused, and beta's own account holds
	// only beta's container.
	sw := swiftLogin(t, ts.endpoint, "beta:u", ts.swiftKey["beta"])
	if status, _ := sw.do(t, "GET", ts.endpoint+"/v1/AUTH_alpha/data/k"); status != 403 {
		t.Errorf("beta's Swift GET of alpha's object: %d", status)
	}
	if status, _ := sw.do(t, "GET", ts.endpoint+"/v1/AUTH_alpha/data"); status != 403 {
		t.Errorf("beta's Swift listing of alpha's container: %d", status)
	}
	if status, body := sw.do(t, "GET", sw.url); status != 200 || body != "data\n" {
		t.Errorf("beta's Swift account listing: %d %q", status, body)
	}
	if status, body := sw.do(t, "GET", sw.url+"/data"); status != 204 || body != "" {
		t.Errorf("beta's Swift listing of its own data: %d %q", status, body)
	}
}

// TestTenantsGrants: ACL grants to another account allow exactly what they grant, and the
// grantee addresses the bucket by its name.
func TestTenantsGrants(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("shared")})
	mustOK(t, err)
	putOK(t, ts.a, "shared", "doc", "for beta's eyes")
	putOK(t, ts.a, "shared", "private", "alpha's only")
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), GrantRead: aws.String(`id="beta"`)})
	mustOK(t, err)

	// Beta: the bucket's READ lists, and reads no object (S3): each object's ACL decides.
	l, err := ts.b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("shared")})
	mustOK(t, err)
	if len(l.Contents) != 2 || aws.ToString(l.Contents[0].Key) != "doc" {
		t.Fatalf("beta's listing: %v", l.Contents)
	}
	for _, key := range []string{"doc", "private"} {
		_, err = ts.b.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("shared"), Key: aws.String(key)})
		wantCode(t, err, "AccessDenied")
	}
	_, err = ts.a.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("shared"), Key: aws.String("doc"), GrantRead: aws.String(`id="beta"`)})
	mustOK(t, err)
	if got, err := getString(ctx, ts.b, "shared", "doc"); err != nil || got != "for beta's eyes" {
		t.Fatalf("beta's GET of the object its ACL shares: %q %v", got, err)
	}
	_, err = ts.b.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("shared"), Key: aws.String("private")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("shared")})
	mustOK(t, err)
	_, err = ts.b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("shared"), ExpectedBucketOwner: aws.String("alpha")})
	mustOK(t, err)
	_, err = ts.b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("shared"), ExpectedBucketOwner: aws.String("gamma")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("shared"), Key: aws.String("missing")})
	wantCode(t, err, "NoSuchKey") // beta may list, so it may learn that
	_, err = ts.b.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("shared"), Key: aws.String("doc"), Body: strings.NewReader("overwritten")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("shared"), Key: aws.String("doc")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("shared")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), ACL: types.BucketCannedACLPublicReadWrite})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("shared")})
	wantCode(t, err, "AccessDenied")
	dr, err := ts.b.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("shared"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("doc")}}}})
	mustOK(t, err)
	if len(dr.Errors) != 1 || aws.ToString(dr.Errors[0].Code) != "AccessDenied" {
		t.Fatalf("beta's multi-delete: %+v", dr)
	}
	// Beta may copy what it reads into its own bucket.
	_, err = ts.b.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("betas")})
	mustOK(t, err)
	_, err = ts.b.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("betas"), Key: aws.String("copy"), CopySource: aws.String("shared/doc")})
	mustOK(t, err)
	_, err = ts.b.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("betas"), Key: aws.String("copy2"), CopySource: aws.String("shared/doc"), ExpectedSourceBucketOwner: aws.String("beta")})
	wantCode(t, err, "AccessDenied")
	if got, err := getString(ctx, ts.b, "betas", "copy"); err != nil || got != "for beta's eyes" {
		t.Fatalf("beta's copy: %q %v", got, err)
	}
	// ... but not the other way round.
	putOK(t, ts.b, "betas", "own", "beta's own")
	_, err = ts.b.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("shared"), Key: aws.String("pushed"), CopySource: aws.String("betas/own")})
	wantCode(t, err, "AccessDenied")

	// Gamma, granted nothing, is refused everything on the shared (and so addressable) bucket.
	_, err = ts.g.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("shared"), Key: aws.String("doc")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.g.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("shared"), Key: aws.String("missing")})
	wantCode(t, err, "AccessDenied") // gamma may not list: it learns nothing about keys
	_, err = ts.g.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("shared")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.g.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("shared"), Key: aws.String("doc")})
	wantStatus(t, "gamma HEAD object", err, 403)
	_, err = ts.g.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("shared")})
	wantStatus(t, "gamma HEAD bucket", err, 403)
	_, err = ts.g.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("shared"), Key: aws.String("x"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied")
	if status, code, _ := ts.anon(t, "GET", "/shared/doc", nil); status != 403 || code != "AccessDenied" {
		t.Errorf("anonymous GET of a bucket shared with beta: %d %s", status, code)
	}

	// The owner sees the grant; a document replaces it: WRITE for gamma, READ_ACP for beta.
	acl, err := ts.a.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("shared")})
	mustOK(t, err)
	if aws.ToString(acl.Owner.ID) != "alpha" || len(acl.Grants) != 2 || aws.ToString(acl.Grants[0].Grantee.ID) != "beta" || acl.Grants[0].Permission != types.PermissionRead || aws.ToString(acl.Grants[1].Grantee.ID) != "alpha" {
		t.Fatalf("alpha's ACL: %+v", acl)
	}
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), AccessControlPolicy: &types.AccessControlPolicy{
		Owner: &types.Owner{ID: aws.String("alpha")},
		Grants: []types.Grant{
			{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("gamma")}, Permission: types.PermissionWrite},
			{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("beta")}, Permission: types.PermissionReadAcp},
		}}})
	mustOK(t, err)
	putOK(t, ts.g, "shared", "from-gamma", "gamma wrote")
	_, err = ts.g.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("shared"), Key: aws.String("from-gamma")})
	wantCode(t, err, "AccessDenied") // WRITE does not read
	_, err = ts.b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("shared")})
	wantCode(t, err, "AccessDenied") // beta's bucket READ is gone
	if got, err := getString(ctx, ts.b, "shared", "doc"); err != nil || got != "for beta's eyes" {
		t.Fatalf("beta's GET of the object its ACL shares, without the bucket's READ: %q %v", got, err) // the object's ACL stays
	}
	if acl, err := ts.b.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("shared")}); err != nil || len(acl.Grants) != 3 {
		t.Fatalf("beta's GetBucketAcl with READ_ACP: %+v %v", acl, err)
	}
	if got, err := getString(ctx, ts.a, "shared", "from-gamma"); err != nil || got != "gamma wrote" {
		t.Fatalf("alpha reads gamma's object: %q %v", got, err)
	}
	// WRITE covers multipart uploads, from creation to completion or abort.
	mu, err := ts.g.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("shared"), Key: aws.String("mp")})
	mustOK(t, err)
	up, err := ts.g.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("shared"), Key: aws.String("mp"), UploadId: mu.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("one part")})
	mustOK(t, err)
	if lp, err := ts.g.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("shared"), Key: aws.String("mp"), UploadId: mu.UploadId}); err != nil || len(lp.Parts) != 1 {
		t.Fatalf("gamma's ListParts: %+v %v", lp, err)
	}
	_, err = ts.b.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("shared"), Key: aws.String("mp"), UploadId: mu.UploadId})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("shared"), Key: aws.String("mp"), UploadId: mu.UploadId})
	wantCode(t, err, "AccessDenied")
	_, err = ts.g.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("shared"), Key: aws.String("mp"), UploadId: mu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1)}}}})
	mustOK(t, err)
	if got, err := getString(ctx, ts.a, "shared", "mp"); err != nil || got != "one part" {
		t.Fatalf("alpha reads gamma's multipart object: %q %v", got, err)
	}
	// Setting an ACL that grants anything while writing takes WRITE_ACP too; the canned ACLs
	// cross-account uploaders send, which grant nothing more, do not.
	_, err = ts.g.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("shared"), Key: aws.String("open"), Body: strings.NewReader("x"), ACL: types.ObjectCannedACLPublicRead})
	wantCode(t, err, "AccessDenied")
	_, err = ts.g.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("shared"), Key: aws.String("handed-over"), Body: strings.NewReader("x"), ACL: types.ObjectCannedACLBucketOwnerFullControl})
	mustOK(t, err)

	// Grants name accounts that exist, in a form S3 knows.
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), GrantRead: aws.String(`id="nobody"`)})
	wantCode(t, err, "InvalidArgument")
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), GrantRead: aws.String(`emailAddress="a@example.com"`)})
	wantStatus(t, "grant by e-mail", err, http.StatusBadRequest)
	wantCode(t, err, "UnresolvableGrantByEmailAddress") // no account has an e-mail address
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), ACL: "public-everything"})
	wantCode(t, err, "InvalidArgument")
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), ACL: types.BucketCannedACLPrivate, GrantRead: aws.String(`id="beta"`)})
	wantCode(t, err, "InvalidRequest")

	// Back to private: gamma is refused again at once; the root key still gets in (the name
	// stays claimed while the bucket lives).
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), ACL: types.BucketCannedACLPrivate})
	mustOK(t, err)
	_, err = ts.g.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("shared"), Key: aws.String("x"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied")
	root := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ts.endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(tenantRootAK, tenantRootSK, ""), Retryer: aws.NopRetryer{}})
	if got, err := getString(ctx, root, "shared", "doc"); err != nil || got != "for beta's eyes" {
		t.Fatalf("root's GET of a shared bucket: %q %v", got, err)
	}
	_, err = ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("never-shared")})
	mustOK(t, err)
	_, err = root.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("never-shared")})
	wantCode(t, err, "NoSuchBucket")

	// Sharing a bucket whose name another account shares is refused; the owner renames.
	_, err = ts.g.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("shared")})
	mustOK(t, err) // names are per account
	_, err = ts.g.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), ACL: types.BucketCannedACLPublicRead})
	wantCode(t, err, "BucketAlreadyExists")
	_, err = ts.g.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("shared"), ACL: types.BucketCannedACLPublicRead})
	wantCode(t, err, "BucketAlreadyOwnedByYou")
	_, err = ts.b.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("shared"), ACL: types.BucketCannedACLPublicRead})
	wantCode(t, err, "BucketAlreadyExists")
	if _, err := ts.b.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("shared")}); err == nil {
		// beta still reaches alpha's (shared) bucket, not one of its own
		t.Fatal("beta's refused create made a bucket it can head")
	}
}

// TestTenantsPublic: a bucket's canned public-read lets anonymous (unsigned HTTP) callers list
// it, never write, and reads no object: an object's own public-read ACL opens that object only,
// in a public bucket as in a private one.
func TestTenantsPublic(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("pub"), ACL: types.BucketCannedACLPublicRead})
	mustOK(t, err)
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("pub"), Key: aws.String("hello.txt"), Body: strings.NewReader("hello, world"), ACL: types.ObjectCannedACLPublicRead})
	mustOK(t, err)
	putOK(t, ts.a, "pub", "private.txt", "not for you")
	for _, method := range []string{"GET", "HEAD"} {
		if status, _, _ := ts.anon(t, method, "/pub/private.txt", nil); status != 403 {
			t.Errorf("anonymous %s of a private object in a public-read bucket: %d", method, status)
		}
	}
	_, err = ts.g.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("pub"), Key: aws.String("private.txt")})
	wantCode(t, err, "AccessDenied")
	if status, _, body := ts.anon(t, "GET", "/pub/hello.txt", nil); status != 200 || string(body) != "hello, world" {
		t.Fatalf("anonymous GET: %d %q", status, body)
	}
	if status, _, body := ts.anon(t, "GET", "/pub", nil); status != 200 || !strings.Contains(string(body), "<Key>hello.txt</Key>") {
		t.Fatalf("anonymous list: %d %s", status, body)
	}
	if status, _, _ := ts.anon(t, "HEAD", "/pub/hello.txt", nil); status != 200 {
		t.Fatalf("anonymous HEAD: %d", status)
	}
	if status, code, _ := ts.anon(t, "GET", "/pub/nope", nil); status != 404 || code != "NoSuchKey" {
		t.Fatalf("anonymous GET of a missing key: %d %s", status, code)
	}
	for _, c := range []struct{ method, path string }{
		{"PUT", "/pub/anon.txt"}, {"DELETE", "/pub/hello.txt"}, {"GET", "/pub?acl"}, {"PUT", "/pub?acl"},
		{"GET", "/pub?policy"}, {"DELETE", "/pub"}, {"GET", "/"}, {"PUT", "/anon-bucket"}, {"GET", "/pub?location"},
	} {
		if status, code, _ := ts.anon(t, c.method, c.path, []byte("x")); status != 403 || code != "AccessDenied" && c.method != "HEAD" {
			t.Errorf("anonymous %s %s: %d %s", c.method, c.path, status, code)
		}
	}
	// Other tenants read it as well.
	if got, err := getString(ctx, ts.g, "pub", "hello.txt"); err != nil || got != "hello, world" {
		t.Fatalf("gamma's GET: %q %v", got, err)
	}
	_, err = ts.g.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("pub"), Key: aws.String("g"), Body: strings.NewReader("g")})
	wantCode(t, err, "AccessDenied")
	// Presigned URLs of the owner still work; a public-read-write bucket takes anonymous writes.
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("pub"), ACL: types.BucketCannedACLPublicReadWrite})
	mustOK(t, err)
	if status, code, _ := ts.anon(t, "PUT", "/pub/anon.txt", []byte("anonymous bytes")); status != 200 {
		t.Fatalf("anonymous PUT into public-read-write: %d %s", status, code)
	}
	if got, err := getString(ctx, ts.a, "pub", "anon.txt"); err != nil || got != "anonymous bytes" {
		t.Fatalf("alpha reads the anonymous object: %q %v", got, err)
	}

	// Object ACLs: one public object in a private bucket.
	_, err = ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("mixed")})
	mustOK(t, err)
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("mixed"), Key: aws.String("open"), Body: strings.NewReader("open"), ACL: types.ObjectCannedACLPublicRead})
	mustOK(t, err)
	putOK(t, ts.a, "mixed", "closed", "closed")
	if status, _, body := ts.anon(t, "GET", "/mixed/open", nil); status != 200 || string(body) != "open" {
		t.Fatalf("anonymous GET of a public object: %d %q", status, body)
	}
	for _, p := range []string{"/mixed/closed", "/mixed/nope", "/mixed", "/mixed/open?acl"} {
		if status, code, _ := ts.anon(t, "GET", p, nil); status != 403 || code != "AccessDenied" {
			t.Errorf("anonymous GET %s: %d %s", p, status, code)
		}
	}
	oa, err := ts.a.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String("mixed"), Key: aws.String("open")})
	mustOK(t, err)
	if len(oa.Grants) != 2 || oa.Grants[0].Grantee.Type != types.TypeGroup || aws.ToString(oa.Grants[0].Grantee.URI) != "http://acs.amazonaws.com/groups/global/AllUsers" || oa.Grants[1].Permission != types.PermissionFullControl {
		t.Fatalf("object ACL: %+v", oa.Grants)
	}
	// PutObjectAcl opens and closes objects; the bytes stay.
	_, err = ts.a.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("mixed"), Key: aws.String("closed"), ACL: types.ObjectCannedACLAuthenticatedRead})
	mustOK(t, err)
	if got, err := getString(ctx, ts.b, "mixed", "closed"); err != nil || got != "closed" {
		t.Fatalf("beta's GET of an authenticated-read object: %q %v", got, err)
	}
	if status, _, _ := ts.anon(t, "GET", "/mixed/closed", nil); status != 403 {
		t.Fatalf("anonymous GET of an authenticated-read object: %d", status)
	}
	_, err = ts.a.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("mixed"), Key: aws.String("open"), ACL: types.ObjectCannedACLPrivate})
	mustOK(t, err)
	if status, _, _ := ts.anon(t, "GET", "/mixed/open", nil); status != 403 {
		t.Fatalf("anonymous GET after PutObjectAcl private: %d", status)
	}
	if got, err := getString(ctx, ts.a, "mixed", "open"); err != nil || got != "open" {
		t.Fatalf("the object after PutObjectAcl: %q %v", got, err)
	}
	_, err = ts.a.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("mixed"), Key: aws.String("nope"), ACL: types.ObjectCannedACLPrivate})
	wantCode(t, err, "NoSuchKey")
	// A copy does not inherit the source's ACL.
	_, err = ts.a.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("mixed"), Key: aws.String("copy"), CopySource: aws.String("mixed/closed")})
	mustOK(t, err)
	if _, err := getString(ctx, ts.b, "mixed", "copy"); err == nil {
		t.Fatal("a copy of an authenticated-read object is readable by beta")
	}
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("mixed"), Key: aws.String("x"), Body: strings.NewReader("x"), ACL: "aws-exec-read"})
	wantCode(t, err, "NotImplemented")
	// A multipart upload created with an ACL gives it to the completed object.
	mu, err := ts.a.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mixed"), Key: aws.String("mp"), ACL: types.ObjectCannedACLPublicRead})
	mustOK(t, err)
	up, err := ts.a.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("mixed"), Key: aws.String("mp"), UploadId: mu.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("multi")})
	mustOK(t, err)
	if status, _, _ := ts.anon(t, "GET", "/mixed/mp", nil); status != 403 {
		t.Fatalf("anonymous GET of an upload in progress: %d", status)
	}
	_, err = ts.a.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("mixed"), Key: aws.String("mp"), UploadId: mu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1)}}}})
	mustOK(t, err)
	if status, _, body := ts.anon(t, "GET", "/mixed/mp", nil); status != 200 || string(body) != "multi" {
		t.Fatalf("anonymous GET of a public multipart object: %d %q", status, body)
	}
}

// TestTenantsPolicy: a policy Allow for beta's GetObject works, a Deny overrides it (for the
// owner's own users too), and bad policies are MalformedPolicy.
func TestTenantsPolicy(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("pol")})
	mustOK(t, err)
	putOK(t, ts.a, "pol", "a/x", "a-x")
	putOK(t, ts.a, "pol", "secret/y", "secret-y")
	_, err = ts.a.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("pol")})
	wantCode(t, err, "NoSuchBucketPolicy")

	policy := `{"Version":"2012-10-17","Statement":[
		{"Sid":"BetaReads","Effect":"Allow","Principal":{"AWS":["arn:aws:iam::beta:root"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*"},
		{"Sid":"NoSecrets","Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/secret/*"}]}`
	_, err = ts.a.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("pol"), Policy: aws.String(policy)})
	mustOK(t, err)
	gp, err := ts.a.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("pol")})
	mustOK(t, err)
	if aws.ToString(gp.Policy) != policy {
		t.Fatalf("GetBucketPolicy: %q", aws.ToString(gp.Policy))
	}
	ps, err := ts.a.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("pol")})
	mustOK(t, err)
	if aws.ToBool(ps.PolicyStatus.IsPublic) {
		t.Fatal("policy status: public")
	}

	if got, err := getString(ctx, ts.b, "pol", "a/x"); err != nil || got != "a-x" {
		t.Fatalf("beta's GET under the policy: %q %v", got, err)
	}
	_, err = ts.b.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("pol"), Key: aws.String("secret/y")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("pol")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("pol"), Key: aws.String("a/z"), Body: strings.NewReader("z")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("pol")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.g.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("pol"), Key: aws.String("a/x")})
	wantCode(t, err, "AccessDenied")
	if status, _, _ := ts.anon(t, "GET", "/pol/a/x", nil); status != 403 {
		t.Fatalf("anonymous GET under a policy for beta: %d", status)
	}
	// The explicit Deny holds for the owner's users too; the owner can still remove the policy.
	_, err = ts.a.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("pol"), Key: aws.String("secret/y")})
	wantCode(t, err, "AccessDenied")
	if got, err := getString(ctx, ts.a, "pol", "a/x"); err != nil || got != "a-x" {
		t.Fatalf("alpha's GET: %q %v", got, err)
	}

	for _, bad := range []string{
		`not json`,
		`{"Statement":[{"Effect":"Maybe","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*","Condition":{"Bool":{"aws:NoSuchKey":"true"}}}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*","Condition":{"StringEqualsLoudly":{"s3:prefix":"a"}}}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pol/*","Padding":"` + strings.Repeat("x", 21000) + `"}]}`,
	} {
		_, err = ts.a.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("pol"), Policy: aws.String(bad)})
		wantCode(t, err, "MalformedPolicy")
	}
	if gp, err := ts.a.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("pol")}); err != nil || aws.ToString(gp.Policy) != policy {
		t.Fatalf("the policy after refused replacements: %v", err)
	}

	// A public policy on a prefix.
	public := `{"Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::pol/a/*"]}]}`
	_, err = ts.a.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("pol"), Policy: aws.String(public)})
	mustOK(t, err)
	if status, _, body := ts.anon(t, "GET", "/pol/a/x", nil); status != 200 || string(body) != "a-x" {
		t.Fatalf("anonymous GET under a public policy: %d %q", status, body)
	}
	if status, _, _ := ts.anon(t, "GET", "/pol/secret/y", nil); status != 403 {
		t.Fatalf("anonymous GET outside the public prefix: %d", status)
	}
	if ps, err := ts.a.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("pol")}); err != nil || !aws.ToBool(ps.PolicyStatus.IsPublic) {
		t.Fatalf("policy status of a public policy: %v", err)
	}
	_, err = ts.a.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("pol")})
	mustOK(t, err)
	_, err = ts.a.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("pol")})
	wantCode(t, err, "NoSuchBucketPolicy")
	if status, _, _ := ts.anon(t, "GET", "/pol/a/x", nil); status != 403 {
		t.Fatalf("anonymous GET after the policy's deletion: %d", status)
	}
	if got, err := getString(ctx, ts.a, "pol", "secret/y"); err != nil || got != "secret-y" {
		t.Fatalf("alpha's GET after the policy's deletion: %q %v", got, err)
	}
}

// TestTenantsQuota: a write over the account's quota is 413 QuotaExceeded, stores nothing, and
// leaves what is stored alone.
func TestTenantsQuota(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("quota")})
	mustOK(t, err)
	putOK(t, ts.a, "quota", "first", strings.Repeat("a", 600))
	bytesQ := int64(1000)
	if _, err := ts.admin.SetQuota(ctx, "alpha", &bytesQ, nil); err != nil {
		t.Fatal(err)
	}
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("quota"), Key: aws.String("second"), Body: strings.NewReader(strings.Repeat("b", 600))})
	wantCode(t, err, "QuotaExceeded")
	wantStatus(t, "PUT over quota", err, 413)
	_, err = ts.a.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("quota"), Key: aws.String("second")})
	wantStatus(t, "the refused object", err, 404)
	if got, err := getString(ctx, ts.a, "quota", "first"); err != nil || got != strings.Repeat("a", 600) {
		t.Fatalf("the stored object: %v", err)
	}
	// A copy and a multipart part count too; what fits still goes in.
	_, err = ts.a.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("quota"), Key: aws.String("copy"), CopySource: aws.String("quota/first")})
	wantCode(t, err, "QuotaExceeded")
	mu, err := ts.a.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("quota"), Key: aws.String("mp")})
	mustOK(t, err)
	_, err = ts.a.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("quota"), Key: aws.String("mp"), UploadId: mu.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader(strings.Repeat("c", 500))})
	wantCode(t, err, "QuotaExceeded")
	putOK(t, ts.a, "quota", "small", strings.Repeat("d", 300))
	// Other tenants writing into alpha's bucket are held to alpha's quota.
	_, err = ts.a.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("quota"), GrantWrite: aws.String(`id="beta"`)})
	mustOK(t, err)
	_, err = ts.b.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("quota"), Key: aws.String("betas"), Body: strings.NewReader(strings.Repeat("e", 200))})
	wantCode(t, err, "QuotaExceeded")
	putOK(t, ts.b, "quota", "tiny", strings.Repeat("f", 100))

	// An object quota.
	objectsQ, noBytes := int64(4), int64(0)
	if _, err := ts.admin.SetQuota(ctx, "alpha", &noBytes, &objectsQ); err != nil {
		t.Fatal(err)
	}
	// Stored now: first, small, tiny and the upload's marker (an object of the usage counters).
	_, err = ts.a.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("quota"), Key: aws.String("fifth"), Body: strings.NewReader("5")})
	wantCode(t, err, "QuotaExceeded")
	_, err = ts.a.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("quota"), Key: aws.String("mp"), UploadId: mu.UploadId})
	mustOK(t, err)
	putOK(t, ts.a, "quota", "fourth", "4")
	// Deleting and overwriting in place are never refused for the count.
	_, err = ts.a.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("quota"), Key: aws.String("fourth")})
	mustOK(t, err)
	u, err := ts.admin.Usage(ctx, "alpha")
	mustOK(t, err)
	if u.Objects != 3 || u.Bytes != 1000 {
		t.Fatalf("alpha's usage: %+v", u)
	}
	// Without a quota, nothing is refused.
	if _, err := ts.admin.SetQuota(ctx, "alpha", &noBytes, &noBytes); err != nil {
		t.Fatal(err)
	}
	putOK(t, ts.a, "quota", "big", strings.Repeat("g", 5000))
}

// swiftClient is a Swift v1 session.
type swiftClient struct{ token, url string }

func swiftLogin(t *testing.T, endpoint, user, key string) *swiftClient {
	t.Helper()
	req, _ := http.NewRequest("GET", endpoint+"/auth/v1.0", nil)
	req.Header.Set("X-Auth-User", user)
	req.Header.Set("X-Auth-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("Swift auth as %s: %s", user, resp.Status)
	}
	return &swiftClient{token: resp.Header.Get("X-Auth-Token"), url: resp.Header.Get("X-Storage-Url")}
}

func (s *swiftClient) do(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("X-Auth-Token", s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
