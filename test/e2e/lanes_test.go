package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// slowPut starts a presigned PUT of size bytes and sends only its first sent bytes: the request
// is being served (its handler reading the body) until finish sends the rest and returns the
// status.
func slowPut(t *testing.T, presigned string, size, sent int) (finish func() int) {
	t.Helper()
	u, err := url.Parse(presigned)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	body := bytes.Repeat([]byte("b"), size)
	fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), u.Host, size)
	if _, err := c.Write(body[:sent]); err != nil {
		t.Fatal(err)
	}
	return func() int {
		if _, err := c.Write(body[sent:]); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(time.Minute)) // a safety net, not a threshold
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
}

// The request lanes through the real server: while a small upload is being served, one large
// upload at a time (--lane-share 1); another waits its --lane-wait and gets 503 SlowDown, and
// one sent once the small lane is quiet is served. Every upload told 200 reads back.
func TestRequestLanes(t *testing.T) {
	if ClusterTopology() != nil {
		// Lanes are a process's own: behind the cluster's balancer the held uploads and the
		// refused one would land on different nodes.
		t.Skip("lanes are per process; this test holds requests on one server")
	}
	srv := Start(t, Options{Args: []string{"--lane-share", "1", "--lane-wait", "2s"}})
	ctx := context.Background()
	c := NewS3Client(srv.Endpoint, srv.AccessKey, srv.SecretKey, NoRetries)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("mixed")}); err != nil {
		t.Fatal(err)
	}
	ps := s3.NewPresignClient(c)
	presign := func(key string, size int) string {
		t.Helper()
		req, err := ps.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("mixed"), Key: aws.String(key), ContentLength: aws.Int64(int64(size))})
		if err != nil {
			t.Fatal(err)
		}
		return req.URL
	}
	const large = 2 << 20
	finishSmall := slowPut(t, presign("page.html", 4<<10), 4<<10, 1<<10)
	finishLarge := slowPut(t, presign("backup1.tar", large), large, 64<<10)
	// Both are being served once the large lane is full: a third large upload is refused.
	eventually(t, "the two uploads served", func() bool {
		return Metric(t, srv.Endpoint, `cairn_lane_requests_total{lane="large"}`) == 1 && Metric(t, srv.Endpoint, `cairn_lane_requests_total{lane="small"}`) >= 1
	})
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("mixed"), Key: aws.String("backup2.tar"), Body: bytes.NewReader(bytes.Repeat([]byte("c"), large))})
	if err == nil || !strings.Contains(err.Error(), "SlowDown") {
		t.Fatalf("a second large upload beside a small one, over a share of 1, after its 2 s wait: %v, want 503 SlowDown", err)
	}
	if got := Metric(t, srv.Endpoint, "cairn_lane_large_rejected_total"); got != 1 {
		t.Errorf("cairn_lane_large_rejected_total %v, want 1", got)
	}
	// The small upload ends: the large lane is no longer bounded.
	if st := finishSmall(); st != http.StatusOK {
		t.Fatalf("the small upload: %d", st)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("mixed"), Key: aws.String("backup3.tar"), Body: bytes.NewReader(bytes.Repeat([]byte("d"), large))}); err != nil {
		t.Fatalf("a large upload with the small lane quiet: %v", err)
	}
	if st := finishLarge(); st != http.StatusOK {
		t.Fatalf("the first large upload: %d", st)
	}
	for key, size := range map[string]int{"page.html": 4 << 10, "backup1.tar": large, "backup3.tar": large} {
		o, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mixed"), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GET %s: %v", key, err)
		}
		n, _ := io.Copy(io.Discard, o.Body)
		o.Body.Close()
		if n != int64(size) {
			t.Errorf("%s: %d bytes, want %d", key, n, size)
		}
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("mixed"), Key: aws.String("backup2.tar")}); err == nil {
		t.Error("the refused upload left an object")
	}
}
