package mosproof

import (
	"context"
	"os"
	"path/filepath"
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
	if len(c.Layouts) != 3 || c.Storage != 2 || c.Proxies != 4 || c.Replicas != 2 || c.Web == nil || c.Backup == nil || c.Web.Name != "web" {
		t.Errorf("defaults %+v", c)
	}
	for _, bad := range []Config{{Layouts: []string{"sideways"}}, {Proxies: 1}} {
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
	cfg := Config{Binary: bin, Dir: filepath.Join(t.TempDir(), "p"), Layouts: []string{Static, Dynamic}, Duration: 5 * time.Second, Warmup: 3 * time.Second,
		ManagerInterval: time.Second, Proxy: netlab.Spec{CPU: 0.5, NICMbps: 200}, StorageNode: netlab.Spec{CPU: 0.5, NICMbps: 200}}
	results, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		t.Logf("%s: web p95 %.1f ms alone, %.1f ms beside the backup; backup %.1f MB/s; allocation %v; errors %d",
			r.Layout, r.WebAloneP95Ms, r.WebWithBackupP95, r.BackupMBps, r.Allocation, r.Errors)
		if r.WebAloneOps == 0 || r.WebWithBackupOps == 0 || r.BackupOps == 0 || r.Allocation["small"] == 0 || r.Allocation["large"] == 0 {
			t.Errorf("%s: %+v", r.Layout, r)
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpu/" + netlab.Prefix); err == nil {
		t.Errorf("cgroup %s left behind", netlab.Prefix)
	}
}
