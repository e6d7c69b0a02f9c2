package advisor

import "math"

// The seeds' sampling and profiling phases, run on the model instead of on rented machines:
// sampling finds, for a proxy type and a storage node shape, the N of a 1:N cluster with the
// lowest cost per MB/s (fewer storage nodes leave the proxy idle, more leave them idle);
// profiling draws the throughput of c:cN clusters as c grows, where the load balancer shows
// as a ceiling. Throughput here is the saturation throughput X_max, what a benchmark that
// loads a cluster fully measures, as the seeds did.

// SweepPoint is one cluster of a sweep.
type SweepPoint struct {
	Proxies      int     `json:"proxies"`
	Storage      int     `json:"storage"`
	LBs          int     `json:"load_balancers"`
	OpsPerSec    float64 `json:"ops_per_sec"`
	MBps         float64 `json:"mb_per_sec"`
	Cost         float64 `json:"cost"`
	CostPerMBps  float64 `json:"cost_per_mb_per_sec"`
	Bottleneck   string  `json:"bottleneck"`
	BottleneckAt string  `json:"bottleneck_tier"`
}

// Sweeps are the sampling and profiling curves of a configuration's types.
type Sweeps struct {
	// Sampling is 1:N for N from the policy's minimum up; SweetSpot the N of lowest cost per
	// MB/s. Empty for sumo clusters, which have no ratio.
	Sampling  []SweepPoint `json:"sampling,omitempty"`
	SweetSpot int          `json:"sweet_spot_n,omitempty"`
	// Profiles are c:c·SweetSpot (or c sumo nodes) for c = 1, 2, …: one with the
	// configuration's load balancers, one with twice as many (seed 001's "1 Eight" and "2
	// Eight") and one with none, so that the balancers' ceiling shows.
	Profiles []Profile `json:"profiles"`
}

// Profile is one c:cN curve.
type Profile struct {
	LBs    int          `json:"load_balancers"`
	Points []SweepPoint `json:"points"`
}

func (m *Model) sweepPoint(cat *Catalog, cl Cluster) SweepPoint {
	p := m.Predict(&cl, 0)
	sp := SweepPoint{LBs: cl.LBCount, OpsPerSec: p.MaxOpsPerSec, MBps: p.MaxMBps,
		Cost: clusterCost(cat, &cl).Total, Bottleneck: p.Bottleneck.Resource, BottleneckAt: p.Bottleneck.Tier}
	for _, g := range cl.Groups {
		if g.Proxy {
			sp.Proxies += g.Count
		}
		if g.Storage {
			sp.Storage += g.Count
		}
	}
	sp.CostPerMBps = math.Inf(1)
	if sp.MBps > 0 {
		sp.CostPerMBps = sp.Cost / sp.MBps
	}
	return sp
}

// Sample is the 1:N curve of proxy group proxy and storage group store (their Counts are
// ignored) behind lbs load balancers of type lb (nil: none), for N = minN … maxN.
func (m *Model) Sample(cat *Catalog, proxy, store Group, lb *LoadBalancer, lbs, maxN int) (points []SweepPoint, sweet int) {
	best := math.Inf(1)
	for n := max(1, m.Policy.MinStorageNodes()); n <= maxN; n++ {
		p, s := proxy, store
		p.Count, s.Count = 1, n
		sp := m.sweepPoint(cat, Cluster{Groups: []Group{p, s}, LB: lb, LBCount: lbs})
		points = append(points, sp)
		// A tie keeps the smaller N: more nodes for the same $ per MB/s buys nothing.
		if sp.CostPerMBps < best*(1-1e-9) {
			best, sweet = sp.CostPerMBps, n
		}
	}
	return points, sweet
}

// Profile is the c:cN curve for c = 1 … maxC (store alone, as sumo nodes, when proxy is nil).
func (m *Model) Profile(cat *Catalog, proxy *Group, store Group, n int, lb *LoadBalancer, lbs, maxC int) []SweepPoint {
	var out []SweepPoint
	for c := 1; c <= maxC; c++ {
		var cl Cluster
		s := store
		if proxy != nil {
			p := *proxy
			p.Count, s.Count = c, c*n
			cl.Groups = []Group{p, s}
		} else {
			s.Count = c * n
			cl.Groups = []Group{s}
		}
		cl.LB, cl.LBCount = lb, lbs
		out = append(out, m.sweepPoint(cat, cl))
	}
	return out
}

// Sweeps runs sampling and profiling for the types of cfg.
func (m *Model) Sweeps(cat *Catalog, cfg *Config) Sweeps {
	var sw Sweeps
	cl := cfg.cluster
	var proxy *Group
	var store Group
	for i := range cl.Groups {
		g := cl.Groups[i]
		if g.Proxy && !g.Storage {
			proxy = &g
		} else {
			store = g
		}
	}
	n := 1
	if proxy != nil {
		// Sample to three times the N at which the storage nodes saturate one proxy (at least
		// 16): enough to see the curve turn, whatever the recommended ratio.
		sat := m.perNodeLimit(proxy) / m.perNodeLimit(&store)
		maxN := 16
		if !math.IsInf(sat, 0) && !math.IsNaN(sat) {
			maxN = max(16, int(math.Ceil(3*sat)))
		}
		// As in seed 000, sampling loads the proxy directly: no balancer caps it.
		sw.Sampling, sw.SweetSpot = m.Sample(cat, *proxy, store, nil, 0, min(maxN, 256))
		n = max(1, sw.SweetSpot)
	}
	sw.Profiles = append(sw.Profiles, Profile{cl.LBCount, m.Profile(cat, proxy, store, n, cl.LB, cl.LBCount, 12)})
	if cl.LB != nil {
		sw.Profiles = append(sw.Profiles, Profile{2 * cl.LBCount, m.Profile(cat, proxy, store, n, cl.LB, 2*cl.LBCount, 12)})
		// And with no balancer at all: the curve the balancers cut off.
		sw.Profiles = append(sw.Profiles, Profile{0, m.Profile(cat, proxy, store, n, nil, 0, 12)})
	}
	return sw
}
