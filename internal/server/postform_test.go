package server_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/s3/postpolicy"
	"github.com/cairn-store/cairn/internal/testserver"
)

// TestPostFormRouting: a browser form carries its credentials in its body, not in a header or
// the query, so the server sees an unsigned request; one to a bucket must still reach the S3
// front end (which authenticates the form), and one under /v1/ stays Swift's.
func TestPostFormRouting(t *testing.T) {
	endpoint := testserver.Start(t, testAccess, testSecret)
	ctx := ctxT(t)
	c := s3Client(endpoint)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("forms")}); err != nil {
		t.Fatal(err)
	}
	policy := base64.StdEncoding.EncodeToString([]byte(`{"expiration":"2099-01-01T00:00:00Z","conditions":[{"bucket":"forms"},{"key":"k"}]}`))
	send := func(path, secret string) (int, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("key", "k")
		mw.WriteField("AWSAccessKeyId", testAccess)
		mw.WriteField("policy", policy)
		mw.WriteField("signature", postpolicy.SignV2(secret, policy))
		fw, _ := mw.CreateFormFile("file", "k")
		fw.Write([]byte("via form"))
		mw.Close()
		resp, err := http.Post(endpoint+path, mw.FormDataContentType(), &buf)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if status, body := send("/forms", testSecret); status != http.StatusNoContent {
		t.Fatalf("form POST to a bucket: %d %s", status, body)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("forms"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(got) != "via form" {
		t.Fatalf("stored %q", got)
	}
	if status, body := send("/forms", "wrong"); status != http.StatusForbidden || !strings.Contains(body, "<Code>SignatureDoesNotMatch</Code>") {
		t.Fatalf("form POST with a wrong signature: %d %s", status, body)
	}
	if status, body := send("/v1/AUTH_root/forms", testSecret); strings.Contains(body, "<Code>") || status < 400 {
		t.Fatalf("form POST under /v1/ was not Swift's: %d %s", status, body)
	}
}
