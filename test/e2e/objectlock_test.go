package e2e

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// putLocked writes an object with the lock options given, returning its version ID.
func putLocked(t *testing.T, ctx context.Context, c *s3.Client, bucket, key string, opt func(*s3.PutObjectInput)) string {
	t.Helper()
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte("locked " + key))}
	if opt != nil {
		opt(in)
	}
	out, err := c.PutObject(ctx, in)
	if err != nil {
		t.Fatalf("PutObject %s: %v", key, err)
	}
	return aws.ToString(out.VersionId)
}

func deleteVersion(ctx context.Context, c *s3.Client, bucket, key, id string, bypass bool) error {
	in := &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), VersionId: aws.String(id)}
	if bypass {
		in.BypassGovernanceRetention = aws.Bool(true)
	}
	_, err := c.DeleteObject(ctx, in)
	return err
}

// TestS3ObjectLock: buckets created with Object Lock, GOVERNANCE and COMPLIANCE retention,
// legal holds, default retention and bypassing GOVERNANCE, with the root key; the locks hold
// across a restart of the server.
func TestS3ObjectLock(t *testing.T) {
	dir := t.TempDir()
	srv := StartServer(t, dir)
	ctx := Context(t)
	c := srv.S3Client()

	bucket := "lock-" + RandomKey(6)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatalf("CreateBucket with Object Lock: %v", err)
	}
	if v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)}); err != nil || v.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("versioning of a bucket with Object Lock: %v %q", err, v.Status)
	}
	if cfg, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(bucket)}); err != nil ||
		cfg.ObjectLockConfiguration.ObjectLockEnabled != types.ObjectLockEnabledEnabled || cfg.ObjectLockConfiguration.Rule != nil {
		t.Fatalf("GetObjectLockConfiguration: %v %+v", err, cfg)
	}
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}}); apiCode(err) != "InvalidBucketState" {
		t.Fatalf("suspending versioning of a bucket with Object Lock: %v", err)
	}

	hour := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	compliance := putLocked(t, ctx, c, bucket, "compliance", func(in *s3.PutObjectInput) {
		in.ObjectLockMode, in.ObjectLockRetainUntilDate = types.ObjectLockModeCompliance, aws.Time(hour)
	})
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("compliance")})
	if err != nil || h.ObjectLockMode != types.ObjectLockModeCompliance || !aws.ToTime(h.ObjectLockRetainUntilDate).Equal(hour) {
		t.Fatalf("HEAD of a locked object: %v %q %v", err, h.ObjectLockMode, aws.ToTime(h.ObjectLockRetainUntilDate))
	}
	if r, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String(bucket), Key: aws.String("compliance")}); err != nil ||
		r.Retention.Mode != types.ObjectLockRetentionModeCompliance || !aws.ToTime(r.Retention.RetainUntilDate).Equal(hour) {
		t.Fatalf("GetObjectRetention: %v %+v", err, r)
	}
	// Nobody removes a COMPLIANCE version, bypass or not; a delete only adds a marker.
	for _, bypass := range []bool{false, true} {
		if err := deleteVersion(ctx, c, bucket, "compliance", compliance, bypass); apiCode(err) != "AccessDenied" {
			t.Fatalf("removing a COMPLIANCE version (bypass %v): %v", bypass, err)
		}
	}
	if del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("compliance")}); err != nil || !aws.ToBool(del.DeleteMarker) {
		t.Fatalf("DELETE of a locked object's key: %v %+v", err, del)
	}
	mustGetVersion(t, ctx, c, bucket, "compliance", compliance, []byte("locked compliance"))
	// A COMPLIANCE retention may be extended, not shortened nor weakened.
	retention := func(key, id string, mode types.ObjectLockRetentionMode, until time.Time, bypass bool) error {
		in := &s3.PutObjectRetentionInput{Bucket: aws.String(bucket), Key: aws.String(key), VersionId: aws.String(id),
			Retention: &types.ObjectLockRetention{Mode: mode, RetainUntilDate: aws.Time(until)}}
		if bypass {
			in.BypassGovernanceRetention = aws.Bool(true)
		}
		_, err := c.PutObjectRetention(ctx, in)
		return err
	}
	if err := retention("compliance", compliance, types.ObjectLockRetentionModeCompliance, hour.Add(-time.Minute), true); apiCode(err) != "AccessDenied" {
		t.Fatalf("shortening a COMPLIANCE retention: %v", err)
	}
	if err := retention("compliance", compliance, types.ObjectLockRetentionModeGovernance, hour.Add(time.Hour), true); apiCode(err) != "AccessDenied" {
		t.Fatalf("making a COMPLIANCE retention GOVERNANCE: %v", err)
	}
	if err := retention("compliance", compliance, types.ObjectLockRetentionModeCompliance, hour.Add(time.Hour), false); err != nil {
		t.Fatalf("extending a COMPLIANCE retention: %v", err)
	}
	// The document's mode is one of its two values, spelled so, with a date: anything else is
	// MalformedXML (the headers' forms are InvalidArgument, below).
	for _, mode := range []types.ObjectLockRetentionMode{"governance", "abc"} {
		if err := retention("compliance", compliance, mode, hour.Add(2*time.Hour), false); apiCode(err) != "MalformedXML" {
			t.Fatalf("a retention of mode %q: %v", mode, err)
		}
	}
	if _, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String(bucket), Key: aws.String("compliance"), VersionId: aws.String(compliance),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance}}); apiCode(err) != "MalformedXML" {
		t.Fatalf("a retention without a date: %v", err)
	}

	// GOVERNANCE gives way to a caller who bypasses it, and only then.
	governance := putLocked(t, ctx, c, bucket, "governance", func(in *s3.PutObjectInput) {
		in.ObjectLockMode, in.ObjectLockRetainUntilDate = types.ObjectLockModeGovernance, aws.Time(hour)
	})
	if err := deleteVersion(ctx, c, bucket, "governance", governance, false); apiCode(err) != "AccessDenied" {
		t.Fatalf("removing a GOVERNANCE version without bypass: %v", err)
	}
	if err := retention("governance", governance, types.ObjectLockRetentionModeGovernance, hour.Add(-time.Minute), false); apiCode(err) != "AccessDenied" {
		t.Fatalf("shortening a GOVERNANCE retention without bypass: %v", err)
	}
	if err := retention("governance", governance, types.ObjectLockRetentionModeGovernance, hour.Add(-time.Minute), true); err != nil {
		t.Fatalf("shortening a GOVERNANCE retention with bypass: %v", err)
	}

	// A legal hold holds whatever the retention, until it is lifted.
	held := putLocked(t, ctx, c, bucket, "held", func(in *s3.PutObjectInput) { in.ObjectLockLegalHoldStatus = types.ObjectLockLegalHoldStatusOn })
	if lh, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: aws.String(bucket), Key: aws.String("held")}); err != nil || lh.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
		t.Fatalf("GetObjectLegalHold: %v %+v", err, lh)
	}
	if err := deleteVersion(ctx, c, bucket, "held", held, true); apiCode(err) != "AccessDenied" {
		t.Fatalf("removing a held version: %v", err)
	}

	// Bad input.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("past"), Body: bytes.NewReader(nil),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: aws.Time(time.Now().Add(-time.Hour))}); apiCode(err) != "InvalidArgument" {
		t.Fatalf("a retention in the past: %v", err)
	}
	plain := newBucket(t, ctx, c, "nolock")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(plain), Key: aws.String("x"), Body: bytes.NewReader(nil),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: aws.Time(hour)}); apiCode(err) != "InvalidRequest" {
		t.Fatalf("a retention in a bucket without Object Lock: %v", err)
	}
	if _, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String(plain)}); apiCode(err) != "ObjectLockConfigurationNotFoundError" {
		t.Fatalf("GetObjectLockConfiguration without one: %v", err)
	}
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String(plain),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}}); apiCode(err) != "InvalidBucketState" {
		t.Fatalf("Object Lock on an unversioned bucket: %v", err)
	}

	// A default retention applies to new versions.
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String(bucket),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}}}}); err != nil {
		t.Fatalf("PutObjectLockConfiguration: %v", err)
	}
	defaulted := putLocked(t, ctx, c, bucket, "defaulted", nil)
	r, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String(bucket), Key: aws.String("defaulted"), VersionId: aws.String(defaulted)})
	if err != nil || r.Retention.Mode != types.ObjectLockRetentionModeGovernance || aws.ToTime(r.Retention.RetainUntilDate).Before(time.Now().Add(23*time.Hour)) {
		t.Fatalf("default retention: %v %+v", err, r)
	}

	// The locks hold across a restart: the version store reads them back from disk.
	if err := srv.Stop(StopTimeout); err != nil {
		t.Fatal(err)
	}
	srv = Start(t, Options{DataDir: dir, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
	c = srv.S3Client()
	for _, v := range []struct{ key, id string }{{"compliance", compliance}, {"held", held}, {"defaulted", defaulted}} {
		if err := deleteVersion(ctx, c, bucket, v.key, v.id, false); apiCode(err) != "AccessDenied" {
			t.Fatalf("after a restart, removing %s: %v", v.key, err)
		}
	}
	mustGetVersion(t, ctx, c, bucket, "compliance", compliance, []byte("locked compliance"))
	// Lifting the hold lets the version go; a bucket keeping locked versions stays.
	if _, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: aws.String(bucket), Key: aws.String("held"), VersionId: aws.String(held),
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}}); err != nil {
		t.Fatalf("lifting the legal hold: %v", err)
	}
	if err := deleteVersion(ctx, c, bucket, "held", held, false); err != nil {
		t.Fatalf("removing a version once its hold is lifted: %v", err)
	}
	if err := deleteVersion(ctx, c, bucket, "defaulted", defaulted, true); err != nil {
		t.Fatalf("removing a default GOVERNANCE version with bypass: %v", err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); apiCode(err) != "BucketNotEmpty" {
		t.Fatalf("DeleteBucket with locked versions: %v", err)
	}
}

// TestObjectLockThroughSwift: a locked version is as locked through Swift's object versioning
// API, and versioning of a bucket with Object Lock cannot be turned off there either.
func TestObjectLockThroughSwift(t *testing.T) {
	SkipShort(t)
	s := Start(t, Options{DataDir: t.TempDir()})
	root := newCLI(t, s)
	root.ok("admin", "account", "create", "acme")
	alice := root.createUser("acme:alice", "--admin")
	a := swiftLogin(t, s.Endpoint, "acme:alice", alice.SwiftKey)
	ctx := Context(t)
	c := NewS3Client(s.Endpoint, alice.AccessKey, alice.SecretKey, NoRetries)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("vault"), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	id := putLocked(t, ctx, c, "vault", "deed", func(in *s3.PutObjectInput) {
		in.ObjectLockMode, in.ObjectLockRetainUntilDate = types.ObjectLockModeCompliance, aws.Time(time.Now().Add(time.Hour))
	})
	h, _ := a.must("HEAD", "/vault", nil, nil, 204)
	if h.Get("X-Versions-Enabled") != "True" {
		t.Fatalf("X-Versions-Enabled %q", h.Get("X-Versions-Enabled"))
	}
	a.must("DELETE", "/vault/deed?version-id="+id, nil, nil, 403)
	a.must("DELETE", "/vault/deed?version-id="+id+"&multipart-manifest=delete", nil, nil, 403)
	a.must("POST", "/vault", map[string]string{"X-Versions-Enabled": "false"}, nil, 409)
	mustGetVersion(t, ctx, c, "vault", "deed", id, []byte("locked deed"))
	// A plain DELETE writes a delete marker, as through S3.
	a.must("DELETE", "/vault/deed", nil, nil, 204)
	mustGetVersion(t, ctx, c, "vault", "deed", id, []byte("locked deed"))

	// A null version from before versioning, locked once Object Lock came: removing it in
	// place through Swift meets the lock too.
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("later")}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, ctx, c, "later", "old", []byte("from before"))
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("later"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("later"),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("later"), Key: aws.String("old"),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: aws.Time(time.Now().Add(time.Hour))}}); err != nil {
		t.Fatalf("retention of the null version: %v", err)
	}
	a.must("DELETE", "/later/old?version-id=null", nil, nil, 403)
	a.must("DELETE", "/later/old?multipart-manifest=delete", nil, nil, 403)
	mustGetVersion(t, ctx, c, "later", "old", "null", []byte("from before"))
}
