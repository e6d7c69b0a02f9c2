package e2e

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/index"
)

// The auditor, end to end: objects are written, the server is stopped, a byte of a data file,
// a byte of an inline object's record and a bit of a listing row are flipped on disk, and the
// server is started again with a fast auditor. Its metrics say it found the two objects and the
// row; GETs of the two answer 500 and never their bytes; the row, on the embedded default, is
// rebuilt from the object's record, so the listing is whole; what failed is in quarantine/.
func TestAuditorFindsDamageOnDisk(t *testing.T) {
	if ClusterTopology() != nil {
		t.Skip("flips bytes in the embedded default's device")
	}
	ctx, cancel := context.WithTimeout(Context(t), 5*time.Minute)
	defer cancel()
	data := t.TempDir()
	srv := Start(t, Options{DataDir: data, Args: []string{"--audit-interval", "-1s"}})
	c := srv.S3Client()
	bucket := newBucket(t, ctx, c, "audit")
	objects := map[string][]byte{
		"big":    bytes.Repeat([]byte("large object, kept in a data file. "), 10_000),
		"small":  []byte("a small object, kept inline in its record"),
		"listed": []byte("an object whose listing row goes bad"),
		"good":   []byte("an object nothing happens to"),
	}
	for key, body := range objects {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatalf("PUT %s: %v", key, err)
		}
	}
	if err := srv.Stop(StopTimeout); err != nil {
		t.Fatalf("stop: %v", err)
	}

	device := filepath.Join(data, "devices", "d0")
	var files []string
	filepath.WalkDir(filepath.Join(device, "objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".data") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("data files %q, want the big object's alone", files)
	}
	FlipByte(t, files[0], 123_456)
	db, err := pebble.Open(filepath.Join(device, "lsm"), &pebble.Options{Merger: index.Merger, Logger: QuietPebble{}})
	if err != nil {
		t.Fatalf("opening the device's LSM: %v", err)
	}
	// Object records start with 'o', listing rows with 'c'; both end with the bucket's name
	// (length-prefixed) and the key.
	FlipLSM(t, db, 'o', bucket, "small")
	FlipLSM(t, db, 'c', bucket, "listed")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	srv = Start(t, Options{DataDir: data, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
		Args: []string{"--audit-interval", "10ms", "--audit-bytes-per-second", "-1", "--audit-records-per-second", "-1"}})
	for metricValue(t, srv, `cairn_auditor_passes_total{device="d0"}`) < 1 {
		select {
		case <-ctx.Done():
			t.Fatal("the auditor completed no pass")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if got := metricValue(t, srv, `cairn_auditor_failures_total{device="d0",kind="object"}`); got != 2 {
		t.Errorf("object failures %v, want 2", got)
	}
	if got := metricValue(t, srv, `cairn_auditor_failures_total{device="d0",kind="listing"}`); got != 1 {
		t.Errorf("listing failures %v, want 1", got)
	}
	if got := metricValue(t, srv, `cairn_device_corrupt_objects{device="d0"}`); got != 2 {
		t.Errorf("corrupt objects %v, want 2", got)
	}
	for _, key := range []string{"big", "small"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.Endpoint+"/"+bucket+"/"+key, nil)
		resp, err := srv.SignedRequest(ctx, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := ReadAllClose(resp.Body)
		if resp.StatusCode != http.StatusInternalServerError {
			t.Errorf("GET %s: %s, want 500", key, resp.Status)
		}
		if bytes.Contains(body, objects[key][:20]) {
			t.Errorf("GET %s served the object's bytes", key)
		}
	}
	c = srv.S3Client()
	for _, key := range []string{"good", "listed"} {
		got, _, err := getBytes(ctx, c, bucket, key)
		if err != nil || !bytes.Equal(got, objects[key]) {
			t.Errorf("GET %s: %v", key, err)
		}
	}
	l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, o := range l.Contents {
		listed = append(listed, aws.ToString(o.Key))
		if aws.ToString(o.Key) == "listed" && aws.ToInt64(o.Size) != int64(len(objects["listed"])) {
			t.Errorf("rebuilt row: %d bytes", aws.ToInt64(o.Size))
		}
	}
	if !slices.Equal(listed, []string{"big", "good", "listed", "small"}) {
		t.Errorf("listing %q, want every object (the damaged ones stay listed, the bad row rebuilt)", listed)
	}
	q, err := os.ReadDir(filepath.Join(device, "quarantine"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range q {
		kinds[filepath.Ext(e.Name())]++
	}
	if kinds[".data"] != 1 || kinds[".record"] != 1 || kinds[".listing"] != 1 {
		t.Errorf("quarantine holds %v, want the data file, the record and the listing row", kinds)
	}
}

// metricValue returns the value of the /metrics line for series (name{labels}), 0 if absent.
func metricValue(t *testing.T, srv *Server, series string) float64 {
	t.Helper()
	return Metric(t, srv.Endpoint, series)
}
