package advisor

import (
	"math"
	"testing"
)

func model(t *testing.T, wl string, pol Policy) *Model {
	t.Helper()
	return modelWith(t, loadDefaults(t), wl, pol)
}

// demandSets are the shipped (derived) demands and the ones calibrate measured on the bench
// machine (testdata/demands.calibrated.yaml): the findings must hold for both.
func demandSets(t *testing.T) map[string]*Demands {
	t.Helper()
	measured, err := LoadDemands("testdata/demands.calibrated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Demands{"default": loadDefaults(t), "calibrated": measured}
}

func modelWith(t *testing.T, d *Demands, wl string, pol Policy) *Model {
	t.Helper()
	w, err := ResolveWorkload(wl)
	if err != nil {
		t.Fatal(err)
	}
	if pol.Zones == 0 {
		pol.Zones = 1
	}
	m, err := NewModel(d, w, pol, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var threeReplicas = Policy{Replicas: 3, Zones: 1}

// cluster builds proxies of type pt and storage nodes of type st with disks of type dt.
func cluster(cat *Catalog, pt string, p int, st string, s, disks int, dt string, lb string, lbs int) *Cluster {
	pn, sn := cat.nodeType(pt), cat.nodeType(st)
	cl := &Cluster{Groups: []Group{
		{Type: pn, NIC: pn.NICs[len(pn.NICs)-1], Count: p, Proxy: true},
		{Type: sn, NIC: sn.NICs[len(sn.NICs)-1], Count: s, Storage: true, Disk: cat.diskType(dt), DisksPerNode: disks},
	}}
	if lb != "" {
		cl.LB, cl.LBCount = cat.loadBalancer(lb), lbs
	}
	return cl
}

// The operational laws: U = X·D/c for every resource, the bottleneck at U = 1 at X_max.
func TestUtilizationLaw(t *testing.T) {
	cat := loadExample(t)
	m := model(t, "A", threeReplicas)
	cl := cluster(cat, "proxy-1u", 2, "storage-2u-12", 6, 12, "hdd-8t", "haproxy-25g", 1)
	x := 1000.0
	p := m.Predict(cl, x)
	rs := m.resources(cl)
	for i, r := range rs {
		if want := x * r.demand / r.servers; math.Abs(p.Resources[i].Utilization-want) > 1e-12 {
			t.Errorf("%s %s: U = %g, want X·D/c = %g", r.tier, r.name, p.Resources[i].Utilization, want)
		}
	}
	at := m.Predict(cl, p.MaxOpsPerSec)
	var top float64
	for _, r := range at.Resources {
		top = math.Max(top, r.Utilization)
	}
	if math.Abs(top-1) > 1e-9 {
		t.Errorf("at X_max the busiest resource is at %g, want 1", top)
	}
	if p.RatedOpsPerSec != DefaultMaxUtilization*p.MaxOpsPerSec {
		t.Errorf("rated %g, want %g × %g", p.RatedOpsPerSec, DefaultMaxUtilization, p.MaxOpsPerSec)
	}
}

// Latency rises with load, without bound towards saturation, and p99 is above the mean.
func TestLatencyRisesWithLoad(t *testing.T) {
	cat := loadExample(t)
	m := model(t, "A", threeReplicas)
	cl := cluster(cat, "proxy-1u", 1, "storage-2u-12", 6, 12, "hdd-8t", "haproxy-25g", 1)
	xmax := m.Predict(cl, 0).MaxOpsPerSec
	prevMean, prevP99, p99At3 := 0.0, 0.0, 0.0
	for _, f := range []float64{0.01, 0.3, 0.6, 0.9, 0.99} {
		p := m.Predict(cl, f*xmax)
		if p.MeanMs <= prevMean || p.P99Ms <= prevP99 || p.P99Ms < p.MeanMs {
			t.Errorf("at %g of X_max: mean %g ms, p99 %g ms (before: %g, %g)", f, p.MeanMs, p.P99Ms, prevMean, prevP99)
		}
		prevMean, prevP99 = p.MeanMs, p.P99Ms
		if f == 0.3 {
			p99At3 = p.P99Ms
		}
	}
	if p := m.Predict(cl, 1.01*xmax); !math.IsInf(p.P99Ms, 1) {
		t.Errorf("past saturation p99 = %g, want +Inf", p.P99Ms)
	}
	// A p99 bound lowers the rated throughput to where it holds.
	m.Options.P99Seconds = p99At3 / 1000
	p := m.Predict(cl, 0)
	if p.RatedOpsPerSec > 0.3001*xmax || p.RatedOpsPerSec < 0.2999*xmax || p.P99Ms > m.Options.P99Seconds*1000*1.001 {
		t.Errorf("with p99 ≤ %g ms: rated %g (unbounded %g), p99 there %g", m.Options.P99Seconds*1000, p.RatedOpsPerSec, DefaultMaxUtilization*xmax, p.P99Ms)
	}
}

// Doubling the proxies of a proxy-bound cluster doubles its throughput, until another
// resource binds.
func TestDoublingProxies(t *testing.T) {
	cat := loadExample(t)
	m := model(t, "A", threeReplicas)
	prev := 0.0
	doubled := 0
	for p := 1; p <= 64; p *= 2 {
		pr := m.Predict(cluster(cat, "proxy-1u", p, "storage-4u-36", 40, 36, "ssd-3.84t", "", 0), 0)
		if prev > 0 {
			ratio := pr.MaxOpsPerSec / prev
			if pr.Bottleneck.Tier == "proxy" && math.Abs(ratio-2) > 1e-9 {
				t.Errorf("%d proxies, proxy-bound: ×%g, want ×2", p, ratio)
			}
			if pr.Bottleneck.Tier == "proxy" {
				doubled++
			}
			if ratio < 1-1e-9 || ratio > 2+1e-9 {
				t.Errorf("%d proxies: throughput ×%g", p, ratio)
			}
		}
		t.Logf("%2d proxies: %8.0f ops/s, bound by %s %s", p, pr.MaxOpsPerSec, pr.Bottleneck.Tier, pr.Bottleneck.Resource)
		prev = pr.MaxOpsPerSec
		if pr.Bottleneck.Tier != "proxy" {
			if doubled == 0 {
				t.Fatalf("never proxy-bound")
			}
			return
		}
	}
	t.Errorf("still proxy-bound at 64 proxies: the storage tier never binds")
}

// A durability policy changes the fan-out: three replicas send three copies from the proxy,
// EC 4+2 sends 1.5 times the object.
func TestPolicyFanOut(t *testing.T) {
	cat := loadExample(t)
	cl := cluster(cat, "proxy-1u", 1, "storage-2u-12", 8, 12, "hdd-8t", "", 0)
	out := func(pol Policy) float64 {
		m := model(t, "D", pol)
		for _, r := range m.Predict(cl, 10).Resources {
			if r.Tier == "proxy" && r.Resource == "nic out" {
				return r.Utilization
			}
		}
		return 0
	}
	r3, ec := out(threeReplicas), out(Policy{K: 4, M: 2, Zones: 1})
	if ratio := r3 / ec; ratio < 1.9 || ratio > 2.1 {
		t.Errorf("proxy NIC out, 3 replicas / EC 4+2 = %g, want about 3/1.5 = 2", ratio)
	}
}

// A link carries more than the bytes the processes moved: TCP/IP and Ethernet framing per
// segment, and acknowledgements the other way.
func TestOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		out, in, wantOut, wantIn float64
	}{
		{0, 0, 0, 0},
		{200, 4400, 200 + 90 + 2*84, 4400 + 4*90 + 84},
		{300, 1 << 20, 300 + 90 + 363*84, 1<<20 + 725*90 + 84},
	} {
		out, in := onTheWire(tc.out, tc.in)
		if out != tc.wantOut || in != tc.wantIn {
			t.Errorf("onTheWire(%g, %g) = %g, %g; want %g, %g", tc.out, tc.in, out, in, tc.wantOut, tc.wantIn)
		}
	}
	if _, in := onTheWire(300, 1<<20); in/(1<<20) < 1.06 || in/(1<<20) > 1.07 {
		t.Errorf("a 1 MiB answer costs %.3f× its bytes on the wire, want about 1.06", in/(1<<20))
	}
}

// Background CPU is taken off a node's cores: a node that idles at b cores serves requests
// with c − b, and counts b in its utilization; a sumo node pays both roles' background.
func TestBackgroundCPU(t *testing.T) {
	cat := loadExample(t)
	base := modelWith(t, loadDefaults(t), "B", threeReplicas)
	cl := cluster(cat, "proxy-1u", 1, "storage-2u-12", 6, 12, "ssd-3.84t", "", 0)
	cpuLimit := func(m *Model, tier string) (float64, float64) {
		for _, r := range m.Predict(cl, 100).Resources {
			if r.Tier == tier && r.Resource == "cpu" {
				return r.LimitOpsPerSec, r.Utilization
			}
		}
		t.Fatalf("no %s cpu", tier)
		return 0, 0
	}
	d := loadDefaults(t)
	d.Background = Background{ProxyCores: 4, StorageCores: 2}
	bg := modelWith(t, d, "B", threeReplicas)
	for _, tc := range []struct {
		tier string
		bg   float64
	}{{"proxy", 4}, {"storage", 2}} {
		var cores, speed float64
		for _, g := range cl.Groups {
			if g.tier() == tc.tier {
				cores, speed = float64(g.Type.Cores), g.Type.CPUSpeed
			}
		}
		l0, u0 := cpuLimit(base, tc.tier)
		l1, u1 := cpuLimit(bg, tc.tier)
		if math.IsInf(l0, 0) || l0 <= 0 {
			t.Fatalf("%s cpu limit %g: the cluster gives the tier no work", tc.tier, l0)
		}
		if want := l0 * (cores - tc.bg/speed) / cores; math.Abs(l1-want) > 1e-6*want {
			t.Errorf("%s cpu limit with %g background cores: %g, want %g", tc.tier, tc.bg, l1, want)
		}
		if want := u0 + tc.bg/speed/cores; math.Abs(u1-want) > 1e-9 {
			t.Errorf("%s cpu utilization with background: %g, want %g", tc.tier, u1, want)
		}
		// The prediction's bottleneck is a resource like the others: background counted, and
		// the rated point keeps it at the max utilization.
		p := bg.Predict(cl, 0)
		for _, r := range p.Resources {
			if r.Tier == p.Bottleneck.Tier && r.Resource == p.Bottleneck.Resource && math.Abs(r.Utilization-p.Bottleneck.Utilization) > 1e-9 {
				t.Errorf("bottleneck %s %s at %g, the same resource in the list at %g", r.Tier, r.Resource, p.Bottleneck.Utilization, r.Utilization)
			}
			if r.Utilization > DefaultMaxUtilization+1e-9 {
				t.Errorf("%s %s at %g at the rated point, above the max utilization %g", r.Tier, r.Resource, r.Utilization, DefaultMaxUtilization)
			}
		}
	}
	sumo := &Cluster{Groups: []Group{{Type: cl.Groups[1].Type, NIC: cl.Groups[1].NIC, Count: 3, Proxy: true, Storage: true,
		Disk: cl.Groups[1].Disk, DisksPerNode: 12}}}
	for _, r := range bg.Predict(sumo, 0).Resources {
		if r.Resource == "cpu" {
			u0 := base.Predict(sumo, 1).Resources[0].Utilization
			u1 := bg.Predict(sumo, 1).Resources[0].Utilization
			if want := 6 / cl.Groups[1].Type.CPUSpeed / float64(cl.Groups[1].Type.Cores); math.Abs(u1-u0-want) > 1e-9 {
				t.Errorf("sumo background utilization %g, want %g (both roles)", u1-u0, want)
			}
		}
	}
}

// A proxy's CPU per PUT grows with the replicas it sends the body to: with a per-visit part,
// three replicas cost the proxy the fixed part plus three visits, one replica plus one.
func TestProxyCPUPerVisit(t *testing.T) {
	cat := loadExample(t)
	d := loadDefaults(t)
	for i := range d.Ops["put"] {
		d.Ops["put"][i].ProxyCPUPerVisitSeconds = d.Ops["put"][i].ProxyCPUSeconds / 2
	}
	w := &Workload{Name: "put4k", Classes: []Class{{Op: "put", Size: 4096, Weight: 1}}}
	cl := cluster(cat, "proxy-1u", 1, "storage-2u-12", 6, 12, "ssd-3.84t", "", 0)
	limit := func(dm *Demands, replicas int) float64 {
		m, err := NewModel(dm, w, Policy{Replicas: replicas, Zones: 1}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range m.Predict(cl, 1).Resources {
			if r.Tier == "proxy" && r.Resource == "cpu" {
				return r.LimitOpsPerSec
			}
		}
		t.Fatal("no proxy cpu")
		return 0
	}
	base := loadDefaults(t)
	b3 := limit(base, 3)
	if got := limit(base, 1); !near(got, b3) {
		t.Errorf("without a per-visit part the replicas do not matter to the proxy: %g against %g", got, b3)
	}
	// fixed f, per visit f/2: three replicas cost 2.5 f, one 1.5 f.
	if got, want := limit(d, 3), b3/2.5; !near(got, want) {
		t.Errorf("3 replicas: proxy cpu limit %g, want %g", got, want)
	}
	if got, want := limit(d, 1), b3/1.5; !near(got, want) {
		t.Errorf("1 replica: proxy cpu limit %g, want %g", got, want)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// A sumo node serves the visits of its own requests that land on itself in process: of n
// sumo nodes each has a 1/n share of the requests and 1/n of the replicas, so a GET saves
// the local-visit CPU on 1/n² of the requests per node — all of it with one node.
func TestSumoLocalVisits(t *testing.T) {
	cat := loadExample(t)
	d := loadDefaults(t)
	const save = 5e-5
	for i := range d.Ops["get"] {
		d.Ops["get"][i].LocalVisitSavingSeconds = save
	}
	w := &Workload{Name: "get4k", Classes: []Class{{Op: "get", Size: 4096, Weight: 1}}}
	st := cat.nodeType("storage-2u-12")
	sumo := func(n int) *Cluster {
		return &Cluster{Groups: []Group{{Type: st, NIC: st.NICs[0], Count: n, Proxy: true, Storage: true, Disk: cat.diskType("ssd-3.84t"), DisksPerNode: 12}}}
	}
	cpuLimit := func(dm *Demands, cl *Cluster) float64 {
		m, err := NewModel(dm, w, Policy{Replicas: 1, Zones: 1}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range m.Predict(cl, 1).Resources {
			if r.Resource == "cpu" {
				return r.LimitOpsPerSec
			}
		}
		t.Fatal("no cpu")
		return 0
	}
	p, err := d.At("get", 4096)
	if err != nil {
		t.Fatal(err)
	}
	perReq := (p.ProxyCPUSeconds + p.StorageCPUSeconds) / st.CPUSpeed
	for _, n := range []int{1, 2, 4} {
		fn := float64(n)
		want := float64(st.Cores) / (perReq/fn - save/st.CPUSpeed/(fn*fn))
		if got := cpuLimit(d, sumo(n)); !near(got, want) {
			t.Errorf("%d sumo nodes: cpu limit %g, want %g", n, got, want)
		}
		if got, without := cpuLimit(d, sumo(n)), cpuLimit(loadDefaults(t), sumo(n)); got <= without {
			t.Errorf("%d sumo nodes: local visits do not raise the limit (%g against %g)", n, got, without)
		}
	}
}
