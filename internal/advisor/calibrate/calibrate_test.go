package calibrate

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/advisor"
	"github.com/cairn-store/cairn/internal/advisor/netlab"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and a parenthesis must not shift the fields.
	line := "4242 (cairn (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 130 0 0 20 0 12 0 100 0 0"
	got, err := parseStatCPU(line)
	if err != nil || math.Abs(got-3.8) > 1e-9 {
		t.Fatalf("cpu = %v, %v; want 3.8 s (250 + 130 ticks)", got, err)
	}
	if _, err := parseStatCPU("4242 cairn S 1"); !errors.Is(err, ErrProc) {
		t.Errorf("malformed line: %v", err)
	}
}

func TestReadProc(t *testing.T) {
	dir := t.TempDir()
	pd := filepath.Join(dir, "77")
	os.MkdirAll(pd, 0o755)
	os.WriteFile(filepath.Join(pd, "stat"), []byte("77 (cairn) S 1 77 77 0 -1 0 0 0 0 0 100 50 0 0 20 0 1 0 1 0 0\n"), 0o644)
	os.WriteFile(filepath.Join(pd, "io"), []byte("rchar: 1000\nwchar: 2000\nsyscr: 5\nsyscw: 6\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n"), 0o644)
	s, err := readProc(dir, 77)
	if err != nil {
		t.Fatal(err)
	}
	if s != (procSample{CPUSeconds: 1.5, RChar: 1000, WChar: 2000, ReadBytes: 4096, WriteBytes: 8192}) {
		t.Errorf("sample %+v", s)
	}
	if _, err := readProc(dir, 78); !errors.Is(err, ErrProc) {
		t.Errorf("missing process: %v", err)
	}
}

func TestSumMetrics(t *testing.T) {
	text := `# HELP cairn_lsm_wal_syncs_total WAL fsyncs.
# TYPE cairn_lsm_wal_syncs_total counter
cairn_lsm_wal_syncs_total{device="d0"} 10
cairn_lsm_wal_syncs_total{device="d1"} 5
cairn_device_file_syncs_total{device="d0"} 7
cairn_lsm_wal_syncs_total_other 99
go_goroutines 12
`
	m, err := sumMetrics(strings.NewReader(text), "cairn_lsm_wal_syncs_total", "cairn_device_file_syncs_total", "go_goroutines")
	if err != nil {
		t.Fatal(err)
	}
	if m["cairn_lsm_wal_syncs_total"] != 15 || m["cairn_device_file_syncs_total"] != 7 || m["go_goroutines"] != 12 {
		t.Errorf("sums %v", m)
	}
}

// From counters to a demand point: per request on the proxy, per visit on the storage tier,
// the client's bytes taken from the bench and the rest of the proxy's bytes the backend's.
func TestPoint(t *testing.T) {
	m := measurement{Op: "put", Size: 1 << 20, Ops: 100, Body: 1 << 20, Visits: 3,
		Used: snapshot{
			Proxy:   procSample{CPUSeconds: 0.5, RChar: 100*(1<<20) + 100*3*200, WChar: 100*3*((1<<20)+500) + 100*300},
			Storage: procSample{CPUSeconds: 0.9, WriteBytes: 300 * (1 << 20)},
			Syncs:   750,
		}}
	p, err := m.point()
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	if !near(p.ProxyCPUSeconds, 0.005) || !near(p.StorageCPUSeconds, 0.003) || !near(p.ClientInBytes, 1<<20) ||
		!near(p.BackendInBytes, 200) || !near(p.BackendOutBytes, (1<<20)+500+100) || !near(p.DataBytes, 1<<20) || !near(p.Fsyncs, 2.5) {
		t.Errorf("point %+v", p)
	}
	if _, err := (measurement{Op: "get"}).point(); !errors.Is(err, ErrNoOperations) {
		t.Errorf("no operations: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	c := Config{Binary: "cairn", Dir: t.TempDir()}
	if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "exists") {
		t.Errorf("existing dir: %v", err)
	}
	c = Config{Binary: "cairn", Dir: filepath.Join(t.TempDir(), "new"), Storage: 2, Replicas: 3}
	if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("3 replicas on 2 nodes: %v", err)
	}
	c = Config{Binary: "cairn", Dir: filepath.Join(t.TempDir(), "new")}
	if err := c.Validate(); err != nil || c.Storage != 4 || c.Replicas != 3 || len(c.Sizes) != 2 {
		t.Errorf("defaults: %+v, %v", c, err)
	}
}

// TestNetNSOnThisMachine calibrates for real with every node in a network namespace of its
// own (--netns). Like validate's TestRunOnThisMachine it needs root, ip, tc and a CPU cgroup
// controller and CAIRN_TEST_VALIDATE=/path/to/cairn (docs/testing.md); it is skipped
// otherwise, and under -short.
func TestNetNSOnThisMachine(t *testing.T) {
	bin := os.Getenv("CAIRN_TEST_VALIDATE")
	if bin == "" || testing.Short() {
		t.Skip("set CAIRN_TEST_VALIDATE to a cairn binary to calibrate in network namespaces (root)")
	}
	if err := netlab.Available(); err != nil {
		t.Skip(err)
	}
	d, err := Run(context.Background(), Config{Binary: bin, Dir: filepath.Join(t.TempDir(), "c"), Storage: 2, Replicas: 2,
		Concurrency: 4, Duration: time.Second, Sizes: []int64{4 << 10}, Objects: 20, NetNS: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Source, "network namespace") || len(d.Ops["get"]) != 1 || d.Ops["get"][0].ProxyCPUSeconds <= 0 {
		t.Errorf("demands: source %q, get %+v", d.Source, d.Ops["get"])
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), netlab.Prefix) {
		t.Errorf("namespaces left behind: %s", out)
	}
}

// A running cluster's processes are found by their command lines, and a device's flushes
// counted from diskstats.
func TestFindProcsAndDiskFlushes(t *testing.T) {
	dir := t.TempDir()
	for pid, cmd := range map[string]string{
		"101":  "/usr/bin/python3\x00/usr/bin/swift-proxy-server\x00/etc/swift/proxy-server.conf\x00",
		"102":  "/usr/bin/python3\x00/usr/bin/swift-object-server\x00/etc/swift/object-server/1.conf\x00",
		"103":  "/usr/bin/python3\x00/usr/bin/swift-container-server\x00/etc/swift/container-server/1.conf\x00",
		"104":  "", // a kernel thread
		"self": "not a pid",
	} {
		os.MkdirAll(filepath.Join(dir, pid), 0o755)
		os.WriteFile(filepath.Join(dir, pid, "cmdline"), []byte(cmd), 0o644)
	}
	got, err := findProcs(dir, regexp.MustCompile(`swift-(object|container|account)-server `))
	if err != nil || !slices.Equal(got, []int{102, 103}) {
		t.Errorf("storage processes %v, %v; want [102 103]", got, err)
	}
	os.WriteFile(filepath.Join(dir, "diskstats"), []byte(
		"   7       0 loop0 192356 0 29884297 74230 6097125 453530 216828618 4435808 0 1763112 5933638 0 0 0 0 3584386 1423599\n"+
			" 253       0 vda 1 2 3 4 5 6 7 8 9 10 11\n"), 0o644)
	if n, err := diskFlushes(dir, "loop0"); err != nil || n != 3584386 {
		t.Errorf("loop0 flushes %v, %v", n, err)
	}
	if _, err := diskFlushes(dir, "vda"); !errors.Is(err, ErrProc) {
		t.Errorf("a kernel without flush counters: %v", err)
	}
	if _, err := diskFlushes(dir, "sdz"); !errors.Is(err, ErrProc) {
		t.Errorf("no such device: %v", err)
	}
	c := Config{Target: &Target{ProxyProcs: regexp.MustCompile("x")}}
	if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a target without storage processes: %v", err)
	}
	c = Config{Target: &Target{ProxyProcs: regexp.MustCompile("x"), StorageProcs: regexp.MustCompile("y")}}
	if err := c.Validate(); err != nil || c.Replicas != 3 {
		t.Errorf("a target needs no binary or directory: %v (replicas %d)", err, c.Replicas)
	}
}

// A proxy whose socket bytes /proc does not count (OpenStack Swift's, recv/send) gets the
// body plus assumed headers as its backend bytes; one whose bytes are seen keeps them.
func TestSocketBytesUnseen(t *testing.T) {
	seen := &advisor.Demands{Ops: map[string][]advisor.Point{
		"get": {{Size: 4096, BackendInBytes: 4400, BackendOutBytes: 300}},
		"put": {{Size: 4096, BackendInBytes: 150, BackendOutBytes: 4500}},
	}}
	if socketBytesUnseen(seen) {
		t.Fatal("Cairn-like figures taken as unseen")
	}
	unseen := &advisor.Demands{Ops: map[string][]advisor.Point{
		"get":  {{Size: 4096, BackendInBytes: 1}, {Size: 1 << 20, BackendInBytes: 1}},
		"put":  {{Size: 4096, BackendOutBytes: 0.4}},
		"head": {{Size: 0, BackendOutBytes: 1, BackendInBytes: 1}},
	}}
	if !socketBytesUnseen(unseen) {
		t.Fatal("Swift-like figures (GET backend bytes below the body) not taken as unseen")
	}
	assumeBackendBytes(unseen)
	for op, want := range map[string][2]float64{
		"get":  {assumedRequestHeaderBytes, 1<<20 + assumedResponseHeaderBytes},
		"put":  {4096 + assumedRequestHeaderBytes, assumedResponseHeaderBytes},
		"head": {assumedRequestHeaderBytes, assumedResponseHeaderBytes},
	} {
		p := unseen.Ops[op][len(unseen.Ops[op])-1]
		if p.BackendOutBytes != want[0] || p.BackendInBytes != want[1] {
			t.Errorf("%s: backend out/in %g/%g, want %g/%g", op, p.BackendOutBytes, p.BackendInBytes, want[0], want[1])
		}
	}
}

// The storage CPU of every point comes from the saturated one-node run; a point it lacks is
// an error, not a silent zero.
func TestTakeStorageCPU(t *testing.T) {
	d := &advisor.Demands{Ops: map[string][]advisor.Point{
		"get": {{Size: 4096, ProxyCPUSeconds: 2e-4, StorageCPUSeconds: 3e-4}},
	}, Background: advisor.Background{StorageCores: 0.001}}
	sat := &advisor.Demands{Ops: map[string][]advisor.Point{
		"get": {{Size: 4096, ProxyCPUSeconds: 1e-4, StorageCPUSeconds: 1.8e-4}},
	}, Background: advisor.Background{StorageCores: 0.004}}
	if err := takeStorageCPU(d, sat); err != nil {
		t.Fatal(err)
	}
	if p := d.Ops["get"][0]; p.StorageCPUSeconds != 1.8e-4 || p.ProxyCPUSeconds != 2e-4 {
		t.Errorf("got proxy %g storage %g, want the configured proxy 2e-4 and the saturated storage 1.8e-4", p.ProxyCPUSeconds, p.StorageCPUSeconds)
	}
	if d.Background.StorageCores != 0.004 {
		t.Errorf("background %g, want the larger 0.004", d.Background.StorageCores)
	}
	d.Ops["put"] = []advisor.Point{{Size: 4096}}
	if err := takeStorageCPU(d, sat); err == nil {
		t.Error("a point the one-node run lacks was not an error")
	}
}

// The proxy's CPU per write is split into a part per request and a part per replica from the
// same write measured with 3 replicas and with 1; GETs keep theirs whole.
func TestSplitProxyCPU(t *testing.T) {
	d := &advisor.Demands{Ops: map[string][]advisor.Point{
		"put": {{Size: 4096, ProxyCPUSeconds: 0.9e-3}},
		"get": {{Size: 4096, ProxyCPUSeconds: 0.2e-3}},
	}}
	one := &advisor.Demands{Ops: map[string][]advisor.Point{
		"put": {{Size: 4096, ProxyCPUSeconds: 0.4e-3}},
		"get": {{Size: 4096, ProxyCPUSeconds: 0.15e-3}},
	}}
	splitProxyCPU(d, one, 3)
	p := d.Ops["put"][0]
	if !near(p.ProxyCPUPerVisitSeconds, 0.25e-3) || !near(p.ProxyCPUSeconds, 0.15e-3) {
		t.Errorf("put: %g per request + %g per visit, want 0.15e-3 + 0.25e-3", p.ProxyCPUSeconds, p.ProxyCPUPerVisitSeconds)
	}
	if total := p.ProxyCPUSeconds + 3*p.ProxyCPUPerVisitSeconds; !near(total, 0.9e-3) {
		t.Errorf("put with 3 replicas: %g, want the measured 0.9e-3", total)
	}
	if g := d.Ops["get"][0]; g.ProxyCPUSeconds != 0.2e-3 || g.ProxyCPUPerVisitSeconds != 0 {
		t.Errorf("get changed: %+v", g)
	}
	// A one-replica write cheaper than one visit of the three-replica one (two clusters, two
	// loads) would give a negative fixed part: it is all per visit, and the total holds.
	d = &advisor.Demands{Ops: map[string][]advisor.Point{"put": {{Size: 4096, ProxyCPUSeconds: 0.9e-3}}}}
	one = &advisor.Demands{Ops: map[string][]advisor.Point{"put": {{Size: 4096, ProxyCPUSeconds: 0.2e-3}}}}
	splitProxyCPU(d, one, 3)
	if p := d.Ops["put"][0]; p.ProxyCPUSeconds != 0 || !near(p.ProxyCPUPerVisitSeconds, 0.3e-3) {
		t.Errorf("put: %g per request + %g per visit, want 0 + 0.3e-3", p.ProxyCPUSeconds, p.ProxyCPUPerVisitSeconds)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// A visit served in process saves what one proxy and one storage node spend on a one-replica
// request beyond what one sumo node spends on it; a point the other runs lack saves nothing.
func TestLocalVisitSaving(t *testing.T) {
	d := &advisor.Demands{Ops: map[string][]advisor.Point{"get": {{Size: 4096}, {Size: 1 << 20}}}}
	one := &advisor.Demands{Ops: map[string][]advisor.Point{"get": {{Size: 4096, ProxyCPUSeconds: 0.24e-3, StorageCPUSeconds: 0.18e-3}}}}
	sumo := &advisor.Demands{Ops: map[string][]advisor.Point{"get": {{Size: 4096, StorageCPUSeconds: 0.16e-3}}}}
	localVisitSaving(d, one, sumo)
	if got := d.Ops["get"][0].LocalVisitSavingSeconds; !near(got, 0.26e-3) {
		t.Errorf("saving %g, want 0.24 + 0.18 − 0.16 = 0.26 ms", got)
	}
	if got := d.Ops["get"][1].LocalVisitSavingSeconds; got != 0 {
		t.Errorf("1 MiB, not measured by the other runs: saving %g, want 0", got)
	}
}
