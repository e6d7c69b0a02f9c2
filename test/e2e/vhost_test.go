package e2e

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// With --domain, a request to BUCKET.DOMAIN addresses BUCKET, and path-style still works.
func TestVirtualHostedStyle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary")
	}
	srv := Start(t, Options{Args: []string{"--domain", "s3.cairn.test"}})
	ctx := context.Background()
	client := srv.S3Client()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("vhost")}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("vhost"), Key: aws.String("dir/k"), Body: bytes.NewReader([]byte("hello"))}); err != nil {
		t.Fatal(err)
	}
	// The same object through the bucket's host name (the request goes to the server's address
	// with that Host header; the signature covers it).
	req, err := http.NewRequest(http.MethodGet, srv.Endpoint+"/dir/k", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "vhost.s3.cairn.test:" + srv.Endpoint[strings.LastIndex(srv.Endpoint, ":")+1:]
	resp, err := srv.SignedRequest(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := ReadAllClose(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || string(body) != "hello" {
		t.Fatalf("virtual-hosted GET: %d %q %v", resp.StatusCode, body, err)
	}
}
