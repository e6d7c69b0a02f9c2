package server_test

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/cairn-store/cairn/internal/server"
	"github.com/cairn-store/cairn/internal/testserver"
)

// metricValue returns the value of an unlabelled metric at endpoint's /metrics.
func metricValue(t *testing.T, endpoint, name string) float64 {
	t.Helper()
	resp, err := http.Get(endpoint + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// waitMetric waits until the metric has value want; the bound is a safety net.
func waitMetric(t *testing.T, endpoint, name string, want float64) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); metricValue(t, endpoint, name) != want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s is %v, want %v", name, metricValue(t, endpoint, name), want)
		}
	}
}

// TestOverloadAnswers fills the one slot of a server with a stalled Swift upload and checks
// what the requests over the limit get: S3's 503 SlowDown (an XML error, no body for HEAD),
// Swift's 503, while /healthz and /metrics are still served; once the upload ends, requests
// are served again.
func TestOverloadAnswers(t *testing.T) {
	endpoint := testserver.StartConfig(t, server.Config{RootAccessKey: testAccess, RootSecretKey: testSecret,
		// The stalled upload below must hold its slot for as long as the test takes.
		MaxConcurrentRequests: 1, AdmissionWait: 50 * time.Millisecond, BodyIdleTimeout: time.Hour})
	ctx := ctxT(t)
	cl := s3Client(endpoint)
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	sw := swiftLogin(t, endpoint)

	// Hold the slot: a PUT that declares 1 MiB and sends 10 bytes.
	u, _ := url.Parse(sw.url + "/bkt/stalled")
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: %s\r\nX-Auth-Token: %s\r\nContent-Length: %d\r\n\r\n0123456789", u.RequestURI(), u.Host, sw.token, 1<<20)
	waitMetric(t, endpoint, "cairn_http_requests_in_flight", 1)

	// S3, signed (through the SDK) and anonymous (to see the document).
	_, err = cl.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("bkt")})
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusServiceUnavailable {
		t.Errorf("HeadBucket over the limit: %v, want 503", err)
	}
	_, err = cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "SlowDown" || ae.ErrorMessage() != "Please reduce your request rate." {
		t.Errorf("GetObject over the limit: %v, want SlowDown", err)
	}
	resp, err := http.Get(endpoint + "/bkt/k")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var doc struct {
		Code, Message, RequestId string
	}
	if resp.StatusCode != http.StatusServiceUnavailable || xml.Unmarshal(body, &doc) != nil || doc.Code != "SlowDown" ||
		doc.RequestId == "" || resp.Header.Get("X-Amz-Request-Id") != doc.RequestId || resp.Header.Get("Content-Type") != "application/xml" {
		t.Errorf("anonymous GET over the limit: %s %q %v", resp.Status, body, resp.Header)
	}

	// Swift.
	r, b := sw.do("GET", "/bkt", nil, nil)
	if r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "Service Unavailable") || r.Header.Get("X-Trans-Id") == "" {
		t.Errorf("Swift GET over the limit: %s %q", r.Status, b)
	}

	// The server's own endpoints are never refused.
	for _, p := range []string{"/healthz", "/metrics"} {
		resp, err := http.Get(endpoint + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s over the limit: %s", p, resp.Status)
		}
	}
	if n := metricValue(t, endpoint, "cairn_http_requests_rejected_total"); n != 4 {
		t.Errorf("rejected %v, want 4", n)
	}
	if n := metricValue(t, endpoint, "cairn_http_requests_in_flight_limit"); n != 1 {
		t.Errorf("limit %v, want 1", n)
	}

	// The client of the stalled upload goes away: its slot comes free.
	c.Close()
	waitMetric(t, endpoint, "cairn_http_requests_in_flight", 0)
	if _, err := cl.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Errorf("HeadBucket after the slot came free: %v", err)
	}
}
