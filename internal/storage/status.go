package storage

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/cairn-store/cairn/internal/nodeclient"
)

var _ nodeclient.Reporter = (*Node)(nil)

// statusSources are the daemons that report into the node's status, by name.
type statusSources struct {
	mu      sync.Mutex
	sources map[string]func() nodeclient.DaemonStatus
}

// ReportStatus adds a daemon's progress to what NodeStatus reports, under name.
func (n *Node) ReportStatus(name string, fn func() nodeclient.DaemonStatus) {
	n.status.mu.Lock()
	defer n.status.mu.Unlock()
	if n.status.sources == nil {
		n.status.sources = map[string]func() nodeclient.DaemonStatus{}
	}
	n.status.sources[name] = fn
}

// NodeStatus reports the node's devices (served or not, fill, corruption) and its daemons.
func (n *Node) NodeStatus(ctx context.Context) (nodeclient.NodeStatus, error) {
	var st nodeclient.NodeStatus
	names := slices.Sorted(maps.Keys(n.devs()))
	for _, name := range names {
		d := n.devs()[name]
		ds := nodeclient.DeviceStatus{Name: name}
		if u, err := n.fs.GetDiskUsage(d.dir); err == nil {
			ds.TotalBytes, ds.FreeBytes = int64(min(u.TotalBytes, 1<<62)), int64(min(u.AvailBytes, 1<<62))
		}
		es := d.engine.Stats()
		ds.CorruptObjects, ds.ChecksumFailures = es.CorruptObjects, es.ChecksumFailures
		st.Devices = append(st.Devices, ds)
	}
	for _, name := range slices.Sorted(maps.Keys(n.Failed())) {
		st.Devices = append(st.Devices, nodeclient.DeviceStatus{Name: name, Error: n.Failed()[name].Error()})
	}
	n.status.mu.Lock()
	defer n.status.mu.Unlock()
	if len(n.status.sources) > 0 {
		st.Daemons = map[string]nodeclient.DaemonStatus{}
		for name, fn := range n.status.sources {
			st.Daemons[name] = fn()
		}
	}
	return st, nil
}
