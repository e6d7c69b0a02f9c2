package s3_test

import (
	"regexp"
	"strings"
	"testing"

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
