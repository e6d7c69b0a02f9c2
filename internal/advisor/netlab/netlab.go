// Package netlab builds the advisor's laboratory network on this machine: one network namespace
// per node, joined by a veth pair to a bridge in the root namespace, with tbf on both ends of
// the pair (the end in the root namespace shapes what reaches the node, its NIC's inbound
// direction; the node's end what it sends), and a CPU cgroup per node, with a quota or without.
// Validation runs scaled-down clusters in it; calibration measures demands in it, so that both
// see the same packet path (a veth, a bridge and a qdisc cost CPU that loopback does not).
// Everything is named with Prefix, so that a run removes what an earlier one left behind
// (killed before it could clean up). It needs root, ip, tc and a CPU cgroup controller.
package netlab

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
	"time"
)

// Prefix names every namespace, link and cgroup the lab makes.
const Prefix = "cairnv"

const (
	bridgeName = Prefix + "-br"
	subnet     = "10.213.0" // the bridge's /24; the bridge is .1
)

// Spec is a node's share of this machine: CPU cores (its cgroup's quota; 0: no quota) and
// its link's rate in Mbit/s each way.
type Spec struct {
	CPU     float64 `json:"cpu"`
	NICMbps float64 `json:"nic_mbps"`
}

// Node is one node's namespace, link and cgroup.
type Node struct {
	Name   string // the localcluster node name: proxy1, storage3
	NS     string
	IP     string
	host   string // veth end in the root namespace
	peer   string // veth end in the node's namespace
	cgroup string // directory
	spec   Spec
}

// nodeIP is the address of a node: storage nodes from .10, proxies from .100, sumo nodes
// from .150.
func nodeIP(role string, i int) string {
	switch role {
	case "proxy":
		return fmt.Sprintf("%s.%d", subnet, 100+i)
	case "sumo":
		return fmt.Sprintf("%s.%d", subnet, 150+i)
	}
	return fmt.Sprintf("%s.%d", subnet, 10+i)
}

// roleLetter shortens a role in link names (which Linux caps at 15 bytes).
var roleLetter = map[string]byte{"proxy": 'p', "storage": 's', "sumo": 'u'}

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
	return cgroupFS{}, errors.New("netlab: no CPU cgroup controller (neither v2 cpu.max nor v1 cpu.cfs_quota_us)")
}

func (c cgroupFS) dir() string { return filepath.Join(c.root, Prefix) }

// create makes a node's cgroup with a quota of cpu cores (0: none).
func (c cgroupFS) create(name string, cpu float64) (string, error) {
	if c.v2 {
		// Children of the parent get the cpu controller only when the parent enables it.
		if err := os.MkdirAll(c.dir(), 0o755); err != nil {
			return "", fmt.Errorf("netlab: %w", err)
		}
		if err := os.WriteFile(filepath.Join(c.dir(), "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
			return "", fmt.Errorf("netlab: enabling the cpu controller: %w", err)
		}
	}
	dir := filepath.Join(c.dir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("netlab: %w", err)
	}
	const period = 100000 // µs
	quota := max(1000, int(cpu*period))
	var err error
	switch {
	case cpu == 0:
		// No quota: a new cgroup has none.
	case c.v2:
		err = os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(fmt.Sprintf("%d %d", quota, period)), 0o644)
	default:
		err = errors.Join(os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte(strconv.Itoa(period)), 0o644),
			os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte(strconv.Itoa(quota)), 0o644))
	}
	if err != nil {
		return "", fmt.Errorf("netlab: quota of %s: %w", name, err)
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

// Throttled is how many CFS periods the node's cgroup has seen and in how many its quota ran
// out (v1 cpuacct is a separate hierarchy here, so usage is left to /proc).
func (n *Node) Throttled() (periods, throttledPeriods int64) {
	b, err := os.ReadFile(filepath.Join(n.cgroup, "cpu.stat"))
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
		return fmt.Errorf("netlab: %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Available says why this machine cannot build the lab, or nil: it needs root, ip, tc and a
// CPU cgroup controller.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("netlab: needs root (network namespaces, tc, cgroups)")
	}
	for _, bin := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("netlab: %w", err)
		}
	}
	if _, err := findCgroups(); err != nil {
		return err
	}
	return nil
}

// hostLinkPrefix names the root namespace's end of every node's veth pair.
const hostLinkPrefix = "cvh-"

// cleanup removes every namespace, the bridge and the cgroups of Prefix: what this run made, or
// what an earlier run left.
func cleanup(ctx context.Context, log *slog.Logger, cg cgroupFS) error {
	var errs []error
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return fmt.Errorf("netlab: ip netns list: %w", err)
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
	// The kernel tears a deleted namespace down in the background: its veth pairs can
	// outlive the command by a moment, and the next lab's links of the same names would
	// collide with them. Delete what is left and wait until it is gone.
	for try := 0; ; try++ {
		left, err := hostLinks(ctx)
		if err != nil {
			errs = append(errs, err)
			break
		}
		if len(left) == 0 {
			break
		}
		if try == 50 {
			errs = append(errs, fmt.Errorf("netlab: links %v still there after 5s", left))
			break
		}
		for _, l := range left {
			exec.CommandContext(ctx, "ip", "link", "delete", l).Run() // gone meanwhile is fine
		}
		time.Sleep(100 * time.Millisecond)
	}
	if exec.CommandContext(ctx, "ip", "link", "show", bridgeName).Run() == nil {
		errs = append(errs, run(ctx, "ip", "link", "delete", bridgeName))
	}
	errs = append(errs, cg.removeAll())
	return errors.Join(errs...)
}

// hostLinks are the root namespace's ends of node links (hostLinkPrefix) that exist now.
func hostLinks(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, "ip", "-o", "link", "show").Output()
	if err != nil {
		return nil, fmt.Errorf("netlab: ip link show: %w", err)
	}
	var links []string
	for _, line := range strings.Split(string(out), "\n") {
		// "7: cvh-s1@if6: <BROADCAST,...": the name is the second field, before any '@'.
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if strings.HasPrefix(name, hostLinkPrefix) {
			links = append(links, name)
		}
	}
	return links, nil
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
func setupNode(ctx context.Context, cg cgroupFS, n *Node) error {
	nsx := []string{"ip", "netns", "exec", n.NS}
	steps := [][]string{
		{"ip", "netns", "add", n.NS},
		{"ip", "link", "add", n.host, "type", "veth", "peer", "name", n.peer},
		{"ip", "link", "set", n.peer, "netns", n.NS},
		{"ip", "link", "set", n.host, "master", bridgeName},
		{"ip", "link", "set", n.host, "up"},
		append(append([]string{}, nsx...), "ip", "link", "set", "lo", "up"),
		append(append([]string{}, nsx...), "ip", "addr", "add", n.IP+"/24", "dev", n.peer),
		append(append([]string{}, nsx...), "ip", "link", "set", n.peer, "up"),
		tbfArgs(n.host, n.spec.NICMbps),
		append(append([]string{}, nsx...), tbfArgs(n.peer, n.spec.NICMbps)...),
	}
	for _, args := range steps {
		if err := run(ctx, args...); err != nil {
			return err
		}
	}
	dir, err := cg.create(n.Name, n.spec.CPU)
	if err != nil {
		return err
	}
	n.cgroup = dir
	return nil
}

// Wrap is the command line that runs argv as node n: a shell that moves itself into the
// node's cgroup (so the node starts inside its quota, threads and all) and then execs `ip netns
// exec`, which execs the node: one process, so signals and the parent-death signal reach it.
func (n *Node) Wrap(argv []string) []string {
	script := `echo $$ > "$1/cgroup.procs" && ns=$2 && shift 2 && exec ip netns exec "$ns" "$@"`
	return append([]string{"/bin/sh", "-c", script, "sh", n.cgroup, n.NS}, argv...)
}

// CPUSeconds is utime + stime of a process (/proc/PID/stat, in USER_HZ = 100 ticks; the
// command name in parentheses may hold spaces, so fields are counted from the last ')').
func CPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("netlab: %w", err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("netlab: /proc/%d/stat: too few fields", pid)
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("netlab: /proc/%d/stat: %w", pid, err)
	}
	return (u + st) / 100, nil
}

// PidOf is a local-cluster node's pid (its NAME.pid file): the wrapper shell's, which exec'd
// the node.
func PidOf(dataDir string) (int, error) {
	b, err := os.ReadFile(dataDir + ".pid")
	if err != nil {
		return 0, fmt.Errorf("netlab: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Lab is the namespaces, links and cgroups of one cluster.
type Lab struct {
	cg    cgroupFS
	log   *slog.Logger
	nodes map[string]*Node
}

// Open removes what an earlier lab left and makes the bridge. Close removes everything, also
// when Open fails midway.
func Open(ctx context.Context, log *slog.Logger) (*Lab, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cg, err := findCgroups()
	if err != nil {
		return nil, err
	}
	l := &Lab{cg: cg, log: log, nodes: map[string]*Node{}}
	if err := cleanup(ctx, log, cg); err != nil {
		return nil, fmt.Errorf("netlab: removing an earlier run's leftovers: %w", err)
	}
	if err := setupBridge(ctx); err != nil {
		l.Close(ctx)
		return nil, err
	}
	return l, nil
}

// Add makes the i-th node of role ("proxy" or "storage"; they are named as local-cluster names
// them: proxy1, storage3) with spec. A spec without a rate gets an unshaped link: tbf at
// UnshapedMbps, so that its packets take the same path as a shaped node's.
func (l *Lab) Add(ctx context.Context, role string, i int, spec Spec) (*Node, error) {
	if spec.NICMbps == 0 {
		spec.NICMbps = UnshapedMbps
	}
	name := fmt.Sprintf("%s%d", role, i)
	letter, ok := roleLetter[role]
	if !ok {
		return nil, fmt.Errorf("netlab: role %q: want proxy, storage or sumo", role)
	}
	short := fmt.Sprintf("%c%d", letter, i)
	n := &Node{Name: name, NS: Prefix + "-" + name, IP: nodeIP(role, i), host: hostLinkPrefix + short, peer: "cvn-" + short, spec: spec}
	if err := setupNode(ctx, l.cg, n); err != nil {
		return nil, err
	}
	l.nodes[name] = n
	return n, nil
}

// UnshapedMbps is the rate of a link that is not meant to limit (10 Gbit/s).
const UnshapedMbps = 10000

// Nodes are the lab's nodes by name.
func (l *Lab) Nodes() map[string]*Node { return l.nodes }

// NodeHost and Wrap are localcluster.Config's hooks: node name's address and command line.
func (l *Lab) NodeHost(name, _ string) string              { return l.nodes[name].IP }
func (l *Lab) Wrap(name, _ string, argv []string) []string { return l.nodes[name].Wrap(argv) }

// Close removes the lab's namespaces, links and cgroups; its processes must have exited (a
// cgroup with processes in it cannot be removed). It runs even when ctx is done (Ctrl-C).
func (l *Lab) Close(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return cleanup(cctx, l.log, l.cg)
}

// CgroupDir is where the lab's cgroups are (gone once it is closed).
func (l *Lab) CgroupDir() string { return l.cg.dir() }
