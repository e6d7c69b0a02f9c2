package cluster

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/localcluster"
)

// TestPartitionedAndSlowNodes cuts one storage node off the network (its port refuses, its
// open connections are cut) and then slows another's link, while clients PUT and GET without
// retries: no operation may fail, the proxy working around the lost node with handoffs and
// waiting out the slow one. Each phase lasts until its clients have completed a number of
// operations, however long that takes. Latency percentiles of each phase are logged (not
// asserted: the machines that run this are shared). After both links are healed, replication
// puts every object on exactly its primaries.
func TestPartitionedAndSlowNodes(t *testing.T) {
	c, client := start(t, localcluster.Config{Storage: 4, Proxies: 1, Links: true,
		Args: []string{"--replication-interval", "1s"}})
	ctx := context.Background()
	const bucket = "links"
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[string][]byte{}
	var failures []string
	// Each operation counts in the phase it began in.
	phase := "normal"
	completed := map[string]int{}             // operations, failed or not, by phase
	latencies := map[string][]time.Duration{} // of the successful ones
	stop := make(chan struct{})
	mine := make([][]string, 4) // each client's keys
	wait := clients(4, 3, stop, func(w int, rng *rand.Rand, i int) {
		mu.Lock()
		phase := phase
		mu.Unlock()
		begin := time.Now()
		record := func(d time.Duration) {
			mu.Lock()
			latencies[phase] = append(latencies[phase], d)
			mu.Unlock()
		}
		defer func() {
			mu.Lock()
			completed[phase]++
			mu.Unlock()
		}()
		if rng.IntN(2) == 0 || len(mine[w]) == 0 {
			key := fmt.Sprintf("w%d/%05d", w, i)
			body := randomBody(rng, 4<<10, 100<<10)
			_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
			mu.Lock()
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s: PUT %s: %v", phase, key, err))
			} else {
				acked[key] = body
			}
			mu.Unlock()
			if err == nil {
				mine[w] = append(mine[w], key)
				record(time.Since(begin))
			}
			return
		}
		key := mine[w][rng.IntN(len(mine[w]))]
		got, err := getObject(ctx, client, bucket, key)
		mu.Lock()
		if err != nil || !bytes.Equal(got, acked[key]) {
			failures = append(failures, fmt.Sprintf("%s: GET %s: %v (%d bytes)", phase, key, err, len(got)))
		}
		mu.Unlock()
		record(time.Since(begin))
	})
	// A phase lasts at least d and until 100 operations begun in it have completed.
	setPhase := func(p string, d time.Duration) {
		mu.Lock()
		phase = p
		mu.Unlock()
		keepLoad(t, d, 100, func() int {
			mu.Lock()
			defer mu.Unlock()
			return completed[p]
		})
	}
	storage := c.Storage()
	setPhase("normal", 3*time.Second)
	if err := storage[1].Link().Refuse(true); err != nil {
		t.Fatal(err)
	}
	setPhase("one node partitioned", 5*time.Second)
	if err := storage[1].Link().Refuse(false); err != nil {
		t.Fatal(err)
	}
	storage[2].Link().SetDelay(20 * time.Millisecond)
	setPhase("one node slow (20 ms per chunk each way)", 5*time.Second)
	storage[2].Link().SetDelay(0)
	setPhase("healed", 3*time.Second)
	close(stop)
	wait()

	for _, p := range []string{"normal", "one node partitioned", "one node slow (20 ms per chunk each way)", "healed"} {
		ls := latencies[p]
		slices.Sort(ls)
		if len(ls) == 0 {
			t.Fatalf("phase %q: no successful operation", p)
		}
		t.Logf("%-42s %5d ops  p50 %6.1f ms  p99 %7.1f ms  max %7.1f ms", p, len(ls),
			ms(ls[len(ls)/2]), ms(ls[len(ls)*99/100]), ms(ls[len(ls)-1]))
	}
	if len(failures) > 0 {
		t.Fatalf("%d failed client operations, first: %s", len(failures), strings.Join(failures[:min(10, len(failures))], "\n"))
	}
	waitReplicated(t, c, convergence)
	copies, rg := onDisk(t, c)
	for name, cs := range copies {
		where := map[string]bool{}
		for _, dc := range cs {
			where[dc.node+"/"+dc.device] = true
			if dc.ts != cs[0].ts || !bytes.Equal(dc.data, cs[0].data) {
				t.Fatalf("%q: copies differ", name.Object)
			}
		}
		if want := primariesOf(rg, name); fmt.Sprint(where) != fmt.Sprint(want) {
			t.Fatalf("%q is on %v, want exactly its primaries %v", name.Object, where, want)
		}
		if name.Container == bucket && !bytes.Equal(cs[0].data, acked[name.Object]) {
			t.Fatalf("%q on disk is not what was acknowledged", name.Object)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
