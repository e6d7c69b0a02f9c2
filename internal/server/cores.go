package server

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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
