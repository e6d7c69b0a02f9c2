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
)

// TestReadLeasesBetweenStorageProcesses: storage processes run with --read-leases grant each
// other leases over the node protocol once replication has run both ways, and the names a
// holder marks on each write are settled by its granters' answers (their lookups of the
// versions on their devices). Nothing is answered alone yet (the proxy does not ask): this is
// the plumbing the proxy's fast path will stand on.
func TestReadLeasesBetweenStorageProcesses(t *testing.T) {
	c, client := start(t, localcluster.Config{Storage: 3, Proxies: 1, Replicas: 3, Args: []string{"--replication-interval", "1s", "--read-leases"}})
	ctx := context.Background()
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
	for i := range 30 {
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
	if marked < 3*30 {
		t.Fatalf("the storage nodes heard of %v writes, want at least 90", marked)
	}
	waitFor(t, 2*time.Minute, "every written name settled", func() bool { return unsettled() == 0 })
	if answered := metric(t, c.Storage()[0], `cairn_read_lease_grants_total{outcome="granted"}`); answered == 0 {
		t.Fatal("the first storage node granted nothing")
	}
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
