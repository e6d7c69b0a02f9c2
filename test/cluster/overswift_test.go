package cluster

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cairn-store/cairn/internal/backend"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/server"
	"github.com/cairn-store/cairn/test/e2e"
)

// The OpenStack Swift peer (test/peers/swift/setup.sh): its proxy, its rings, and the tempauth
// user of AUTH_test.
const (
	swiftProxy   = "http://127.0.0.1:8080"
	swiftRingDir = "/etc/swift"
	swiftUser    = "test:tester"
	swiftKey     = "testing"
)

// TestProxyOverSwift starts a Cairn proxy on the rings of the OpenStack Swift peer, over Swift's
// own object, container and account servers, and works through it with an S3 and a Swift
// client; Swift's own proxy must then find everything where Swift puts it (it computes the
// partitions itself, and serves the account, container and object from its servers), and
// Cairn must serve what Swift's proxy wrote. Skipped under -short and when no Swift answers.
func TestProxyOverSwift(t *testing.T) {
	e2e.SkipShort(t)
	if e2e.ClusterTopology() != nil {
		t.Skip("runs its own topology: a Cairn proxy over Swift's servers")
	}
	if _, err := os.Stat(swiftRingDir + "/object.ring.gz"); err != nil {
		t.Skipf("no Swift rings: %v", err)
	}
	// No Swift refuses the connection at once; a loaded one may take long to answer, and must
	// not make the test skip for it.
	if resp, err := (&http.Client{Timeout: time.Minute}).Get(swiftProxy + "/info"); err != nil {
		t.Skipf("no OpenStack Swift at %s: %v", swiftProxy, err)
	} else {
		resp.Body.Close()
	}
	lockSwiftPeer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // only catches a hang
	defer cancel()
	forgetTenants(t, ctx)

	srv := e2e.Start(t, e2e.Options{
		Args: []string{"--role", "proxy", "--ring", swiftRingDir, "--log-level", "warn"},
		Env:  []string{"CAIRN_CLUSTER_SECRET=" + e2e.RandomKey(16)},
	})
	admin := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, e2e.Binary(t), append([]string{"admin", "--endpoint", srv.Endpoint, "--access-key", srv.AccessKey, "--secret-key", srv.SecretKey}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cairn admin %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	user := "ovs" + e2e.RandomKey(4)
	ak, sk, swk := "OVS"+strings.ToUpper(e2e.RandomKey(8)), e2e.RandomKey(20), e2e.RandomKey(12)
	admin("account", "create", "test")
	admin("user", "create", "test:"+user, "--user-access-key", ak, "--user-secret-key", sk, "--user-swift-key", swk, "--admin")

	swift := swiftLoginAt(t, swiftProxy, swiftUser, swiftKey)
	if !strings.HasSuffix(swift.url, "/AUTH_test") {
		t.Fatalf("Swift's storage URL for %s: %s", swiftUser, swift.url)
	}

	t.Run("S3", func(t *testing.T) {
		client := e2e.NewS3Client(srv.Endpoint, ak, sk, e2e.NoRetries)
		bucket := "ovs-" + e2e.RandomKey(6)
		if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Fatal(err)
		}
		small := []byte("hello from Cairn's proxy over Swift's servers")
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/small.txt"), Body: bytes.NewReader(small),
			ContentType: aws.String("text/plain"), Metadata: map[string]string{"color": "blue"}}); err != nil {
			t.Fatal(err)
		}
		eventually(t, func() error {
			lb, err := client.ListBuckets(ctx, &s3.ListBucketsInput{})
			if err != nil || !slices.ContainsFunc(lb.Buckets, func(b s3types.Bucket) bool { return aws.ToString(b.Name) == bucket }) {
				return fmt.Errorf("ListBuckets: %v (%d buckets)", err, len(lb.Buckets))
			}
			return nil
		})
		if got := s3Get(t, ctx, client, bucket, "dir/small.txt"); !bytes.Equal(got, small) {
			t.Fatalf("GET: %q", got)
		}

		// A multipart upload: its parts live in a reserved container, under names Swift keeps
		// in its reserved namespace.
		key := "big/mpu.bin"
		parts := [][]byte{bytes.Repeat([]byte("a"), 5<<20), []byte("and the rest")}
		up, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		var done []s3types.CompletedPart
		for i, p := range parts {
			n := int32(i + 1)
			res, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId, PartNumber: aws.Int32(n), Body: bytes.NewReader(p)})
			if err != nil {
				t.Fatalf("part %d: %v", n, err)
			}
			done = append(done, s3types.CompletedPart{PartNumber: aws.Int32(n), ETag: res.ETag})
		}
		lp, err := client.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId})
		if err != nil || len(lp.Parts) != 2 {
			t.Fatalf("ListParts: %v, %d parts", err, len(lp.Parts))
		}
		if _, err := client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
			MultipartUpload: &s3types.CompletedMultipartUpload{Parts: done}}); err != nil {
			t.Fatal(err)
		}
		whole := bytes.Join(parts, nil)
		if got := s3Get(t, ctx, client, bucket, key); !bytes.Equal(got, whole) {
			t.Fatalf("GET of the multipart object: %d bytes, want %d", len(got), len(whole))
		}
		eventually(t, func() error {
			lo, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
			if err != nil {
				return err
			}
			var keys []string
			for _, o := range lo.Contents {
				keys = append(keys, aws.ToString(o.Key))
				if aws.ToString(o.Key) == key && aws.ToInt64(o.Size) != int64(len(whole)) {
					return fmt.Errorf("listed size of the multipart object: %d", aws.ToInt64(o.Size))
				}
			}
			if !slices.Equal(keys, []string{key, "dir/small.txt"}) {
				return fmt.Errorf("ListObjectsV2: %q", keys)
			}
			return nil
		})

		// Swift's proxy finds them where Swift puts them.
		hdr, body := swift.must(t, "GET", "/"+bucket+"/dir/small.txt", nil, nil, http.StatusOK)
		if !bytes.Equal(body, small) || hdr.Get("X-Object-Meta-Color") != "blue" || hdr.Get("Content-Type") != "text/plain" {
			t.Errorf("through Swift's proxy: %q, %v", body, hdr)
		}
		eventually(t, func() error {
			if !slices.Contains(swift.containers(t), bucket) {
				return fmt.Errorf("Swift's account listing lacks %s", bucket)
			}
			listed := swift.objects(t, bucket)
			if len(listed) != 2 || listed[0].Name != key || listed[0].Bytes != int64(len(whole)) || listed[1].Name != "dir/small.txt" || listed[1].Hash != md5hex(small) {
				return fmt.Errorf("Swift's container listing: %+v", listed)
			}
			return nil
		})

		// And Cairn serves what Swift's proxy writes.
		fromSwift := []byte("written through Swift's own proxy")
		swift.must(t, "PUT", "/"+bucket+"/from-swift", map[string]string{"X-Object-Meta-Origin": "swift", "Content-Type": "text/x-swift"}, fromSwift, http.StatusCreated)
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("from-swift")})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(out.Body)
		out.Body.Close()
		if !bytes.Equal(got, fromSwift) || out.Metadata["origin"] != "swift" || aws.ToString(out.ContentType) != "text/x-swift" {
			t.Errorf("Swift's object through Cairn: %q, %v, %q", got, out.Metadata, aws.ToString(out.ContentType))
		}

		for _, k := range []string{key, "dir/small.txt", "from-swift"} {
			if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)}); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, func() error { // empty once the listings have taken the deletes
			_, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
			var ae smithy.APIError
			if err != nil && !(errors.As(err, &ae) && ae.ErrorCode() == "BucketNotEmpty") {
				t.Fatal(err)
			}
			return err
		})
		swift.must(t, "HEAD", "/"+bucket, nil, nil, http.StatusNotFound)
	})

	t.Run("Swift", func(t *testing.T) {
		cairn := swiftLoginAt(t, srv.Endpoint, "test:"+user, swk)
		if cairn.url != srv.Endpoint+"/v1/AUTH_test" {
			t.Fatalf("Cairn's storage URL: %s", cairn.url)
		}
		container := "ovs-swift-" + e2e.RandomKey(6)
		cairn.must(t, "PUT", "/"+container, nil, nil, http.StatusCreated)
		data := []byte("hello through Cairn's Swift API")
		cairn.must(t, "PUT", "/"+container+"/o%20one", map[string]string{"X-Object-Meta-Kind": "plain"}, data, http.StatusCreated)
		if _, got := cairn.must(t, "GET", "/"+container+"/o%20one", nil, nil, http.StatusOK); !bytes.Equal(got, data) {
			t.Fatalf("GET through Cairn: %q", got)
		}
		eventually(t, func() error {
			if got := cairn.objects(t, container); len(got) != 1 || got[0].Name != "o one" || got[0].Bytes != int64(len(data)) {
				return fmt.Errorf("Cairn's listing: %+v", got)
			}
			if !slices.Contains(cairn.containers(t), container) {
				return fmt.Errorf("Cairn's account listing lacks %s", container)
			}
			return nil
		})
		hdr, got := swift.must(t, "GET", "/"+container+"/o%20one", nil, nil, http.StatusOK)
		if !bytes.Equal(got, data) || hdr.Get("X-Object-Meta-Kind") != "plain" {
			t.Errorf("through Swift's proxy: %q, %v", got, hdr)
		}
		eventually(t, func() error {
			if got := swift.objects(t, container); len(got) != 1 || got[0].Name != "o one" {
				return fmt.Errorf("Swift's listing: %+v", got)
			}
			return nil
		})
		cairn.must(t, "DELETE", "/"+container+"/o%20one", nil, nil, http.StatusNoContent)
		swift.must(t, "GET", "/"+container+"/o%20one", nil, nil, http.StatusNotFound)
		cairn.deleteContainer(t, container)
		swift.must(t, "HEAD", "/"+container, nil, nil, http.StatusNotFound)
	})

	// The peer's policies (test/peers/swift/setup.sh): gold (0, the default), silver (1,
	// replicated), ec42 (2, erasure-coded). A container Cairn makes in silver is one Swift's
	// proxy sees in silver, with its objects where Swift's object servers keep silver's; and the
	// other way round. ec42 is erasure-coded with Swift's code (liberasurecode), which Cairn
	// does not serve: its containers take no object through Cairn (501), and the objects
	// Swift's proxy writes there are never read through Cairn as if they were Cairn's
	// archives (501 too).
	t.Run("Policies", func(t *testing.T) {
		cairn := swiftLoginAt(t, srv.Endpoint, "test:"+user, swk)
		container := "ovs-silver-" + e2e.RandomKey(6)
		cairn.must(t, "PUT", "/"+container, map[string]string{"X-Storage-Policy": "silver"}, nil, http.StatusCreated)
		if hdr, _ := swift.must(t, "HEAD", "/"+container, nil, nil, http.StatusNoContent); hdr.Get("X-Storage-Policy") != "silver" {
			t.Fatalf("Swift's proxy sees policy %q", hdr.Get("X-Storage-Policy"))
		}
		cairn.must(t, "PUT", "/"+container, map[string]string{"X-Storage-Policy": "gold"}, nil, http.StatusConflict)
		data := []byte("an object of policy silver")
		cairn.must(t, "PUT", "/"+container+"/o", nil, data, http.StatusCreated)
		if _, got := swift.must(t, "GET", "/"+container+"/o", nil, nil, http.StatusOK); !bytes.Equal(got, data) {
			t.Fatalf("through Swift's proxy: %q", got)
		}
		eventually(t, func() error {
			if got := swift.objects(t, container); len(got) != 1 || got[0].Name != "o" {
				return fmt.Errorf("Swift's listing: %+v", got)
			}
			return nil
		})
		// silver keeps two object replicas, the container ring three listings: every
		// listing hears of the write all the same (Swift's proxy names two listings to one
		// object server).
		eventually(t, func() error {
			all := containerReplicaListings(t, ctx, "AUTH_test", container)
			if slices.ContainsFunc(all, func(l []string) bool { return !slices.Equal(l, []string{"o"}) }) {
				return fmt.Errorf("the container servers' listings: %q", all)
			}
			return nil
		})
		fromSwift := []byte("Swift's object of policy silver")
		swift.must(t, "PUT", "/"+container+"/s", nil, fromSwift, http.StatusCreated)
		if _, got := cairn.must(t, "GET", "/"+container+"/s", nil, nil, http.StatusOK); !bytes.Equal(got, fromSwift) {
			t.Fatalf("Swift's object through Cairn: %q", got)
		}
		for _, o := range []string{"o", "s"} {
			cairn.must(t, "DELETE", "/"+container+"/"+o, nil, nil, http.StatusNoContent)
		}
		cairn.deleteContainer(t, container)

		ec := "ovs-ec-" + e2e.RandomKey(6)
		cairn.must(t, "PUT", "/"+ec, map[string]string{"X-Storage-Policy": "ec42"}, nil, http.StatusNotImplemented)
		swift.must(t, "PUT", "/"+ec, map[string]string{"X-Storage-Policy": "ec42"}, nil, http.StatusCreated)
		if hdr, _ := cairn.must(t, "HEAD", "/"+ec, nil, nil, http.StatusNoContent); hdr.Get("X-Storage-Policy") != "ec42" {
			t.Errorf("Cairn sees policy %q", hdr.Get("X-Storage-Policy"))
		}
		cairn.must(t, "PUT", "/"+ec+"/o", nil, data, http.StatusNotImplemented)
		swift.must(t, "PUT", "/"+ec+"/s", nil, fromSwift, http.StatusCreated)
		cairn.must(t, "GET", "/"+ec+"/s", nil, nil, http.StatusNotImplemented)
		cairn.must(t, "HEAD", "/"+ec+"/s", nil, nil, http.StatusNotImplemented)
		swift.must(t, "DELETE", "/"+ec+"/s", nil, nil, http.StatusNoContent)
		swift.deleteContainer(t, ec)
	})
}

// eventually retries check until it passes. Listings through Swift's servers are eventually
// consistent: an object server waits a second at most for the container servers to take a write
// or a delete into their listings, then answers and lets the update finish later, which on a
// loaded machine it does after the answer (and the container server updates the account's
// listing in turn). The bound of two minutes only catches a listing that never comes right.
func eventually(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lockSwiftPeer waits until no other Cairn proxy over the Swift peer's servers is running
// (scripts/swift-functests.sh with CAIRN_TEST_OVER_SWIFT takes the same lock), and holds the
// lock to the end of the test: the peer is one per machine, and each such proxy remakes the
// tenant store in its servers under a secret of its own, which breaks another one running.
func lockSwiftPeer(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "cairn-over-swift.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
	deadline := time.Now().Add(45 * time.Minute)
	for syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("another Cairn proxy over the Swift peer held %s for 45 minutes", f.Name())
		}
		time.Sleep(time.Second)
	}
}

// forgetTenants deletes the tenant store an earlier Cairn proxy left in Swift's servers (sealed
// with its own cluster secret), straight on Swift's object servers, so that the proxy under
// test makes a new one (as test/peers/swift/forget-cairn-tenants.py does for the functional
// tests).
func forgetTenants(t *testing.T, ctx context.Context) {
	t.Helper()
	rings, err := ring.LoadDir(swiftRingDir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := backend.NewDialer(backend.ClientConfig{Secret: []byte("Swift's servers check no signature")})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	px, err := proxy.New(proxy.Config{Dialer: d,
		AccountRing:   func() *ring.Ring { return rings.Account },
		ContainerRing: func() *ring.Ring { return rings.Container },
		ObjectRing:    func() *ring.Ring { return rings.Objects[0] }})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	name := meta.ObjectName{Account: server.TenantsAccount, Container: server.TenantsContainer, Object: server.TenantsObject}
	if err := px.DeleteObject(ctx, name); err != nil && !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("forgetting the tenant store in Swift: %v", err)
	}
}

// containerReplicaListings asks each of Swift's container servers holding a container for its
// listing, straight (the proxy would answer from one of them).
func containerReplicaListings(t *testing.T, ctx context.Context, account, container string) [][]string {
	t.Helper()
	rings, err := ring.LoadDir(swiftRingDir)
	if err != nil {
		t.Fatal(err)
	}
	part := rings.Container.Partition(account, container, "")
	var out [][]string
	for _, d := range rings.Container.Nodes(part) {
		u := "http://" + d.Node + "/" + d.Name + "/" + strconv.FormatUint(uint64(part), 10) + "/" + account + "/" + url.PathEscape(container) + "?format=json"
		req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rows []struct{ Name string }
		err = json.NewDecoder(resp.Body).Decode(&rows)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("GET %s: %s, %v", u, resp.Status, err)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
		}
		out = append(out, names)
	}
	return out
}

func s3Get(t *testing.T, ctx context.Context, client *s3.Client, bucket, key string) []byte {
	t.Helper()
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return b
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// swiftSession is a tempauth login to a Swift API (Swift's proxy or Cairn's).
type swiftSession struct{ url, token string }

func swiftLoginAt(t *testing.T, endpoint, user, key string) *swiftSession {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, endpoint+"/auth/v1.0", nil)
	req.Header.Set("X-Auth-User", user)
	req.Header.Set("X-Auth-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("auth of %s at %s: status %d", user, endpoint, resp.StatusCode)
	}
	return &swiftSession{url: resp.Header.Get("X-Storage-Url"), token: resp.Header.Get("X-Auth-Token")}
}

func (s *swiftSession) must(t *testing.T, method, path string, hdr map[string]string, body []byte, want int) (http.Header, []byte) {
	t.Helper()
	status, h, b := s.do(t, method, path, hdr, body)
	if status != want {
		t.Fatalf("%s %s at %s: status %d, want %d: %s", method, path, s.url, status, want, b)
	}
	return h, b
}

// deleteContainer deletes an emptied container, once its listing no longer shows the objects
// deleted (eventually).
func (s *swiftSession) deleteContainer(t *testing.T, container string) {
	t.Helper()
	eventually(t, func() error {
		switch status, _, b := s.do(t, "DELETE", "/"+url.PathEscape(container), nil, nil); status {
		case http.StatusNoContent:
			return nil
		case http.StatusConflict: // not empty yet
			return fmt.Errorf("DELETE of container %s at %s: status %d: %s", container, s.url, status, b)
		default:
			t.Fatalf("DELETE of container %s at %s: status %d: %s", container, s.url, status, b)
			return nil
		}
	})
}

func (s *swiftSession) do(t *testing.T, method, path string, hdr map[string]string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", s.token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

type listedObject struct {
	Name  string `json:"name"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
}

func (s *swiftSession) objects(t *testing.T, container string) []listedObject {
	t.Helper()
	_, b := s.must(t, "GET", "/"+url.PathEscape(container)+"?format=json", nil, nil, http.StatusOK)
	var l []listedObject
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatalf("listing of %s: %v: %s", container, err, b)
	}
	return l
}

func (s *swiftSession) containers(t *testing.T) []string {
	t.Helper()
	var names []string
	marker := ""
	for {
		_, b := s.must(t, "GET", "?format=json&marker="+url.QueryEscape(marker), nil, nil, http.StatusOK)
		var page []struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("account listing: %v: %s", err, b)
		}
		if len(page) == 0 {
			return names
		}
		for _, c := range page {
			names = append(names, c.Name)
		}
		marker = page[len(page)-1].Name
		if len(names) > 100_000 {
			t.Fatal("account listing does not end: " + strconv.Itoa(len(names)))
		}
	}
}
