package localcluster

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairn-store/cairn/internal/ring"
)

// A policy named with @FIRST-LAST has its ring on those storage and sumo nodes alone (a
// microstore's own); the account and container rings, and a policy without a range, cover
// every one. A bad range is refused.
func TestPolicyNodeRanges(t *testing.T) {
	c := &Cluster{cfg: Config{Replicas: 2, PartPower: 4}, RingDir: t.TempDir()}
	st := &state{HashSuffix: "suffix", Policies: []string{"gold@1-2", "silver@3-4", "bronze"}}
	for i := 1; i <= 4; i++ {
		st.Nodes = append(st.Nodes, nodeState{Name: fmt.Sprintf("storage%d", i), Role: "storage", Addr: fmt.Sprintf("127.0.0.1:%d", 9000+i)})
	}
	st.Nodes = append(st.Nodes, nodeState{Name: "proxy1", Role: "proxy"})
	if err := c.ensureRings(st); err != nil {
		t.Fatal(err)
	}
	nodesOf := func(file string) []string {
		t.Helper()
		r, err := ring.Load(filepath.Join(c.RingDir, file))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range r.Devices {
			out = append(out, d.Node)
		}
		slices.Sort(out)
		return out
	}
	all := []string{"127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003", "127.0.0.1:9004"}
	for file, want := range map[string][]string{
		"account.ring.gz": all, "container.ring.gz": all, "object-2.ring.gz": all,
		"object.ring.gz":   {"127.0.0.1:9001", "127.0.0.1:9002"},
		"object-1.ring.gz": {"127.0.0.1:9003", "127.0.0.1:9004"},
	} {
		if got := nodesOf(file); !slices.Equal(got, want) {
			t.Errorf("%s: nodes %v, want %v", file, got, want)
		}
	}
	pols, err := policySet(st.Policies)
	if err != nil || pols.Default().Name != "gold" {
		t.Errorf("policies: %v", err)
	}
	for _, bad := range []string{"gold@", "gold@x", "gold@3-1", "gold@0-2"} {
		if _, err := policySet([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A cluster without storage policies has policy 0 alone, on every node.
func TestNoPolicies(t *testing.T) {
	c := &Cluster{cfg: Config{Replicas: 2, PartPower: 4}, RingDir: t.TempDir()}
	st := &state{HashSuffix: "suffix"}
	for i := 1; i <= 2; i++ {
		st.Nodes = append(st.Nodes, nodeState{Name: fmt.Sprintf("storage%d", i), Role: "storage", Addr: fmt.Sprintf("127.0.0.1:%d", 9000+i)})
	}
	if err := c.ensureRings(st); err != nil {
		t.Fatal(err)
	}
	r, err := ring.Load(filepath.Join(c.RingDir, "object.ring.gz"))
	if err != nil || len(r.Devices) != 2 {
		t.Fatalf("object ring: %v, %v", r, err)
	}
}
