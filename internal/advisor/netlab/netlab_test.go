package netlab

import (
	"slices"
	"testing"
)

func TestWrapAndShaping(t *testing.T) {
	n := &Node{NS: "cairnv-storage1", cgroup: "/sys/fs/cgroup/cpu/cairnv/storage1"}
	argv := n.Wrap([]string{"/bin/cairn", "server", "--role", "storage"})
	if argv[0] != "/bin/sh" || argv[4] != n.cgroup || argv[5] != n.NS || !slices.Equal(argv[6:], []string{"/bin/cairn", "server", "--role", "storage"}) {
		t.Errorf("wrap = %q", argv)
	}
	for _, tc := range []struct {
		mbps  float64
		burst string
	}{{100, "65536"}, {1000, "500000"}} {
		a := tbfArgs("cvh-s1", tc.mbps)
		if i := slices.Index(a, "burst"); i < 0 || a[i+1] != tc.burst {
			t.Errorf("tbfArgs(%g) = %q, want burst %s", tc.mbps, a, tc.burst)
		}
	}
}
