package advisor

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// ErrInvalidRequest is wrapped by missing or contradictory inputs to Recommend.
var ErrInvalidRequest = errors.New("invalid request")

// ErrInfeasible is wrapped when no configuration of the catalog meets the constraints.
var ErrInfeasible = errors.New("no configuration meets the constraints")

// Objectives: the constraint Recommend optimizes, the one not given.
const (
	MinimizeCost       = "cost"
	MaximizeThroughput = "throughput"
	MaximizeCapacity   = "capacity"
)

// Request is what Recommend is asked: two of usable capacity, throughput and budget.
type Request struct {
	CapacityTB     float64 `json:"capacity_tb,omitempty"`     // usable, decimal terabytes
	ThroughputMBps float64 `json:"throughput_mbps,omitempty"` // object megabytes (10^6) per second …
	ThroughputOps  float64 `json:"throughput_ops,omitempty"`  // … or requests per second: one of the two
	Budget         float64 `json:"budget,omitempty"`          // in the catalog's currency, over its horizon
	// Alternatives is how many runners-up to return besides the best. Default 4.
	Alternatives int `json:"-"`
}

// Objective is the constraint to optimize, after Validate.
func (r Request) Objective() string {
	switch {
	case r.Budget == 0:
		return MinimizeCost
	case r.ThroughputMBps == 0 && r.ThroughputOps == 0:
		return MaximizeThroughput
	default:
		return MaximizeCapacity
	}
}

// Validate checks that exactly two constraints are given, each once and positive.
func (r Request) Validate() error {
	if r.ThroughputMBps != 0 && r.ThroughputOps != 0 {
		return fmt.Errorf("%w: give the throughput in MB/s or in ops/s, not both", ErrInvalidRequest)
	}
	if r.CapacityTB < 0 || r.ThroughputMBps < 0 || r.ThroughputOps < 0 || r.Budget < 0 {
		return fmt.Errorf("%w: capacity, throughput and budget must be positive", ErrInvalidRequest)
	}
	n := 0
	for _, v := range []float64{r.CapacityTB, r.ThroughputMBps + r.ThroughputOps, r.Budget} {
		if v > 0 {
			n++
		}
	}
	switch n {
	case 3:
		return fmt.Errorf("%w: capacity, throughput and budget all given: give two, and the advisor optimizes the third", ErrInvalidRequest)
	case 2:
		return nil
	default:
		return fmt.Errorf("%w: give two of --capacity, --throughput and --budget (%d given): the advisor optimizes the third", ErrInvalidRequest, n)
	}
}

// Result is Recommend's answer.
type Result struct {
	Objective string   `json:"objective"`
	Workload  string   `json:"workload"`
	Demands   string   `json:"demands_source"`
	Options   Options  `json:"options"`
	Best      Config   `json:"best"`
	RunnersUp []Config `json:"runners_up"`
	Shapes    int      `json:"shapes_searched"`
	// Given echoes the constraints given.
	Given  Request `json:"given"`
	Sweeps Sweeps  `json:"sweeps"`
}

// shape is a choice of everything but the counts: node, NIC and disk types, disks per node,
// listing device, load balancer. Its unit limits (requests/s one node or balancer sustains
// when it carries its whole tier) and unit costs make the counts a closed-form choice:
// demands fall as 1/n in a tier, so n nodes sustain n × the unit limit.
type shape struct {
	sumo         bool
	proxy, store Group
	lb           *LoadBalancer
	xp, xs, xl   float64 // unit limits; xp unused for sumo
	cp, cs, cl   float64 // unit costs over the horizon
	raw          float64 // raw TB per storing node
}

type counts struct{ p, s, l int }

// searcher holds one Recommend call's inputs.
type searcher struct {
	cat  *Catalog
	m    *Model
	req  Request
	opsT float64 // required throughput in requests/s, 0 when not given
}

// Recommend searches the catalog for the configuration that optimizes the constraint not
// given in req, and returns it with its runners-up.
func Recommend(cat *Catalog, m *Model, req Request) (*Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.Alternatives == 0 {
		req.Alternatives = 4
	}
	s := &searcher{cat: cat, m: m, req: req, opsT: req.ThroughputOps}
	if req.ThroughputMBps > 0 {
		if m.payload == 0 {
			return nil, fmt.Errorf("%w: workload %s moves no object data: give --throughput in ops/s", ErrInvalidRequest, m.Workload.Name)
		}
		s.opsT = m.Ops(req.ThroughputMBps)
	}
	shapes := s.shapes()
	if len(shapes) == 0 {
		return nil, fmt.Errorf("%w: the catalog offers no proxy and storage combination", ErrInfeasible)
	}
	type cand struct {
		sh    *shape
		n     counts
		bound float64 // the objective's value before the p99 bound is applied
	}
	var cands []cand
	for i := range shapes {
		if n, v, ok := s.solve(&shapes[i]); ok {
			cands = append(cands, cand{&shapes[i], n, v})
		}
	}
	if len(cands) == 0 {
		return nil, s.whyInfeasible(shapes)
	}
	obj := req.Objective()
	better := func(a, b float64) bool {
		if obj == MinimizeCost {
			return a < b
		}
		return a > b
	}
	sort.SliceStable(cands, func(i, j int) bool { return better(cands[i].bound, cands[j].bound) })
	// Branch and bound: the p99 bound only makes a configuration worse than its closed-form
	// value, so once a candidate's closed-form value is worse than the last kept
	// configuration's, none after it can enter the list.
	var kept []Config
	seen, failed := map[string]bool{}, map[string]int{}
	want := req.Alternatives + 1
	for _, c := range cands {
		if len(kept) >= want && !better(c.bound, s.value(&kept[len(kept)-1])) && c.bound != s.value(&kept[len(kept)-1]) {
			break
		}
		// The first candidate of a key has its best closed-form value: later ones of the same
		// node and disk types (other disk counts, NICs, listing devices) are not runners-up.
		key := shapeKey(c.sh)
		if seen[key] {
			continue
		}
		cfg, ok := s.finish(c.sh, c.n)
		if !ok {
			// A few shapes of a key may miss the p99 bound where another (more disks, a
			// listing device) meets it; past that, the key is given up, to bound the work.
			if failed[key]++; failed[key] >= 4 {
				seen[key] = true
			}
			continue
		}
		seen[key] = true
		kept = append(kept, cfg)
		sort.SliceStable(kept, func(i, j int) bool { return s.less(&kept[i], &kept[j]) })
		if len(kept) > want {
			delete(seen, shapeKey2(&kept[want]))
			kept = kept[:want]
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("%w: no configuration meets the p99 bound of %g ms at the throughput asked for", ErrInfeasible, m.Options.P99Seconds*1000)
	}
	res := &Result{Objective: obj, Workload: m.Workload.Name, Demands: m.Demands.Source, Options: m.Options,
		Best: kept[0], RunnersUp: kept[1:], Shapes: len(shapes), Given: req}
	res.Sweeps = m.Sweeps(cat, &res.Best)
	return res, nil
}

// shapeKey tells runners-up apart: one configuration per combination of node and disk types.
func shapeKey(sh *shape) string {
	lb := ""
	if sh.lb != nil {
		lb = sh.lb.Name
	}
	if sh.sumo {
		return "sumo|" + sh.store.Type.Name + "|" + sh.store.Disk.Name + "|" + lb
	}
	return sh.proxy.Type.Name + "|" + sh.store.Type.Name + "|" + sh.store.Disk.Name + "|" + lb
}

func shapeKey2(c *Config) string {
	var proxy, store, disk string
	for _, g := range c.Groups {
		switch g.Role {
		case "proxy":
			proxy = g.NodeType
		case "sumo":
			proxy, store, disk = "sumo", g.NodeType, g.Disk
		default:
			store, disk = g.NodeType, g.Disk
		}
	}
	return proxy + "|" + store + "|" + disk + "|" + c.LoadBalancer
}

// value is a Config's objective value.
func (s *searcher) value(c *Config) float64 {
	switch s.req.Objective() {
	case MinimizeCost:
		return c.Cost.Total
	case MaximizeThroughput:
		return c.Prediction.RatedOpsPerSec
	default:
		return c.UsableTB
	}
}

// less orders Configs best first: by the objective, then by cost, then by throughput.
func (s *searcher) less(a, b *Config) bool {
	va, vb := s.value(a), s.value(b)
	if math.Abs(va-vb) > 1e-9*math.Max(math.Abs(va), math.Abs(vb)) {
		if s.req.Objective() == MinimizeCost {
			return va < vb
		}
		return va > vb
	}
	if a.Cost.Total != b.Cost.Total {
		return a.Cost.Total < b.Cost.Total
	}
	return a.Prediction.RatedOpsPerSec > b.Prediction.RatedOpsPerSec
}

// shapes enumerates every shape the catalog allows.
func (s *searcher) shapes() []shape {
	cat, m := s.cat, s.m
	var lbs []*LoadBalancer
	for i := range cat.LoadBalancers {
		lbs = append(lbs, &cat.LoadBalancers[i])
	}
	if len(lbs) == 0 {
		lbs = []*LoadBalancer{nil}
	}
	var stores []Group // storing node choices, as storage-only groups
	for ti := range cat.NodeTypes {
		t := &cat.NodeTypes[ti]
		if !t.canStore() {
			continue
		}
		for _, nic := range t.NICs {
			for di := range cat.DiskTypes {
				d := &cat.DiskTypes[di]
				for n := 1; n <= t.DiskSlots; n++ {
					stores = append(stores, Group{Type: t, NIC: nic, Storage: true, Disk: d, DisksPerNode: n})
					if n < t.DiskSlots {
						for li := range cat.DiskTypes {
							stores = append(stores, Group{Type: t, NIC: nic, Storage: true, Disk: d, DisksPerNode: n, ListingDisk: &cat.DiskTypes[li]})
						}
					}
				}
			}
		}
	}
	var out []shape
	for _, lb := range lbs {
		xl, cl := math.Inf(1), 0.0
		if lb != nil {
			xl, cl = m.perLBLimit(lb), cat.partCost(lb.Price, lb.YearlyCost)
		}
		for _, st := range stores {
			raw := st.rawTB()
			if st.Type.has(RoleStorage) {
				for ti := range cat.NodeTypes {
					pt := &cat.NodeTypes[ti]
					if !pt.has(RoleProxy) {
						continue
					}
					for _, nic := range pt.NICs {
						pg := Group{Type: pt, NIC: nic, Proxy: true}
						sh := shape{proxy: pg, store: st, lb: lb, xl: xl, cl: cl, raw: raw}
						sh.xp, sh.xs = m.perNodeLimit(&sh.proxy), m.perNodeLimit(&sh.store)
						pp, py := nodeCost(&sh.proxy)
						sp, sy := nodeCost(&sh.store)
						sh.cp, sh.cs = cat.partCost(pp, py), cat.partCost(sp, sy)
						out = append(out, sh)
					}
				}
			}
			if st.Type.has(RoleSumo) {
				sg := st
				sg.Proxy = true
				sh := shape{sumo: true, store: sg, lb: lb, xl: xl, cl: cl, raw: raw}
				sh.xs = m.perNodeLimit(&sh.store)
				sp, sy := nodeCost(&sh.store)
				sh.cs = cat.partCost(sp, sy)
				out = append(out, sh)
			}
		}
	}
	return out
}

// need is the fewest units of limit x whose rated share carries ops requests/s.
func (s *searcher) need(ops, x float64) int {
	if ops <= 0 {
		return 0
	}
	if x <= 0 {
		return math.MaxInt32
	}
	n := ops / (s.m.Options.MaxUtilization * x)
	if n > math.MaxInt32/2 {
		return math.MaxInt32
	}
	return int(math.Ceil(n - 1e-9))
}

// countsFor is the fewest units of each kind that carry ops requests/s and hold capTB.
func (s *searcher) countsFor(sh *shape, ops, capTB float64) (counts, bool) {
	pol, lim := s.m.Policy, s.cat.Limits
	n := counts{p: max(1, s.need(ops, sh.xp)), s: s.need(ops, sh.xs)}
	if capTB > 0 {
		n.s = max(n.s, int(math.Ceil(capTB*pol.Overhead()/(s.m.Options.Fill*sh.raw)-1e-9)))
	}
	n.s = roundUp(max(n.s, pol.MinStorageNodes()), pol.Zones)
	if sh.lb != nil {
		n.l = max(1, s.need(ops, sh.xl))
	}
	if sh.sumo {
		n.s = roundUp(max(n.s, s.need(ops, sh.xs)), pol.Zones)
		n.p = 0
	}
	ok := n.p <= lim.MaxProxies && n.s <= lim.MaxStorageNodes && n.l <= lim.MaxLoadBalancers
	return n, ok
}

func roundUp(n, k int) int {
	if k <= 1 {
		return n
	}
	return (n + k - 1) / k * k
}

func (s *searcher) cost(sh *shape, n counts) float64 {
	return float64(n.p)*sh.cp + float64(n.s)*sh.cs + float64(n.l)*sh.cl
}

// ratedOps is the closed-form rated throughput of a shape with counts n.
func (s *searcher) ratedOps(sh *shape, n counts) float64 {
	x := float64(n.s) * sh.xs
	if !sh.sumo {
		x = math.Min(x, float64(n.p)*sh.xp)
	}
	if sh.lb != nil {
		x = math.Min(x, float64(n.l)*sh.xl)
	}
	return s.m.Options.MaxUtilization * x
}

func (s *searcher) usable(sh *shape, n counts) float64 {
	return float64(n.s) * sh.raw * s.m.Options.Fill / s.m.Policy.Overhead()
}

// solve finds the counts that optimize the objective for one shape, by the closed form
// (ignoring the p99 bound), and that objective's value.
func (s *searcher) solve(sh *shape) (counts, float64, bool) {
	switch s.req.Objective() {
	case MinimizeCost:
		n, ok := s.countsFor(sh, s.opsT, s.req.CapacityTB)
		return n, s.cost(sh, n), ok
	case MaximizeThroughput:
		// The cheapest counts for a throughput rise with it: bisect on the throughput.
		n0, ok := s.countsFor(sh, 0, s.req.CapacityTB)
		if !ok || s.cost(sh, n0) > s.req.Budget {
			return counts{}, 0, false
		}
		lo, hi := s.ratedOps(sh, n0), s.ratedOps(sh, n0)
		for range 64 {
			n, ok := s.countsFor(sh, hi*2, s.req.CapacityTB)
			if !ok || s.cost(sh, n) > s.req.Budget || math.IsInf(hi, 1) {
				break
			}
			lo, hi = hi, hi*2
		}
		hi *= 2
		for range 60 {
			mid := (lo + hi) / 2
			if n, ok := s.countsFor(sh, mid, s.req.CapacityTB); ok && s.cost(sh, n) <= s.req.Budget {
				lo = mid
			} else {
				hi = mid
			}
		}
		n, _ := s.countsFor(sh, lo, s.req.CapacityTB)
		return n, s.ratedOps(sh, n), true
	default:
		n, ok := s.countsFor(sh, s.opsT, 0)
		if !ok || s.cost(sh, n) > s.req.Budget {
			return counts{}, 0, false
		}
		// What the budget leaves buys more storing nodes, a zone's worth at a time.
		left := s.req.Budget - s.cost(sh, n)
		extra := int(left/(sh.cs*float64(s.m.Policy.Zones))) * s.m.Policy.Zones
		n.s = min(n.s+extra, s.cat.Limits.MaxStorageNodes/s.m.Policy.Zones*s.m.Policy.Zones)
		if n.s < s.m.Policy.MinStorageNodes() {
			return counts{}, 0, false
		}
		return n, s.usable(sh, n), true
	}
}

func (s *searcher) cluster(sh *shape, n counts) Cluster {
	var cl Cluster
	if !sh.sumo {
		pg := sh.proxy
		pg.Count = n.p
		cl.Groups = append(cl.Groups, pg)
	}
	sg := sh.store
	sg.Count = n.s
	cl.Groups = append(cl.Groups, sg)
	if sh.lb != nil {
		cl.LB, cl.LBCount = sh.lb, n.l
	}
	return cl
}

// finish makes the Config of a solved shape, adding nodes one step at a time while the
// predicted p99 at the throughput asked for exceeds the bound (the cheapest step that lowers
// it most), as long as the budget and limits allow.
func (s *searcher) finish(sh *shape, n counts) (Config, bool) {
	if s.m.Options.P99Seconds <= 0 || s.opsT <= 0 {
		return makeConfig(s.cat, s.m, s.cluster(sh, n), s.opsT), true
	}
	// p99At is the predicted p99 at the throughput asked for, +Inf past the max utilization:
	// one latency evaluation, not a whole Prediction, since this runs for many candidates.
	p99At := func(n counts) float64 {
		cl := s.cluster(sh, n)
		rs := s.m.resources(&cl)
		xmax := math.Inf(1)
		for i := range rs {
			xmax = math.Min(xmax, rs[i].limit())
		}
		if s.opsT > s.m.Options.MaxUtilization*xmax*(1+1e-9) {
			return math.Inf(1)
		}
		_, p99 := s.m.latency(&cl, rs, s.opsT)
		return p99
	}
	bound := s.m.Options.P99Seconds
	// More nodes only shorten queues: if an idle cluster of this shape misses the bound, no
	// count of nodes meets it.
	idle := s.cluster(sh, n)
	if _, floor := s.m.latency(&idle, s.m.resources(&idle), 0); floor > bound {
		return Config{}, false
	}
	cur := p99At(n)
	for range 512 {
		if cur <= bound {
			return makeConfig(s.cat, s.m, s.cluster(sh, n), s.opsT), true
		}
		bestP99, bestN, found := cur, n, false
		for _, st := range []counts{{p: 1}, {s: s.m.Policy.Zones}, {l: 1}} {
			nn := counts{n.p + st.p, n.s + st.s, n.l + st.l}
			if (st.p > 0 && sh.sumo) || (st.l > 0 && sh.lb == nil) ||
				nn.p > s.cat.Limits.MaxProxies || nn.s > s.cat.Limits.MaxStorageNodes || nn.l > s.cat.Limits.MaxLoadBalancers {
				continue
			}
			if s.req.Budget > 0 && s.cost(sh, nn) > s.req.Budget {
				continue
			}
			if p := p99At(nn); p < bestP99 {
				bestP99, bestN, found = p, nn, true
			}
		}
		if !found {
			return Config{}, false
		}
		cur, n = bestP99, bestN
	}
	return Config{}, false
}

// whyInfeasible says in one line which constraint no configuration meets.
func (s *searcher) whyInfeasible(shapes []shape) error {
	lim := s.cat.Limits
	var maxCap, maxOps, minCost float64
	minCost = math.Inf(1)
	for i := range shapes {
		sh := &shapes[i]
		full := counts{p: lim.MaxProxies, s: lim.MaxStorageNodes / s.m.Policy.Zones * s.m.Policy.Zones, l: lim.MaxLoadBalancers}
		if sh.lb == nil {
			full.l = 0
		}
		maxCap = math.Max(maxCap, s.usable(sh, full))
		maxOps = math.Max(maxOps, s.ratedOps(sh, full))
		if n, ok := s.countsFor(sh, s.opsT, s.req.CapacityTB); ok {
			minCost = math.Min(minCost, s.cost(sh, n))
		}
	}
	cur := s.cat.Currency
	switch {
	case s.req.CapacityTB > maxCap:
		return fmt.Errorf("%w: %.0f TB usable is more than the catalog can hold within its limits (at most %.0f TB with %d storage nodes)",
			ErrInfeasible, s.req.CapacityTB, maxCap, lim.MaxStorageNodes)
	case s.opsT > maxOps:
		return fmt.Errorf("%w: %s is more than the catalog can carry within its limits (at most %s)",
			ErrInfeasible, s.fmtOps(s.opsT), s.fmtOps(maxOps))
	case s.req.Budget > 0 && !math.IsInf(minCost, 1):
		return fmt.Errorf("%w: a budget of %.0f %s is too small: the cheapest configuration meeting the other constraint costs %.0f %s",
			ErrInfeasible, s.req.Budget, cur, minCost, cur)
	case s.req.Budget > 0:
		return fmt.Errorf("%w: a budget of %.0f %s does not buy the smallest cluster the policy needs (%d storage nodes)",
			ErrInfeasible, s.req.Budget, cur, s.m.Policy.MinStorageNodes())
	default:
		return fmt.Errorf("%w: capacity and throughput together exceed the catalog's limits", ErrInfeasible)
	}
}

func (s *searcher) fmtOps(ops float64) string {
	if s.req.ThroughputMBps > 0 || (s.req.ThroughputOps == 0 && s.m.payload > 0) {
		return fmt.Sprintf("%.0f MB/s", s.m.MBps(ops))
	}
	return fmt.Sprintf("%.0f ops/s", ops)
}
