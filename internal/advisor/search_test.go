package advisor

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestRequestValidate(t *testing.T) {
	for _, tc := range []struct {
		req  Request
		want string // "" valid
		obj  string
	}{
		{Request{CapacityTB: 100, ThroughputMBps: 500}, "", MinimizeCost},
		{Request{CapacityTB: 100, Budget: 1e5}, "", MaximizeThroughput},
		{Request{ThroughputOps: 1000, Budget: 1e5}, "", MaximizeCapacity},
		{Request{CapacityTB: 100, ThroughputMBps: 500, Budget: 1e5}, "all given", ""},
		{Request{}, "(0 given)", ""},
		{Request{Budget: 1e5}, "(1 given)", ""},
		{Request{ThroughputMBps: 1, ThroughputOps: 1, Budget: 1}, "not both", ""},
	} {
		err := tc.req.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.req, err)
		case tc.want == "" && tc.req.Objective() != tc.obj:
			t.Errorf("%+v: objective %s, want %s", tc.req, tc.req.Objective(), tc.obj)
		case tc.want != "" && (!errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%+v: %v, want one line with %q", tc.req, err, tc.want)
		}
	}
}

func TestParseUnits(t *testing.T) {
	if v, err := ParseCapacity("2PB"); err != nil || v != 2000 {
		t.Errorf("2PB = %v, %v", v, err)
	}
	if v, err := ParseCapacity("1TiB"); err != nil || math.Abs(v-1.099511627776) > 1e-12 {
		t.Errorf("1TiB = %v, %v", v, err)
	}
	if mb, ops, err := ParseThroughput("2GB/s"); err != nil || mb != 2000 || ops != 0 {
		t.Errorf("2GB/s = %v %v %v", mb, ops, err)
	}
	if mb, ops, err := ParseThroughput("5000ops/s"); err != nil || mb != 0 || ops != 5000 {
		t.Errorf("5000ops/s = %v %v %v", mb, ops, err)
	}
	if v, err := ParseBudget("250k"); err != nil || v != 250000 {
		t.Errorf("250k = %v %v", v, err)
	}
	for _, bad := range []func() error{
		func() error { _, err := ParseCapacity("500"); return err },
		func() error { _, _, err := ParseThroughput("800"); return err },
		func() error { _, err := ParseBudget("-5"); return err },
	} {
		if err := bad(); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("want ErrInvalidRequest, got %v", err)
		}
	}
}

// brute enumerates every configuration of the small catalog (every shape, every count within
// the limits) and returns the best value of the objective, computing throughput from the
// resources directly: an independent check of the search's closed form.
func brute(t *testing.T, cat *Catalog, m *Model, req Request) float64 {
	t.Helper()
	s := &searcher{cat: cat, m: m, req: req, opsT: req.ThroughputOps}
	if req.ThroughputMBps > 0 {
		s.opsT = m.Ops(req.ThroughputMBps)
	}
	obj := req.Objective()
	best := math.NaN()
	lim := cat.Limits
	for _, sh := range s.shapes() {
		for p := 0; p <= lim.MaxProxies; p++ {
			if (p == 0) != sh.sumo {
				continue
			}
			for n := 1; n <= lim.MaxStorageNodes; n++ {
				if n < m.Policy.MinStorageNodes() || n%m.Policy.Zones != 0 {
					continue
				}
				for l := 1; l <= lim.MaxLoadBalancers; l++ {
					cl := s.cluster(&sh, counts{p, n, l})
					xmax := math.Inf(1)
					for _, r := range m.resources(&cl) {
						xmax = math.Min(xmax, r.limit())
					}
					rated := m.Options.MaxUtilization * xmax
					cost := clusterCost(cat, &cl).Total
					usable := float64(n) * sh.raw * m.Options.Fill / m.Policy.Overhead()
					if req.CapacityTB > 0 && usable < req.CapacityTB*(1-1e-9) ||
						s.opsT > 0 && rated < s.opsT*(1-1e-9) || req.Budget > 0 && cost > req.Budget {
						continue
					}
					v := map[string]float64{MinimizeCost: cost, MaximizeThroughput: rated, MaximizeCapacity: usable}[obj]
					if math.IsNaN(best) || (obj == MinimizeCost && v < best) || (obj != MinimizeCost && v > best) {
						best = v
					}
				}
			}
		}
	}
	return best
}

func TestSearchAgainstBruteForce(t *testing.T) {
	cat := smallCatalog(t)
	for _, tc := range []struct {
		wl  string
		pol Policy
		req Request
	}{
		{"A", threeReplicas, Request{CapacityTB: 60, ThroughputMBps: 300}},
		{"B", threeReplicas, Request{CapacityTB: 20, ThroughputOps: 8000}},
		{"D", threeReplicas, Request{CapacityTB: 100, ThroughputMBps: 1500}},
		{"C", Policy{K: 4, M: 2, Zones: 2}, Request{CapacityTB: 150, ThroughputMBps: 1000}},
		{"A", threeReplicas, Request{CapacityTB: 60, Budget: 90000}},
		{"D", Policy{Replicas: 3, Zones: 3}, Request{CapacityTB: 100, Budget: 120000}},
		{"A", threeReplicas, Request{ThroughputMBps: 300, Budget: 90000}},
		{"D", threeReplicas, Request{ThroughputMBps: 800, Budget: 150000}},
	} {
		m := model(t, tc.wl, tc.pol)
		want := brute(t, cat, m, tc.req)
		res, err := Recommend(cat, m, tc.req)
		if math.IsNaN(want) {
			if !errors.Is(err, ErrInfeasible) {
				t.Errorf("%s %+v: brute force finds nothing, Recommend: %v", tc.wl, tc.req, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %+v: %v (brute force: %g)", tc.wl, tc.req, err, want)
			continue
		}
		got := (&searcher{req: tc.req}).value(&res.Best)
		if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s %s %+v: Recommend's best %s = %g, brute force %g", tc.wl, tc.pol, tc.req, tc.req.Objective(), got, want)
		}
		for i, ru := range res.RunnersUp {
			if (&searcher{req: tc.req}).less(&ru, &res.Best) {
				t.Errorf("runner-up %d is better than the best", i)
			}
		}
		t.Logf("%s %s, %s: %g (%d runners-up)", tc.wl, tc.pol, tc.req.Objective(), got, len(res.RunnersUp))
	}
}

// Inputs no configuration can meet get one line saying which.
func TestSearchInfeasible(t *testing.T) {
	cat := smallCatalog(t)
	m := model(t, "A", threeReplicas)
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{CapacityTB: 1e6, ThroughputMBps: 10}, "more than the catalog can hold"},
		{Request{CapacityTB: 10, ThroughputMBps: 1e6}, "more than the catalog can carry"},
		{Request{CapacityTB: 100, Budget: 1000}, "budget of 1000 USD is too small"},
	} {
		_, err := Recommend(cat, m, tc.req)
		if !errors.Is(err, ErrInfeasible) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line with %q", tc.req, err, tc.want)
		}
	}
}

// A p99 bound makes the search add nodes until the prediction meets it.
func TestSearchP99Bound(t *testing.T) {
	cat := loadExample(t)
	m := model(t, "A", threeReplicas)
	req := Request{CapacityTB: 100, ThroughputMBps: 1000}
	free, err := Recommend(cat, m, req)
	if err != nil {
		t.Fatal(err)
	}
	cl := free.Best.cluster
	_, floor := m.latency(&cl, m.resources(&cl), 0)
	bound := (floor*1000 + free.Best.Prediction.P99Ms) / 2
	t.Logf("unbounded: p99 %.2f ms (idle %.2f ms) at cost %.0f", free.Best.Prediction.P99Ms, floor*1000, free.Best.Cost.Total)
	m.Options.P99Seconds = bound / 1000
	tight, err := Recommend(cat, m, req)
	if err != nil {
		t.Fatal(err)
	}
	if tight.Best.Prediction.P99Ms > bound || tight.Best.Cost.Total < free.Best.Cost.Total {
		t.Errorf("p99 ≤ %.1f ms: got p99 %.1f ms at cost %.0f (unbounded: %.1f ms at %.0f)", bound,
			tight.Best.Prediction.P99Ms, tight.Best.Cost.Total, free.Best.Prediction.P99Ms, free.Best.Cost.Total)
	}
}
