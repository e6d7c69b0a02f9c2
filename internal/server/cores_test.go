package server

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A cgroup's CPU quota is read, v1 and v2, as a fraction of a core; none (no quota, -1, "max",
// no cpu controller) is not a quota.
func TestCgroupQuota(t *testing.T) {
	root := t.TempDir()
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "cpu/cairnv/proxy1/cpu.cfs_quota_us"), "25000\n")
	write(filepath.Join(root, "cpu/cairnv/proxy1/cpu.cfs_period_us"), "100000\n")
	write(filepath.Join(root, "cpu/free/cpu.cfs_quota_us"), "-1\n")
	write(filepath.Join(root, "cpu/free/cpu.cfs_period_us"), "100000\n")
	write(filepath.Join(root, "lab/p2/cpu.max"), "150000 100000\n")
	write(filepath.Join(root, "lab/max/cpu.max"), "max 100000\n")
	for _, c := range []struct {
		name, procCgroup string
		want             float64
		ok               bool
	}{
		{"v1 quota", "9:name=systemd:/\n2:cpuacct:/\n1:cpu:/cairnv/proxy1\n0::/\n", 0.25, true},
		{"v1 no quota", "1:cpu:/free\n0::/\n", 0, false},
		{"v2 quota", "0::/lab/p2\n", 1.5, true},
		{"v2 max", "0::/lab/max\n", 0, false},
		{"no cpu controller", "4:memory:/x\n", 0, false},
	} {
		p := filepath.Join(t.TempDir(), "cgroup")
		write(p, c.procCgroup)
		if got, ok := cgroupQuota(p, root); got != c.want || ok != c.ok {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// The CPU meter measures from the newest reading at least a window old: a burst ages out of the
// window, and the readings kept stay bounded.
func TestCPUMeter(t *testing.T) {
	var cpu time.Duration
	m := newCPUMeter(10*time.Second, func() time.Duration { return cpu })
	t0 := m.start.at
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	cpu = 5 * time.Second // a busy first 10 s: half a core
	if got := m.used(at(10)); got != 0.5 {
		t.Errorf("0-10 s: %v cores, want 0.5", got)
	}
	cpu += 2 * time.Second // 2 s of CPU in the next 10 s
	if got := m.used(at(20)); got != 0.2 {
		t.Errorf("10-20 s: %v cores, want 0.2 (the burst aged out)", got)
	}
	if got := m.used(at(25)); math.Abs(got-2.0/15) > 1e-9 {
		t.Errorf("10-25 s, idle since 20: %v cores, want 2/15", got)
	}
	for i := range 3 * maxCPUReadings {
		m.used(at(25 + float64(i)*1e-6))
	}
	if len(m.kept) > maxCPUReadings {
		t.Errorf("%d readings kept", len(m.kept))
	}
}
