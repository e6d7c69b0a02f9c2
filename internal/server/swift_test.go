package server_test

import (
	"bytes"
	"context"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cairn-store/cairn/internal/server"
	"github.com/cairn-store/cairn/internal/testserver"
)

const (
	testAccess = "CAIRNSWIFTTEST"
	testSecret = "swift-test-secret-key"
)

// swiftSession logs in as the root user over Swift v1 auth.
type swiftSession struct {
	t          *testing.T
	token, url string
}

func swiftLogin(t *testing.T, endpoint string) *swiftSession {
	t.Helper()
	req, _ := http.NewRequest("GET", endpoint+"/auth/v1.0", nil)
	req.Header.Set("X-Auth-User", "root:root")
	req.Header.Set("X-Auth-Key", testSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("auth: %s", resp.Status)
	}
	return &swiftSession{t: t, token: resp.Header.Get("X-Auth-Token"), url: resp.Header.Get("X-Storage-Url")}
}

func (s *swiftSession) do(method, path string, hdr map[string]string, body []byte) (*http.Response, []byte) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	req.Header.Set("X-Auth-Token", s.token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp, b
}

func s3Client(endpoint string) *s3.Client {
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(testAccess, testSecret, ""), Retryer: aws.NopRetryer{}})
}

// ctxT is a test's context. Its bound only catches a hang: a loaded machine may take many times
// as long as an idle one for a whole test.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestSwiftCrossAPI writes through one API and reads through the other: a bucket is the Swift
// container of the same account, with the same bytes and metadata.
func TestSwiftCrossAPI(t *testing.T) {
	endpoint := testserver.Start(t, testAccess, testSecret)
	ctx := ctxT(t)
	c := s3Client(endpoint)
	sw := swiftLogin(t, endpoint)
	if !strings.HasSuffix(sw.url, "/v1/AUTH_root") {
		t.Fatalf("storage URL %q", sw.url)
	}

	// S3 → Swift.
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("from-s3")}); err != nil {
		t.Fatal(err)
	}
	data := []byte("bytes written through S3")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("from-s3"), Key: aws.String("dir/k"), Body: bytes.NewReader(data),
		ContentType: aws.String("text/x-s3"), ContentDisposition: aws.String("inline"), Metadata: map[string]string{"foo": "Bar"}}); err != nil {
		t.Fatal(err)
	}
	resp, body := sw.do("GET", "/from-s3/dir/k", nil, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, data) || resp.Header.Get("X-Object-Meta-Foo") != "Bar" ||
		resp.Header.Get("Content-Type") != "text/x-s3" || resp.Header.Get("Content-Disposition") != "inline" {
		t.Fatalf("Swift GET of an S3 object: %s %q %v", resp.Status, body, resp.Header)
	}
	resp, body = sw.do("GET", "?format=json", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"name":"from-s3"`) {
		t.Fatalf("account listing %s %s", resp.Status, body)
	}

	// Swift → S3.
	if resp, b := sw.do("PUT", "/from-swift", nil, nil); resp.StatusCode != 201 {
		t.Fatalf("PUT container: %s %s", resp.Status, b)
	}
	data2 := []byte("bytes written through Swift")
	if resp, b := sw.do("PUT", "/from-swift/o", map[string]string{"X-Object-Meta-Color": "Blue", "Content-Type": "text/x-swift",
		"Cache-Control": "no-cache"}, data2); resp.StatusCode != 201 {
		t.Fatalf("PUT object: %s %s", resp.Status, b)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("from-swift"), Key: aws.String("o")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, data2) || out.Metadata["color"] != "Blue" || aws.ToString(out.ContentType) != "text/x-swift" ||
		aws.ToString(out.CacheControl) != "no-cache" {
		t.Fatalf("S3 GET of a Swift object: %q %v %q", got, out.Metadata, aws.ToString(out.ContentType))
	}
	lo, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("from-swift")})
	if err != nil || len(lo.Contents) != 1 || aws.ToString(lo.Contents[0].Key) != "o" {
		t.Fatalf("S3 listing of a Swift container: %v %v", lo, err)
	}

	// An S3 multipart upload reads back whole through Swift.
	part := make([]byte, 5<<20)
	rand.New(rand.NewSource(1)).Read(part)
	mu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("from-s3"), Key: aws.String("big"),
		Metadata: map[string]string{"kind": "multipart"}})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for i, p := range [][]byte{part, []byte("tail")} {
		n := int32(i + 1)
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("from-s3"), Key: aws.String("big"), UploadId: mu.UploadId,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(p)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(n)})
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("from-s3"), Key: aws.String("big"),
		UploadId: mu.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatal(err)
	}
	resp, body = sw.do("GET", "/from-s3/big", nil, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, append(part, "tail"...)) || resp.Header.Get("X-Object-Meta-Kind") != "multipart" {
		t.Fatalf("Swift GET of a multipart object: %s, %d bytes", resp.Status, len(body))
	}
	resp, body = sw.do("GET", "/from-s3/big", map[string]string{"Range": "bytes=5242878-5242881"}, nil)
	if resp.StatusCode != 206 || string(body) != string(part[5242878:])+"ta" {
		t.Fatalf("range across parts: %s %q", resp.Status, body)
	}
	// The multipart bookkeeping container stays hidden from Swift listings.
	_, body = sw.do("GET", "", nil, nil)
	if string(body) != "from-s3\nfrom-swift\n" {
		t.Fatalf("account listing %q", body)
	}

	// A Swift POST is seen by S3; an S3 delete by Swift.
	if resp, _ := sw.do("POST", "/from-swift/o", map[string]string{"X-Object-Meta-Shape": "round"}, nil); resp.StatusCode != 202 {
		t.Fatalf("POST: %s", resp.Status)
	}
	ho, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("from-swift"), Key: aws.String("o")})
	if err != nil || ho.Metadata["shape"] != "round" || ho.Metadata["color"] != "" {
		t.Fatalf("S3 HEAD after Swift POST: %v %v", ho, err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("from-swift"), Key: aws.String("o")}); err != nil {
		t.Fatal(err)
	}
	if resp, _ := sw.do("GET", "/from-swift/o", nil, nil); resp.StatusCode != 404 {
		t.Fatalf("Swift GET after S3 delete: %s", resp.Status)
	}
	if resp, _ := sw.do("DELETE", "/from-swift", nil, nil); resp.StatusCode != 204 {
		t.Fatalf("Swift DELETE container: %s", resp.Status)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("from-swift")}); err == nil {
		t.Fatal("bucket survives its Swift DELETE")
	}
}

// TestSwiftRouting checks that signed requests stay S3's whatever their path, and unsigned ones
// for the Swift paths go to Swift.
func TestSwiftRouting(t *testing.T) {
	endpoint := testserver.Start(t, testAccess, testSecret)
	ctx := ctxT(t)
	c := s3Client(endpoint)
	// "info" is a legal bucket name: signed requests for it are S3's.
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("info")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("info"), Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(endpoint + "/info")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"swift"`) {
		t.Fatalf("unsigned /info: %s %s", resp.Status, b)
	}
	// /info tells Swift clients that the same endpoint speaks S3, with the S3 front end's limits.
	if !strings.Contains(string(b), `"s3api":{`) || !strings.Contains(string(b), `"max_upload_part_num":10000`) {
		t.Errorf("/info lacks the s3api entry: %s", b)
	}
	// Unsigned requests elsewhere are S3's (and refused by it).
	resp, err = http.Get(endpoint + "/info/k")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), "<Code>") {
		t.Fatalf("unsigned S3 GET: %s %s", resp.Status, b)
	}
	resp, err = http.Get(endpoint + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestSwiftDomainRemap: with --swift-domain, AUTH_account.DOMAIN and container.AUTH_account.DOMAIN
// are Swift paths; other hosts under the domain, and signed requests, are routed as before.
func TestSwiftDomainRemap(t *testing.T) {
	endpoint := testserver.StartConfig(t, server.Config{RootAccessKey: testAccess, RootSecretKey: testSecret, SwiftDomains: []string{"example.net"}})
	sw := swiftLogin(t, endpoint)
	sw.do("PUT", "/web", map[string]string{"X-Container-Read": ".r:*,.rlistings", "X-Container-Meta-Web-Listings": "true"}, nil)
	sw.do("PUT", "/web/dir/page.html", nil, []byte("hello"))
	get := func(host, path string, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", endpoint+path, nil)
		req.Host = host
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, host := range []string{"web.AUTH_root.example.net", "web.auth-root.example.net:80"} {
		if resp, body := get(host, "/dir/page.html", nil); resp.StatusCode != 200 || body != "hello" {
			t.Fatalf("%s: %s %q", host, resp.Status, body)
		}
	}
	if resp, body := get("AUTH_root.example.net", "/web/dir/page.html", map[string]string{"X-Auth-Token": sw.token}); resp.StatusCode != 200 || body != "hello" {
		t.Fatalf("account host: %s %q", resp.Status, body)
	}
	// A static web redirect names the path the client asked for, on its host.
	if resp, _ := get("web.AUTH_root.example.net", "/dir", nil); resp.StatusCode != 301 || resp.Header.Get("Location") != "http://web.AUTH_root.example.net/dir/" {
		t.Fatalf("redirect: %s Location %q", resp.Status, resp.Header.Get("Location"))
	}
	if resp, _ := get("a.b.AUTH_root.example.net", "/", nil); resp.StatusCode != 400 {
		t.Fatalf("too many labels: %s", resp.Status)
	}
	// Not an account label: S3's (which refuses an anonymous request).
	if resp, body := get("web.example.net", "/dir/page.html", nil); resp.StatusCode != 403 || !strings.Contains(body, "<Code>AccessDenied</Code>") {
		t.Fatalf("non-account host: %s %q", resp.Status, body)
	}
	// /info says so.
	if _, body := get("127.0.0.1", "/info", nil); !strings.Contains(body, `"domain_remap"`) {
		t.Errorf("/info lacks domain_remap: %s", body)
	}
	// One domain cannot be both S3's and Swift's.
	bad := server.Config{DataDir: t.TempDir(), Domains: []string{"example.net"}, SwiftDomains: []string{".example.net"}}
	if err := bad.Validate(); err == nil {
		t.Error("a domain that is both S3's and Swift's was accepted")
	}
}

// TestSymlinkThroughS3: a symlink made through Swift reads through S3 as its target, as through
// Swift's s3api.
func TestSymlinkThroughS3(t *testing.T) {
	endpoint := testserver.Start(t, testAccess, testSecret)
	ctx := ctxT(t)
	c := s3Client(endpoint)
	sw := swiftLogin(t, endpoint)
	zero := map[string]string{"Content-Length": "0"}
	link := func(path, target string, hdr map[string]string) {
		t.Helper()
		h := map[string]string{"X-Symlink-Target": target, "Content-Length": "0"}
		for k, v := range hdr {
			h[k] = v
		}
		if resp, b := sw.do("PUT", path, h, nil); resp.StatusCode != 201 {
			t.Fatalf("PUT link %s: %s %s", path, resp.Status, b)
		}
	}
	sw.do("PUT", "/data", zero, nil)
	sw.do("PUT", "/links", zero, nil)
	if resp, b := sw.do("PUT", "/data/obj", map[string]string{"Content-Type": "text/plain"}, []byte("0123456789")); resp.StatusCode != 201 {
		t.Fatalf("PUT target: %s %s", resp.Status, b)
	}
	link("/links/l1", "data/obj", nil)
	link("/links/l2", "links/l1", nil)
	link("/links/l3", "links/l2", nil)
	link("/links/static", "data/obj", map[string]string{"X-Symlink-Target-Etag": "781e5e245d69b566979b86e28d23f2c7"}) // md5("0123456789")
	link("/links/dangling", "data/none", nil)

	get := func(key string, rng *string) (string, error) {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("links"), Key: aws.String(key), Range: rng})
		if err != nil {
			return "", err
		}
		defer out.Body.Close()
		b, err := io.ReadAll(out.Body)
		return string(b), err
	}
	for _, key := range []string{"l1", "l2", "static"} {
		if got, err := get(key, nil); err != nil || got != "0123456789" {
			t.Errorf("S3 GET of link %s: %q %v", key, got, err)
		}
	}
	if got, err := get("l1", aws.String("bytes=2-4")); err != nil || got != "234" {
		t.Errorf("ranged S3 GET of a link: %q %v", got, err)
	}
	if head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("links"), Key: aws.String("l2")}); err != nil || aws.ToInt64(head.ContentLength) != 10 {
		t.Errorf("S3 HEAD of a link: %+v %v", head, err)
	}
	if _, err := get("l3", nil); err == nil || !strings.Contains(err.Error(), "InvalidRequest") {
		t.Errorf("three links in a row: %v", err)
	}
	if _, err := get("dangling", nil); err == nil || !strings.Contains(err.Error(), "NoSuchKey") {
		t.Errorf("a link to nothing: %v", err)
	}
	// The static link's target changes: the link no longer reads.
	sw.do("PUT", "/data/obj", nil, []byte("changed"))
	if _, err := get("static", nil); err == nil || !strings.Contains(err.Error(), "PreconditionFailed") {
		t.Errorf("a static link whose target changed: %v", err)
	}
	if got, err := get("l1", nil); err != nil || got != "changed" {
		t.Errorf("a dynamic link after the change: %q %v", got, err)
	}
}
