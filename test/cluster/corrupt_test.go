package cluster

import (
	"bytes"
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/index"
	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/test/e2e"
)

// TestCorruptionIsFoundAndRepaired damages one replica on disk while its node is down (a bit
// flipped in a data file, in an inline object's record and in a listing row), then starts it
// again: GETs through the proxy never return bad bytes (a replica that finds its copy corrupt
// answers so, and the proxy reads another), the node's auditor flags the damaged versions, and
// replication replaces them with good copies, after which every replica on disk is the same.
func TestCorruptionIsFoundAndRepaired(t *testing.T) {
	c, client := start(t, localcluster.Config{Storage: 3, Proxies: 1, Args: []string{"--replication-interval", "1s",
		"--audit-interval", "200ms", "--audit-bytes-per-second", "-1", "--audit-records-per-second", "-1"}})
	ctx := context.Background()
	const bucket = "damage"
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	objects := map[string][]byte{
		"big":    bytes.Repeat([]byte("a large object, kept in a data file. "), 10_000),
		"small":  []byte("a small object, kept inline in its record"),
		"listed": []byte("an object whose listing row goes bad on one replica"),
	}
	for key, body := range objects {
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatalf("PUT %s: %v", key, err)
		}
	}
	// Three nodes, three replicas: every node holds every object.
	victim := c.Storage()[0]
	if err := victim.Stop(2 * time.Minute); err != nil { // the bound only catches a node that hangs
		t.Fatal(err)
	}
	device := filepath.Join(victim.DataDir, "devices", "d1")
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
	e2e.FlipByte(t, files[0], 123_456)
	db, err := pebble.Open(filepath.Join(device, "lsm"), &pebble.Options{Merger: index.Merger, Logger: e2e.QuietPebble{}})
	if err != nil {
		t.Fatal(err)
	}
	e2e.FlipLSM(t, db, 'o', bucket, "small")
	e2e.FlipLSM(t, db, 'c', bucket, "listed")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := victim.Start(ctx); err != nil {
		t.Fatal(err)
	}

	// Reads never see the damage, before the auditor, while it works and after the repair.
	deadline := time.Now().Add(2 * time.Minute)
	found, repaired := false, false
	for !repaired {
		for key, want := range objects {
			got, err := getObject(ctx, client, bucket, key)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("GET %s with one replica damaged: %v (%d bytes, want %d)", key, err, len(got), len(want))
			}
		}
		// Both damaged versions found (by the auditor, or by a read that met one first) and
		// the listing row by the auditor, or replaced by replication that met it first (a
		// replicated row written over one failing its checksum: a busy machine's auditor can
		// come second).
		checksums := metric(t, victim, "cairn_device_checksum_failures_total")
		rows := metric(t, victim, `cairn_auditor_failures_total{device="d1",kind="listing"}`) + metric(t, victim, "cairn_device_listing_rows_replaced_total")
		found = found || (checksums >= 2 && rows >= 1)
		repaired = found && metric(t, victim, "cairn_device_corrupt_objects") == 0
		if time.Now().After(deadline) {
			t.Fatalf("not repaired in time: checksum failures %v, bad listing rows %v, corrupt objects %v", checksums, rows, metric(t, victim, "cairn_device_corrupt_objects"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	waitReplicated(t, c, convergence)
	copies, _ := onDisk(t, c)
	// The listing row the auditor removed is back, from the other replicas' listings.
	listings, _, _ := listingsOnDisk(t, c)
	if n := len(listings[nodeclient.Listing{Account: "root", Container: bucket}]); n != 3 {
		t.Fatalf("%d replicas of the bucket's listing on disk, want 3", n)
	}
	for _, lc := range listings[nodeclient.Listing{Account: "root", Container: bucket}] {
		if len(lc.objects) != len(objects) {
			t.Fatalf("the listing on %s/%s holds %d objects, want %d", lc.node, lc.device, len(lc.objects), len(objects))
		}
		for key, body := range objects {
			if e, ok := lc.objects[key]; !ok || e.Size != int64(len(body)) {
				t.Fatalf("the listing on %s/%s has %q as %+v", lc.node, lc.device, key, e)
			}
		}
	}
	for name, cs := range copies {
		if name.Container != bucket {
			continue
		}
		if len(cs) != 3 {
			t.Fatalf("%q: %d copies on disk, want 3", name.Object, len(cs))
		}
		for _, dc := range cs {
			if !bytes.Equal(dc.data, objects[name.Object]) {
				t.Fatalf("%q on %s: %d bytes differ from what was written", name.Object, dc.node, len(dc.data))
			}
		}
	}
}
