package advisor

import (
	"errors"
	"fmt"
	"math"
)

// The performance model. Every resource r of every node (a CPU of c cores, a NIC direction of
// c ports, c data disks, a listing device, a disk controller) and of the load-balancer tier
// has a service demand D_r: the seconds of one of its servers a client request costs there
// on average. By the utilization law U_r = X·D_r/c_r, so no configuration sustains more than
// X_max = min_r c_r/D_r requests per second (the bottleneck law); requests spread evenly over
// the proxies, and over the storage nodes in proportion to their raw capacity (as a ring's
// weights spread partitions), so D_r of a node falls as 1/n when n nodes share a tier.
// Latency comes from queueing approximations per resource (queue.go).

// ErrInvalidOptions is wrapped by bad model options.
var ErrInvalidOptions = errors.New("invalid model options")

// Options are the model's engineering margins.
type Options struct {
	// MaxUtilization is the highest utilization any resource is planned for: a
	// configuration's rated throughput is MaxUtilization × X_max. Default 0.8.
	MaxUtilization float64 `json:"max_utilization"`
	// Fill is the fraction of raw capacity data may occupy (rings rebalance and disks fail
	// before they are full). Default 0.8.
	Fill float64 `json:"fill"`
	// P99Seconds, when set, also limits the rated throughput to where the predicted p99
	// latency stays within it.
	P99Seconds float64 `json:"p99_seconds,omitempty"`
}

// Defaults of Options.
const (
	DefaultMaxUtilization = 0.8
	DefaultFill           = 0.8
)

func (o *Options) setDefaults() {
	if o.MaxUtilization == 0 {
		o.MaxUtilization = DefaultMaxUtilization
	}
	if o.Fill == 0 {
		o.Fill = DefaultFill
	}
}

// Validate checks the options.
func (o Options) Validate() error {
	if o.MaxUtilization <= 0 || o.MaxUtilization > 1 {
		return fmt.Errorf("%w: max utilization %g: want (0, 1]", ErrInvalidOptions, o.MaxUtilization)
	}
	if o.Fill <= 0 || o.Fill > 1 {
		return fmt.Errorf("%w: fill %g: want (0, 1]", ErrInvalidOptions, o.Fill)
	}
	if o.P99Seconds < 0 {
		return fmt.Errorf("%w: p99 bound must not be negative", ErrInvalidOptions)
	}
	return nil
}

// Model predicts configurations for one workload, demands and policy.
type Model struct {
	Demands  *Demands
	Workload *Workload
	Policy   Policy
	Options  Options

	classes []classDemand
	agg     classDemand // weighted sums per request (visits folded in, per-visit fields × visits)
	visits  float64     // storage visits per request
	payload float64     // bytes of object data per request (MB/s = X × payload / 10^6)
}

// classDemand is what one request of a class costs: proxy figures per request, storage
// figures per visit (visits of them).
type classDemand struct {
	weight, visits                         float64
	proxyCPU, cliIn, cliOut                float64
	storCPU, bOut, bIn                     float64
	localSave                              float64 // CPU a visit saves served in process
	dataOps, dataBytes, listOps, listBytes float64
}

// NewModel prepares the per-class demands of w under policy p.
func NewModel(d *Demands, w *Workload, p Policy, o Options) (*Model, error) {
	o.setDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	m := &Model{Demands: d, Workload: w, Policy: p, Options: o, payload: w.MeanPayload()}
	for _, c := range w.Classes {
		visits := p.writeVisits()
		if c.Op == "get" || c.Op == "head" || c.Op == "list" {
			visits = p.readVisits()
		}
		if c.Op == "head" || c.Op == "list" {
			visits = 1
		}
		front, err := d.At(c.Op, c.Size)
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", w.Name, err)
		}
		piece := front
		if p.isEC() && (c.Op == "get" || c.Op == "put") {
			if piece, err = d.At(c.Op, p.pieceSize(c.Size)); err != nil {
				return nil, fmt.Errorf("workload %s: %w", w.Name, err)
			}
		}
		cliIn, cliOut := onTheWire(front.ClientInBytes, front.ClientOutBytes)
		bOut, bIn := onTheWire(piece.BackendOutBytes, piece.BackendInBytes)
		cd := classDemand{
			weight: c.Weight, visits: visits,
			proxyCPU: front.ProxyCPUSeconds + visits*piece.ProxyCPUPerVisitSeconds, cliIn: cliIn, cliOut: cliOut,
			storCPU: piece.StorageCPUSeconds, bOut: bOut, bIn: bIn, localSave: piece.LocalVisitSavingSeconds,
			dataOps: piece.DataOps, dataBytes: piece.DataBytes, listOps: piece.ListingOps, listBytes: piece.ListingBytes,
		}
		if p.isEC() && c.Op == "put" {
			// The proxy encodes the object into K+M fragments: parity bytes cost CPU.
			cd.proxyCPU += c.Size * p.Overhead() / (d.ECEncodeMBpsPerCore * 1e6)
		}
		m.classes = append(m.classes, cd)
		a := &m.agg
		a.proxyCPU += c.Weight * cd.proxyCPU
		a.cliIn += c.Weight * cd.cliIn
		a.cliOut += c.Weight * cd.cliOut
		wv := c.Weight * visits
		a.storCPU += wv * cd.storCPU
		a.localSave += wv * cd.localSave
		a.bOut += wv * cd.bOut
		a.bIn += wv * cd.bIn
		a.dataOps += wv * cd.dataOps
		a.dataBytes += wv * cd.dataBytes
		a.listOps += wv * cd.listOps
		a.listBytes += wv * cd.listBytes
		m.visits += wv
	}
	return m, nil
}

// What a message of HTTP over TCP/IPv4 on Ethernet costs a link beyond its bytes (the demands
// count what the processes read and wrote): per segment of up to mss bytes, TCP (with
// timestamps) and IP headers, Ethernet's header, FCS, preamble and gap; and the other way,
// an acknowledgement for every second segment (delayed ACKs), at least one per message.
const (
	mss          = 1448
	segmentBytes = 32 + 20 + 14 + 4 + 8 + 12
	ackBytes     = 64 + 8 + 12 // a minimum frame
)

// onTheWire turns the bytes of a request (out: sent, in: answered) into the bytes its link
// carries each way: a 4 KiB answer costs about 10% more, a large one 6%, headers of empty
// answers much more. A link saturates on these, not on the bytes the processes moved.
func onTheWire(out, in float64) (wireOut, wireIn float64) {
	segs := func(b float64) float64 { return math.Ceil(b / mss) }
	acks := func(b float64) float64 { return math.Max(1, math.Ceil(segs(b)/2)) }
	wireOut, wireIn = out, in
	if out > 0 {
		wireOut += segs(out) * segmentBytes
		wireIn += acks(out) * ackBytes
	}
	if in > 0 {
		wireIn += segs(in) * segmentBytes
		wireOut += acks(in) * ackBytes
	}
	return wireOut, wireIn
}

// Group is a set of identical nodes with the same roles.
type Group struct {
	Type  *NodeType
	NIC   NIC
	Count int
	// Proxy and Storage are the roles the nodes run; both is a sumo group.
	Proxy, Storage bool
	Disk           *DiskType // data disks, for a storing group
	DisksPerNode   int
	// ListingDisk is a device of its own for the listings (the container DB) on each node,
	// in one more slot; nil puts listings on the data disks.
	ListingDisk *DiskType
}

// Cluster is a configuration to evaluate.
type Cluster struct {
	Groups  []Group
	LB      *LoadBalancer // nil: no load balancer
	LBCount int
}

func (g *Group) tier() string {
	switch {
	case g.Proxy && g.Storage:
		return "sumo"
	case g.Proxy:
		return "proxy"
	default:
		return "storage"
	}
}

func (g *Group) rawTB() float64 {
	if !g.Storage || g.Disk == nil {
		return 0
	}
	return float64(g.DisksPerNode) * g.Disk.CapacityTB
}

// resource is one resource of one node of a group (all nodes of a group alike), or of the
// load-balancer tier (group -1).
type resource struct {
	group   int
	tier    string
	name    string
	servers float64
	demand  float64 // server-seconds per client request, on one node
	visits  float64 // visits per client request, on one node
	shared  bool    // processor sharing: latency stretches by 1/(1-U) (NICs, bandwidth)
	pooled  bool    // one queue for all servers (CPU cores); else a queue per server
	// reserved is the part of servers busy without requests (background CPU): it counts in
	// utilization and leaves servers − reserved for requests.
	reserved float64
}

// limit is the requests per second at which the resource is saturated.
func (r *resource) limit() float64 {
	if r.demand <= 0 {
		return math.Inf(1)
	}
	return math.Max(0, r.servers-r.reserved) / r.demand
}

// utilization is the busy fraction of the resource at x requests per second.
func (r *resource) utilization(x float64) float64 {
	if r.servers <= 0 {
		return 0
	}
	return (r.reserved + x*r.demand) / r.servers
}

const bitsPerByte = 8

// shares is each group's fraction of the proxy work and of the storage work, per node.
func (cl *Cluster) shares() (ps, ss []float64) {
	var proxies, raw float64
	for _, g := range cl.Groups {
		if g.Proxy {
			proxies += float64(g.Count)
		}
		raw += float64(g.Count) * g.rawTB()
	}
	ps, ss = make([]float64, len(cl.Groups)), make([]float64, len(cl.Groups))
	for i, g := range cl.Groups {
		if g.Proxy && proxies > 0 {
			ps[i] = 1 / proxies
		}
		if g.Storage && raw > 0 {
			ss[i] = g.rawTB() / raw
		}
	}
	return ps, ss
}

// resources lists every resource of the cluster with its demand.
func (m *Model) resources(cl *Cluster) []resource {
	ps, ss := cl.shares()
	var out []resource
	for i := range cl.Groups {
		out = append(out, m.nodeResources(i, &cl.Groups[i], ps[i], ss[i], true)...)
	}
	if cl.LB != nil && cl.LBCount > 0 {
		out = append(out, m.lbResources(cl.LB, cl.LBCount)...)
	}
	return out
}

// nodeResources is one node's resources, given its shares of proxy and storage work. With
// local, a node that proxies and stores (sumo) serves the visits of its own requests that
// land on itself (a fraction ss of them) in process: no HTTP request, no bytes on its NIC.
func (m *Model) nodeResources(gi int, g *Group, ps, ss float64, local bool) []resource {
	a, t := &m.agg, g.Type
	tier := g.tier()
	port := g.NIC.Gbps * 1e9 / bitsPerByte
	visits := ps + ss*m.visits
	var saveCPU, saveBytes float64
	if local && g.Proxy && g.Storage {
		saveCPU, saveBytes = ps*ss*a.localSave, ps*ss*(a.bIn+a.bOut)
	}
	var background float64
	if g.Proxy {
		background += m.Demands.Background.ProxyCores
	}
	if g.Storage {
		background += m.Demands.Background.StorageCores
	}
	out := []resource{
		{group: gi, tier: tier, name: "cpu", servers: float64(t.Cores), reserved: background / t.CPUSpeed,
			demand: math.Max(0, ps*a.proxyCPU+ss*a.storCPU-saveCPU) / t.CPUSpeed, visits: visits, pooled: true},
		// Into a proxy come requests and storage answers; into a storage node, what the
		// proxies send it. Out of each, the reverse.
		{gi, tier, "nic in", float64(g.NIC.Count), (ps*(a.cliIn+a.bIn) + ss*a.bOut - saveBytes) / port, visits, true, false, 0},
		{gi, tier, "nic out", float64(g.NIC.Count), (ps*(a.cliOut+a.bOut) + ss*a.bIn - saveBytes) / port, visits, true, false, 0},
	}
	if !g.Storage || g.Disk == nil || g.DisksPerNode == 0 {
		return out
	}
	d := g.Disk
	dataT := a.dataOps/d.IOPS + a.dataBytes/(d.MBps*1e6)
	if g.ListingDisk == nil {
		dataT += a.listOps/d.IOPS + a.listBytes/(d.MBps*1e6)
	}
	out = append(out, resource{gi, tier, "data disks", float64(g.DisksPerNode), ss * dataT, ss * m.visits, false, false, 0})
	if l := g.ListingDisk; l != nil {
		out = append(out, resource{gi, tier, "listing disk", 1, ss * (a.listOps/l.IOPS + a.listBytes/(l.MBps*1e6)), ss * m.visits, false, false, 0})
	}
	if t.ControllerMBps > 0 {
		out = append(out, resource{gi, tier, "controller", 1, ss * (a.dataBytes + a.listBytes) / (t.ControllerMBps * 1e6), ss * m.visits, true, false, 0})
	}
	return out
}

func (m *Model) lbResources(lb *LoadBalancer, n int) []resource {
	a := &m.agg
	// Every byte a client sends or receives passes through the balancer once in each
	// direction; its bandwidth is per direction, like a NIC's.
	out := []resource{{-1, "lb", "bandwidth", float64(n), (a.cliIn + a.cliOut) / (lb.Gbps * 1e9 / bitsPerByte), 1, true, false, 0}}
	if lb.RequestsPerSecond > 0 {
		out = append(out, resource{-1, "lb", "requests", float64(n), 1 / lb.RequestsPerSecond, 1, false, false, 0})
	}
	return out
}

// perNodeLimit is the requests per second one node of g sustains when it alone carries a
// whole tier's work (proxy share 1 if it proxies, storage share 1 if it stores): n such nodes
// sustain n times it, since demands fall as 1/n. It is the unit of the search. The visits a
// sumo node serves in process are left out: their share falls as 1/n² and would make one node
// alone look n times better than each of n; without them the unit is what n nodes sustain at
// least, and Predict counts them once the counts are known.
func (m *Model) perNodeLimit(g *Group) float64 {
	ps, ss := 0.0, 0.0
	if g.Proxy {
		ps = 1
	}
	if g.Storage {
		ss = 1
	}
	lim := math.Inf(1)
	for _, r := range m.nodeResources(0, g, ps, ss, false) {
		lim = math.Min(lim, r.limit())
	}
	return lim
}

func (m *Model) perLBLimit(lb *LoadBalancer) float64 {
	lim := math.Inf(1)
	for _, r := range m.lbResources(lb, 1) {
		lim = math.Min(lim, r.limit())
	}
	return lim
}

// ResourceUse is one resource's place in a prediction.
type ResourceUse struct {
	Tier     string  `json:"tier"`
	NodeType string  `json:"node_type,omitempty"`
	Resource string  `json:"resource"`
	Servers  float64 `json:"servers"` // cores, ports, disks, balancers
	// Utilization is at the prediction's operating point.
	Utilization float64 `json:"utilization"`
	// LimitOpsPerSec is the throughput at which this resource alone saturates.
	LimitOpsPerSec float64 `json:"limit_ops_per_sec"`
}

// Prediction is what the model says of a cluster.
type Prediction struct {
	MaxOpsPerSec   float64 `json:"max_ops_per_sec"` // the bottleneck law's bound
	MaxMBps        float64 `json:"max_mb_per_sec"`
	RatedOpsPerSec float64 `json:"rated_ops_per_sec"` // within max utilization and the p99 bound
	RatedMBps      float64 `json:"rated_mb_per_sec"`
	// The operating point: the throughput asked for, or the rated throughput.
	AtOpsPerSec float64 `json:"at_ops_per_sec"`
	AtMBps      float64 `json:"at_mb_per_sec"`
	MeanMs      float64 `json:"mean_ms"`
	P99Ms       float64 `json:"p99_ms"`
	// Bottleneck is the resource that saturates first.
	Bottleneck ResourceUse `json:"bottleneck"`
	// Tiers has the busiest resource of each tier at the operating point.
	Tiers     []ResourceUse `json:"tiers"`
	Resources []ResourceUse `json:"resources"`
}

// MBps converts requests per second to object megabytes (10^6) per second.
func (m *Model) MBps(ops float64) float64 { return ops * m.payload / 1e6 }

// Ops converts MB/s of object data to requests per second (0 for a workload moving no data).
func (m *Model) Ops(mbps float64) float64 {
	if m.payload == 0 {
		return 0
	}
	return mbps * 1e6 / m.payload
}

// Predict evaluates cl at the operating point at (requests/s; 0: at its rated throughput).
func (m *Model) Predict(cl *Cluster, at float64) Prediction {
	rs := m.resources(cl)
	p := Prediction{MaxOpsPerSec: math.Inf(1)}
	bottleneck := -1
	for i := range rs {
		if l := rs[i].limit(); l < p.MaxOpsPerSec {
			p.MaxOpsPerSec, bottleneck = l, i
		}
	}
	p.RatedOpsPerSec = m.rated(cl, rs, p.MaxOpsPerSec)
	if at <= 0 {
		at = p.RatedOpsPerSec
	}
	p.AtOpsPerSec = at
	p.MaxMBps, p.RatedMBps, p.AtMBps = m.MBps(p.MaxOpsPerSec), m.MBps(p.RatedOpsPerSec), m.MBps(at)
	if bottleneck >= 0 {
		p.Bottleneck = m.use(cl, &rs[bottleneck], at) // background included
	}
	p.MeanMs, p.P99Ms = m.latency(cl, rs, at)
	p.MeanMs *= 1000
	p.P99Ms *= 1000
	busiest := map[string]int{}
	for i := range rs {
		u := m.use(cl, &rs[i], at)
		p.Resources = append(p.Resources, u)
		key := u.Tier + "/" + u.NodeType
		if j, ok := busiest[key]; !ok {
			busiest[key] = len(p.Tiers)
			p.Tiers = append(p.Tiers, u)
		} else if u.Utilization > p.Tiers[j].Utilization {
			p.Tiers[j] = u
		}
	}
	return p
}

// rated is the highest throughput within the max utilization and the p99 bound. A resource
// with background (reserved) reaches the max utilization before MaxUtilization × its limit.
func (m *Model) rated(cl *Cluster, rs []resource, xmax float64) float64 {
	x := m.Options.MaxUtilization * xmax
	for i := range rs {
		if r := &rs[i]; r.demand > 0 && r.reserved > 0 {
			x = math.Min(x, math.Max(0, m.Options.MaxUtilization*r.servers-r.reserved)/r.demand)
		}
	}
	if m.Options.P99Seconds <= 0 || math.IsInf(x, 1) {
		return x
	}
	if _, p99 := m.latency(cl, rs, x); p99 <= m.Options.P99Seconds {
		return x
	}
	lo, hi := 0.0, x
	for range 50 {
		mid := (lo + hi) / 2
		if _, p99 := m.latency(cl, rs, mid); p99 <= m.Options.P99Seconds {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

func (m *Model) use(cl *Cluster, r *resource, at float64) ResourceUse {
	u := ResourceUse{Tier: r.tier, Resource: r.name, Servers: r.servers, LimitOpsPerSec: r.limit()}
	if r.group >= 0 {
		u.NodeType = cl.Groups[r.group].Type.Name
	} else {
		u.NodeType = cl.LB.Name
	}
	u.Utilization = r.utilization(at)
	return u
}
