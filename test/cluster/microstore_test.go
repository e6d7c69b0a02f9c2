package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/workload"
	"github.com/cairn-store/cairn/test/e2e"
)

// s3Requests is a proxy's count of one operation's requests answered 200.
func s3Requests(t *testing.T, endpoint, op string) float64 {
	t.Helper()
	return e2e.Metric(t, endpoint, `cairn_s3_requests_total{operation="`+op+`",status="200"}`)
}

// The load redirector through real processes: a cluster of two policies and two proxies, a
// microstore of the silver policy served by the second proxy. Through the first proxy, a
// bucket in silver is served by the second (its PUTs and GETs counted there, signatures and
// presigned URLs holding across the hop), a bucket in gold by the first; once the microstore is
// deleted, the first serves both.
func TestLoadRedirector(t *testing.T) {
	c, _ := e2e.StartCluster(t, localcluster.Config{Storage: 4, Proxies: 2, Replicas: 3, Policies: []string{"gold", "silver"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	fronts := c.Front()
	first, second := fronts[0], fronts[1]
	ak, sk := c.RootKey()
	adm, err := admin.NewClient(admin.ClientConfig{Endpoint: first.Endpoint(), AccessKey: ak, SecretKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateMicrostore(ctx, microstore.Microstore{Name: "large", Policy: "silver", Proxies: []string{second.Addr}}); err != nil {
		t.Fatal(err)
	}
	s3c := e2e.NewS3Client(first.Endpoint(), ak, sk, e2e.NoRetries)
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("backups"),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "us-east-1:silver"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("website")}); err != nil {
		t.Fatal(err)
	}
	put := func(bucket, key string, body []byte) {
		t.Helper()
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatalf("PUT %s/%s through the first proxy: %v", bucket, key, err)
		}
	}
	get := func(bucket, key string) []byte {
		t.Helper()
		o, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GET %s/%s through the first proxy: %v", bucket, key, err)
		}
		defer o.Body.Close()
		b, _ := io.ReadAll(o.Body)
		return b
	}
	firstPuts, secondPuts := s3Requests(t, first.Endpoint(), "PutObject"), s3Requests(t, second.Endpoint(), "PutObject")
	put("backups", "day1.tar", []byte("a backup"))
	put("website", "index.html", []byte("a page"))
	if got, want := s3Requests(t, second.Endpoint(), "PutObject")-secondPuts, 1.0; got != want {
		t.Errorf("the second proxy served %v PUTs, want %v (the silver bucket's)", got, want)
	}
	if got, want := s3Requests(t, first.Endpoint(), "PutObject")-firstPuts, 1.0; got != want {
		t.Errorf("the first proxy served %v PUTs, want %v (the gold bucket's)", got, want)
	}
	secondGets := s3Requests(t, second.Endpoint(), "GetObject")
	if b := get("backups", "day1.tar"); string(b) != "a backup" {
		t.Errorf("the backup read back as %q", b)
	}
	if got := s3Requests(t, second.Endpoint(), "GetObject") - secondGets; got != 1 {
		t.Errorf("the second proxy served %v GETs of the silver bucket, want 1", got)
	}
	// A presigned URL made for the first proxy holds across the hop; the answer says which
	// microstore's proxy served it.
	ps := s3.NewPresignClient(s3c)
	req, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("backups"), Key: aws.String("day1.tar")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(req.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "a backup" || resp.Header.Get("X-Cairn-Microstore") != "large" {
		t.Errorf("presigned GET through the first proxy: %d %q, served by microstore %q", resp.StatusCode, b, resp.Header.Get("X-Cairn-Microstore"))
	}

	// The microstore gone, the first proxy serves the silver bucket itself.
	if _, err := adm.DeleteMicrostore(ctx, "large"); err != nil {
		t.Fatal(err)
	}
	firstPuts, secondPuts = s3Requests(t, first.Endpoint(), "PutObject"), s3Requests(t, second.Endpoint(), "PutObject")
	put("backups", "day2.tar", []byte("another"))
	if s3Requests(t, first.Endpoint(), "PutObject")-firstPuts != 1 || s3Requests(t, second.Endpoint(), "PutObject") != secondPuts {
		t.Error("after the microstore was deleted, a PUT of its bucket was not served by the proxy it was sent to")
	}
}

// New buckets made without naming a storage policy are placed by their account's workload
// class, in the policy of the microstore that takes it: a tenant that writes backups (class D)
// gets its next bucket in the large microstore's policy, through S3; a tenant serving pages
// (class A, which no microstore takes) and a tenant the monitor has not classed get the
// default, through Swift; a bucket that names its policy keeps it.
func TestNewBucketsPlacedByClass(t *testing.T) {
	c, _ := e2e.StartCluster(t, localcluster.Config{Storage: 3, Proxies: 1, Replicas: 3, Policies: []string{"gold", "silver"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ak, sk := c.RootKey()
	adm, err := admin.NewClient(admin.ClientConfig{Endpoint: c.Endpoint, AccessKey: ak, SecretKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateMicrostore(ctx, microstore.Microstore{Name: "large", Policy: "silver",
		Classes: []workload.Class{workload.LargeReads, workload.LargeWrites}}); err != nil {
		t.Fatal(err)
	}
	user := func(account string) auth.UserCredentials {
		t.Helper()
		if _, err := adm.CreateAccount(ctx, account); err != nil {
			t.Fatal(err)
		}
		u, err := adm.CreateUser(ctx, account, "u", true)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	backup, web, fresh := user("backup"), user("web"), user("fresh")
	policyOf := func(u auth.UserCredentials, container string) string {
		t.Helper()
		h, _ := swiftLoginAt(t, c.Endpoint, u.Account+":u", u.SwiftKey).must(t, "HEAD", "/"+container, nil, nil, http.StatusNoContent)
		return h.Get("X-Storage-Policy")
	}

	// The backup tenant, through S3: 20 objects of 1 MiB in its first bucket (made before it
	// had a class: the default), then a second bucket, and one that names gold.
	s3c := e2e.NewS3Client(c.Endpoint, backup.AccessKey, backup.SecretKey, e2e.NoRetries)
	mk := func(bucket, constraint string) {
		t.Helper()
		in := &s3.CreateBucketInput{Bucket: aws.String(bucket)}
		if constraint != "" {
			in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(constraint)}
		}
		if _, err := s3c.CreateBucket(ctx, in); err != nil {
			t.Fatalf("create bucket %s: %v", bucket, err)
		}
	}
	mk("day1", "")
	for i := range 20 {
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("day1"), Key: aws.String(fmt.Sprintf("part%02d", i)),
			Body: bytes.NewReader(bytes.Repeat([]byte{byte(i)}, 1<<20))}); err != nil {
			t.Fatal(err)
		}
	}
	mk("day2", "")
	mk("pinned", "us-east-1:gold")

	// The web tenant, through Swift: 5 pages of 4 KiB, each read 4 times.
	sw := swiftLoginAt(t, c.Endpoint, "web:u", web.SwiftKey)
	sw.must(t, "PUT", "/site1", nil, nil, http.StatusCreated)
	for i := range 5 {
		sw.must(t, "PUT", fmt.Sprintf("/site1/page%d", i), nil, bytes.Repeat([]byte("p"), 4<<10), http.StatusCreated)
		for range 4 {
			sw.must(t, "GET", fmt.Sprintf("/site1/page%d", i), nil, nil, http.StatusOK)
		}
	}
	sw.must(t, "PUT", "/site2", nil, nil, http.StatusCreated)
	swiftLoginAt(t, c.Endpoint, "fresh:u", fresh.SwiftKey).must(t, "PUT", "/first", nil, nil, http.StatusCreated)

	for _, want := range []struct {
		u                 auth.UserCredentials
		container, policy string
	}{
		{backup, "day1", "gold"}, {backup, "day2", "silver"}, {backup, "pinned", "gold"},
		{web, "site1", "gold"}, {web, "site2", "gold"},
		{fresh, "first", "gold"},
	} {
		if got := policyOf(want.u, want.container); got != want.policy {
			t.Errorf("%s/%s is in policy %q, want %s", want.u.Account, want.container, got, want.policy)
		}
	}
}

// HAProxy in front of the proxies, configured by `cairn microstore haproxy`: a microstore's
// buckets, S3 and Swift, go straight to its proxy (served there, and not passed on by another
// proxy: no X-Cairn-Microstore on the answer), signatures and tokens intact; a bucket of no
// microstore is served too. Needs haproxy (scripts/install-test-deps.sh installs it).
func TestHAProxyFromTheDescription(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		bin = "/usr/sbin/haproxy" // not on a user's PATH
		if _, err := os.Stat(bin); err != nil {
			t.Skip("no haproxy here (scripts/install-test-deps.sh installs it)")
		}
	}
	c, _ := e2e.StartCluster(t, localcluster.Config{Storage: 4, Proxies: 2, Replicas: 3, Policies: []string{"gold", "silver"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	first, second := c.Front()[0], c.Front()[1]
	ak, sk := c.RootKey()
	adm, err := admin.NewClient(admin.ClientConfig{Endpoint: first.Endpoint(), AccessKey: ak, SecretKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateMicrostore(ctx, microstore.Microstore{Name: "large", Policy: "silver", Proxies: []string{second.Addr}}); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	u, err := adm.CreateUser(ctx, "acme", "u", true)
	if err != nil {
		t.Fatal(err)
	}
	direct := e2e.NewS3Client(first.Endpoint(), u.AccessKey, u.SecretKey, e2e.NoRetries)
	if _, err := direct.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("backups"),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "us-east-1:silver"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("website")}); err != nil {
		t.Fatal(err)
	}
	swiftLoginAt(t, first.Endpoint(), "acme:u", u.SwiftKey).must(t, "PUT", "/videos", map[string]string{"X-Storage-Policy": "silver"}, nil, http.StatusCreated)

	// The configuration and its map, from the description and the cluster's buckets.
	dir := t.TempDir()
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	lb := fmt.Sprintf("127.0.0.1:%d", port)
	cfgPath, mapPath := filepath.Join(dir, "haproxy.cfg"), filepath.Join(dir, "buckets.map")
	out, err := exec.CommandContext(ctx, e2e.Binary(t), "microstore", "haproxy", "--endpoint", first.Endpoint(), "--access-key", ak, "--secret-key", sk,
		"--bind", lb, "--proxy", first.Addr, "--map", mapPath, "--config", cfgPath).CombinedOutput()
	if err != nil {
		t.Fatalf("cairn microstore haproxy: %v\n%s", err, out)
	}
	m, err := os.ReadFile(mapPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"s3:backups microstore_large", "swift:AUTH_acme/videos microstore_large"} {
		if !strings.Contains(string(m), line+"\n") {
			t.Errorf("the map lacks %q:\n%s", line, m)
		}
	}
	if strings.Contains(string(m), "website") {
		t.Errorf("the map names a bucket of no microstore:\n%s", m)
	}
	hp := exec.Command(bin, "-db", "-f", cfgPath)
	hp.Stdout, hp.Stderr = io.Discard, io.Discard
	if err := hp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hp.Process.Kill(); hp.Wait() })

	// Through HAProxy: S3, then Swift.
	s3c := e2e.NewS3Client("http://"+lb, u.AccessKey, u.SecretKey, e2e.NoRetries)
	eventually(t, func() error { // until HAProxy listens
		_, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("website"), Key: aws.String("index.html"), Body: bytes.NewReader([]byte("a page"))})
		return err
	})
	secondPuts, firstPuts := s3Requests(t, second.Endpoint(), "PutObject"), s3Requests(t, first.Endpoint(), "PutObject")
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("backups"), Key: aws.String("day1.tar"), Body: bytes.NewReader([]byte("a backup"))}); err != nil {
		t.Fatalf("PUT of the microstore's bucket through HAProxy: %v", err)
	}
	if s3Requests(t, second.Endpoint(), "PutObject")-secondPuts != 1 || s3Requests(t, first.Endpoint(), "PutObject") != firstPuts {
		t.Error("the PUT of the microstore's bucket was not served by its proxy")
	}
	req, err := s3.NewPresignClient(s3c).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("backups"), Key: aws.String("day1.tar")})
	if err != nil {
		t.Fatal(err)
	}
	secondGets := s3Requests(t, second.Endpoint(), "GetObject")
	checkDirect := func(what string, resp *http.Response, err error, want string, served func() float64, before float64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != want {
			t.Fatalf("%s: %d %q", what, resp.StatusCode, b)
		}
		if got := served() - before; got != 1 {
			t.Errorf("%s: the microstore's proxy served %v, want 1", what, got)
		}
		if ms := resp.Header.Get("X-Cairn-Microstore"); ms != "" {
			t.Errorf("%s: passed on by another proxy (X-Cairn-Microstore: %s), not sent straight to the microstore's", what, ms)
		}
	}
	resp, err := http.Get(req.URL)
	checkDirect("presigned GET through HAProxy", resp, err, "a backup", func() float64 { return s3Requests(t, second.Endpoint(), "GetObject") }, secondGets)

	sw := swiftLoginAt(t, "http://"+lb, "acme:u", u.SwiftKey)
	sw.must(t, "PUT", "/videos/clip.mp4", nil, []byte("a clip"), http.StatusCreated)
	swiftGets := func() float64 {
		return e2e.Metric(t, second.Endpoint(), `cairn_swift_requests_total{operation="GetObject",status="200"}`)
	}
	before := swiftGets()
	r, _ := http.NewRequest(http.MethodGet, sw.url+"/videos/clip.mp4", nil)
	r.Header.Set("X-Auth-Token", sw.token)
	resp, err = http.DefaultClient.Do(r)
	checkDirect("Swift GET through HAProxy", resp, err, "a clip", swiftGets, before)
}

// The resource manager through real processes (three proxies, each running it, one at a time
// under the cluster's lease): two microstores without proxies and a pool of all three get an
// equal share each, one proxy, the third kept free; load on the large microstore's bucket makes
// the manager double its proxies from the pool; once the load is gone from the workload
// window, it gives one back (the linear decrease). Its thresholds are set so that a test's load
// counts as heavy and no load as idle.
func TestResourceManagerMovesProxies(t *testing.T) {
	c, _ := e2e.StartCluster(t, localcluster.Config{Storage: 3, Proxies: 3, Replicas: 3, Policies: []string{"gold", "silver"},
		Args: []string{"--microstore-manager-interval", "1s", "--microstore-manager-high", "0.000001", "--microstore-manager-low", "0.0000005", "--workload-window", "10s"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ak, sk := c.RootKey()
	var proxies []string
	for _, n := range c.Front() {
		proxies = append(proxies, n.Addr)
	}
	adm, err := admin.NewClient(admin.ClientConfig{Endpoint: c.Front()[0].Endpoint(), AccessKey: ak, SecretKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []microstore.Microstore{{Name: "small", Policy: "gold"}, {Name: "large", Policy: "silver"}} {
		if _, err := adm.CreateMicrostore(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := adm.SetMicrostorePool(ctx, proxies); err != nil {
		t.Fatal(err)
	}
	shape := func(large, small, pool int) func() error {
		return func() error {
			d, err := adm.Microstores(ctx)
			if err != nil {
				return err
			}
			l, _ := d.Find("large")
			s, _ := d.Find("small")
			if len(l.Proxies) != large || len(s.Proxies) != small || len(d.Pool) != pool {
				return fmt.Errorf("large %v, small %v, pool %v: want %d, %d and %d proxies", l.Proxies, s.Proxies, d.Pool, large, small, pool)
			}
			return nil
		}
	}
	eventually(t, shape(1, 1, 1)) // the equal shares

	s3c := e2e.NewS3Client(c.Endpoint, ak, sk, e2e.NoRetries)
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("backups"),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "us-east-1:silver"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; shape(2, 1, 0)() != nil; i++ {
		if i == 600 {
			t.Fatalf("the loaded microstore never grew: %v", shape(2, 1, 0)())
		}
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("backups"), Key: aws.String(fmt.Sprintf("day%d", i)),
			Body: bytes.NewReader(bytes.Repeat([]byte{byte(i)}, 256<<10))}); err != nil {
			t.Fatal(err)
		}
	}
	// The plan shows the loads and why nothing more moves.
	out, err := exec.CommandContext(ctx, e2e.Binary(t), "microstore", "plan", "--endpoint", c.Front()[1].Endpoint(), "--access-key", ak, "--secret-key", sk).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "MICROSTORE") || !strings.Contains(string(out), "large") {
		t.Errorf("cairn microstore plan: %v\n%s", err, out)
	}
	t.Logf("cairn microstore plan:\n%s", out)
	eventually(t, shape(1, 1, 1)) // the load aged out of the window: one proxy back
}
