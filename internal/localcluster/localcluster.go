// Package localcluster runs a whole Cairn cluster on one machine's loopback: it builds the
// rings for its storage nodes, starts every storage, proxy and sumo node as a child process of
// the cairn binary (`cairn server --role ...`), and, when more than one node serves clients,
// puts a round-robin TCP balancer in front of them, so that the cluster has one endpoint as a
// single server does. Tests use it to run real multi-process clusters (and to kill and restart
// their nodes); users use it, as `cairn local-cluster`, to try a cluster on a laptop. Real
// clusters start one `cairn server --role` per machine instead (docs/operations.md).
package localcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/sse"
)

// Config says what cluster to run.
type Config struct {
	// Binary is the cairn binary the nodes run.
	Binary string
	// Dir holds the cluster: its state (cluster.json), rings (rings/) and each node's data
	// directory (NAME/) and log (NAME.log). A cluster started again on the same Dir is the
	// same cluster: same rings, ports and secret.
	Dir string
	// Storage, Proxies and Sumo are how many nodes of each role run (defaults, when all are
	// zero: 4 storage nodes and 1 proxy).
	Storage, Proxies, Sumo int
	// Replicas is the rings' replica count (default: 3, or fewer when there are fewer storage
	// and sumo nodes). PartPower is their partition power (default 8).
	Replicas  int
	PartPower uint
	// Policies names the cluster's storage policies, policy 0 (the default) first: each has
	// its object ring over a device of its own on every storage and sumo node ("d1" for
	// policy 0, which also holds the account and container rings; "pN-d1" for policy N), and
	// DIR/rings/swift.conf defines them. "NAME" is a replicated policy (Replicas copies);
	// "NAME:K+M" an erasure-coded one (Cairn's code, ec_type cairn_rs), whose ring has K+M
	// replicas, one fragment per node, so that it needs at least K+M storage and sumo nodes
	// (more leave handoffs for writes made while some are down). None: policy 0 alone,
	// "Policy-0", as a cluster without swift.conf has. "@FIRST-LAST" after either puts the
	// policy's ring on those storage and sumo nodes alone (from 1, in order), as a microstore's
	// policy has nodes of its own: "gold@1-3", "silver@4-6". A cluster keeps the policies it
	// was created with (cluster.json).
	Policies []string
	// Listen is the cluster's client endpoint: the one client-serving node's own address, or
	// the balancer's (default 127.0.0.1:0).
	Listen string
	// RootAccessKey and RootSecretKey are the root key of every proxy.
	RootAccessKey, RootSecretKey string
	// Args are more flags for every node (`cairn server` flags: front-end flags are used by
	// proxies, storage flags by storage nodes, and sumo nodes use both).
	Args []string
	// Env is the nodes' environment (nil: the launcher's own).
	Env []string
	// Links puts a relay (a Link) in front of every storage node, on the address the rings
	// name it by, so that tests can refuse or slow its network path.
	Links bool
	// NodeHost, when set, is the IP address a node serves on (its ring address, or a proxy's
	// listening address) instead of 127.0.0.1: for nodes that each run in a network namespace
	// of their own (cairn advisor validate). Ports are still picked free on this namespace's
	// loopback, which any fresh namespace also has free.
	NodeHost func(name, role string) string
	// Wrap, when set, turns a node's command line (the binary and its arguments) into the one
	// that is run: a prefix such as `ip netns exec NS` or a shell that joins a cgroup first.
	// The wrapper must exec the node in the end, so that signals reach it.
	Wrap func(name, role string, argv []string) []string
	// Output receives every node's output lines, prefixed with its name (nil: discarded; the
	// node logs in Dir are always written).
	Output io.Writer
	Logger *slog.Logger
}

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.Binary == "" || c.Dir == "" {
		return errors.New("localcluster: a binary and a directory are required")
	}
	if c.Storage < 0 || c.Proxies < 0 || c.Sumo < 0 {
		return errors.New("localcluster: negative node count")
	}
	if c.Storage == 0 && c.Proxies == 0 && c.Sumo == 0 {
		c.Storage, c.Proxies = 4, 1
	}
	if c.Storage+c.Sumo == 0 {
		return errors.New("localcluster: no storage or sumo node")
	}
	if c.Proxies+c.Sumo == 0 {
		return errors.New("localcluster: no proxy or sumo node to serve clients")
	}
	if c.Replicas == 0 {
		c.Replicas = min(3, c.Storage+c.Sumo)
	}
	if c.Replicas < 1 || c.Replicas > c.Storage+c.Sumo {
		return fmt.Errorf("localcluster: %d replicas over %d storage nodes", c.Replicas, c.Storage+c.Sumo)
	}
	if c.PartPower == 0 {
		c.PartPower = 8
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:0"
	}
	if c.RootAccessKey == "" || c.RootSecretKey == "" {
		return errors.New("localcluster: a root access key and secret key are required")
	}
	pols, err := policySet(c.Policies)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	for _, p := range pols.All() {
		if n := p.Replicas(); n > c.Storage+c.Sumo {
			return fmt.Errorf("localcluster: %s has %d fragments, one per node, over %d storage nodes", p, n, c.Storage+c.Sumo)
		}
	}
	if c.Output == nil {
		c.Output = io.Discard
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// state is what makes a restarted cluster the same one (cluster.json).
type state struct {
	Secret string `json:"cluster_secret"`
	// HashSuffix salts the rings' placement (Swift's swift_hash_path_suffix).
	HashSuffix string      `json:"hash_suffix"`
	Nodes      []nodeState `json:"nodes"`
	// Policies are the storage policies' names by index (none: policy 0 alone).
	Policies []string `json:"policies,omitempty"`
}

type nodeState struct {
	Name string `json:"name"`
	Role string `json:"role"`
	Addr string `json:"addr"` // host:port; for a proxy, "" until it has listened once
}

const stateFile = "cluster.json"

// Cluster is a running local cluster.
type Cluster struct {
	// Endpoint is where clients reach the cluster (http://host:port).
	Endpoint string
	// Nodes are every node, storage and sumo nodes first, in the order of cluster.json.
	Nodes []*Node
	// RingDir holds the cluster's ring files.
	RingDir string
	// Secret is the cluster secret.
	Secret string
	// MasterKeyFile is the SSE master key every proxy and sumo node is given.
	MasterKeyFile string

	cfg      Config
	balancer *balancer
}

// Start starts a cluster (creating it on first start) and returns once every node answers
// /healthz.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	st, err := loadOrCreate(cfg)
	if err != nil {
		return nil, err
	}
	// One master key of server-side encryption for every proxy: made once, beside the nodes'
	// data directories.
	c := &Cluster{RingDir: filepath.Join(cfg.Dir, "rings"), Secret: st.Secret, cfg: cfg, MasterKeyFile: filepath.Join(cfg.Dir, "sse-master-key")}
	if _, _, err := sse.EnsureMasterKey(c.MasterKeyFile); err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	if err := c.ensureRings(st); err != nil {
		return nil, err
	}
	taken := portsOf(st.Nodes)
	for _, ns := range st.Nodes {
		n := &Node{Name: ns.Name, Role: ns.Role, Addr: ns.Addr, DataDir: filepath.Join(cfg.Dir, ns.Name), c: c}
		if err := n.addLink(taken); err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, n)
	}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	front := c.Front()
	// Storage and sumo nodes all at once (sumo nodes need each other to read the tenants),
	// then the proxies, which need them.
	var waits []func(context.Context) error
	for _, n := range c.Storage() {
		ready, err := n.launch()
		if err != nil {
			return nil, err
		}
		waits = append(waits, ready)
	}
	for _, ready := range waits {
		if err := ready(ctx); err != nil {
			return nil, err
		}
	}
	for _, n := range c.Nodes {
		if n.Role != "proxy" {
			continue
		}
		if len(front) == 1 && n.listen == "" {
			n.listen = cfg.Listen // the one proxy is the endpoint itself
		}
		if err := n.Start(ctx); err != nil {
			return nil, err
		}
	}
	if len(front) == 1 {
		c.Endpoint = front[0].Endpoint()
	} else {
		if c.balancer, err = newBalancer(cfg.Listen, front); err != nil {
			return nil, err
		}
		c.Endpoint = "http://" + c.balancer.addr()
	}
	ok = true
	return c, nil
}

// Front returns the nodes that serve clients (proxies and sumo nodes).
func (c *Cluster) Front() []*Node {
	var out []*Node
	for _, n := range c.Nodes {
		if n.Role != "storage" {
			out = append(out, n)
		}
	}
	return out
}

// Storage returns the nodes that hold data (storage and sumo nodes).
func (c *Cluster) Storage() []*Node {
	var out []*Node
	for _, n := range c.Nodes {
		if n.Role != "proxy" {
			out = append(out, n)
		}
	}
	return out
}

// Close stops every node (SIGTERM, then SIGKILL after a grace period) and the balancer.
func (c *Cluster) Close() error {
	if c.balancer != nil {
		c.balancer.close()
	}
	var errs []error
	for _, n := range c.Nodes {
		if err := n.Stop(15 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
		}
	}
	for _, n := range c.Nodes {
		if n.link != nil {
			n.link.close()
		}
	}
	return errors.Join(errs...)
}

func loadOrCreate(cfg Config) (*state, error) {
	path := filepath.Join(cfg.Dir, stateFile)
	data, err := os.ReadFile(path)
	if err == nil {
		var st state
		if err := json.Unmarshal(data, &st); err != nil {
			return nil, fmt.Errorf("localcluster: %s: %w", path, err)
		}
		if cfg.Policies != nil && !slices.Equal(cfg.Policies, st.Policies) {
			return nil, fmt.Errorf("localcluster: the cluster in %s has the storage policies %v; they cannot change to %v", cfg.Dir, st.Policies, cfg.Policies)
		}
		return &st, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	st := &state{Secret: randomHex(24), HashSuffix: randomHex(8), Policies: cfg.Policies}
	taken := map[int]bool{}
	add := func(role string, n int) error {
		for i := range n {
			ns := nodeState{Name: fmt.Sprintf("%s%d", role, i+1), Role: role}
			if role != "proxy" {
				// The ring names storage nodes by address, so theirs is fixed for good.
				port, err := freePortBut(taken)
				if err != nil {
					return err
				}
				ns.Addr = net.JoinHostPort(cfg.host(ns.Name, role), strconv.Itoa(port))
			}
			st.Nodes = append(st.Nodes, ns)
		}
		return nil
	}
	if err := errors.Join(add("storage", cfg.Storage), add("sumo", cfg.Sumo), add("proxy", cfg.Proxies)); err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	data, err = json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	return st, nil
}

// ensureRings writes the account, container and object rings (one device per storage node for
// each, each node its own zone) and the swift.conf of the storage policies, unless they exist.
func (c *Cluster) ensureRings(st *state) error {
	if err := os.MkdirAll(c.RingDir, 0o700); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	pols, err := policySet(st.Policies)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	type ringSpec struct {
		name, device string
		replicas     int
		nodes        nodeRange
	}
	specs := []ringSpec{{"account", "d1", c.cfg.Replicas, nodeRange{}}, {"container", "d1", c.cfg.Replicas, nodeRange{}}}
	for _, p := range pols.All() {
		replicas := c.cfg.Replicas
		if n := p.Replicas(); n > 0 {
			replicas = n // an erasure-coded policy's: one per fragment
		}
		var nodes nodeRange // every node; a cluster without policies has policy 0 alone
		if p.Index < len(st.Policies) {
			if _, nodes, err = splitPolicyNodes(st.Policies[p.Index]); err != nil {
				return fmt.Errorf("localcluster: %w", err)
			}
		}
		specs = append(specs, ringSpec{p.RingName(), policyDevice(p.Index), replicas, nodes})
	}
	for _, spec := range specs {
		if err := c.ensureRing(st, spec.name, spec.device, spec.replicas, spec.nodes); err != nil {
			return err
		}
	}
	if len(st.Policies) == 0 {
		return nil
	}
	return writeSwiftConf(filepath.Join(c.RingDir, policy.ConfName), st)
}

// policyDevice is the device that holds storage policy idx's objects on every node.
func policyDevice(idx int) string {
	if idx == 0 {
		return "d1"
	}
	return fmt.Sprintf("p%d-d1", idx)
}

// nodeRange is the storage and sumo nodes (1-based, in the order of the state) a storage
// policy's ring covers: "NAME@FIRST-LAST" in Config.Policies, so that each policy, a
// microstore's, has nodes of its own. The zero value is every node.
type nodeRange struct{ first, last int }

func (r nodeRange) has(i int) bool { return r.first == 0 || (i >= r.first && i <= r.last) }

// splitPolicyNodes splits "SPEC@FIRST-LAST" (or "SPEC@N") into SPEC and its nodes.
func splitPolicyNodes(spec string) (string, nodeRange, error) {
	base, nodes, ok := strings.Cut(spec, "@")
	if !ok {
		return spec, nodeRange{}, nil
	}
	first, last, isRange := strings.Cut(nodes, "-")
	if !isRange {
		last = first
	}
	f, err1 := strconv.Atoi(first)
	l, err2 := strconv.Atoi(last)
	if err1 != nil || err2 != nil || f < 1 || l < f {
		return "", nodeRange{}, fmt.Errorf("storage policy %q: want NAME@FIRST-LAST, the storage nodes (from 1) its ring covers", spec)
	}
	return base, nodeRange{f, l}, nil
}

// ensureRing writes the ring NAME.ring.gz (and its builder) over the device of that name on
// every storage and sumo node in nodes, unless it exists.
func (c *Cluster) ensureRing(st *state, name, device string, replicas int, nodes nodeRange) error {
	path := filepath.Join(c.RingDir, name+".ring.gz")
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	b, err := ring.NewBuilder(c.cfg.PartPower, replicas, 1)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	b.HashSuffix = st.HashSuffix
	zone, ordinal := 0, 0
	for _, ns := range st.Nodes {
		if ns.Role == "proxy" {
			continue
		}
		if ordinal++; !nodes.has(ordinal) {
			continue
		}
		zone++
		if _, err := b.Add(ring.Device{ID: -1, Region: 1, Zone: zone, Node: ns.Addr, Name: device, Weight: 100}); err != nil {
			return fmt.Errorf("localcluster: %w", err)
		}
	}
	if _, err := b.Rebalance(time.Now(), 1); err != nil {
		return fmt.Errorf("localcluster: %s ring: %w", name, err)
	}
	r, err := b.Ring()
	if err != nil {
		return fmt.Errorf("localcluster: %s ring: %w", name, err)
	}
	if err := ring.WriteFile(path, r); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	if err := b.Save(filepath.Join(c.RingDir, name+".builder")); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	return nil
}

// policySet is the storage policies of the specs given ("NAME" or "NAME:K+M"), policy 0 (the
// default) first.
func policySet(specs []string) (*policy.Set, error) {
	var ps []policy.Policy
	for i, spec := range specs {
		p, err := parsePolicy(i, spec)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return policy.New(ps...)
}

// parsePolicy reads one entry of Config.Policies as policy index ("NAME[:K+M][@FIRST-LAST]").
func parsePolicy(index int, spec string) (policy.Policy, error) {
	spec, _, err := splitPolicyNodes(spec)
	if err != nil {
		return policy.Policy{}, err
	}
	name, code, ec := strings.Cut(spec, ":")
	p := policy.Policy{Index: index, Name: name, Default: index == 0, Type: policy.Replication}
	if !ec {
		return p, nil
	}
	k, m, ok := strings.Cut(code, "+")
	kn, err1 := strconv.Atoi(k)
	mn, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil {
		return p, fmt.Errorf("storage policy %q: want NAME or NAME:K+M (erasure-coded, K data and M parity fragments)", spec)
	}
	p.Type = policy.ErasureCoding
	p.EC = policy.EC{Scheme: policy.CairnScheme, DataFragments: kn, ParityFragments: mn}
	return p, nil
}

// writeSwiftConf writes the cluster's swift.conf: the hash path suffix its rings carry and its
// storage policies, in Swift's form, so that the ring directory is a Swift one.
func writeSwiftConf(path string, st *state) error {
	var b strings.Builder
	b.WriteString("# Written by cairn local-cluster. Policy N's objects are placed by object-N.ring.gz\n")
	b.WriteString("# (policy 0's by object.ring.gz).\n\n[swift-hash]\nswift_hash_path_prefix =\n")
	fmt.Fprintf(&b, "swift_hash_path_suffix = %s\n", st.HashSuffix)
	pols, err := policySet(st.Policies)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	for _, p := range pols.All() {
		fmt.Fprintf(&b, "\n[storage-policy:%d]\nname = %s\npolicy_type = %s\n", p.Index, p.Name, p.Type)
		if p.Type == policy.ErasureCoding {
			fmt.Fprintf(&b, "ec_type = %s\nec_num_data_fragments = %d\nec_num_parity_fragments = %d\n", p.EC.Scheme, p.EC.DataFragments, p.EC.ParityFragments)
		}
		if p.Default {
			b.WriteString("default = yes\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	return nil
}

// host is the IP address node name serves on.
func (c *Config) host(name, role string) string {
	if c.NodeHost == nil {
		return "127.0.0.1"
	}
	return c.NodeHost(name, role)
}

// FreePort returns a loopback port that is free now, for a program that cannot be given port 0
// and say which it took (HAProxy): another may take it before that program binds it.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePortBut is freePort, never one of taken, which it adds the port to: a port closed after
// it was found free can be handed out again at once (on a busy machine it was: two storage
// nodes of one cluster got the same address, and the ring refused the second device).
func freePortBut(taken map[int]bool) (int, error) {
	for range 100 {
		port, err := FreePort()
		if err != nil {
			return 0, err
		}
		if !taken[port] {
			taken[port] = true
			return port, nil
		}
	}
	return 0, errors.New("no free port that is not already taken")
}

// portsOf is the set of ports the nodes' addresses name.
func portsOf(nodes []nodeState) map[int]bool {
	taken := map[int]bool{}
	for _, ns := range nodes {
		addPort(taken, ns.Addr)
	}
	return taken
}

func addPort(taken map[int]bool, addr string) {
	if _, p, err := net.SplitHostPort(addr); err == nil {
		if port, err := strconv.Atoi(p); err == nil {
			taken[port] = true
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// RootKey is the root key every proxy of the cluster serves.
func (c *Cluster) RootKey() (accessKey, secretKey string) {
	return c.cfg.RootAccessKey, c.cfg.RootSecretKey
}

// AddStorage adds a storage node to the cluster's state (cluster.json) with a free port and
// returns it, not started: the operator's part comes first (adding its device to the rings,
// `cairn ring add` and `rebalance`, and writing them), since a storage node refuses to start
// until the rings name a device for it.
func (c *Cluster) AddStorage() (*Node, error) {
	path := filepath.Join(c.cfg.Dir, stateFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("localcluster: %s: %w", path, err)
	}
	n := 0
	for _, ns := range st.Nodes {
		if ns.Role == "storage" {
			n++
		}
	}
	taken := portsOf(st.Nodes)
	for _, n := range c.Nodes {
		addPort(taken, n.backAddr)
	}
	port, err := freePortBut(taken)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("storage%d", n+1)
	ns := nodeState{Name: name, Role: "storage", Addr: net.JoinHostPort(c.cfg.host(name, "storage"), strconv.Itoa(port))}
	// Storage nodes come first in the state, as Start orders them.
	at := 0
	for at < len(st.Nodes) && st.Nodes[at].Role != "proxy" {
		at++
	}
	st.Nodes = slices.Insert(st.Nodes, at, ns)
	if data, err = json.MarshalIndent(&st, "", "  "); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	node := &Node{Name: ns.Name, Role: ns.Role, Addr: ns.Addr, DataDir: filepath.Join(c.cfg.Dir, ns.Name), c: c}
	if err := node.addLink(taken); err != nil {
		return nil, err
	}
	c.Nodes = slices.Insert(c.Nodes, at, node)
	return node, nil
}
