package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/admin"
)

// TestACLMigration: buckets whose ACL an earlier Cairn stored (the legacy key, where a bucket
// READ read every object) keep that access through the upgrade, and `cairn admin acl migrate`
// gives them S3's meaning without changing who may read what. The legacy state is written
// straight through the proxy, as the earlier server wrote it; everything else goes over HTTP.
func TestACLMigration(t *testing.T) {
	const ak, sk = "MIGRATIONROOT", "migration-root-secret"
	s, err := Start(Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", RootAccessKey: ak, RootSecretKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the server's life: only a bound for a hang
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	ep := s.Endpoint()
	root, err := admin.NewClient(admin.ClientConfig{Endpoint: ep, AccessKey: ak, SecretKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	anonGet := func(path string) int {
		t.Helper()
		resp, err := http.Get(ep + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	// Three buckets of the root account, made through the proxy as the earlier server did: a
	// legacy public-read one with a policy of its own, a legacy public-read one under
	// RestrictPublicBuckets (which a public policy statement could not say: left as it is),
	// and a private one.
	pub, _ := access.CannedACL(access.CannedPublicRead, false)
	buckets := map[string]map[string]string{
		"old-public": {access.MetaLegacyACL: pub.Encode(), access.MetaPolicy: `{"Statement":[{"Sid":"Keep","Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::old-public/hidden/*"}]}`},
		"old-stuck":  {access.MetaLegacyACL: pub.Encode(), access.MetaPublicAccessBlock: "RestrictPublicBuckets"},
		"plain":      {},
	}
	for b, m := range buckets {
		if err := s.proxy.CreateContainer(ctx, "root", b, m); err != nil {
			t.Fatal(err)
		}
		if m[access.MetaLegacyACL] != "" { // shared: its name is claimed for other callers
			if err := s.proxy.ClaimName(ctx, b, "root"); err != nil {
				t.Fatal(err)
			}
		}
	}
	s3c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(ak, sk, ""), Retryer: aws.NopRetryer{}})
	for b := range buckets {
		for _, key := range []string{"doc", "hidden/x"} {
			if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(key), Body: strings.NewReader("bytes of " + key)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]int{"/old-public/doc": 200, "/old-public/hidden/x": 403, "/old-public": 200, "/old-stuck/doc": 200, "/old-stuck": 200, "/plain/doc": 403}
	check := func(when string) {
		t.Helper()
		for p, w := range want {
			if got := anonGet(p); got != w {
				t.Errorf("%s: anonymous GET %s = %d, want %d", when, p, got, w)
			}
		}
	}
	check("before the migration")

	dry, err := root.MigrateACLs(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if !dry.DryRun || dry.Buckets != 3 || len(dry.Legacy) != 2 || dry.Migrated != 1 || dry.Refused != 1 {
		t.Fatalf("dry run: %+v", dry)
	}
	if c, _ := s.proxy.HeadContainer(ctx, "root", "old-public"); c.Meta[access.MetaLegacyACL] == "" {
		t.Fatal("the dry run changed the bucket")
	}
	rep, err := root.MigrateACLs(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.DryRun || rep.Migrated != 1 || rep.Refused != 1 {
		t.Fatalf("migration: %+v", rep)
	}
	for _, b := range rep.Legacy {
		switch b.Bucket {
		case "old-public":
			if b.Refused != "" || len(b.Readers) != 1 || b.Readers[0] != "AllUsers" {
				t.Errorf("old-public: %+v", b)
			}
		case "old-stuck":
			if !strings.Contains(b.Refused, "RestrictPublicBuckets") {
				t.Errorf("old-stuck: %+v", b)
			}
		}
	}
	// The state cache of the S3 front end may hold the old state for a few seconds; the
	// answers are the same either way, which is the point.
	check("after the migration")
	c, err := s.proxy.HeadContainer(ctx, "root", "old-public")
	if err != nil || c.Meta[access.MetaLegacyACL] != "" || c.Meta[access.MetaACL] != pub.Encode() ||
		!strings.Contains(c.Meta[access.MetaPolicy], access.MigratedSidPrefix+"AllUsers") || !strings.Contains(c.Meta[access.MetaPolicy], `"Keep"`) {
		t.Fatalf("old-public after the migration: %v %v", c.Meta, err)
	}
	again, err := root.MigrateACLs(ctx, false)
	if err != nil || again.Migrated != 0 || again.Refused != 1 {
		t.Fatalf("second migration: %+v %v", again, err)
	}

	// From now on the bucket's ACL has S3's meaning: the owner drops the migrated statement,
	// and the public-read bucket lists without reading objects.
	if _, err := s3c.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("old-public")}); err != nil {
		t.Fatal(err)
	}
	want = map[string]int{"/old-public/doc": 403, "/old-public": 200}
	check("without the migrated statement")
}
