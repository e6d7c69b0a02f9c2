package mosproof

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/advisor/netlab"
	"github.com/cairn-store/cairn/internal/bench"
)

func TestDefaults(t *testing.T) {
	var c Config
	if err := c.Defaults(); err != nil {
		t.Fatal(err)
	}
	if len(c.Layouts) != 5 || c.Layouts[3] != Sumo || c.Sumo.CPU != 1 || c.LaneShare != 1 || c.StageDuration != 90*time.Second || c.Storage != 2 || c.Proxies != 4 || c.Replicas != 2 || c.Web == nil || c.Backup == nil || c.Web.Name != "web" {
		t.Errorf("defaults %+v", c)
	}
	for _, bad := range []Config{{Layouts: []string{"sideways"}}, {Proxies: 1}, {LaneShare: -1}} {
		if err := bad.Defaults(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// The backup's figures are those of the seconds the web tenant was measured beside it.
func TestSeriesMean(t *testing.T) {
	st := &bench.StageReport{}
	for s := 1; s <= 10; s++ {
		st.Series = append(st.Series, bench.Sample{T: float64(s), MBPerSec: float64(s), OpsPerSec: 2 * float64(s)})
	}
	if mb, ops := seriesMean(st, 4, 8); mb != 6.5 || ops != 13 { // seconds 5 to 8
		t.Errorf("mean over (4, 8]: %v MB/s, %v ops/s", mb, ops)
	}
	if mb, ops := seriesMean(st, 20, 30); mb != 0 || ops != 0 {
		t.Errorf("no second: %v, %v", mb, ops)
	}
}

// The lanes are on in the sumo-lanes layout alone; the emulated machines' NICs and cores are
// what the resource manager counts with.
func TestNodeArgs(t *testing.T) {
	c := Config{Proxy: netlab.Spec{CPU: 0.25, NICMbps: 200}, StorageNode: netlab.Spec{CPU: 0.5, NICMbps: 300}, LaneShare: 3}
	if err := c.Defaults(); err != nil {
		t.Fatal(err)
	}
	for _, l := range allLayouts {
		args := strings.Join(nodeArgs(c, l), " ")
		if lanes := strings.Contains(args, "--lane-share 3"); lanes != (l == SumoLanes) {
			t.Errorf("%s: %s", l, args)
		}
		if manager := !strings.Contains(args, "--microstore-manager-interval -1s"); manager != (l == Dynamic) {
			t.Errorf("%s: %s", l, args)
		}
		for _, want := range []string{"--microstore-manager-proxy-nic-mbps 200", "--microstore-manager-storage-nic-mbps 300", "--microstore-manager-storage-cores 0.5"} {
			if !strings.Contains(args, want) {
				t.Errorf("%s: %s lacks %s", l, args, want)
			}
		}
	}
}

// A stage's allocation is the last reading within it; it settled at its last change.
func TestAllocationSettles(t *testing.T) {
	w := &allocWatch{}
	for i, a := range []map[string]int{
		{"small": 1, "large": 1, "pool": 2}, // 0.5
		{"small": 2, "large": 1, "pool": 1}, // 1.5: stage (1, 10]
		{"small": 2, "large": 1, "pool": 1}, // 2.5
		{"small": 3, "large": 1, "pool": 0}, // 3.5
		{"small": 3, "large": 1, "pool": 0}, // 4.5 ...
	} {
		w.samples = append(w.samples, allocSample{T: float64(i) + 0.5, Alloc: a})
	}
	last, changes, after := w.settle(1, 10)
	if last["small"] != 3 || changes != 2 || after != 2.5 {
		t.Errorf("(1, 10]: %v, %d changes, settled after %v", last, changes, after)
	}
	last, changes, after = w.settle(3.6, 10)
	if last["small"] != 3 || changes != 0 || after != -1 {
		t.Errorf("(3.6, 10]: %v, %d changes, settled after %v", last, changes, after)
	}
}

// TestProofOnThisMachine runs the dynamic layout briefly for real (network namespaces, CPU
// quotas, HAProxy, the resource manager). It needs root, ip, tc, a CPU cgroup controller,
// haproxy and a cairn binary: CAIRN_TEST_MOSPROOF=/path/to/cairn enables it (docs/testing.md);
// skipped otherwise, and under -short. Its figures prove nothing (seconds on a shared machine):
// it checks that every part runs and reports.
func TestProofOnThisMachine(t *testing.T) {
	bin := os.Getenv("CAIRN_TEST_MOSPROOF")
	if bin == "" || testing.Short() {
		t.Skip("set CAIRN_TEST_MOSPROOF to a cairn binary to run the microstores' proof briefly (root)")
	}
	if err := netlab.Available(); err != nil {
		t.Skip(err)
	}
	cfg := Config{Binary: bin, Dir: filepath.Join(t.TempDir(), "p"), Layouts: []string{Static, Dynamic, SumoLanes}, Duration: 5 * time.Second, Warmup: 3 * time.Second,
		ManagerInterval: time.Second, Proxy: netlab.Spec{CPU: 0.5, NICMbps: 200}, StorageNode: netlab.Spec{CPU: 0.5, NICMbps: 200}}
	results, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		t.Logf("%s: web p95 %.1f ms alone, %.1f ms beside the backup; backup %.1f MB/s; allocation %v; errors %d",
			r.Layout, r.WebAloneP95Ms, r.WebWithBackupP95, r.BackupMBps, r.Allocation, r.Errors)
		if r.WebAloneOps == 0 || r.WebWithBackupOps == 0 || r.BackupOps == 0 || (r.Layout != SumoLanes) != (r.Allocation["small"] > 0 && r.Allocation["large"] > 0) {
			t.Errorf("%s: %+v", r.Layout, r)
		}
	}
	cfg.StageDuration = 8 * time.Second
	tl, err := RunTimeline(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Stages) != 4 || len(tl.Web.Samplers) != 3 {
		t.Fatalf("timeline %+v", tl)
	}
	for _, st := range tl.Stages {
		t.Logf("timeline %s: web p95 %.1f ms, %.0f ops/s; backup %.1f MB/s; allocation %v, %d changes, settled after %v s",
			st.Name, st.WebP95Ms, st.WebOps, st.BackupMBps, st.Allocation, st.Changes, st.SettledAfter)
		if (st.WebOps > 0) != st.Web || (st.BackupMBps > 0) != st.Backup || st.Allocation == nil {
			t.Errorf("timeline stage %+v", st)
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpu/" + netlab.Prefix); err == nil {
		t.Errorf("cgroup %s left behind", netlab.Prefix)
	}
}
