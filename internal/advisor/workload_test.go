package advisor

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestWorkloads(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	weights := func(w *Workload) map[string]float64 {
		m := map[string]float64{}
		for _, c := range w.Classes {
			m[c.Op] += c.Weight
		}
		return m
	}
	// Built-in A: 90/5/5 over sizes uniform in 1–128 KiB, cut in sizeSteps pieces.
	a, err := ResolveWorkload("A")
	if err != nil {
		t.Fatal(err)
	}
	if w := weights(a); !near(w["get"], 0.9) || !near(w["put"], 0.05) || !near(w["delete"], 0.05) || len(a.Classes) != 3*sizeSteps {
		t.Errorf("A: weights %v, %d classes", w, len(a.Classes))
	}
	if want := 0.95 * (1024 + 128*1024) / 2.0; !near(a.MeanPayload(), want) {
		t.Errorf("A: mean payload %g, want %g", a.MeanPayload(), want)
	}
	// A workload file with a size histogram.
	f, err := ResolveWorkload("testdata/mixed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.8*4096 + 0.2*(1<<20+8<<20)/2.0; !near(f.MeanPayload(), want) || !near(weights(f)["get"], 0.7) {
		t.Errorf("mixed: mean payload %g (want %g), weights %v", f.MeanPayload(), want, weights(f))
	}
	// A cairn bench result: each kind at the mean size it moved, weighted by its operations.
	b, err := ResolveWorkload("testdata/bench-result.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Classes) != 2 || b.Name != "measured" || !near(weights(b)["get"], 0.9) {
		t.Fatalf("bench result: %+v", b)
	}
	for _, c := range b.Classes {
		if want := map[string]float64{"get": 1024, "put": 1 << 20}[c.Op]; c.Size != want {
			t.Errorf("bench result: %s at %g bytes, want %g", c.Op, c.Size, want)
		}
	}
	for _, bad := range []string{"no-such-workload", "testdata/small.yaml.json"} {
		if _, err := ResolveWorkload(bad); !errors.Is(err, ErrInvalidWorkload) && !strings.Contains(err.Error(), "no such file") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		replicas int
		ec       string
		zones    int
		want     Policy
		err      string
	}{
		{0, "", 0, Policy{Replicas: 3, Zones: 1}, ""},
		{2, "", 2, Policy{Replicas: 2, Zones: 2}, ""},
		{0, "4+2", 3, Policy{K: 4, M: 2, Zones: 3}, ""},
		{3, "4+2", 1, Policy{}, "not both"},
		{0, "4-2", 1, Policy{}, "want K+M"},
		{0, "4+0", 1, Policy{}, "M ≥ 1"},
		{0, "", -1, Policy{}, "zones -1"},
	} {
		p, err := ParsePolicy(tc.replicas, tc.ec, tc.zones)
		switch {
		case tc.err == "" && (err != nil || p != tc.want):
			t.Errorf("%d %q %d: %+v, %v", tc.replicas, tc.ec, tc.zones, p, err)
		case tc.err != "" && (!errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%d %q %d: %v, want %q", tc.replicas, tc.ec, tc.zones, err, tc.err)
		}
	}
	if o := (Policy{K: 4, M: 2, Zones: 1}); o.Overhead() != 1.5 || o.MinStorageNodes() != 6 || o.String() != "EC 4+2, 1 zone" {
		t.Errorf("EC 4+2: overhead %g, min nodes %d, %q", o.Overhead(), o.MinStorageNodes(), o.String())
	}
}
