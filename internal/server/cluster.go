package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/backend"
	"github.com/cairn-store/cairn/internal/nodeclient"
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

// ringFiles are the rings a cluster node follows, by kind.
var ringFiles = []string{"account", "container", "object"}

// openCluster loads the rings (each followed by a watcher that Serve runs) and makes the
// client that reaches the other nodes.
func (s *Server) openCluster() error {
	for _, kind := range ringFiles {
		w, err := ring.NewWatcher(filepath.Join(s.cfg.RingDir, kind+".ring.gz"), s.cfg.RingReload, s.cfg.Logger)
		if err != nil {
			return fmt.Errorf("server: %s ring: %w", kind, err)
		}
		s.rings = append(s.rings, w)
	}
	d, err := backend.NewDialer(backend.ClientConfig{Secret: []byte(s.cfg.ClusterSecret)})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.dialer = d
	return nil
}

// ring returns the watcher of a kind of ring.
func (s *Server) ring(kind string) *ring.Watcher { return s.rings[slices.Index(ringFiles, kind)] }

// clusterDevices returns the devices this storage node serves: every device any ring names for
// its address, each a directory under DataDir/devices/, made on first start.
func (s *Server) clusterDevices() ([]storage.DeviceConfig, error) {
	var names []string
	for _, w := range s.rings {
		for _, d := range w.Current().Devices {
			if d.Node == s.cfg.Listen && d.Name != "" && !slices.Contains(names, d.Name) {
				names = append(names, d.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("server: the rings in %s name no device for %s: start the node on the address its ring entries give", s.cfg.RingDir, s.cfg.Listen)
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

// clusterProxyConfig points the proxy at the rings in force and the storage nodes; a sumo node
// reaches its own devices in-process.
func (s *Server) clusterProxyConfig(pcfg *proxy.Config) {
	pcfg.AccountRing, pcfg.ContainerRing, pcfg.ObjectRing = s.ring("account").Current, s.ring("container").Current, s.ring("object").Current
	pcfg.Dialer = s.dialer
	if s.node != nil {
		pcfg.Dialer = selfDialer{self: s.cfg.Listen, node: s.node, others: s.dialer}
	}
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
	return replicator.New(replicator.Config{
		Node: s.node, Self: s.cfg.Listen,
		ObjectRings:   func() []*ring.Ring { return []*ring.Ring{s.ring("object").Current()} },
		ContainerRing: s.ring("container").Current, AccountRing: s.ring("account").Current,
		Dialer:   selfDialer{self: s.cfg.Listen, node: s.node, others: s.dialer},
		Interval: s.cfg.ReplicationInterval, Concurrency: s.cfg.ReplicationConcurrency,
		BytesPerSecond: s.cfg.ReplicationBytesPerSecond,
		Logger:         s.cfg.Logger, Registry: reg,
	})
}
