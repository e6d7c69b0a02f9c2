package s3_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// v2Request sends a request signed with AWS Signature Version 2 in the Authorization header.
func v2Request(t *testing.T, st *stack, method, path string, body []byte, hdr map[string]string, date time.Time) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, st.srv.URL+path, bytes.NewReader(body))
	mustOK(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("Date", date.UTC().Format(http.TimeFormat))
	req.RequestURI = req.URL.RequestURI() // what the server will see
	sts := sigv4.StringToSignV2(req, req.Header.Get("Date"))
	req.RequestURI = ""
	req.Header.Set("Authorization", "AWS "+testAccessKey+":"+sigv4.SignV2(testSecretKey, sts))
	resp, err := http.DefaultClient.Do(req)
	mustOK(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestSignatureV2(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("sigv2")})
	mustOK(t, err)

	now := time.Now()
	resp, body := v2Request(t, st, "PUT", "/sigv2/a%20key", []byte("hello"), map[string]string{"Content-Type": "text/plain", "X-Amz-Meta-Color": "blue"}, now)
	if resp.StatusCode != 200 {
		t.Fatalf("SigV2 PUT: %d %s", resp.StatusCode, body)
	}
	resp, body = v2Request(t, st, "GET", "/sigv2/a%20key", nil, nil, now)
	if resp.StatusCode != 200 || body != "hello" || resp.Header.Get("X-Amz-Meta-Color") != "blue" {
		t.Fatalf("SigV2 GET: %d %s", resp.StatusCode, body)
	}
	resp, body = v2Request(t, st, "GET", "/sigv2?acl", nil, nil, now)
	if resp.StatusCode != 200 || !strings.Contains(body, "AccessControlPolicy") {
		t.Fatalf("SigV2 GET ?acl: %d %s", resp.StatusCode, body)
	}
	resp, body = v2Request(t, st, "GET", "/sigv2", nil, nil, now.Add(-20*time.Minute))
	if resp.StatusCode != 403 || !strings.Contains(body, "<Code>RequestTimeTooSkewed</Code>") {
		t.Fatalf("skewed SigV2: %d %s", resp.StatusCode, body)
	}

	// Presigned (query) form.
	exp := strconv.FormatInt(now.Add(time.Minute).Unix(), 10)
	get, err := http.NewRequest("GET", st.srv.URL+"/sigv2/a%20key", nil)
	mustOK(t, err)
	get.RequestURI = "/sigv2/a%20key"
	sig := sigv4.SignV2(testSecretKey, sigv4.StringToSignV2(get, exp))
	u := st.srv.URL + "/sigv2/a%20key?AWSAccessKeyId=" + testAccessKey + "&Expires=" + exp + "&Signature=" + url.QueryEscape(sig)
	r, err := http.Get(u)
	mustOK(t, err)
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || string(b) != "hello" {
		t.Fatalf("SigV2 presigned: %d %s", r.StatusCode, b)
	}
	old := strconv.FormatInt(now.Add(-time.Minute).Unix(), 10)
	sig = sigv4.SignV2(testSecretKey, sigv4.StringToSignV2(get, old))
	r, err = http.Get(st.srv.URL + "/sigv2/a%20key?AWSAccessKeyId=" + testAccessKey + "&Expires=" + old + "&Signature=" + url.QueryEscape(sig))
	mustOK(t, err)
	b, _ = io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 403 || !strings.Contains(string(b), "Request has expired") {
		t.Fatalf("expired SigV2 presigned: %d %s", r.StatusCode, b)
	}
}
