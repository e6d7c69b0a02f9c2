package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/backend"
	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/replicator"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

// Role is what a process is in a deployment.
type Role int

const (
	// RoleEmbedded is the zero-flag default: proxy and one storage device in one process, no
	// ring, no other node.
	RoleEmbedded Role = iota
	// RoleProxy serves S3 and Swift clients and talks only to storage nodes.
	RoleProxy
	// RoleStorage serves the node protocol (internal/backend) for the devices the rings name
	// for its address.
	RoleStorage
	// RoleSumo is proxy and storage node in one process (Swift's "sumo" nodes), on one port:
	// requests signed with the cluster secret are the node protocol's, the rest are clients'.
	RoleSumo
)

var roleNames = []string{"embedded", "proxy", "storage", "sumo"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// ParseRole reads a role's name ("" is the embedded default).
func ParseRole(s string) (Role, error) {
	if s == "" {
		return RoleEmbedded, nil
	}
	if i := slices.Index(roleNames, s); i >= 0 {
		return Role(i), nil
	}
	return 0, fmt.Errorf("server: role %q: want one of %s", s, strings.Join(roleNames, ", "))
}

// minClusterSecret is the shortest cluster secret accepted: it is an HMAC key, and a short one
// could be guessed.
const minClusterSecret = 16

func (c *Config) validateRole() error {
	if c.Role == RoleEmbedded {
		if c.RingDir != "" || c.ClusterSecret != "" {
			return errors.New("server: a ring directory and a cluster secret are for the proxy, storage and sumo roles")
		}
		return nil
	}
	if c.Role < RoleEmbedded || c.Role > RoleSumo {
		return fmt.Errorf("server: unknown role %v", c.Role)
	}
	if c.RingDir == "" {
		return fmt.Errorf("server: the %v role needs a ring directory", c.Role)
	}
	if len(c.ClusterSecret) < minClusterSecret {
		return fmt.Errorf("server: the %v role needs a cluster secret of at least %d characters, the same on every node", c.Role, minClusterSecret)
	}
	if c.Role != RoleStorage && (c.RootAccessKey == "" || c.RootSecretKey == "") {
		// Every proxy must accept the same root key; one generated per process would not be.
		return fmt.Errorf("server: the %v role needs the root access key and secret key, the same on every proxy", c.Role)
	}
	if c.Role != RoleProxy {
		host, port, _ := net.SplitHostPort(c.Listen)
		if host == "" || port == "0" || port == "" {
			return fmt.Errorf("server: a %v node listens on the address the ring names it by (host:port), not %q", c.Role, c.Listen)
		}
	}
	return nil
}

// clusterRings are the rings a cluster node follows, each a watcher that Serve runs: the
// account and container rings, and the object ring of every storage policy.
type clusterRings struct {
	account, container *ring.Watcher
	objects            map[int]*ring.Watcher // by policy index
	policies           *policy.Set
}

// all returns every watcher.
func (r *clusterRings) all() []*ring.Watcher {
	if r == nil {
		return nil
	}
	ws := []*ring.Watcher{r.account, r.container}
	for _, p := range r.policies.All() {
		ws = append(ws, r.objects[p.Index])
	}
	return ws
}

// openCluster reads the storage policies (swift.conf's [storage-policy:N] sections beside the
// rings), loads the rings, each followed by a watcher that Serve runs, and makes the client that
// reaches the other nodes. Policies are read once: a new policy needs a restart, as in Swift.
func (s *Server) openCluster() error {
	pols, err := policy.ReadDir(s.cfg.RingDir)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	rs := &clusterRings{objects: map[int]*ring.Watcher{}, policies: pols}
	watch := func(name, what string) (*ring.Watcher, error) {
		w, err := ring.NewWatcher(filepath.Join(s.cfg.RingDir, name+".ring.gz"), s.cfg.RingReload, s.cfg.Logger)
		if err != nil {
			return nil, fmt.Errorf("server: %s: %w", what, err)
		}
		return w, nil
	}
	if rs.account, err = watch("account", "account ring"); err != nil {
		return err
	}
	if rs.container, err = watch("container", "container ring"); err != nil {
		return err
	}
	for _, p := range pols.All() {
		if rs.objects[p.Index], err = watch(p.RingName(), "object ring of "+p.String()); err != nil {
			return err
		}
		if err := p.Usable(); err != nil {
			// Declared, so that a swift.conf with one works (a Cairn proxy over a Swift cluster
			// that has one): its containers cannot take objects here (501).
			s.cfg.Logger.Warn("storage policy not served", "policy", p.Name, "index", p.Index, "err", err)
		}
	}
	s.rings = rs
	d, err := backend.NewDialer(backend.ClientConfig{Secret: []byte(s.cfg.ClusterSecret)})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.dialer = d
	return nil
}

// clusterDevices returns the devices this storage node serves: every device any ring names for
// its address (the object rings of every policy included), each a directory under
// DataDir/devices/, made on first start. A device belongs to one storage policy: a Cairn device
// keeps objects by name, whatever ring placed them, so that two policies' copies of one name
// (a container deleted and made again in another policy) would be one object there. A device
// that two object rings name is refused; the account and container rings may share any.
func (s *Server) clusterDevices() ([]storage.DeviceConfig, error) {
	if err := s.checkPolicyDevices(); err != nil {
		return nil, err
	}
	var names []string
	for _, w := range s.rings.all() {
		for _, d := range w.Current().Devices {
			if d.Node == s.ringAddress() && d.Name != "" && !slices.Contains(names, d.Name) {
				names = append(names, d.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("server: the rings in %s name no device for %s: start the node on the address its ring entries give", s.cfg.RingDir, s.ringAddress())
	}
	slices.Sort(names)
	devs := make([]storage.DeviceConfig, len(names))
	for i, name := range names {
		dir := filepath.Join(s.cfg.DataDir, "devices", name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("server: device %s: %w", name, err)
		}
		devs[i] = storage.DeviceConfig{Name: name, Dir: dir}
	}
	return devs, nil
}

// checkPolicyDevices refuses a device of this node that the object rings of two storage
// policies name (see clusterDevices).
func (s *Server) checkPolicyDevices() error {
	owner := map[string]policy.Policy{}
	for _, p := range s.rings.policies.All() {
		for _, d := range s.rings.objects[p.Index].Current().Devices {
			if d.Node != s.ringAddress() || d.Name == "" {
				continue
			}
			if o, taken := owner[d.Name]; taken && o.Index != p.Index {
				return fmt.Errorf("server: device %s of %s is in the object rings of %s (%s.ring.gz) and of %s (%s.ring.gz): a device belongs to one storage policy; give each policy's ring devices of its own",
					d.Name, s.ringAddress(), o, o.RingName(), p, p.RingName())
			}
			owner[d.Name] = p
		}
	}
	return nil
}

// clusterProxyConfig points the proxy at the rings in force and the storage nodes; a sumo node
// reaches its own devices in-process.
func (s *Server) clusterProxyConfig(pcfg *proxy.Config) {
	pcfg.AccountRing, pcfg.ContainerRing = s.rings.account.Current, s.rings.container.Current
	pcfg.Policies, pcfg.ObjectRings = s.rings.policies, map[int]func() *ring.Ring{}
	for idx, w := range s.rings.objects {
		pcfg.ObjectRings[idx] = w.Current
	}
	pcfg.Dialer = s.dialer
	if s.node != nil {
		pcfg.Dialer = selfDialer{self: s.ringAddress(), node: s.node, others: s.dialer}
	}
	pcfg.ReadLeases = s.cfg.ReadLeases
}

// selfDialer reaches this process's own storage node in-process and the others over the node
// protocol.
type selfDialer struct {
	self   string
	node   nodeclient.Client
	others nodeclient.Dialer
}

func (d selfDialer) Dial(node string) (nodeclient.Client, error) {
	if node == d.self {
		return d.node, nil
	}
	return d.others.Dial(node)
}

// newReplicator returns the replicator of a storage or sumo node: it reaches this node's own
// devices in-process and the others over the node protocol.
func (s *Server) newReplicator(reg prometheus.Registerer) (*replicator.Replicator, error) {
	rcfg := replicator.Config{
		Node: replicatedDevices{Node: s.node, ec: s.ecDevices}, Self: s.ringAddress(),
		ObjectRings:   s.replicatedRings,
		ContainerRing: s.rings.container.Current, AccountRing: s.rings.account.Current,
		Dialer:   selfDialer{self: s.ringAddress(), node: s.node, others: s.dialer},
		Interval: s.cfg.ReplicationInterval, Concurrency: s.cfg.ReplicationConcurrency,
		BytesPerSecond: s.cfg.ReplicationBytesPerSecond,
		Logger:         s.cfg.Logger, Registry: reg,
	}
	if s.leases != nil {
		rcfg.Leases = s.leases
	}
	rep, err := replicator.New(rcfg)
	if err != nil {
		return nil, err
	}
	s.node.ReportStatus("replicator", rep.DaemonStatus)
	return rep, nil
}

// newReconstructor returns the reconstructor of a storage or sumo node with devices in the
// rings of erasure-coded policies it serves (nil without any), with the replicator's schedule
// and limits.
func (s *Server) newReconstructor(reg prometheus.Registerer) (*replicator.Reconstructor, error) {
	if len(s.ecRings()) == 0 {
		return nil, nil
	}
	rc, err := replicator.NewReconstructor(replicator.ReconstructorConfig{
		Node: s.node, Self: s.ringAddress(), Rings: s.ecRings,
		Dialer:   selfDialer{self: s.ringAddress(), node: s.node, others: s.dialer},
		Interval: s.cfg.ReplicationInterval, Concurrency: s.cfg.ReplicationConcurrency,
		BytesPerSecond: s.cfg.ReplicationBytesPerSecond,
		Logger:         s.cfg.Logger, Registry: reg,
	})
	if err != nil {
		return nil, err
	}
	s.node.ReportStatus("reconstructor", rc.DaemonStatus)
	return rc, nil
}

// ecRings are the object rings of the erasure-coded storage policies this version serves,
// with their codes.
func (s *Server) ecRings() []replicator.ECRing {
	var out []replicator.ECRing
	for _, p := range s.rings.policies.All() {
		if p.Type != policy.ErasureCoding || p.Usable() != nil {
			continue
		}
		scheme, err := ec.New(p.EC.DataFragments, p.EC.ParityFragments, int64(p.EC.SegmentSize))
		if err != nil {
			s.cfg.Logger.Error("erasure code of a storage policy", "policy", p.Name, "err", err)
			continue
		}
		out = append(out, replicator.ECRing{Ring: s.rings.objects[p.Index].Current(), Scheme: scheme})
	}
	return out
}

// ecDevices are this node's devices in the object rings of erasure-coded policies (any, served
// or not): their archives are the reconstructor's, and must never be synced whole between
// primaries or sent to another policy's devices by the replicator.
func (s *Server) ecDevices() map[string]bool {
	out := map[string]bool{}
	for _, p := range s.rings.policies.All() {
		if p.Type != policy.ErasureCoding {
			continue
		}
		for _, d := range s.rings.objects[p.Index].Current().Devices {
			if d.Node == s.ringAddress() && d.Name != "" {
				out[d.Name] = true
			}
		}
	}
	return out
}

// replicatedDevices is the storage node as the replicator sees it: without the devices of
// erasure-coded policies (which it would otherwise take for devices no ring names, and empty
// into policy 0's primaries).
type replicatedDevices struct {
	*storage.Node
	ec func() map[string]bool
}

func (r replicatedDevices) Devices() []string {
	ec := r.ec()
	var out []string
	for _, d := range r.Node.Devices() {
		if !ec[d] {
			out = append(out, d)
		}
	}
	return out
}

// ringAddress is this node's address as the rings name it.
func (s *Server) ringAddress() string {
	if s.cfg.Advertise != "" {
		return s.cfg.Advertise
	}
	return s.cfg.Listen
}

// replicatedRings are the object rings of the replicated storage policies, policy 0 first.
func (s *Server) replicatedRings() []*ring.Ring {
	var out []*ring.Ring
	for _, p := range s.rings.policies.All() {
		if p.Type == policy.Replication {
			out = append(out, s.rings.objects[p.Index].Current())
		}
	}
	return out
}

// followDevices opens the devices that ring changes name for this storage node while it runs
// (a disk added to a node), and gives the read leases the replicated policies' new rings,
// checking as often as the rings are.
func (s *Server) followDevices(ctx context.Context) {
	interval := s.cfg.RingReload
	if interval <= 0 {
		interval = ring.DefaultReloadInterval
	}
	leaseRings := s.replicatedObjectRings()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		devs, err := s.clusterDevices()
		if err == nil {
			err = s.node.AddDevices(devs)
		}
		if err != nil {
			s.cfg.Logger.Warn("devices the rings name for this node", "err", err)
		}
		if s.leases != nil {
			s.followLeaseRings(leaseRings)
		}
	}
}
