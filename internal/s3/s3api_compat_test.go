package s3_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Behaviours OpenStack Swift's s3api functional tests check (test.functional.s3api).
func TestS3APICompat(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("compat")})
	mustOK(t, err)

	// test_blank_params: ListObjectVersions echoes an empty delimiter; without one, none.
	_, body := rawRequest(t, st, "GET", "/compat?versions&delimiter=&key-marker=&prefix=", nil, nil, true)
	if !strings.Contains(body, "<Delimiter></Delimiter>") || !strings.Contains(body, "<KeyMarker></KeyMarker>") {
		t.Fatalf("versions with empty delimiter: %s", body)
	}
	_, body = rawRequest(t, st, "GET", "/compat?versions", nil, nil, true)
	if strings.Contains(body, "<Delimiter>") {
		t.Fatalf("versions without delimiter: %s", body)
	}

	// test_head_bucket_error: a failed HEAD says Content-Length: 0.
	resp, _ := rawRequest(t, st, "HEAD", "/no-such-bucket-here", nil, nil, true)
	if resp.StatusCode != 404 || resp.Header.Get("Content-Length") != "0" {
		t.Fatalf("failed HEAD: %d Content-Length %q", resp.StatusCode, resp.Header.Get("Content-Length"))
	}
}

func TestListingTimesAreWholeSeconds(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("secs")})
	mustOK(t, err)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("secs"), Key: aws.String("k"), Body: strings.NewReader("x")})
	mustOK(t, err)
	_, body := rawRequest(t, st, "GET", "/secs", nil, nil, true)
	if !regexp.MustCompile(`<LastModified>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z</LastModified>`).MatchString(body) {
		t.Fatalf("LastModified not at whole seconds: %s", body)
	}
}

// test_get_object_if_unmodified_since: the listing's LastModified, as an HTTP date, is the
// object's Last-Modified, so If-Modified-Since with it is 304.
func TestListingTimeIsLastModified(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("lmod")})
	mustOK(t, err)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("lmod"), Key: aws.String("k"), Body: strings.NewReader("x")})
	mustOK(t, err)
	_, body := rawRequest(t, st, "GET", "/lmod", nil, nil, true)
	m := regexp.MustCompile(`<LastModified>([^<]+)</LastModified>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no LastModified: %s", body)
	}
	lt, err := time.Parse("2006-01-02T15:04:05.000Z", m[1])
	mustOK(t, err)
	resp, _ := rawRequest(t, st, "GET", "/lmod/k", nil, map[string]string{"If-Modified-Since": lt.Format(http.TimeFormat)}, true)
	if resp.StatusCode != 304 {
		t.Fatalf("If-Modified-Since listing time %s: %d (Last-Modified %s)", m[1], resp.StatusCode, resp.Header.Get("Last-Modified"))
	}
}
