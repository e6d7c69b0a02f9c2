package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cairn-store/cairn/internal/admin"
)

// TestS3Lifecycle: bucket lifecycle rules applied by the lifecycle daemon, with a lifecycle
// day of one second: current objects expire by prefix and by tag, noncurrent versions and
// expired delete markers are removed in a versioned bucket, an old multipart upload is aborted,
// a version under Object Lock retention stays, and the daemon's metrics and status move.
func TestS3Lifecycle(t *testing.T) {
	srv := Start(t, Options{Args: []string{"--lifecycle-day", "1s", "--lifecycle-interval", "1s"}})
	ctx := Context(t)
	c := srv.S3Client()
	put := func(bucket, key string, opt func(*s3.PutObjectInput)) string {
		t.Helper()
		in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte("body of " + key))}
		if opt != nil {
			opt(in)
		}
		out, err := c.PutObject(ctx, in)
		if err != nil {
			t.Fatalf("PutObject %s/%s: %v", bucket, key, err)
		}
		return aws.ToString(out.VersionId)
	}
	putLifecycle := func(bucket string, rules ...types.LifecycleRule) {
		t.Helper()
		if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(bucket),
			LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: rules}}); err != nil {
			t.Fatalf("PutBucketLifecycleConfiguration %s: %v", bucket, err)
		}
	}
	prefix := func(p string) *types.LifecycleRuleFilter { return &types.LifecycleRuleFilter{Prefix: aws.String(p)} }
	days := func(n int32) *types.LifecycleExpiration { return &types.LifecycleExpiration{Days: aws.Int32(n)} }
	noncurrent := &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1)}

	// An unversioned bucket: expiry by prefix and by tag, an upload aborted.
	plain := newBucket(t, ctx, c, "lc-plain")
	for _, k := range []string{"logs/a", "logs/b", "data/keep"} {
		put(plain, k, nil)
	}
	put(plain, "data/tmp", func(in *s3.PutObjectInput) { in.Tagging = aws.String("class=tmp") })
	put(plain, "data/kept-tag", func(in *s3.PutObjectInput) { in.Tagging = aws.String("class=keep") })
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(plain), Key: aws.String("uploads/big")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(plain), Key: aws.String("uploads/big"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part one"))}); err != nil {
		t.Fatal(err)
	}

	// Refusals, as S3's.
	_, err = c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(plain),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{ID: aws.String("zero"), Status: types.ExpirationStatusEnabled, Filter: prefix(""), Expiration: days(0)}}}})
	if apiCode(err) != "InvalidArgument" {
		t.Fatalf("Days 0: %v, want InvalidArgument", err)
	}
	_, err = c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(plain),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{ID: aws.String("t"), Status: types.ExpirationStatusEnabled, Filter: prefix(""),
			Transitions: []types.Transition{{Days: aws.Int32(30), StorageClass: types.TransitionStorageClassGlacier}}}}}})
	if apiCode(err) != "NotImplemented" {
		t.Fatalf("Transition: %v, want NotImplemented", err)
	}
	if _, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(plain)}); apiCode(err) != "NoSuchLifecycleConfiguration" {
		t.Fatalf("GetBucketLifecycleConfiguration before any: %v", err)
	}

	// A versioned bucket: noncurrent versions go, and a delete marker once it is alone.
	versioned := newBucket(t, ctx, c, "lc-vers")
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(versioned),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	put(versioned, "v/k", nil)
	put(versioned, "v/k", nil)
	latest := put(versioned, "v/k", nil)
	keep1, keep2 := put(versioned, "keep/k", nil), put(versioned, "keep/k", nil)
	put(versioned, "m/gone", nil)
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(versioned), Key: aws.String("m/gone")}); err != nil {
		t.Fatal(err)
	}

	// A suspended bucket whose current version was written while versioning was on: the
	// object expires, its version stays as a noncurrent one.
	suspended := newBucket(t, ctx, c, "lc-susp")
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(suspended),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	suspendedID := put(suspended, "s/k", nil)
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(suspended),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}}); err != nil {
		t.Fatal(err)
	}

	// A bucket with Object Lock: a version under retention stays.
	locked := "lc-lock-" + RandomKey(6)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(locked), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	heldID := put(locked, "l/k", func(in *s3.PutObjectInput) {
		in.ObjectLockMode = types.ObjectLockModeGovernance
		in.ObjectLockRetainUntilDate = aws.Time(time.Now().Add(time.Hour))
	})
	freeID := put(locked, "l/k", nil)

	putLifecycle(plain,
		types.LifecycleRule{ID: aws.String("logs"), Status: types.ExpirationStatusEnabled, Filter: prefix("logs/"), Expiration: days(1)},
		types.LifecycleRule{ID: aws.String("tmp"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("class"), Value: aws.String("tmp")}}, Expiration: days(1)},
		types.LifecycleRule{ID: aws.String("uploads"), Status: types.ExpirationStatusEnabled, Filter: prefix("uploads/"),
			AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)}},
		types.LifecycleRule{ID: aws.String("off"), Status: types.ExpirationStatusDisabled, Filter: prefix("data/"), Expiration: days(1)},
	)
	putLifecycle(versioned,
		types.LifecycleRule{ID: aws.String("noncurrent"), Status: types.ExpirationStatusEnabled, Filter: prefix("v/"), NoncurrentVersionExpiration: noncurrent},
		types.LifecycleRule{ID: aws.String("markers"), Status: types.ExpirationStatusEnabled, Filter: prefix("m/"),
			Expiration: &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)}, NoncurrentVersionExpiration: noncurrent},
	)
	putLifecycle(suspended,
		types.LifecycleRule{ID: aws.String("all"), Status: types.ExpirationStatusEnabled, Filter: prefix(""), Expiration: days(1)},
	)
	putLifecycle(locked,
		types.LifecycleRule{ID: aws.String("all"), Status: types.ExpirationStatusEnabled, Filter: prefix(""), Expiration: days(1), NoncurrentVersionExpiration: noncurrent},
	)

	got, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(plain)})
	if err != nil || len(got.Rules) != 4 || aws.ToString(got.Rules[1].ID) != "tmp" || got.Rules[1].Filter == nil || got.Rules[1].Filter.Tag == nil ||
		aws.ToString(got.Rules[1].Filter.Tag.Value) != "tmp" || got.Rules[3].Status != types.ExpirationStatusDisabled ||
		aws.ToInt32(got.Rules[2].AbortIncompleteMultipartUpload.DaysAfterInitiation) != 1 {
		t.Fatalf("GetBucketLifecycleConfiguration: %v %+v", err, got)
	}

	keys := func(bucket string) []string {
		l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range l.Contents {
			out = append(out, aws.ToString(o.Key))
		}
		return out
	}
	versionsOf := func(bucket, key string) (ids []string) {
		l, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range l.Versions {
			ids = append(ids, aws.ToString(v.VersionId))
		}
		for range l.DeleteMarkers {
			ids = append(ids, "marker")
		}
		return ids
	}
	uploads := func() int {
		l, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(plain)})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Uploads)
	}
	want := map[string]func() bool{
		"expired by prefix and by tag": func() bool { return slices.Equal(keys(plain), []string{"data/keep", "data/kept-tag"}) },
		"upload aborted":               func() bool { return uploads() == 0 },
		"suspended bucket's current version expired": func() bool {
			return len(keys(suspended)) == 0 && slices.Equal(versionsOf(suspended, "s/k"), []string{suspendedID})
		},
		"noncurrent versions removed": func() bool { return slices.Equal(versionsOf(versioned, "v/k"), []string{latest}) },
		"expired delete marker removed": func() bool {
			return len(versionsOf(versioned, "m/")) == 0
		},
		// The current version expired behind a delete marker, the free noncurrent one went, the
		// one under retention stayed.
		"locked version kept": func() bool {
			v := versionsOf(locked, "l/k")
			return slices.Equal(v, []string{heldID, "marker"})
		},
	}
	// The daemon passes every second; the bound only ends a wait for what will never happen.
	deadline := time.Now().Add(patience)
	for len(want) > 0 && time.Now().Before(deadline) {
		for name, ok := range want {
			if ok() {
				delete(want, name)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	for name := range want {
		t.Errorf("not done within %v: %s", patience, name)
	}
	if t.Failed() {
		t.Logf("plain: %q; v/k: %q; m/: %q; l/k: %q (held %s, free %s)", keys(plain), versionsOf(versioned, "v/k"), versionsOf(versioned, "m/"), versionsOf(locked, "l/k"), heldID, freeID)
		t.FailNow()
	}
	// What no rule covers stays, and so does what a disabled rule covers.
	if v := versionsOf(versioned, "keep/k"); !slices.Equal(v, []string{keep2, keep1}) {
		t.Errorf("keep/k versions %q, want both", v)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(locked), Key: aws.String("l/k"), VersionId: aws.String(heldID)}); err != nil {
		t.Errorf("the locked version: %v", err)
	}

	for _, m := range []string{"cairn_lifecycle_objects_expired_total", "cairn_lifecycle_versions_removed_total", "cairn_lifecycle_delete_markers_removed_total",
		"cairn_lifecycle_uploads_aborted_total", "cairn_lifecycle_locked_skipped_total", "cairn_lifecycle_objects_examined_total", "cairn_lifecycle_passes_total"} {
		if v := daemonMetric(t, srv, m); v < 1 {
			t.Errorf("%s = %v, want it moved", m, v)
		}
	}
	if v := daemonMetric(t, srv, "cairn_lifecycle_objects_expired_total"); v < 4 {
		t.Errorf("objects expired: %v, want at least 4 (logs/a, logs/b, data/tmp, l/k)", v)
	}
	if ClusterTopology() == nil {
		cl, err := admin.NewClient(admin.ClientConfig{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
		if err != nil {
			t.Fatal(err)
		}
		st, err := cl.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Nodes) != 1 || st.Nodes[0].Daemons["lifecycle"].Passes < 1 {
			t.Errorf("admin status: lifecycle daemon %+v", st.Nodes)
		}
	}

	// Deleting the configuration stops the rules.
	if _, err := c.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String(plain)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(plain)}); apiCode(err) != "NoSuchLifecycleConfiguration" {
		t.Fatalf("GetBucketLifecycleConfiguration after delete: %v", err)
	}
	// The deleted "logs" rule would make logs/late due within two lifecycle days (one day,
	// rounded up to a day boundary). Once they have passed, two more completed passes mean that
	// a whole pass began after it was due: had the rule still applied, logs/late would be gone.
	put(plain, "logs/late", nil)
	time.Sleep(2 * time.Second)
	passes := daemonMetric(t, srv, "cairn_lifecycle_passes_total")
	eventually(t, "two more lifecycle passes", func() bool {
		return daemonMetric(t, srv, "cairn_lifecycle_passes_total") >= passes+2
	})
	if !slices.Contains(keys(plain), "logs/late") {
		t.Errorf("logs/late expired after the configuration was deleted")
	}
}

// daemonMetric reads a metric of the cluster's lifecycle daemon, which runs on one node (the
// lease holder): behind a balancer (--sumo) a scrape reaches one node, so the largest value of
// several scrapes, each on a new connection, is the daemon's.
func daemonMetric(t *testing.T, srv *Server, series string) float64 {
	t.Helper()
	if ClusterTopology() == nil {
		return metricValue(t, srv, series)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	best := 0.0
	for range 8 {
		resp, err := client.Get(srv.Endpoint + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
				if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil && v > best {
					best = v
				}
			}
		}
		resp.Body.Close()
	}
	return best
}
