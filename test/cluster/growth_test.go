package cluster

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/test/e2e"
)

// changeRings runs the operator's commands on every builder of the cluster (the real `cairn
// ring` CLI), then rebalances and writes each ring for the running nodes to pick up.
func changeRings(t *testing.T, c *localcluster.Cluster, args ...string) {
	t.Helper()
	run := func(a ...string) {
		t.Helper()
		out, err := exec.Command(e2e.Binary(t), append([]string{"ring"}, a...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("cairn ring %s: %v\n%s", strings.Join(a, " "), err, out)
		}
	}
	for _, kind := range []string{"account", "container", "object"} {
		b := filepath.Join(c.RingDir, kind+".builder")
		run("pretend-min-part-hours-passed", b)
		run(append([]string{args[0], b}, args[1:]...)...)
		run("rebalance", b)
		run("write", b, c.RingDir)
	}
}

// waitRingsReloaded waits until each of nodes has logged the reload of every ring in the
// cluster's ring directory at its version there (the nodes log at level info): until then a
// node may place data, or replicate it, by the rings before the change. The bound of two
// minutes only catches a node that never reloads.
func waitRingsReloaded(t *testing.T, c *localcluster.Cluster, nodes []*localcluster.Node) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(c.RingDir, "*.ring.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("rings in %s: %v, %v", c.RingDir, files, err)
	}
	var want []string // what a node logs as it takes each ring
	for _, f := range files {
		rg, err := ring.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf(`msg="ring reloaded" path=%s version=%d `, f, rg.Version))
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, n := range nodes {
		for {
			log, err := os.ReadFile(n.DataDir + ".log")
			if err != nil {
				t.Fatal(err)
			}
			missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return bytes.Contains(log, []byte(w)) })
			if len(missing) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s has not logged %q", n.Name, missing)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestGrowAndShrinkUnderLoad adds a fifth storage node and rebalances, then a second disk to a
// running node, then removes a device,
// while clients PUT and GET without retries: no client operation may fail, replication moves
// the data the rings moved, and in the end every object is on exactly its primaries under the
// final ring (read from the devices themselves) and the removed device holds nothing. It logs
// the bytes replication sent against the least that the ring changes required.
func TestGrowAndShrinkUnderLoad(t *testing.T) {
	c, client := start(t, localcluster.Config{Storage: 4, Proxies: 1, PartPower: 6,
		Args: []string{"--replication-interval", "1s", "--ring-reload", "1s", "--log-level", "info"}})
	ctx := context.Background()
	const bucket = "grow"
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	first, err := ring.Load(filepath.Join(c.RingDir, "object.ring.gz"))
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	acked := map[string][]byte{}
	var failures []string
	put := func(key string, rng *rand.Rand) {
		body := randomBody(rng, 1<<10, 16<<10, 150<<10)
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			mu.Lock()
			failures = append(failures, fmt.Sprintf("PUT %s: %v", key, err))
			mu.Unlock()
			return
		}
		mu.Lock()
		acked[key] = body
		mu.Unlock()
	}
	seed := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		put(fmt.Sprintf("before/%04d", i), seed)
	}

	stop := make(chan struct{})
	ops := 0
	wait := clients(2, 9, stop, func(w int, rng *rand.Rand, i int) {
		mu.Lock()
		ops++
		mu.Unlock()
		if rng.IntN(10) == 0 {
			put(fmt.Sprintf("during/w%d/%05d", w, i), rng)
			return
		}
		key := fmt.Sprintf("before/%04d", rng.IntN(300))
		got, err := getObject(ctx, client, bucket, key)
		mu.Lock()
		want := acked[key]
		if err != nil {
			failures = append(failures, fmt.Sprintf("GET %s: %v", key, err))
		} else if !bytes.Equal(got, want) {
			failures = append(failures, fmt.Sprintf("GET %s: %d bytes differ from the %d written", key, len(got), len(want)))
		}
		mu.Unlock()
	})

	// Grow: a fifth node, in a zone of its own.
	added, err := c.AddStorage()
	if err != nil {
		t.Fatal(err)
	}
	changeRings(t, c, "add", "--zone", "5", "--node", added.Addr, "--device", "d1", "--weight", "100")
	grown, err := ring.Load(filepath.Join(c.RingDir, "object.ring.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := added.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The new node read the new rings as it started; the others reload them.
	waitRingsReloaded(t, c, slices.DeleteFunc(slices.Clone(c.Nodes), func(n *localcluster.Node) bool { return n == added }))
	waitReplicated(t, c, convergence)

	// A second disk in a running node: the node opens it when the rings name it, and gets its
	// share of the data.
	widened := c.Storage()[1]
	changeRings(t, c, "add", "--zone", "2", "--node", widened.Addr, "--device", "d2", "--weight", "100")
	waitRingsReloaded(t, c, c.Nodes)
	waitReplicated(t, c, convergence)

	// Shrink: remove the first node's device (its process runs on, and must empty it).
	removed := c.Storage()[0]
	changeRings(t, c, "remove", "--node", removed.Addr)
	waitRingsReloaded(t, c, c.Nodes)
	waitReplicated(t, c, convergence)

	close(stop)
	wait()
	t.Logf("%d client operations during the changes, %d objects acknowledged", ops, len(acked))
	if len(failures) > 0 {
		t.Fatalf("%d failed client operations while the cluster grew and shrank, first: %s", len(failures), strings.Join(failures[:min(10, len(failures))], "\n"))
	}
	for key, want := range acked {
		got, err := getObject(ctx, client, bucket, key)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("GET %s after the changes: %v (%d bytes, want %d)", key, err, len(got), len(want))
		}
	}
	var pushed float64
	for _, n := range c.Storage() {
		pushed += metric(t, n, "cairn_replication_pushed_bytes_total")
	}

	copies, final := onDisk(t, c)
	onD2 := 0
	// The least data the ring changes had to move: each object's bytes once for every primary
	// of the final ring that was not a primary of the first. That is exact for the objects
	// written before the changes; those written during them may have gone straight to their
	// final places, or not, so they bound it from above.
	var minimum, during float64
	for name, cs := range copies {
		where := map[string]bool{}
		for _, dc := range cs {
			where[dc.node+"/"+dc.device] = true
			if dc.node == widened.Addr && dc.device == "d2" {
				onD2++
			}
			if dc.node == removed.Addr {
				t.Fatalf("%q is still on the removed device %s/%s", name.Object, dc.node, dc.device)
			}
			if dc.ts != cs[0].ts || !bytes.Equal(dc.data, cs[0].data) {
				t.Fatalf("%q: copies differ", name.Object)
			}
		}
		// While the last change may be under way, the partition's primaries before it keep
		// their copies (proxies that keep the old ring read and write them: joint quorums).
		want := primariesOf(final, name)
		for _, d := range final.PreviousNodes(final.Partition(name.Placed()), time.Now()) {
			want[d.Node+"/"+d.Name] = true
		}
		if fmt.Sprint(where) != fmt.Sprint(want) {
			t.Fatalf("%q is on %v, want exactly its primaries, with those before the last change %v", name.Object, where, want)
		}
		before := primariesOf(first, name)
		for p := range primariesOf(final, name) {
			if !before[p] {
				if strings.HasPrefix(name.Object, "during/") {
					during += float64(len(cs[0].data))
				} else {
					minimum += float64(len(cs[0].data))
				}
			}
		}
		if name.Container == bucket {
			if want, ok := acked[name.Object]; !ok || !bytes.Equal(cs[0].data, want) {
				t.Fatalf("%q on disk is not what was acknowledged", name.Object)
			}
		}
	}
	if onD2 == 0 {
		t.Fatal("the disk added to a running node holds nothing")
	}
	moved := 0
	for p := range first.Partitions() {
		a, b := first.Nodes(uint32(p)), grown.Nodes(uint32(p))
		for i := range a {
			if a[i] != b[i] {
				moved++
			}
		}
	}
	t.Logf("growth moved %d of %d partition-replicas; replication sent %.1f MiB; the least the ring changes required: %.1f MiB for the objects written before them (ratio %.2f), up to %.1f MiB more for those written during them (ratio %.2f with all of it)",
		moved, first.Partitions()*first.Replicas(), pushed/(1<<20), minimum/(1<<20), pushed/max(minimum, 1), during/(1<<20), pushed/max(minimum+during, 1))
}
