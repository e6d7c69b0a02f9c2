package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/testserver"
	"github.com/cairn-store/cairn/internal/workload"
)

// The workload monitor through the real server: S3 clients of two buckets, one like the seed's
// web hosting (small objects, mostly read) and one like its backups (large objects, written),
// are classed A and D by `cairn admin workload`, with their op counts and sizes; /metrics
// shows the classes without naming a bucket.
func TestAdminWorkload(t *testing.T) {
	for _, k := range []string{"CAIRN_ENDPOINT", "CAIRN_ACCESS_KEY", "CAIRN_SECRET_KEY"} {
		t.Setenv(k, "")
	}
	endpoint := testserver.Start(t, "wl-root", "wl-root-secret")
	ctx := context.Background()
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("wl-root", "wl-root-secret", "")})
	put := func(bucket, key string, size int) {
		t.Helper()
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(make([]byte, size))}); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []string{"website", "backups"} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		put("website", fmt.Sprintf("page%d.html", i), 8<<10)
	}
	for range 4 {
		for i := range 10 {
			o, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("website"), Key: aws.String(fmt.Sprintf("page%d.html", i))})
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, o.Body)
			o.Body.Close()
		}
	}
	for i := range 22 {
		put("backups", fmt.Sprintf("day%d.tar", i), 3<<20)
	}

	out, err := runCairn(t, "admin", "--endpoint", endpoint, "--access-key", "wl-root", "--secret-key", "wl-root-secret", "workload", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var w admin.Workload
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	byName := map[string]workload.Stats{}
	for _, b := range w.Buckets {
		byName[b.Bucket] = b
	}
	web, backups := byName["website"], byName["backups"]
	if web.Class != workload.SmallReads || web.Ops["read"] != 40 || web.Ops["write"] != 10 || web.MedianSize != 16<<10-1 {
		t.Errorf("website: %+v; want class A, 40 reads and 10 writes of 8 KiB", web)
	}
	if backups.Class != workload.LargeWrites || backups.Ops["write"] != 22 || backups.MedianSize != 4<<20-1 {
		t.Errorf("backups: %+v; want class D, 22 writes of 3 MiB", backups)
	}
	// The rate is over the window the figures cover: together they give the bytes received.
	if in := math.Round(backups.BytesInPerSecond * backups.Window.Seconds()); in != 22*3<<20 {
		t.Errorf("backups: %v bytes in over the window, want %d", in, 22*3<<20)
	}
	human, err := runCairn(t, "admin", "--endpoint", endpoint, "--access-key", "wl-root", "--secret-key", "wl-root-secret", "workload")
	if err != nil || !strings.Contains(human, "small objects, mostly read") || !strings.Contains(human, "backups") {
		t.Errorf("cairn admin workload printed (%v):\n%s", err, human)
	}

	resp, err := http.Get(endpoint + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`cairn_workload_buckets{class="A"} 1`, `cairn_workload_buckets{class="D"} 1`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(metrics), "website") || strings.Contains(string(metrics), "backups") {
		t.Error("/metrics names a tenant's bucket")
	}

	// The monitor's figures are root's: a tenant's key is refused.
	if _, err := runCairn(t, "admin", "--endpoint", endpoint, "--access-key", "nobody", "--secret-key", "wrong", "workload"); err == nil {
		t.Error("cairn admin workload with an unknown key succeeded")
	}
}
