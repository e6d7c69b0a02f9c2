// Package rmanager owns the microstores' resource manager (docs/microstores.md; the MOS design
// of seed 004): which proxies move between the free pool and the microstores, and why. Decide is
// pure: the description, what each proxy's workload monitor saw and the advisor's demands in,
// the moves and their reasons out, with the utilization the advisor's model predicts before
// and after; the Manager runs it once an interval under the cluster's lease and applies its
// moves to the description.
//
// The seed's algorithm: give each microstore the same share of the free pool at the start,
// conservatively; then, from each period's monitoring, increase a loaded microstore's share
// aggressively (its proxies doubled) and decrease an idle one's linearly (one proxy a period),
// bounded by the seed's rules of thumb (proxy cores ≈ storage nodes × cores per storage node;
// proxy bandwidth ≈ storage nodes × a storage node's bandwidth: past that the proxies wait on
// the storage nodes, and more proxies do not help).
package rmanager

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/cairn-store/cairn/internal/advisor"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/workload"
)

// Config are the manager's thresholds and the capacities it counts with.
type Config struct {
	// High and Low bound a microstore's utilization: above High it gets more proxies, below
	// Low it gives one back (defaults 0.75 and 0.30).
	High, Low float64
	// MinProxies is what a microstore keeps however idle it is (default 1).
	MinProxies int
	// ProxyNIC is a proxy's network bandwidth in bytes a second (default 1.25e9: 10 Gbit/s).
	ProxyNIC float64
	// StorageCores and StorageNIC are a storage node's cores and bandwidth (bytes a second),
	// for the rules of thumb (defaults 8 and 1.25e9).
	StorageCores, StorageNIC float64
	// Demands are the advisor's per-request costs (default: advisor.DefaultDemands).
	Demands *advisor.Demands
}

// ErrConfig: an invalid Config.
var ErrConfig = errors.New("invalid resource manager configuration")

// Validate checks the configuration and fills in its defaults.
func (c *Config) Validate() error {
	if c.High == 0 {
		c.High = 0.75
	}
	if c.Low == 0 {
		c.Low = 0.30
	}
	if c.MinProxies == 0 {
		c.MinProxies = 1
	}
	if c.ProxyNIC == 0 {
		c.ProxyNIC = 1.25e9
	}
	if c.StorageCores == 0 {
		c.StorageCores = 8
	}
	if c.StorageNIC == 0 {
		c.StorageNIC = 1.25e9
	}
	if c.Demands == nil {
		d, err := advisor.DefaultDemands()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrConfig, err)
		}
		c.Demands = d
	}
	switch {
	case c.Low < 0 || c.High <= c.Low:
		return fmt.Errorf("%w: want 0 <= low < high, have low %v, high %v", ErrConfig, c.Low, c.High)
	case c.MinProxies < 0:
		return fmt.Errorf("%w: min proxies %d", ErrConfig, c.MinProxies)
	case c.ProxyNIC < 0 || c.StorageCores < 0 || c.StorageNIC < 0:
		return fmt.Errorf("%w: capacities must be positive", ErrConfig)
	}
	return nil
}

// Saturated is the share of its cores at which a proxy's measured CPU counts for its
// microstore's load (Report.CPUUsed).
const Saturated = 0.9

// Report is what one proxy's workload monitor saw, and the proxy's cores.
type Report struct {
	Proxy string  `json:"proxy"`
	Cores float64 `json:"cores"`
	// CPUUsed is the cores the proxy used lately (its last 10 s or so; 0: not known).
	CPUUsed float64          `json:"cpu_used"`
	Buckets []workload.Stats `json:"buckets"`
}

// Input is what one decision knows.
type Input struct {
	Description *microstore.Description
	// Reports are by proxy address; a proxy without one did not answer.
	Reports map[string]Report
	// Policies are each microstore's policy's ring, by microstore name (none known: no
	// rule-of-thumb bound, one storage visit a write).
	Policies map[string]PolicyInfo
	// MicrostoreOf is the microstore of a bucket ("" for none): a bucket's load is its
	// microstore's whichever proxy served it (a pool proxy, a proxy since moved elsewhere).
	MicrostoreOf func(account, bucket string) string
}

// PolicyInfo is what a microstore's storage policy has.
type PolicyInfo struct {
	Ring     string   `json:"ring"`     // its object ring's name (object, object-1, ...)
	Nodes    []string `json:"nodes"`    // the storage nodes its ring places data on
	Replicas int      `json:"replicas"` // storage visits of a write (replicas, or EC fragments)
}

// Load is a microstore's load and utilization, as the model counts it.
type Load struct {
	Microstore string  `json:"microstore"`
	Proxies    int     `json:"proxies"`
	Cores      float64 `json:"cores"`
	// CPU is the proxy cores its workload needs: what the advisor's demands cost its requests
	// at, or what its saturated proxies were measured to use (MeasuredCPU) when more. Network is the
	// bytes a second through its proxies (client and storage sides).
	CPU         float64 `json:"cpu_cores"`
	MeasuredCPU float64 `json:"measured_cpu_cores,omitempty"`
	Network     float64 `json:"network_bytes_per_second"`
	// Utilization is the larger of CPU over cores and Network over the proxies' bandwidth;
	// Resource says which ("cpu" or "network").
	Utilization float64 `json:"utilization"`
	Resource    string  `json:"resource"`
	// Unknown: a proxy of the microstore did not report, so its load is not known whole.
	Unknown bool `json:"unknown,omitempty"`
}

// Step moves one proxy. From and To name microstores; "" is the free pool.
type Step struct {
	Proxy  string `json:"proxy"`
	From   string `json:"from"`
	To     string `json:"to"`
	Reason string `json:"reason"`
}

// Recommendation is a storage node the manager would move from one microstore's policy to
// another's: it moves proxies itself, and storage only by ring changes, which an operator makes
// with the commands given (the replicator moves the data, bounded by the builder's hours
// between moves of a partition).
type Recommendation struct {
	Node     string   `json:"node"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	Reason   string   `json:"reason"`
	Commands []string `json:"commands"`
}

// Plan is one decision: its steps, each microstore's load before and (predicted) after them,
// the storage moves it recommends, and notes on what it did not do and why.
type Plan struct {
	Steps   []Step           `json:"steps"`
	Before  []Load           `json:"before"`
	After   []Load           `json:"after"`
	Storage []Recommendation `json:"storage,omitempty"`
	Notes   []string         `json:"notes,omitempty"`
}

// state is a decision in progress: where every proxy is.
type state struct {
	cfg     Config
	in      Input
	members map[string][]string // microstore → its proxies
	pool    []string
	demand  map[string]Load // each microstore's demand (CPU, Network, Unknown), as measured
	plan    Plan
}

// Decide returns the moves the manager makes now. cfg must have been validated.
func Decide(cfg Config, in Input) Plan {
	s := &state{cfg: cfg, in: in, members: map[string][]string{}, demand: map[string]Load{}}
	for _, m := range in.Description.Microstores {
		s.members[m.Name] = slices.Clone(m.Proxies)
		l := Load{Microstore: m.Name}
		for _, p := range m.Proxies {
			if _, ok := in.Reports[p]; !ok {
				l.Unknown = true
			}
		}
		s.demand[m.Name] = l
	}
	s.measure()
	// Pool proxies that do not answer are left where they are.
	for _, p := range in.Description.Pool {
		if _, ok := in.Reports[p]; ok {
			s.pool = append(s.pool, p)
		} else {
			s.note("pool proxy %s did not report: not given to a microstore", p)
		}
	}
	s.plan.Before = s.loads()
	changed := s.equalShares()
	s.grow(changed)
	s.shrink(changed)
	s.plan.After = s.loads()
	return s.plan
}

func (s *state) note(format string, args ...any) {
	s.plan.Notes = append(s.plan.Notes, fmt.Sprintf(format, args...))
}

func (s *state) move(proxy, from, to, reason string) {
	if from == "" {
		s.pool = slices.DeleteFunc(s.pool, func(p string) bool { return p == proxy })
	} else {
		s.members[from] = slices.DeleteFunc(s.members[from], func(p string) bool { return p == proxy })
	}
	if to == "" {
		s.pool = append(s.pool, proxy)
	} else {
		s.members[to] = append(s.members[to], proxy)
	}
	s.plan.Steps = append(s.plan.Steps, Step{Proxy: proxy, From: from, To: to, Reason: reason})
}

// names are the microstores, in the description's order (by name).
func (s *state) names() []string {
	out := make([]string, len(s.in.Description.Microstores))
	for i, m := range s.in.Description.Microstores {
		out[i] = m.Name
	}
	return out
}

// equalShares gives each microstore without proxies the same share of the pool: half of it
// between them, the other half kept for the loaded ones (the seed's conservative start). It
// returns the microstores it gave to, which change no further this period.
func (s *state) equalShares() map[string]bool {
	changed := map[string]bool{}
	var empty []string
	for _, n := range s.names() {
		if len(s.members[n]) == 0 {
			empty = append(empty, n)
		}
	}
	if len(empty) == 0 || len(s.pool) == 0 {
		return changed
	}
	share := max(1, len(s.pool)/(2*len(empty)))
	for _, n := range empty {
		for range share {
			if len(s.pool) == 0 {
				s.note("microstore %s has no proxy and the pool is empty", n)
				break
			}
			s.move(s.pool[0], "", n, fmt.Sprintf("equal share: %d of the pool's proxies to each of %d microstores without any, half the pool kept for the loaded", share, len(empty)))
			changed[n] = true
		}
	}
	return changed
}

// grow doubles the proxies of each microstore above High, the most loaded first, from the
// pool, else from microstores below Low (one each); it adds those it changed to changed.
func (s *state) grow(grown map[string]bool) {
	loads := s.loads()
	slices.SortStableFunc(loads, func(a, b Load) int { return cmp.Compare(b.Utilization, a.Utilization) })
	for _, l := range loads {
		if grown[l.Microstore] || l.Proxies == 0 || l.Utilization <= s.cfg.High {
			continue
		}
		if l.Unknown {
			s.note("microstore %s: %s at %s as far as known, but a proxy of it did not report: left as it is", l.Microstore, l.Resource, pct(l.Utilization))
			continue
		}
		want := l.Proxies // doubled: the seed's aggressive increase
		if bound := s.bound(l); bound >= 0 && want > bound {
			if bound == 0 {
				s.note("microstore %s: %s at %s, but its proxies already match its %d storage nodes (the rule of thumb): more would wait on them",
					l.Microstore, l.Resource, pct(l.Utilization), len(s.in.Policies[l.Microstore].Nodes))
				s.recommendStorage(l)
				continue
			}
			want = bound
		}
		how := "doubled"
		if want < l.Proxies {
			how = fmt.Sprintf("%d more, as many as its %d storage nodes keep busy (the rule of thumb)", want, len(s.in.Policies[l.Microstore].Nodes))
		}
		why := fmt.Sprintf("%s at %s of its %d proxies, above %s: %s", l.Resource, pct(l.Utilization), l.Proxies, pct(s.cfg.High), how)
		for ; want > 0 && len(s.pool) > 0; want-- {
			s.move(s.pool[0], "", l.Microstore, why+" from the pool")
		}
		for want > 0 {
			donor, ok := s.idlest(l.Microstore, grown)
			if !ok {
				s.note("microstore %s wants %d more proxy(s): the pool is empty and no microstore is below %s", l.Microstore, want, pct(s.cfg.Low))
				break
			}
			ps := s.members[donor.Microstore]
			s.move(ps[len(ps)-1], donor.Microstore, l.Microstore, fmt.Sprintf("%s; taken from %s, whose %s is at %s", why, donor.Microstore, donor.Resource, pct(donor.Utilization)))
			grown[donor.Microstore] = true // it gave this period: it neither gives again nor shrinks
			want--
		}
		grown[l.Microstore] = true
	}
}

// shrink gives one proxy back to the pool from each microstore below Low (the seed's linear
// decrease), but those that changed this period and those that would be above High without it
// (which would take it back next period, and so on).
func (s *state) shrink(changed map[string]bool) {
	for _, l := range s.loads() {
		if changed[l.Microstore] || !s.canGive(l) {
			continue
		}
		ps := s.members[l.Microstore]
		s.move(ps[len(ps)-1], l.Microstore, "", fmt.Sprintf("%s at %s of its %d proxies, below %s: one back to the pool", l.Resource, pct(l.Utilization), l.Proxies, pct(s.cfg.Low)))
	}
}

// idlest is the least utilized microstore below Low that can give a proxy, other than to and
// those that changed this period.
func (s *state) idlest(to string, changed map[string]bool) (Load, bool) {
	var best Load
	found := false
	for _, l := range s.loads() {
		if l.Microstore == to || changed[l.Microstore] || !s.canGive(l) {
			continue
		}
		if !found || l.Utilization < best.Utilization {
			best, found = l, true
		}
	}
	return best, found
}

// recommendStorage recommends a storage node for a microstore whose proxies match its storage
// nodes and that is still loaded: one of the least utilized idle microstore's nodes, if it has
// more than its policy's replicas (it keeps a whole replica set).
func (s *state) recommendStorage(to Load) {
	dst := s.in.Policies[to.Microstore]
	var donor Load
	var node string
	for _, l := range s.loads() {
		src := s.in.Policies[l.Microstore]
		if l.Microstore == to.Microstore || l.Unknown || l.Utilization >= s.cfg.Low || len(src.Nodes) <= max(src.Replicas, 1) ||
			slices.ContainsFunc(s.plan.Storage, func(r Recommendation) bool { return r.From == l.Microstore }) {
			continue
		}
		if node != "" && l.Utilization >= donor.Utilization {
			continue
		}
		for i := len(src.Nodes) - 1; i >= 0; i-- {
			if !slices.Contains(dst.Nodes, src.Nodes[i]) {
				donor, node = l, src.Nodes[i]
				break
			}
		}
	}
	if node == "" {
		s.note("microstore %s: no idle microstore has a storage node to spare beyond its replicas", to.Microstore)
		return
	}
	from := s.in.Policies[donor.Microstore].Ring + ".builder"
	into := dst.Ring + ".builder"
	s.plan.Storage = append(s.plan.Storage, Recommendation{Node: node, From: donor.Microstore, To: to.Microstore,
		Reason: fmt.Sprintf("%s's %s at %s with as many proxies as its storage nodes keep busy; %s's %s at %s, with %d nodes for %d replicas",
			to.Microstore, to.Resource, pct(to.Utilization), donor.Microstore, donor.Resource, pct(donor.Utilization),
			len(s.in.Policies[donor.Microstore].Nodes), s.in.Policies[donor.Microstore].Replicas),
		Commands: []string{
			"cairn ring set-weight " + from + " --node " + node + " --weight 0",
			"cairn ring rebalance " + from,
			"cairn ring write " + from + " RINGDIR",
			"# once the node holds none of " + donor.Microstore + "'s partitions (cairn_replication_handoff_partitions 0 on it):",
			"cairn ring add " + into + " --region R --zone Z --node " + node + " --device DEVICE --weight W",
			"cairn ring rebalance " + into,
			"cairn ring write " + into + " RINGDIR",
		}})
}

// canGive reports whether a microstore can give up its last proxy: its load known, below Low,
// above MinProxies, and at most High without that proxy.
func (s *state) canGive(l Load) bool {
	if l.Unknown || l.Proxies <= s.cfg.MinProxies || l.Utilization >= s.cfg.Low {
		return false
	}
	ps := s.members[l.Microstore]
	cores := l.Cores - s.cores(ps[len(ps)-1])
	after := 0.0
	if cores > 0 {
		after = l.CPU / cores
	}
	after = max(after, l.Network/(float64(l.Proxies-1)*s.cfg.ProxyNIC))
	return after <= s.cfg.High
}

// bound is how many proxies the rules of thumb let a microstore add (-1: no bound known):
// its proxies' cores up to its storage nodes' cores when CPU leads, their bandwidth up to the
// storage nodes' when the network does.
func (s *state) bound(l Load) int {
	nodes := len(s.in.Policies[l.Microstore].Nodes)
	if nodes <= 0 || l.Proxies == 0 {
		return -1
	}
	var have, perProxy, limit float64
	if l.Resource == "network" {
		have, perProxy, limit = float64(l.Proxies)*s.cfg.ProxyNIC, s.cfg.ProxyNIC, float64(nodes)*s.cfg.StorageNIC
	} else {
		have, perProxy, limit = l.Cores, l.Cores/float64(l.Proxies), float64(nodes)*s.cfg.StorageCores
	}
	if have >= limit {
		return 0
	}
	return int(math.Floor((limit - have) / perProxy)) // never past the bound
}

// cores is a proxy's cores: as it reported, else the mean of those that did, else 1.
func (s *state) cores(proxy string) float64 {
	if r, ok := s.in.Reports[proxy]; ok && r.Cores > 0 {
		return r.Cores
	}
	sum, n := 0.0, 0
	for _, r := range s.in.Reports {
		if r.Cores > 0 {
			sum, n = sum+r.Cores, n+1
		}
	}
	if n == 0 {
		return 1
	}
	return sum / float64(n)
}

// loads are each microstore's load with the proxies it has now.
func (s *state) loads() []Load {
	var out []Load
	for _, n := range s.names() {
		l := s.demand[n]
		l.Microstore, l.Proxies, l.Cores = n, len(s.members[n]), 0
		for _, p := range s.members[n] {
			l.Cores += s.cores(p)
		}
		l.Utilization, l.Resource = 0, "cpu"
		if l.Cores > 0 {
			l.Utilization = l.CPU / l.Cores
		}
		if l.Proxies > 0 {
			if net := l.Network / (float64(l.Proxies) * s.cfg.ProxyNIC); net > l.Utilization {
				l.Utilization, l.Resource = net, "network"
			}
		}
		out = append(out, l)
	}
	return out
}

// measure charges each bucket's load, as every proxy that reported saw it, to the bucket's
// microstore, costed by the advisor's demands; a microstore whose saturated proxies were
// measured to use more CPU than that needs what they used. (The demands come from a
// calibration, on other machines perhaps; a proxy pegged at its quota is busy whatever they
// say. Below saturation the model decides: a process's CPU also counts work that is not its
// clients', such as its daemons, which must not keep an idle microstore from giving proxies
// back.)
func (s *state) measure() {
	defer func() {
		for n, ps := range s.members {
			l := s.demand[n]
			for _, p := range ps {
				if r := s.in.Reports[p]; r.Cores > 0 && r.CPUUsed >= Saturated*r.Cores {
					l.MeasuredCPU += r.CPUUsed
				}
			}
			l.CPU = max(l.CPU, l.MeasuredCPU)
			s.demand[n] = l
		}
	}()
	if s.in.MicrostoreOf == nil {
		return
	}
	proxies := slices.Sorted(maps.Keys(s.in.Reports))
	for _, p := range proxies {
		for _, b := range s.in.Reports[p].Buckets {
			ms := s.in.MicrostoreOf(b.Account, b.Bucket)
			l, ok := s.demand[ms]
			if !ok {
				continue // a bucket of no microstore
			}
			cpu, net := s.cost(b, max(s.in.Policies[ms].Replicas, 1))
			l.CPU += cpu
			l.Network += net
			s.demand[ms] = l
		}
	}
}

// cost is a bucket's demand on the proxies: cores, and bytes a second through their network.
func (s *state) cost(b workload.Stats, replicas int) (cores, bytes float64) {
	secs := b.Window.Seconds()
	if secs <= 0 {
		return 0, 0
	}
	size := float64(max(b.MedianSize, 0))
	d := s.cfg.Demands
	at := func(op string, size float64) advisor.Point {
		p, err := d.At(op, size)
		if err != nil {
			p, _ = d.At("head", 0) // an operation the demands lack costs what a HEAD does
		}
		return p
	}
	rate := func(kind string) float64 { return float64(b.Ops[kind]) / secs }
	get, put := at("get", size), at("put", size)
	cores = rate("read")*get.ProxyCPUSeconds +
		rate("write")*(put.ProxyCPUSeconds+put.ProxyCPUPerVisitSeconds*float64(replicas)) +
		rate("delete")*at("delete", 0).ProxyCPUSeconds +
		rate("list")*at("list", 0).ProxyCPUSeconds +
		rate("other")*at("head", 0).ProxyCPUSeconds
	bytes = b.BytesInPerSecond + b.BytesOutPerSecond +
		rate("read")*get.BackendInBytes + rate("write")*put.BackendOutBytes*float64(replicas)
	return cores, bytes
}

// pct writes a utilization as a percentage, small ones with two significant digits.
func pct(u float64) string {
	if u*100 >= 1 || u == 0 {
		return fmt.Sprintf("%.0f%%", 100*u)
	}
	return fmt.Sprintf("%.2g%%", 100*u)
}

// String is the plan as the manager logs it and `cairn microstore plan` prints it.
func (p Plan) String() string {
	var b strings.Builder
	if len(p.Steps) == 0 {
		b.WriteString("no move\n")
	}
	for _, st := range p.Steps {
		fmt.Fprintf(&b, "move %s from %s to %s: %s\n", st.Proxy, where(st.From), where(st.To), st.Reason)
	}
	for _, r := range p.Storage {
		fmt.Fprintf(&b, "recommended: storage node %s from microstore %s to microstore %s: %s\n", r.Node, r.From, r.To, r.Reason)
		for _, c := range r.Commands {
			fmt.Fprintf(&b, "    %s\n", c)
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

func where(ms string) string {
	if ms == "" {
		return "the pool"
	}
	return "microstore " + ms
}
