package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/test/e2e"
)

// TestStoragePolicies runs a cluster of two storage policies (cairn local-cluster --policies
// gold,silver: every storage node has a device for each) and creates containers in both through
// Swift (X-Storage-Policy) and S3 (LocationConstraint REGION:POLICY): each object's bytes must
// be on its container's policy's devices only, a container's policy cannot change (409), and
// /info lists both policies.
func TestStoragePolicies(t *testing.T) {
	e2e.SkipShort(t)
	if e2e.ClusterTopology() != nil {
		t.Skip("runs its own topology")
	}
	rootAK, rootSK := "CLUSTERROOT"+strings.ToUpper(e2e.RandomKey(4)), e2e.RandomKey(20)
	c, _ := start(t, localcluster.Config{Storage: 3, Proxies: 1, Policies: []string{"gold", "silver"}, RootAccessKey: rootAK, RootSecretKey: rootSK})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // only catches a hang
	defer cancel()

	// One user with S3 keys and a Swift key, in account "pol".
	user, ak, sk, swk := "pol:alice", "POL"+strings.ToUpper(e2e.RandomKey(8)), e2e.RandomKey(20), e2e.RandomKey(12)
	for _, args := range [][]string{{"account", "create", "pol"},
		{"user", "create", user, "--user-access-key", ak, "--user-secret-key", sk, "--user-swift-key", swk, "--admin"}} {
		cmd := exec.CommandContext(ctx, e2e.Binary(t), append([]string{"admin", "--endpoint", c.Endpoint, "--access-key", rootAK, "--secret-key", rootSK}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cairn admin %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	swift := swiftLoginAt(t, c.Endpoint, user, swk)
	client := e2e.NewS3Client(c.Endpoint, ak, sk, e2e.NoRetries)

	// /info lists both, gold the default.
	resp, err := http.Get(c.Endpoint + "/info")
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Swift struct {
			Policies []struct {
				Name    string `json:"name"`
				Default bool   `json:"default"`
			} `json:"policies"`
		} `json:"swift"`
	}
	err = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if pols := info.Swift.Policies; err != nil || len(pols) != 2 || pols[0].Name != "gold" || !pols[0].Default || pols[1].Name != "silver" || pols[1].Default {
		t.Fatalf("/info policies: %+v, %v", info.Swift.Policies, err)
	}

	big := func(seed byte) []byte { return bytes.Repeat([]byte{seed, seed + 1, seed + 2}, 70<<10) } // past the inline size: a data file
	wantOn := map[string]int{}                                                                      // device → data files expected on each node

	// Swift: a container in each policy, an object in each.
	swift.must(t, "PUT", "/sw-silver", map[string]string{"X-Storage-Policy": "SILVER"}, nil, http.StatusCreated)
	swift.must(t, "PUT", "/sw-gold", nil, nil, http.StatusCreated)
	for container, pol := range map[string]string{"sw-silver": "silver", "sw-gold": "gold"} {
		if hdr, _ := swift.must(t, "HEAD", "/"+container, nil, nil, http.StatusNoContent); hdr.Get("X-Storage-Policy") != pol {
			t.Fatalf("%s: X-Storage-Policy %q, want %s", container, hdr.Get("X-Storage-Policy"), pol)
		}
		data := big(byte(len(container)))
		swift.must(t, "PUT", "/"+container+"/obj", nil, data, http.StatusCreated)
		if _, got := swift.must(t, "GET", "/"+container+"/obj", nil, nil, http.StatusOK); !bytes.Equal(got, data) {
			t.Fatalf("%s: read back different bytes", container)
		}
		wantOn[devOf(pol)]++
	}
	// A container keeps its policy: naming another is a conflict, naming none or its own is not.
	swift.must(t, "PUT", "/sw-silver", map[string]string{"X-Storage-Policy": "gold"}, nil, http.StatusConflict)
	swift.must(t, "PUT", "/sw-silver", nil, nil, http.StatusAccepted)
	swift.must(t, "PUT", "/sw-silver", map[string]string{"X-Storage-Policy": "silver"}, nil, http.StatusAccepted)
	swift.must(t, "POST", "/sw-silver", map[string]string{"X-Storage-Policy": "gold"}, nil, http.StatusNoContent)
	if hdr, _ := swift.must(t, "HEAD", "/sw-silver", nil, nil, http.StatusNoContent); hdr.Get("X-Storage-Policy") != "silver" {
		t.Fatalf("after attempts to change it: X-Storage-Policy %q", hdr.Get("X-Storage-Policy"))
	}
	swift.must(t, "PUT", "/sw-tin", map[string]string{"X-Storage-Policy": "tin"}, nil, http.StatusBadRequest)

	// S3: a bucket in silver (a single PUT and a multipart upload) and one in the default.
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("s3-silver"),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "us-east-1:silver"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("s3-gold")}); err != nil {
		t.Fatal(err)
	}
	_, err = client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("s3-tin"),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "us-east-1:tin"}})
	var apiErr interface{ ErrorCode() string }
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "InvalidLocationConstraint" {
		t.Fatalf("a bucket in no policy: %v", err)
	}
	if hdr, _ := swift.must(t, "HEAD", "/s3-silver", nil, nil, http.StatusNoContent); hdr.Get("X-Storage-Policy") != "silver" {
		t.Fatalf("S3 bucket: X-Storage-Policy %q", hdr.Get("X-Storage-Policy"))
	}
	for bucket, pol := range map[string]string{"s3-silver": "silver", "s3-gold": "gold"} {
		data := big(byte(len(bucket) + 7))
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("obj"), Body: bytes.NewReader(data)}); err != nil {
			t.Fatal(err)
		}
		if got, err := getObject(ctx, client, bucket, "obj"); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: read back %d bytes, %v", bucket, len(got), err)
		}
		wantOn[devOf(pol)]++
	}
	key := "mpu"
	parts := [][]byte{bytes.Repeat([]byte("p"), 5<<20), []byte("tail")}
	up, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("s3-silver"), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	var done []s3types.CompletedPart
	for i, p := range parts {
		res, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("s3-silver"), Key: aws.String(key), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, s3types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: res.ETag})
	}
	if _, err := client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("s3-silver"), Key: aws.String(key), UploadId: up.UploadId,
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: done}}); err != nil {
		t.Fatal(err)
	}
	if got, err := getObject(ctx, client, "s3-silver", key); err != nil || !bytes.Equal(got, bytes.Join(parts, nil)) {
		t.Fatalf("multipart object: %d bytes, %v", len(got), err)
	}
	wantOn[devOf("silver")]++ // the 5 MiB part: the parts go to the bucket's policy too

	// Every node holds each object (three replicas over three nodes), on its policy's device.
	for _, n := range c.Storage() {
		for _, dev := range []string{"d1", "p1-d1"} {
			if got := dataFiles(t, filepath.Join(n.DataDir, "devices", dev)); got != wantOn[dev] {
				t.Errorf("%s/%s holds %d data files, want %d", n.Name, dev, got, wantOn[dev])
			}
		}
	}
}

// devOf is the device of a policy on each node of the test's cluster.
func devOf(policy string) string {
	if policy == "silver" {
		return "p1-d1"
	}
	return "d1"
}

// dataFiles counts the object data files of a device.
func dataFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, "objects"), func(path string, d os.DirEntry, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".data") {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
