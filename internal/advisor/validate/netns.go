package validate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The machine's side of a validation: one network namespace per node, joined by a veth pair
// to a bridge in the root namespace, with tbf on both ends of the pair (the end in the root
// namespace shapes what reaches the node, its NIC's inbound direction; the node's end what it
// sends), and a CPU cgroup with a quota per node. Everything is named with Prefix, so that a
// run removes what an earlier one left behind (killed before it could clean up).

// Prefix names every namespace, link and cgroup a validation makes.
const Prefix = "cairnv"

const (
	bridgeName = Prefix + "-br"
	subnet     = "10.213.0" // the bridge's /24; the bridge is .1
)

// netNode is one node's namespace, link and cgroup.
type netNode struct {
	name   string // the localcluster node name: proxy1, storage3
	ns     string
	ip     string
	host   string // veth end in the root namespace
	peer   string // veth end in the node's namespace
	cgroup string // directory
	node   Node
}

// nodeIP is the address of a node: storage nodes from .10, proxies from .100.
func nodeIP(role string, i int) string {
	if role == "proxy" {
		return fmt.Sprintf("%s.%d", subnet, 100+i)
	}
	return fmt.Sprintf("%s.%d", subnet, 10+i)
}

// cgroupFS is where CPU quotas are set: cgroup v1's cpu hierarchy, or v2 when its root
// delegates the cpu controller (on this bench machine v2 holds only hugetlb).
type cgroupFS struct {
	root string
	v2   bool
}

func findCgroups() (cgroupFS, error) {
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && bytes.Contains(b, []byte("cpu")) {
		return cgroupFS{root: "/sys/fs/cgroup", v2: true}, nil
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err == nil {
		return cgroupFS{root: "/sys/fs/cgroup/cpu"}, nil
	}
	return cgroupFS{}, errors.New("validate: no CPU cgroup controller (neither v2 cpu.max nor v1 cpu.cfs_quota_us)")
}

func (c cgroupFS) dir() string { return filepath.Join(c.root, Prefix) }

// create makes a node's cgroup with a quota of cpu cores.
func (c cgroupFS) create(name string, cpu float64) (string, error) {
	if c.v2 {
		// Children of the parent get the cpu controller only when the parent enables it.
		if err := os.MkdirAll(c.dir(), 0o755); err != nil {
			return "", fmt.Errorf("validate: %w", err)
		}
		if err := os.WriteFile(filepath.Join(c.dir(), "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
			return "", fmt.Errorf("validate: enabling the cpu controller: %w", err)
		}
	}
	dir := filepath.Join(c.dir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("validate: %w", err)
	}
	const period = 100000 // µs
	quota := max(1000, int(cpu*period))
	var err error
	if c.v2 {
		err = os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(fmt.Sprintf("%d %d", quota, period)), 0o644)
	} else {
		err = errors.Join(os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte(strconv.Itoa(period)), 0o644),
			os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte(strconv.Itoa(quota)), 0o644))
	}
	if err != nil {
		return "", fmt.Errorf("validate: quota of %s: %w", name, err)
	}
	return dir, nil
}

// removeAll removes the validation's cgroups (their processes must have exited).
func (c cgroupFS) removeAll() error {
	ents, err := os.ReadDir(c.dir())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range ents {
		if e.IsDir() {
			if err := os.Remove(filepath.Join(c.dir(), e.Name())); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := os.Remove(c.dir()); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// cpuUsage is the CPU seconds a node's cgroup has used so far (v1 cpuacct is a separate
// hierarchy here, so v1 reads cpu.stat's throttling only; usage is left to /proc).
func throttled(cgroupDir string) (periods, throttledPeriods int64) {
	b, err := os.ReadFile(filepath.Join(cgroupDir, "cpu.stat"))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "nr_periods":
			periods = n
		case "nr_throttled":
			throttledPeriods = n
		}
	}
	return periods, throttledPeriods
}

// run runs a command, its output in the error if it fails.
func run(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("validate: %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Available says why this machine cannot run a validation, or nil: it needs root, ip, tc and
// a CPU cgroup controller.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("validate: needs root (network namespaces, tc, cgroups)")
	}
	for _, bin := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("validate: %w", err)
		}
	}
	if _, err := findCgroups(); err != nil {
		return err
	}
	return nil
}

// cleanup removes every namespace, the bridge and the cgroups of Prefix: what this run made, or
// what an earlier run left.
func cleanup(ctx context.Context, log *slog.Logger, cg cgroupFS) error {
	var errs []error
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return fmt.Errorf("validate: ip netns list: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		ns, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if strings.HasPrefix(ns, Prefix+"-") {
			// Removing a namespace destroys the veth end in it, and with it its peer.
			if err := run(ctx, "ip", "netns", "delete", ns); err != nil {
				errs = append(errs, err)
			} else {
				log.Debug("removed namespace", "ns", ns)
			}
		}
	}
	if exec.CommandContext(ctx, "ip", "link", "show", bridgeName).Run() == nil {
		errs = append(errs, run(ctx, "ip", "link", "delete", bridgeName))
	}
	errs = append(errs, cg.removeAll())
	return errors.Join(errs...)
}

// setupBridge makes the bridge the nodes' links join, with the root namespace's address on it
// (the benchmark client, in the root namespace, reaches the proxies through it).
func setupBridge(ctx context.Context) error {
	for _, args := range [][]string{
		{"ip", "link", "add", bridgeName, "type", "bridge"},
		{"ip", "addr", "add", subnet + ".1/24", "dev", bridgeName},
		{"ip", "link", "set", bridgeName, "up"},
	} {
		if err := run(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// tbfArgs shape a device to rate Mbit/s. The burst must hold at least one rate's worth of a
// timer tick (and a 64 KiB segment with offloads) or tbf caps below its rate.
func tbfArgs(dev string, mbps float64) []string {
	burst := max(64<<10, int(mbps*1e6/8/250))
	return []string{"tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", fmt.Sprintf("%dkbit", int(mbps*1000)),
		"burst", strconv.Itoa(burst), "latency", "50ms"}
}

// setupNode makes n's namespace, its link to the bridge, shaped both ways, and its cgroup.
func setupNode(ctx context.Context, cg cgroupFS, n *netNode) error {
	nsx := []string{"ip", "netns", "exec", n.ns}
	steps := [][]string{
		{"ip", "netns", "add", n.ns},
		{"ip", "link", "add", n.host, "type", "veth", "peer", "name", n.peer},
		{"ip", "link", "set", n.peer, "netns", n.ns},
		{"ip", "link", "set", n.host, "master", bridgeName},
		{"ip", "link", "set", n.host, "up"},
		append(append([]string{}, nsx...), "ip", "link", "set", "lo", "up"),
		append(append([]string{}, nsx...), "ip", "addr", "add", n.ip+"/24", "dev", n.peer),
		append(append([]string{}, nsx...), "ip", "link", "set", n.peer, "up"),
		tbfArgs(n.host, n.node.NICMbps),
		append(append([]string{}, nsx...), tbfArgs(n.peer, n.node.NICMbps)...),
	}
	for _, args := range steps {
		if err := run(ctx, args...); err != nil {
			return err
		}
	}
	dir, err := cg.create(n.name, n.node.CPU)
	if err != nil {
		return err
	}
	n.cgroup = dir
	return nil
}

// wrap is the command line that runs argv as node n: a shell that moves itself into the
// node's cgroup (so the node starts inside its quota, threads and all) and then execs `ip netns
// exec`, which execs the node: one process, so signals and the parent-death signal reach it.
func (n *netNode) wrap(argv []string) []string {
	script := `echo $$ > "$1/cgroup.procs" && ns=$2 && shift 2 && exec ip netns exec "$ns" "$@"`
	return append([]string{"/bin/sh", "-c", script, "sh", n.cgroup, n.ns}, argv...)
}

// cpuSeconds is utime + stime of a process (/proc/PID/stat, in USER_HZ = 100 ticks; the
// command name in parentheses may hold spaces, so fields are counted from the last ')').
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("validate: %w", err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("validate: /proc/%d/stat: too few fields", pid)
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("validate: /proc/%d/stat: %w", pid, err)
	}
	return (u + st) / 100, nil
}

// pidOf is a local-cluster node's pid (its NAME.pid file): the wrapper shell's, which exec'd
// the node.
func pidOf(dataDir string) (int, error) {
	b, err := os.ReadFile(dataDir + ".pid")
	if err != nil {
		return 0, fmt.Errorf("validate: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
