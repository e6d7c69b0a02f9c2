package calibrate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrProc is wrapped when a process's counters cannot be read.
var ErrProc = errors.New("calibrate: reading process counters")

// userHZ is the unit of utime and stime in /proc/<pid>/stat: USER_HZ, 100 on every Linux
// architecture Go supports (the kernel's ABI, independent of CONFIG_HZ).
const userHZ = 100

// procSample is what one process has used so far.
type procSample struct {
	CPUSeconds float64 // user + system
	// From /proc/<pid>/io: bytes through read/write system calls (sockets and files alike),
	// and bytes the process caused to be read from or written to block devices.
	RChar, WChar, ReadBytes, WriteBytes float64
}

func (a procSample) sub(b procSample) procSample {
	return procSample{a.CPUSeconds - b.CPUSeconds, a.RChar - b.RChar, a.WChar - b.WChar, a.ReadBytes - b.ReadBytes, a.WriteBytes - b.WriteBytes}
}

func (a procSample) add(b procSample) procSample {
	return procSample{a.CPUSeconds + b.CPUSeconds, a.RChar + b.RChar, a.WChar + b.WChar, a.ReadBytes + b.ReadBytes, a.WriteBytes + b.WriteBytes}
}

// readProc reads the counters of pid from procDir (/proc).
func readProc(procDir string, pid int) (procSample, error) {
	var s procSample
	stat, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", procDir, pid))
	if err != nil {
		return s, fmt.Errorf("%w: %w", ErrProc, err)
	}
	if s.CPUSeconds, err = parseStatCPU(string(stat)); err != nil {
		return s, err
	}
	f, err := os.Open(fmt.Sprintf("%s/%d/io", procDir, pid))
	if err != nil {
		return s, fmt.Errorf("%w: %w", ErrProc, err)
	}
	defer f.Close()
	return s, parseIO(f, &s)
}

// parseStatCPU is utime + stime of a /proc/<pid>/stat line, in seconds. The command name (field
// 2) is in parentheses and may hold spaces and parentheses itself, so fields are counted from
// the last ')'.
func parseStatCPU(line string) (float64, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, fmt.Errorf("%w: malformed stat line", ErrProc)
	}
	f := strings.Fields(line[i+1:])
	// After the name: state is field 3, so utime (14) and stime (15) are f[11] and f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("%w: stat line has %d fields after the name", ErrProc, len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%w: utime %q, stime %q", ErrProc, f[11], f[12])
	}
	return float64(u+s) / userHZ, nil
}

func parseIO(r io.Reader, s *procSample) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return fmt.Errorf("%w: io %s: %w", ErrProc, k, err)
		}
		switch k {
		case "rchar":
			s.RChar = n
		case "wchar":
			s.WChar = n
		case "read_bytes":
			s.ReadBytes = n
		case "write_bytes":
			s.WriteBytes = n
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrProc, err)
	}
	return nil
}

// sumMetrics is the sum, over all label sets, of each named metric in a Prometheus text
// exposition (the format /metrics serves). Only plain samples are read: the counters
// calibrate needs are not histograms.
func sumMetrics(r io.Reader, names ...string) (map[string]float64, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		if !want[name] {
			continue
		}
		rest := line[len(name):]
		if j := strings.LastIndexByte(rest, '}'); j >= 0 {
			rest = rest[j+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("calibrate: metric %s: %w", name, err)
		}
		out[name] += v
	}
	return out, sc.Err()
}

// scrapeSyncs is the synchronous disk writes a storage node has made: WAL fsyncs and
// data-file and directory fsyncs, over all its devices.
func scrapeSyncs(client *http.Client, endpoint string) (float64, error) {
	resp, err := client.Get(endpoint + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("calibrate: scraping %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("calibrate: scraping %s: %s", endpoint, resp.Status)
	}
	m, err := sumMetrics(resp.Body, "cairn_lsm_wal_syncs_total", "cairn_device_file_syncs_total")
	if err != nil {
		return 0, err
	}
	return m["cairn_lsm_wal_syncs_total"] + m["cairn_device_file_syncs_total"], nil
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

// findProcs returns the pids of the processes whose command line (arguments joined by spaces)
// matches re, this process excepted, in /proc order.
func findProcs(procDir string, re *regexp.Regexp) ([]int, error) {
	ents, err := os.ReadDir(procDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProc, err)
	}
	// This process and those it runs under (a shell, timeout) have the pattern in their
	// command lines too.
	mine := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !mine[pid]; pid = parentOf(procDir, pid) {
		mine[pid] = true
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || mine[pid] {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("%s/%d/cmdline", procDir, pid))
		if err != nil || len(b) == 0 {
			continue // gone, or a kernel thread
		}
		if re.Match(bytes.TrimRight(bytes.ReplaceAll(b, []byte{0}, []byte{' '}), " ")) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// parentOf is pid's parent (0 when unknown).
func parentOf(procDir string, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", procDir, pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// diskFlushes is the flush requests a block device has completed (/proc/diskstats, the 16th
// counter after the name, since Linux 5.5): every fsync that reaches the disk is one, so the
// syncs of servers without metrics (OpenStack Swift's) are counted on their device.
func diskFlushes(procDir, dev string) (float64, error) {
	f, err := os.Open(procDir + "/diskstats")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrProc, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || fields[2] != dev {
			continue
		}
		if len(fields) < 20 {
			return 0, fmt.Errorf("%w: diskstats of %s has no flush counters (Linux 5.5 or later)", ErrProc, dev)
		}
		return strconv.ParseFloat(fields[18], 64)
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrProc, err)
	}
	return 0, fmt.Errorf("%w: no block device %q in diskstats", ErrProc, dev)
}
