// Package cluster holds the tests of Cairn as a cluster of real processes on loopback: storage
// nodes and proxies (internal/localcluster runs them from the cairn binary), killed with
// SIGKILL, stopped, and fed bad requests on the node port, while clients work through the
// proxy. Skipped under -short.
package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/test/e2e"
)

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }

// start runs a local cluster for the test, stopped when it ends.
func start(t *testing.T, cfg localcluster.Config) (*localcluster.Cluster, *s3.Client) {
	t.Helper()
	cfg.Binary = e2e.Binary(t)
	cfg.Dir = t.TempDir()
	if cfg.RootAccessKey == "" {
		cfg.RootAccessKey, cfg.RootSecretKey = "CLUSTERROOT"+strings.ToUpper(e2e.RandomKey(4)), e2e.RandomKey(20)
	}
	if !slices.Contains(cfg.Args, "--log-level") {
		cfg.Args = append(cfg.Args, "--log-level", "warn")
	}
	var out bytes.Buffer
	var outMu sync.Mutex
	cfg.Output = writerFunc(func(b []byte) (int, error) {
		outMu.Lock()
		defer outMu.Unlock()
		return out.Write(b)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := localcluster.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
		if t.Failed() {
			outMu.Lock()
			lines := strings.Split(out.String(), "\n")
			outMu.Unlock()
			t.Logf("cluster output, last lines:\n%s", strings.Join(lines[max(0, len(lines)-80):], "\n"))
		}
	})
	return c, e2e.NewS3Client(c.Endpoint, cfg.RootAccessKey, cfg.RootSecretKey, e2e.NoRetries)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestKillStorageNodeDuringLoad kills one storage process with SIGKILL while clients PUT, GET
// and DELETE through the proxy, with no retries: not one client operation may fail, and every
// acknowledged object reads back byte for byte, while the node is down and after it returns.
// Then replication must put every object back at its replica count: read from the devices
// themselves, each name is on exactly its primaries, all with the same version and bytes, and
// no handoff holds anything.
func TestKillStorageNodeDuringLoad(t *testing.T) {
	c, client := start(t, localcluster.Config{Storage: 4, Proxies: 1, Args: []string{"--replication-interval", "1s"}})
	ctx := context.Background()
	const bucket = "load"
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	acked := map[string][]byte{} // what the cluster said it stores
	deleted := map[string]bool{}
	var failures []string
	var ops int
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			var mine []string
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				ops++
				mu.Unlock()
				switch op := rng.IntN(10); {
				case op < 5 || len(mine) == 0: // PUT a new object, small or past the inline size
					key := fmt.Sprintf("w%d/o%05d", w, i)
					body := make([]byte, []int{100, 4 << 10, 200 << 10}[rng.IntN(3)])
					for j := range body {
						body[j] = byte(rng.Uint32())
					}
					if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
						fail("PUT %s: %v", key, err)
						continue
					}
					mu.Lock()
					acked[key] = body
					mu.Unlock()
					mine = append(mine, key)
				case op < 9: // GET one of ours
					key := mine[rng.IntN(len(mine))]
					got, err := getObject(ctx, client, bucket, key)
					mu.Lock()
					want := acked[key]
					mu.Unlock()
					if err != nil {
						fail("GET %s: %v", key, err)
					} else if !bytes.Equal(got, want) {
						fail("GET %s: %d bytes differ from the %d written", key, len(got), len(want))
					}
				default: // DELETE one of ours
					j := rng.IntN(len(mine))
					key := mine[j]
					if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
						fail("DELETE %s: %v", key, err)
						continue
					}
					mine = append(mine[:j], mine[j+1:]...)
					mu.Lock()
					delete(acked, key)
					deleted[key] = true
					mu.Unlock()
				}
			}
		}()
	}
	victim := c.Storage()[1]
	time.Sleep(2 * time.Second)
	victim.Kill()
	t.Logf("killed %s (%s)", victim.Name, victim.Addr)
	time.Sleep(4 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("%d operations, %d objects acknowledged, %d deleted", ops, len(acked), len(deleted))
	if len(failures) > 0 {
		t.Fatalf("%d failed client operations with a storage node killed, first: %s", len(failures), strings.Join(failures[:min(10, len(failures))], "\n"))
	}
	check := func(when string) {
		t.Helper()
		for key, want := range acked {
			got, err := getObject(ctx, client, bucket, key)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: GET %s: %v (%d bytes, want %d)", when, key, err, len(got), len(want))
			}
		}
		for key := range deleted {
			if _, err := getObject(ctx, client, bucket, key); !isNoSuchKey(err) {
				t.Fatalf("%s: GET of deleted %s: %v, want NoSuchKey", when, key, err)
			}
		}
	}
	check("node down")
	// The operator sees the node down, and data away from home.
	st := clusterStatus(t, c)
	if st.Summary.NodesDown != 1 || st.Summary.Nodes != 4 {
		t.Fatalf("status with a node killed: %+v", st.Summary)
	}
	if err := victim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	check("node back")

	waitReplicated(t, c, 2*time.Minute)
	st = clusterStatus(t, c)
	if st.Summary.NodesDown != 0 || st.Summary.HandoffPartitions != 0 || st.Summary.Devices != 4 || st.Summary.OldestReplicationPass == "never" {
		t.Fatalf("status once replicated: %+v", st.Summary)
	}
	for _, n := range st.Nodes {
		if r := n.Daemons["replicator"]; r.Passes < 2 {
			t.Fatalf("%s: replicator status %+v", n.Address, r)
		}
	}
	copies, rg := onDisk(t, c)
	found := 0
	for name, cs := range copies {
		where := map[string]bool{}
		for _, dc := range cs {
			where[dc.node+"/"+dc.device] = true
			if dc.ts != cs[0].ts || dc.deleted != cs[0].deleted || !bytes.Equal(dc.data, cs[0].data) {
				t.Fatalf("%q: copies differ: %s/%s has %d (deleted %v, %d bytes), %s/%s has %d (deleted %v, %d bytes)", name.Object,
					cs[0].node, cs[0].device, cs[0].ts, cs[0].deleted, len(cs[0].data), dc.node, dc.device, dc.ts, dc.deleted, len(dc.data))
			}
		}
		if want := primariesOf(rg, name); fmt.Sprint(where) != fmt.Sprint(want) || len(cs) != rg.Replicas() {
			t.Fatalf("%q is on %v, want exactly its primaries %v", name.Object, where, want)
		}
		if name.Container != bucket {
			continue
		}
		if want, ok := acked[name.Object]; ok {
			found++
			if cs[0].deleted || !bytes.Equal(cs[0].data, want) {
				t.Fatalf("%q: on disk deleted=%v, %d bytes; acknowledged %d bytes", name.Object, cs[0].deleted, len(cs[0].data), len(want))
			}
		} else if deleted[name.Object] && !cs[0].deleted {
			t.Fatalf("deleted %q is live on disk", name.Object)
		}
	}
	if found != len(acked) {
		t.Fatalf("%d of %d acknowledged objects found on disk", found, len(acked))
	}
	t.Logf("on disk: %d names, each on exactly its %d primaries", len(copies), rg.Replicas())
}

func getObject(ctx context.Context, c *s3.Client, bucket, key string) ([]byte, error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

func isNoSuchKey(err error) bool {
	var nsk interface{ ErrorCode() string }
	return errors.As(err, &nsk) && nsk.ErrorCode() == "NoSuchKey"
}

// TestNodePortRefusesBadRequests sends a real storage process requests that are unsigned,
// signed with another secret, or malformed: each is refused, and nothing stored changes.
func TestNodePortRefusesBadRequests(t *testing.T) {
	c, client := start(t, localcluster.Config{Storage: 3, Proxies: 1})
	ctx := context.Background()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("kept"), Key: aws.String("k"), Body: strings.NewReader("precious")}); err != nil {
		t.Fatal(err)
	}
	node := c.Storage()[0]
	cases := []struct {
		name, method, path string
		header             map[string]string
		body               string
		want               int
	}{
		{"unsigned PUT", "PUT", "/d1/0/root/kept/k", map[string]string{"X-Timestamp": "9999999999.00000"}, "evil", http.StatusUnauthorized},
		{"unsigned DELETE", "DELETE", "/d1/0/root/kept/k", map[string]string{"X-Timestamp": "9999999999.00000"}, "", http.StatusUnauthorized},
		{"unsigned container DELETE", "DELETE", "/d1/0/root/kept", nil, "", http.StatusUnauthorized},
		{"forged signature", "PUT", "/d1/0/root/kept/k", map[string]string{"X-Backend-Cairn-Auth": "9999999999:" + strings.Repeat("ab", 32)}, "evil", http.StatusUnauthorized},
		{"garbage signature", "GET", "/d1/0/root/kept/k", map[string]string{"X-Backend-Cairn-Auth": "not a signature"}, "", http.StatusUnauthorized},
		{"no path", "GET", "/", nil, "", http.StatusUnauthorized},
		{"traversal", "GET", "/../../etc/passwd", nil, "", http.StatusUnauthorized},
	}
	for _, tc := range cases {
		req, err := http.NewRequest(tc.method, node.Endpoint()+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	if got, err := getObject(ctx, client, "kept", "k"); err != nil || string(got) != "precious" {
		t.Fatalf("after the bad requests: %q, %v", got, err)
	}
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("kept")}); err != nil {
		t.Fatalf("bucket after the bad requests: %v", err)
	}
	// The node still serves its proxy.
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("kept"), Key: aws.String("after"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
}
