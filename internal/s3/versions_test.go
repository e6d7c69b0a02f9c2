package s3_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestVersioningOfAnUnversionedStore: in a bucket never versioned every object is its one
// "null" version, and suspending versioning changes nothing.
func TestVersioningOfAnUnversionedStore(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("vers")})
	mustOK(t, err)
	for _, k := range []string{"a", "b/1", "b/2", "c"} {
		put(t, c, "vers", k, []byte(k))
	}
	var keys []string
	var keyMarker, versionMarker *string
	for pages := 0; ; pages++ {
		out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("vers"), MaxKeys: aws.Int32(2),
			KeyMarker: keyMarker, VersionIdMarker: versionMarker})
		mustOK(t, err)
		for _, v := range out.Versions {
			if aws.ToString(v.VersionId) != "null" || !aws.ToBool(v.IsLatest) || aws.ToInt64(v.Size) != int64(len(aws.ToString(v.Key))) {
				t.Errorf("version %+v", v)
			}
			keys = append(keys, aws.ToString(v.Key))
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		keyMarker, versionMarker = out.NextKeyMarker, out.NextVersionIdMarker
		if pages > 5 {
			t.Fatal("paging does not end")
		}
	}
	if len(keys) != 4 || keys[0] != "a" || keys[3] != "c" {
		t.Errorf("versions listed: %v", keys)
	}
	out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("vers"), Delimiter: aws.String("/")})
	mustOK(t, err)
	if len(out.Versions) != 2 || len(out.CommonPrefixes) != 1 || aws.ToString(out.CommonPrefixes[0].Prefix) != "b/" {
		t.Errorf("with a delimiter: %+v", out)
	}
	_, err = c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("vers"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}})
	mustOK(t, err)
	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("vers")})
	mustOK(t, err)
	if v.Status != types.BucketVersioningStatusSuspended {
		t.Errorf("versioning status %q", v.Status)
	}
}

// TestS3ConformanceDetails pins answers Swift's s3api functional tests check.
func TestS3ConformanceDetails(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("details")})
	mustOK(t, err)
	// A name no bucket can have is InvalidBucketName, not NoSuchBucket (raw request: the SDK
	// refuses such names itself).
	if resp, body := rawRequest(t, st, "GET", "/bad+name", nil, nil, true); resp.StatusCode != 400 || !strings.Contains(body, "InvalidBucketName") {
		t.Errorf("GET /bad+name: %d %s", resp.StatusCode, body)
	}
	// An unknown method is MethodNotAllowed whatever its signature.
	if resp, body := rawRequest(t, st, "GETPUT", "/details", nil, nil, true); resp.StatusCode != 405 {
		t.Errorf("GETPUT: %d %s", resp.StatusCode, body)
	}
	// X-Robots-Tag round-trips with the object, as a content header.
	if resp, body := rawRequest(t, st, "PUT", "/details/robots", []byte("x"), map[string]string{"X-Robots-Tag": "noindex"}, true); resp.StatusCode != 200 {
		t.Fatalf("PUT with X-Robots-Tag: %d %s", resp.StatusCode, body)
	}
	if resp, _ := rawRequest(t, st, "HEAD", "/details/robots", nil, nil, true); resp.Header.Get("X-Robots-Tag") != "noindex" {
		t.Errorf("X-Robots-Tag not kept: %v", resp.Header)
	}
	// A failed HEAD says what it is.
	if resp, _ := rawRequest(t, st, "HEAD", "/details/none", nil, nil, true); resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/xml" {
		t.Errorf("HEAD of a missing key: %d %v", resp.StatusCode, resp.Header)
	}
	// start-after is echoed even when empty; an empty continuation token is no token.
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("details"), StartAfter: aws.String(""), ContinuationToken: aws.String("")})
	mustOK(t, err)
	if out.StartAfter == nil {
		t.Error("StartAfter not echoed")
	}
}
