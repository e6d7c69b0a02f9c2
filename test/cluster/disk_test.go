package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
	"github.com/cairn-store/cairn/test/e2e"
)

// metric returns the sum of a metric's samples on a node's /metrics (e2e.Metric).
func metric(t *testing.T, n *localcluster.Node, name string) float64 {
	t.Helper()
	return e2e.Metric(t, n.Endpoint(), name)
}

// waitReplicated waits until every storage node has completed two more replication passes
// and the last of them found no partition away from its primaries.
func waitReplicated(t *testing.T, c *localcluster.Cluster, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	start := map[string]float64{}
	for _, n := range c.Storage() {
		start[n.Name] = metric(t, n, "cairn_replication_passes_total")
	}
	for {
		done := true
		for _, n := range c.Storage() {
			if metric(t, n, "cairn_replication_passes_total") < start[n.Name]+2 || metric(t, n, "cairn_replication_handoff_partitions") != 0 {
				done = false
			}
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			var state []string
			for _, n := range c.Storage() {
				state = append(state, fmt.Sprintf("%s: %v passes, %v handoff partitions", n.Name,
					metric(t, n, "cairn_replication_passes_total"), metric(t, n, "cairn_replication_handoff_partitions")))
			}
			for _, n := range c.Storage() {
				log, _ := os.ReadFile(filepath.Join(filepath.Dir(n.DataDir), n.Name+".log"))
				var lines []string
				for _, l := range strings.Split(string(log), "\n") {
					if strings.Contains(l, "replicat") {
						lines = append(lines, l)
					}
				}
				t.Logf("%s's replication log, last lines:\n%s", n.Name, strings.Join(lines[max(0, len(lines)-8):], "\n"))
			}
			t.Fatalf("replication did not settle within %v: %s", timeout, strings.Join(state, "; "))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// clusterStatus is `cairn admin status` of the cluster, through its proxy.
func clusterStatus(t *testing.T, c *localcluster.Cluster) admin.ClusterStatus {
	t.Helper()
	ak, sk := c.RootKey()
	cl, err := admin.NewClient(admin.ClientConfig{Endpoint: c.Endpoint, AccessKey: ak, SecretKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	st, err := cl.Status(context.Background())
	if err != nil {
		t.Fatalf("cluster status: %v", err)
	}
	return st
}

// waitStatus polls the cluster's status until ok accepts it. A node that does not report within
// the proxy's status timeout counts as down, which a healthy node on a loaded machine may do
// once; the bound of two minutes only catches a status that never comes right.
func waitStatus(t *testing.T, c *localcluster.Cluster, what string, ok func(admin.ClusterStatus) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st := clusterStatus(t, c)
		if ok(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster's status is not %s: %+v", what, st.Summary)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// diskCopy is one device's copy of a name.
type diskCopy struct {
	node, device string
	ts           meta.Timestamp
	deleted      bool
	data         []byte // nil for a tombstone
}

// onDisk stops the cluster and reads every storage node's devices directly (not through any
// API): for each object name, the copies the devices hold, and the ring that places them.
func onDisk(t *testing.T, c *localcluster.Cluster) (map[meta.ObjectName][]diskCopy, *ring.Ring) {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	rg, err := ring.Load(filepath.Join(c.RingDir, "object.ring.gz"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	copies := map[meta.ObjectName][]diskCopy{}
	for _, n := range c.Storage() {
		entries, err := os.ReadDir(filepath.Join(n.DataDir, "devices"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: e.Name(), Dir: filepath.Join(n.DataDir, "devices", e.Name())}},
				HashPrefix: rg.HashPrefix, HashSuffix: rg.HashSuffix})
			if err != nil {
				t.Fatalf("opening %s/%s: %v", n.Name, e.Name(), err)
			}
			err = node.PartitionsWithData(ctx, e.Name(), rg.PartPower, func(part uint32) error {
				vs, err := node.PartitionVersions(ctx, e.Name(), rg.PartPower, part, nil)
				if err != nil {
					return err
				}
				for _, v := range vs {
					dc := diskCopy{node: n.Addr, device: e.Name(), ts: v.Timestamp, deleted: v.Deleted}
					if !v.Deleted {
						r, err := node.GetObject(ctx, e.Name(), part, v.Name, nil)
						if err != nil {
							return fmt.Errorf("reading %v: %w", v.Name, err)
						}
						dc.data, err = io.ReadAll(r)
						r.Close()
						if err != nil {
							return fmt.Errorf("reading %v: %w", v.Name, err)
						}
					}
					copies[v.Name] = append(copies[v.Name], dc)
				}
				return nil
			})
			node.Close()
			if err != nil {
				t.Fatalf("%s/%s: %v", n.Name, e.Name(), err)
			}
		}
	}
	return copies, rg
}

// primariesOf returns "node/device" of a name's primaries: the ring places the names the
// cluster uses, Swift's (as the proxy does).
func primariesOf(rg *ring.Ring, name meta.ObjectName) map[string]bool {
	out := map[string]bool{}
	for _, d := range rg.Nodes(rg.Partition(name.Placed())) {
		out[d.Node+"/"+d.Name] = true
	}
	return out
}

// listingCopy is one device's copy of a container's listing or of an account's.
type listingCopy struct {
	node, device string
	record       nodeclient.ContainerRecord // a container's
	objects      map[string]meta.ListEntry  // a container's live entries
	containers   map[string]meta.Container  // an account's live rows, with their usage
	totals       meta.Account               // an account's
}

// listingsOnDisk reads every storage node's devices directly, the cluster being stopped: for
// each container and account, the copies the devices hold (a container's record, deleted or
// not, and live entries; an account's live rows and totals), and the container and account
// rings.
func listingsOnDisk(t *testing.T, c *localcluster.Cluster) (map[nodeclient.Listing][]listingCopy, *ring.Ring, *ring.Ring) {
	t.Helper()
	var rings []*ring.Ring
	for _, kind := range []string{"container", "account"} {
		rg, err := ring.Load(filepath.Join(c.RingDir, kind+".ring.gz"))
		if err != nil {
			t.Fatal(err)
		}
		rings = append(rings, rg)
	}
	ctx := context.Background()
	copies := map[nodeclient.Listing][]listingCopy{}
	for _, n := range c.Storage() {
		entries, err := os.ReadDir(filepath.Join(n.DataDir, "devices"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			dev := e.Name()
			node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: dev, Dir: filepath.Join(n.DataDir, "devices", dev)}},
				HashPrefix: rings[0].HashPrefix, HashSuffix: rings[0].HashSuffix})
			if err != nil {
				t.Fatalf("opening %s/%s: %v", n.Name, dev, err)
			}
			read := func(l nodeclient.Listing) error {
				lc := listingCopy{node: n.Addr, device: dev}
				if l.IsAccount() {
					lc.containers = map[string]meta.Container{}
					if lc.totals, err = node.HeadAccount(ctx, dev, 0, l.Account); err != nil {
						return err
					}
					for marker := ""; ; {
						page, err := node.ListContainers(ctx, dev, 0, l.Account, meta.ListOptions{Marker: marker})
						if err != nil {
							return err
						}
						for _, ct := range page.Containers {
							lc.containers[ct.Name] = ct
						}
						if !page.Truncated {
							break
						}
						marker = page.NextMarker
					}
				} else {
					var ok bool
					if lc.record, ok, err = node.ContainerRecord(ctx, dev, l.Account, l.Container); err != nil || !ok {
						return fmt.Errorf("record of %q: %v, %v", l.Container, ok, err)
					}
					lc.objects = map[string]meta.ListEntry{}
					for marker := ""; lc.record.Deleted == 0; {
						page, err := node.ListObjects(ctx, dev, 0, l.Account, l.Container, meta.ListOptions{Marker: marker})
						if err != nil {
							return err
						}
						for _, o := range page.Objects {
							lc.objects[o.Name] = o
						}
						if !page.Truncated {
							break
						}
						marker = page.NextMarker
					}
				}
				copies[l] = append(copies[l], lc)
				return nil
			}
			for _, accounts := range []bool{false, true} {
				var names []nodeclient.Listing
				err = node.Listings(ctx, dev, accounts, func(l nodeclient.Listing) error { names = append(names, l); return nil })
				for _, l := range names {
					if err == nil {
						err = read(l)
					}
				}
			}
			node.Close()
			if err != nil {
				t.Fatalf("%s/%s: %v", n.Name, dev, err)
			}
		}
	}
	return copies, rings[0], rings[1]
}

// listingPrimaries returns "node/device" of a listing's primaries in its ring (the ring places
// the cluster's names, Swift's).
func listingPrimaries(rg *ring.Ring, l nodeclient.Listing) map[string]bool {
	out := map[string]bool{}
	for _, d := range rg.Nodes(rg.Partition(meta.SwiftAccount(l.Account), l.Container, "")) {
		out[d.Node+"/"+d.Name] = true
	}
	return out
}
