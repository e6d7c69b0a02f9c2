package admin

import (
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/nodeclient"
)

// TestSummaryCountsReconstruction: partitions an erasure-coded policy's handoffs hold are away
// from home as a replicated one's are, and a reconstructor that never finished a pass makes
// the oldest pass "never".
func TestSummaryCountsReconstruction(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	s := ClusterStatus{Nodes: []NodeReport{
		{Address: "a", NodeStatus: nodeclient.NodeStatus{Daemons: map[string]nodeclient.DaemonStatus{
			"replicator":    {LastPassEnd: at, Counters: map[string]int64{"handoffs_left": 2}},
			"reconstructor": {LastPassEnd: at.Add(time.Minute), Counters: map[string]int64{"handoffs_left": 3}},
		}}},
		{Address: "b", NodeStatus: nodeclient.NodeStatus{Daemons: map[string]nodeclient.DaemonStatus{
			"replicator": {LastPassEnd: at.Add(time.Hour)},
		}}},
	}}
	s.Summarize()
	if s.Summary.HandoffPartitions != 5 || s.Summary.OldestReplicationPass != "2025-01-02T03:04:05Z" {
		t.Fatalf("summary %+v", s.Summary)
	}
	s.Nodes[1].Daemons["reconstructor"] = nodeclient.DaemonStatus{}
	s.Summarize()
	if s.Summary.OldestReplicationPass != "never" {
		t.Fatalf("summary with a reconstructor that never passed: %+v", s.Summary)
	}
}
