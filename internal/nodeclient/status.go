package nodeclient

import (
	"context"
	"time"
)

// NodeStatus is what a storage node reports of itself to operators (`cairn admin status`):
// its devices and the progress of its daemons.
type NodeStatus struct {
	Devices []DeviceStatus `json:"devices"`
	// Daemons maps a daemon's name (replicator, auditor, ...) to its progress.
	Daemons map[string]DaemonStatus `json:"daemons,omitempty"`
}

// DeviceStatus is one device of a node.
type DeviceStatus struct {
	Name string `json:"name"`
	// Error says why the device is not served (it could not be opened); "" when it is.
	Error      string `json:"error,omitempty"`
	TotalBytes int64  `json:"total_bytes"`
	FreeBytes  int64  `json:"free_bytes"`
	// CorruptObjects are versions flagged corrupt, waiting for repair; ChecksumFailures counts
	// those found since the device was opened.
	CorruptObjects   int64 `json:"corrupt_objects"`
	ChecksumFailures int64 `json:"checksum_failures"`
}

// DaemonStatus is the progress of one background daemon on a node.
type DaemonStatus struct {
	Passes   int64   `json:"passes"`   // completed
	Running  bool    `json:"running"`  // a pass is under way
	Progress float64 `json:"progress"` // of the current (or last) pass, 0 to 1
	// LastPassEnd and LastPassSeconds describe the last completed pass.
	LastPassEnd     time.Time `json:"last_pass_end,omitzero"`
	LastPassSeconds float64   `json:"last_pass_seconds"`
	// Counters are the daemon's own figures of its last pass (partitions, pushed, handoffs
	// left, failed, ...), by name.
	Counters map[string]int64 `json:"counters,omitempty"`
}

// Reporter is served by storage nodes: their status for operators.
type Reporter interface {
	NodeStatus(ctx context.Context) (NodeStatus, error)
}
