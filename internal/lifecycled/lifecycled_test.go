package lifecycled_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cairn-store/cairn/internal/lifecycled"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/ring"
	cairns3 "github.com/cairn-store/cairn/internal/s3"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/storage"
	"github.com/cairn-store/cairn/internal/versions"
)

// The lifecycle daemon with its own clock (whole days, no sleeping): nothing happens before
// rules are due; then noncurrent versions go but the NewerNoncurrentVersions newest, a current
// version in scope (size filter) is hidden behind a delete marker; the index of configured
// buckets follows Put, Delete and deleted buckets; the configuration's PUT needs an integrity
// header.
func TestLifecycleDaemon(t *testing.T) {
	ctx := ctxT(t)
	node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: t.TempDir()}}})
	mustOK(t, err)
	t.Cleanup(func() { node.Close() })
	px, err := proxy.New(proxy.Config{Ring: ring.SingleDevice("local", "d0", 6, ""), Dialer: nodeclient.Local{Client: node}})
	mustOK(t, err)
	h, err := cairns3.New(cairns3.Config{Proxy: px,
		Credentials: sigv4.StaticStore{testAccessKey: {AccessKey: testAccessKey, SecretKey: testSecretKey, Account: "acct", Admin: true}}})
	mustOK(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := newClient(srv.URL, testSecretKey)

	clock := time.Now()
	lc, err := lifecycled.New(lifecycled.Config{Proxy: px, Versions: versions.New(px), Uploads: h, Now: func() time.Time { return clock }, ObjectsPerSecond: 1_000_000})
	mustOK(t, err)

	const bucket = "lcb"
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	mustOK(t, err)
	_, err = c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
	mustOK(t, err)
	putBody := func(key, body string) string {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)})
		mustOK(t, err)
		return aws.ToString(out.VersionId)
	}
	var nk []string
	for i := range 4 {
		nk = append(nk, putBody("n/k", strings.Repeat("n", i+1)))
	}
	putBody("e/big", "0123456789")
	putBody("e/small", "01")

	// Without Content-MD5 or a checksum: refused, as S3 does.
	doc := `<LifecycleConfiguration><Rule><ID>x</ID><Status>Enabled</Status><Filter/><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`
	req, err := http.NewRequest(http.MethodPut, srv.URL+"/"+bucket+"?lifecycle", bytes.NewReader([]byte(doc)))
	mustOK(t, err)
	mustOK(t, sigv4.SignRequest(req, sigv4.Credential{AccessKey: testAccessKey, SecretKey: testSecretKey}, "us-east-1", time.Now()))
	resp, err := http.DefaultClient.Do(req)
	mustOK(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "<Code>InvalidRequest</Code>") {
		t.Fatalf("PUT ?lifecycle without an integrity header: %s %s", resp.Status, body)
	}

	_, err = c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(bucket),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{
			{ID: aws.String("nc"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("n/")},
				NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1), NewerNoncurrentVersions: aws.Int32(1)}},
			{ID: aws.String("big"), Status: types.ExpirationStatusEnabled,
				Filter:     &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{Prefix: aws.String("e/"), ObjectSizeGreaterThan: aws.Int64(5)}},
				Expiration: &types.LifecycleExpiration{Days: aws.Int32(2)}},
		}}})
	mustOK(t, err)
	// A bucket configured and then deleted: its index entry goes on the next pass.
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("gone")})
	mustOK(t, err)
	_, err = c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("gone"),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{
			{ID: aws.String("a"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")},
				AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)}}}}})
	mustOK(t, err)
	if got := indexEntries(t, ctx, px); !slices.Equal(got, []string{"acct\x00gone", "acct\x00lcb"}) {
		t.Fatalf("index %q", got)
	}
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("gone")})
	mustOK(t, err)

	versionsOf := func(key string) (ids []string, markers int) {
		l, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)})
		mustOK(t, err)
		for _, v := range l.Versions {
			ids = append(ids, aws.ToString(v.VersionId))
		}
		return ids, len(l.DeleteMarkers)
	}

	st := lc.Pass(ctx)
	if st.Expired+st.VersionsRemoved+st.MarkersRemoved+st.Errors != 0 || st.Examined != 6 || st.Buckets != 1 {
		t.Fatalf("pass before anything is due: %+v", st)
	}
	if got := indexEntries(t, ctx, px); !slices.Equal(got, []string{"acct\x00lcb"}) {
		t.Fatalf("index after the bucket was deleted: %q", got)
	}

	clock = clock.Add(4 * 24 * time.Hour)
	st = lc.Pass(ctx)
	if st.Expired != 1 || st.VersionsRemoved != 2 || st.Errors != 0 {
		t.Fatalf("pass once due: %+v", st)
	}
	if ids, _ := versionsOf("n/k"); !slices.Equal(ids, []string{nk[3], nk[2]}) {
		t.Errorf("n/k versions %q, want the current one and the newest noncurrent one (%q)", ids, nk)
	}
	if ids, markers := versionsOf("e/big"); len(ids) != 1 || markers != 1 {
		t.Errorf("e/big: versions %q, %d markers: want its version behind a delete marker", ids, markers)
	}
	if ids, markers := versionsOf("e/small"); len(ids) != 1 || markers != 0 {
		t.Errorf("e/small (below the size filter): versions %q, %d markers", ids, markers)
	}
	if ds := lc.DaemonStatus(); ds.Passes != 2 || ds.Counters["versions_removed"] != 2 || ds.Counters["expired"] != 1 || ds.Running {
		t.Errorf("DaemonStatus %+v", ds)
	}

	_, err = c.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String(bucket)})
	mustOK(t, err)
	if got := indexEntries(t, ctx, px); len(got) != 0 {
		t.Fatalf("index after DeleteBucketLifecycle: %q", got)
	}
	_, err = c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	wantCode(t, err, "NoSuchLifecycleConfiguration")
}

func indexEntries(t *testing.T, ctx context.Context, px *proxy.Proxy) []string {
	t.Helper()
	l, err := px.ListObjects(ctx, lifecycled.IndexAccount, lifecycled.IndexContainer, meta.ListOptions{})
	mustOK(t, err)
	var out []string
	for _, e := range l.Objects {
		out = append(out, e.Name)
	}
	return out
}

const (
	testAccessKey = "AKIDCAIRNTEST"
	testSecretKey = "lifecycle-daemon-test-secret"
)

func newClient(endpoint, secret string) *s3.Client {
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(testAccessKey, secret, ""), Retryer: aws.NopRetryer{}})
}

// ctxT is a test's context. Its bound only catches a hang: a loaded machine may take many times
// as long as an idle one for a whole test.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != code {
		t.Fatalf("want %s, got %v", code, err)
	}
}
