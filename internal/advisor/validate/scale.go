package validate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cairn-store/cairn/internal/advisor"
)

// ErrInvalidConfig is wrapped by a configuration that cannot be validated.
var ErrInvalidConfig = errors.New("validate: invalid configuration")

// Node is one node of a scaled-down cluster as this machine runs it: a CPU quota and a link
// rate, not a catalog's cores and NICs.
type Node struct {
	CPU     float64 `json:"cpu_cores"` // cores of this machine (a cgroup quota: 0.25 is a quarter of one)
	NICMbps float64 `json:"nic_mbps"`  // the shaped link's rate, each direction (tbf)
}

// Shape is a scaled-down configuration: P proxies and S storage nodes, or Sumo nodes (each
// both a proxy and a storage node) and nothing else.
type Shape struct {
	Proxies  int  `json:"proxies"`
	Storage  int  `json:"storage"`
	Sumo     int  `json:"sumo,omitempty"`
	Replicas int  `json:"replicas"`
	Proxy    Node `json:"proxy"`
	StorNode Node `json:"storage_node"`
	SumoNode Node `json:"sumo_node,omitzero"`
}

// IsSumo says whether the shape is of sumo nodes.
func (s Shape) IsSumo() bool { return s.Sumo > 0 || s.Proxies == 0 && s.Storage == 0 }

// Nodes is how many nodes hold data: storage or sumo.
func (s Shape) Nodes() int { return s.Storage + s.Sumo }

// Label is the shape as the sweep names it: "1:3" (P:N), or "sumo 3".
func (s Shape) Label() string {
	if s.IsSumo() {
		return fmt.Sprintf("sumo %d", s.Sumo)
	}
	return fmt.Sprintf("%d:%d", s.Proxies, s.Storage)
}

// Validate checks the shape.
func (s Shape) Validate() error {
	if s.IsSumo() {
		switch {
		case s.Sumo < 1 || s.Proxies > 0 || s.Storage > 0:
			return fmt.Errorf("%w: %d sumo nodes with %d proxies and %d storage nodes: want sumo nodes alone", ErrInvalidConfig, s.Sumo, s.Proxies, s.Storage)
		case s.Replicas < 1 || s.Replicas > s.Sumo:
			return fmt.Errorf("%w: %d replicas over %d sumo nodes", ErrInvalidConfig, s.Replicas, s.Sumo)
		case s.SumoNode.CPU <= 0 || s.SumoNode.NICMbps <= 0:
			return fmt.Errorf("%w: sumo nodes need a CPU quota and a link rate > 0", ErrInvalidConfig)
		}
		return nil
	}
	switch {
	case s.Proxies < 1 || s.Storage < 1:
		return fmt.Errorf("%w: %d proxies and %d storage nodes: want at least one of each", ErrInvalidConfig, s.Proxies, s.Storage)
	case s.Replicas < 1 || s.Replicas > s.Storage:
		return fmt.Errorf("%w: %d replicas over %d storage nodes", ErrInvalidConfig, s.Replicas, s.Storage)
	case s.Proxy.CPU <= 0 || s.StorNode.CPU <= 0:
		return fmt.Errorf("%w: CPU quotas must be > 0", ErrInvalidConfig)
	case s.Proxy.NICMbps <= 0 || s.StorNode.NICMbps <= 0:
		return fmt.Errorf("%w: link rates must be > 0", ErrInvalidConfig)
	}
	return nil
}

// TotalCPU is the cores the shape's quotas add up to.
func (s Shape) TotalCPU() float64 {
	return float64(s.Proxies)*s.Proxy.CPU + float64(s.Storage)*s.StorNode.CPU + float64(s.Sumo)*s.SumoNode.CPU
}

// Scale maps a node type of a catalog to a node of this machine: cpuPerCore cores of this
// machine per core of the type (times its cpu_speed, since a faster core does more), and
// mbpsPerGbps Mbit/s of a shaped link per Gbit/s of the NIC option. The ratios between node
// types are what a scaled-down cluster keeps; the absolute figures must fit this machine.
func Scale(t *advisor.NodeType, nic advisor.NIC, cpuPerCore, mbpsPerGbps float64) Node {
	speed := t.CPUSpeed
	if speed == 0 {
		speed = 1
	}
	return Node{CPU: float64(t.Cores) * speed * cpuPerCore, NICMbps: nic.Gbps * float64(nic.Count) * mbpsPerGbps}
}

// scaledType is a node of this machine as the model's NodeType: the model counts whole cores,
// so a quota of q cores is ⌈q⌉ cores each q/⌈q⌉ as fast, which gives the same CPU seconds per
// second (throughput; latency is not compared). The disk is not shaped: the machine's one
// device is every node's, so the scaled cluster has a disk the model never finds busy.
func scaledType(name string, n Node) (*advisor.NodeType, advisor.NIC) {
	cores := max(1, int(math.Ceil(n.CPU)))
	t := &advisor.NodeType{Name: name, Cores: cores, CPUSpeed: n.CPU / float64(cores)}
	return t, advisor.NIC{Name: fmt.Sprintf("%.0fmbit", n.NICMbps), Gbps: n.NICMbps / 1000, Count: 1}
}

var unshapedDisk = &advisor.DiskType{Name: "this machine's disk (not shaped)", CapacityTB: 1, IOPS: 1e12, MBps: 1e12}

// Cluster is the model's view of the shape.
func (s Shape) Cluster() *advisor.Cluster {
	if s.IsSumo() {
		t, n := scaledType("sumo (scaled)", s.SumoNode)
		return &advisor.Cluster{Groups: []advisor.Group{
			{Type: t, NIC: n, Count: s.Sumo, Proxy: true, Storage: true, Disk: unshapedDisk, DisksPerNode: 1},
		}}
	}
	pt, pn := scaledType("proxy (scaled)", s.Proxy)
	st, sn := scaledType("storage (scaled)", s.StorNode)
	return &advisor.Cluster{Groups: []advisor.Group{
		{Type: pt, NIC: pn, Count: s.Proxies, Proxy: true},
		{Type: st, NIC: sn, Count: s.Storage, Storage: true, Disk: unshapedDisk, DisksPerNode: 1},
	}}
}

// Predict is the model's saturation throughput of the shape (the bottleneck law's X_max, the
// figure a closed-loop benchmark with enough clients approaches) and its bottleneck.
func Predict(d *advisor.Demands, w *advisor.Workload, s Shape) (advisor.Prediction, error) {
	if err := s.Validate(); err != nil {
		return advisor.Prediction{}, err
	}
	pol, err := advisor.ParsePolicy(s.Replicas, "", 1)
	if err != nil {
		return advisor.Prediction{}, fmt.Errorf("validate: %w", err)
	}
	m, err := advisor.NewModel(d, w, pol, advisor.Options{})
	if err != nil {
		return advisor.Prediction{}, fmt.Errorf("validate: %w", err)
	}
	return m.Predict(s.Cluster(), 0), nil
}

// RelError is (measured − predicted) / predicted: negative when the cluster fell short.
func RelError(predicted, measured float64) float64 {
	if predicted == 0 {
		return math.Inf(1)
	}
	return (measured - predicted) / predicted
}

// MedianAbs is the median of |e| over errs (0 for none).
func MedianAbs(errs []float64) float64 {
	if len(errs) == 0 {
		return 0
	}
	a := make([]float64, len(errs))
	for i, e := range errs {
		a[i] = math.Abs(e)
	}
	slices.Sort(a)
	if n := len(a); n%2 == 1 {
		return a[n/2]
	} else {
		return (a[n/2-1] + a[n/2]) / 2
	}
}

// ParseSweep reads "1:N=1..4" (one proxy, N from 1 to 4 storage nodes), "P:N=a..b", or
// "sumo:N=a..b" (a to b sumo nodes, no proxies: proxies is 0).
func ParseSweep(s string) (proxies, from, to int, err error) {
	ratio, rng, ok := strings.Cut(s, "=")
	p, n, ok2 := strings.Cut(ratio, ":")
	if strings.TrimSpace(p) == "sumo" {
		p = "0"
	}
	if !ok || !ok2 || strings.TrimSpace(n) != "N" {
		return 0, 0, 0, fmt.Errorf("%w: sweep %q: want P:N=FROM..TO, as 1:N=1..4", ErrInvalidConfig, s)
	}
	a, b, ok := strings.Cut(rng, "..")
	if !ok {
		return 0, 0, 0, fmt.Errorf("%w: sweep %q: want P:N=FROM..TO, as 1:N=1..4", ErrInvalidConfig, s)
	}
	if _, err := fmt.Sscanf(strings.TrimSpace(p)+" "+strings.TrimSpace(a)+" "+strings.TrimSpace(b), "%d %d %d", &proxies, &from, &to); err != nil {
		return 0, 0, 0, fmt.Errorf("%w: sweep %q: %w", ErrInvalidConfig, s, err)
	}
	if proxies < 0 || from < 1 || to < from || to > 16 || proxies == 0 && !strings.HasPrefix(strings.TrimSpace(s), "sumo") {
		return 0, 0, 0, fmt.Errorf("%w: sweep %q: want P ≥ 1 (or sumo) and 1 ≤ FROM ≤ TO ≤ 16", ErrInvalidConfig, s)
	}
	return proxies, from, to, nil
}

// FromRecommendation is the node sizes of a recommendation (`recommend --json`'s best
// configuration) scaled to this machine: its proxy group's and storage group's cores ×
// cpuPerCore and NIC Gbit/s × mbpsPerGbps, or its sumo group's. The counts are not taken — a
// recommendation's 1:8 would not fit on this machine — the sweep sets them: the shape returned
// has nodes and no counts.
func FromRecommendation(c advisor.Config, cpuPerCore, mbpsPerGbps float64) (Shape, error) {
	var s Shape
	var gotP, gotS, gotU bool
	for _, g := range c.Groups {
		n := Node{CPU: float64(g.Cores) * cpuPerCore, NICMbps: g.NICGbps * mbpsPerGbps}
		switch g.Role {
		case "proxy":
			s.Proxy, gotP = n, true
		case "storage":
			s.StorNode, gotS = n, true
		case "sumo":
			s.SumoNode, gotU = n, true
		}
	}
	switch {
	case gotU && !gotP && !gotS:
		return s, nil
	case gotP && gotS && !gotU:
		return s, nil
	}
	return s, fmt.Errorf("%w: the recommendation (%s) is neither proxies and storage nodes nor sumo nodes alone: validate builds one or the other", ErrInvalidConfig, c.Topology)
}
