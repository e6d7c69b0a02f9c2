package admin

import (
	"context"
	"net/http"

	"github.com/cairn-store/cairn/internal/nodeclient"
)

// ClusterStatus is GET /admin/v1/status: the rings in force, every storage node they name
// with its devices and daemons, and a summary an operator reads first.
type ClusterStatus struct {
	Rings   []RingStatus  `json:"rings"`
	Nodes   []NodeReport  `json:"nodes"`
	Summary StatusSummary `json:"summary"`
}

// RingStatus describes one ring.
type RingStatus struct {
	Name      string  `json:"name"` // account, container, object, object-1, ...
	PartPower uint    `json:"part_power"`
	Replicas  float64 `json:"replicas"`
	Devices   int     `json:"devices"`
	Version   int64   `json:"version"`
}

// NodeReport is one storage node as the rings name it, and what it reported.
type NodeReport struct {
	Address string `json:"address"`
	// Error says why the node did not report (unreachable, refused); "" when it did.
	Error string `json:"error,omitempty"`
	nodeclient.NodeStatus
}

// StatusSummary adds up the nodes' reports.
type StatusSummary struct {
	Nodes          int   `json:"nodes"`
	NodesDown      int   `json:"nodes_down"`
	Devices        int   `json:"devices"`
	DevicesFailed  int   `json:"devices_failed"`
	TotalBytes     int64 `json:"total_bytes"`
	FreeBytes      int64 `json:"free_bytes"`
	CorruptObjects int64 `json:"corrupt_objects"`
	// HandoffPartitions are partitions held away from their primaries at the end of each
	// node's last replication and reconstruction passes (0: every replica and fragment
	// archive is home).
	HandoffPartitions int64 `json:"handoff_partitions"`
	// OldestReplicationPass is the end of the oldest of the nodes' last replication (and
	// reconstruction) passes: replication has looked at everything since then.
	OldestReplicationPass string `json:"oldest_replication_pass,omitempty"`
}

// StatusFunc gathers the cluster's status.
type StatusFunc func(ctx context.Context) (ClusterStatus, error)

// Summarize fills in s.Summary from s.Nodes.
func (s *ClusterStatus) Summarize() {
	sum := StatusSummary{Nodes: len(s.Nodes)}
	var oldest string
	for _, n := range s.Nodes {
		if n.Error != "" {
			sum.NodesDown++
			continue
		}
		for _, d := range n.Devices {
			sum.Devices++
			if d.Error != "" {
				sum.DevicesFailed++
			}
			sum.TotalBytes += d.TotalBytes
			sum.FreeBytes += d.FreeBytes
			sum.CorruptObjects += d.CorruptObjects
		}
		// The reconstructor is the replicator of erasure-coded policies: its handoffs are
		// partitions away from home too, and its passes are replication's as well.
		for _, name := range []string{"replicator", "reconstructor"} {
			r, ok := n.Daemons[name]
			if !ok {
				continue
			}
			sum.HandoffPartitions += r.Counters["handoffs_left"]
			end := r.LastPassEnd.UTC().Format("2006-01-02T15:04:05Z")
			if r.LastPassEnd.IsZero() {
				end = "never"
			}
			if oldest == "" || end == "never" || (oldest != "never" && end < oldest) {
				oldest = end
			}
		}
	}
	sum.OldestReplicationPass = oldest
	s.Summary = sum
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request) error {
	if h.cfg.Status == nil {
		return errorf(http.StatusNotFound, CodeNotFound, "no cluster status here")
	}
	st, err := h.cfg.Status(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// Status returns the cluster's status.
func (c *Client) Status(ctx context.Context) (ClusterStatus, error) {
	var st ClusterStatus
	err := c.do(ctx, http.MethodGet, "status", nil, &st)
	return st, err
}
