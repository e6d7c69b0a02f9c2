package server

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// processCores is the CPU this process may use, in cores: its cgroup's CPU quota when it has
// one (cgroup v2 cpu.max, v1 cpu.cfs_quota_us over cpu.cfs_period_us), which may be a fraction
// of a core, else the cores the Go runtime uses. The resource manager counts a proxy's capacity
// with it (GET /admin/v1/workload's cores), so that a proxy held to a quarter of a core is not
// taken for one with a whole core.
func processCores() float64 {
	if q, ok := cgroupQuota("/proc/self/cgroup", "/sys/fs/cgroup"); ok {
		return q
	}
	return float64(runtime.GOMAXPROCS(0))
}

// cgroupQuota reads the CPU quota of the cgroup that procCgroup (/proc/self/cgroup's format)
// names, under the cgroup file systems at root; ok false when there is none.
func cgroupQuota(procCgroup, root string) (float64, bool) {
	f, err := os.Open(procCgroup)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ID:CONTROLLERS:PATH"; v2's line is "0::PATH".
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			if q, ok := quotaV2(filepath.Join(root, parts[2], "cpu.max")); ok {
				return q, true
			}
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "cpu" {
				dir := filepath.Join(root, parts[1], parts[2])
				if q, ok := quotaV1(dir); ok {
					return q, true
				}
			}
		}
	}
	return 0, false
}

func quotaV2(path string) (float64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	return ratio(f[0], f[1])
}

func quotaV1(dir string) (float64, bool) {
	q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return ratio(strings.TrimSpace(string(q)), strings.TrimSpace(string(p)))
}

// ratio is quota over period, when both are positive (a quota of -1 is none).
func ratio(quota, period string) (float64, bool) {
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return q / p, true
}

// cpuMeter is this process's CPU use, in cores, over about the last window: the resource
// manager's measure of a proxy's load (GET /admin/v1/workload's cpu_used), beside the demands
// its model costs the requests with, so that a proxy pegged at its quota is seen as busy
// whatever the model says. Each reading is kept for a window; use is measured from the newest
// reading at least a window old (else the oldest, else the meter's start), so that no
// goroutine needs to sample: the manager's passes are the readings.
type cpuMeter struct {
	window time.Duration
	read   func() time.Duration // the process's CPU time so far
	mu     sync.Mutex
	start  cpuReading
	kept   []cpuReading // oldest first
}

type cpuReading struct {
	at  time.Time
	cpu time.Duration
}

// maxCPUReadings bounds the readings kept, however often the meter is read.
const maxCPUReadings = 1024

func newCPUMeter(window time.Duration, read func() time.Duration) *cpuMeter {
	if read == nil {
		read = processCPU
	}
	return &cpuMeter{window: window, read: read, start: cpuReading{at: time.Now(), cpu: read()}}
}

// used is the cores used from about a window ago until now.
func (m *cpuMeter) used(now time.Time) float64 {
	cpu := m.read()
	m.mu.Lock()
	defer m.mu.Unlock()
	drop := 0
	for i, r := range m.kept {
		if now.Sub(r.at) < m.window {
			break
		}
		drop = i // the newest at least a window old stays, as the base
	}
	m.kept = m.kept[drop:]
	if len(m.kept) >= maxCPUReadings {
		m.kept = m.kept[len(m.kept)-maxCPUReadings+1:]
	}
	base := m.start
	if len(m.kept) > 0 {
		base = m.kept[0]
	}
	m.kept = append(m.kept, cpuReading{at: now, cpu: cpu})
	el := now.Sub(base.at)
	if el <= 0 {
		return 0
	}
	return max(0, (cpu-base.cpu).Seconds()/el.Seconds())
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
