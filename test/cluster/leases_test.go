package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/test/e2e"
)

// TestReadLeasesBetweenStorageProcesses: storage processes run with --read-leases grant each
// other leases over the node protocol once replication has run both ways, the names a holder
// marks on each write are settled by its granters' answers (their lookups of the versions on
// their devices), and then GETs through a proxy with --read-leases are answered by first
// primaries alone, with the right bytes. A storage node killed while a write goes past it
// answers nothing alone of what it missed when it is back.
func TestReadLeasesBetweenStorageProcesses(t *testing.T) {
	c, client := start(t, localcluster.Config{Storage: 3, Proxies: 2, Replicas: 3, Links: true, Args: []string{"--replication-interval", "1s", "--read-leases"}})
	access, secret := c.RootKey()
	// Writes through one proxy, reads through the other, which never sees the writes' faults
	// (a proxy that did reads a node that failed last).
	writer := e2e.NewS3Client(c.Front()[0].Endpoint(), access, secret, e2e.NoRetries)
	reader := e2e.NewS3Client(c.Front()[1].Endpoint(), access, secret, e2e.NoRetries)
	ctx := context.Background()
	const objects = 12
	granted := func() bool {
		for _, n := range c.Storage() {
			if metric(t, n, `cairn_read_lease_renewals_total{outcome="granted"}`) == 0 {
				return false
			}
		}
		return true
	}
	waitFor(t, 2*time.Minute, "every storage node granted a renewal", granted)
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("leased")}); err != nil {
		t.Fatal(err)
	}
	for i := range objects {
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("leased"), Key: aws.String(fmt.Sprintf("k%d", i)), Body: strings.NewReader("v")}); err != nil {
			t.Fatal(err)
		}
	}
	unsettled := func() float64 {
		sum := 0.0
		for _, n := range c.Storage() {
			sum += metric(t, n, "cairn_read_lease_unsettled_names")
		}
		return sum
	}
	marked := 0.0
	for _, n := range c.Storage() {
		marked += metric(t, n, "cairn_read_lease_writes_total")
	}
	// Each object's three replicas, besides the bucket's own records.
	if marked < 3*objects {
		t.Fatalf("the storage nodes heard of %v writes, want at least 3 per object", marked)
	}
	waitFor(t, 2*time.Minute, "every written name settled", func() bool { return unsettled() == 0 })
	if answered := metric(t, c.Storage()[0], `cairn_read_lease_grants_total{outcome="granted"}`); answered == 0 {
		t.Fatal("the first storage node granted nothing")
	}
	alone := func() float64 {
		sum := 0.0
		for _, n := range c.Storage() {
			sum += metric(t, n, `cairn_read_lease_reads_total{answer="alone"}`)
		}
		return sum
	}
	readAll := func(want func(i int) string) {
		t.Helper()
		for i := range objects {
			got, err := getObject(ctx, reader, "leased", fmt.Sprintf("k%d", i))
			if err != nil || string(got) != want(i) {
				t.Fatalf("GET k%d: %q, %v; want %q", i, got, err, want(i))
			}
		}
	}
	// A renewal late on a loaded machine sends a read the slow way, which is right too: the
	// reads are repeated until some are answered alone.
	waitFor(t, 2*time.Minute, "a GET answered alone by a first primary", func() bool {
		readAll(func(int) string { return "v" })
		return alone() > 0
	})
	// A storage node cut off from the proxy (its port refuses; it still renews its leases with
	// its peers) while every object is overwritten: the writes it misses revoke its leases, so
	// when it is reachable again it answers none of them alone with its old version. Then
	// killed and restarted, the same.
	victim := c.Storage()[0]
	overwrite := func(body string) {
		for i := range objects {
			if _, err := writer.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("leased"), Key: aws.String(fmt.Sprintf("k%d", i)), Body: strings.NewReader(body)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := victim.Link().Refuse(true); err != nil {
		t.Fatal(err)
	}
	overwrite("w")
	if err := victim.Link().Refuse(false); err != nil {
		t.Fatal(err)
	}
	readAll(func(int) string { return "w" })
	victim.Kill()
	overwrite("x")
	if err := victim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	readAll(func(int) string { return "x" })
}

// waitFor polls cond until it holds, failing the test after limit (a bound only a broken
// build reaches).
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
