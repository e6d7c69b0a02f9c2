package advisor

import (
	"encoding/json"
	"testing"
)

func TestSmoke(t *testing.T) {
	cat, err := ParseCatalog("example", ExampleCatalog())
	if err != nil {
		t.Fatal(err)
	}
	d, err := DefaultDemands()
	if err != nil {
		t.Fatal(err)
	}
	for _, wl := range []string{"A", "B", "C", "D"} {
		w, err := ResolveWorkload(wl)
		if err != nil {
			t.Fatal(err)
		}
		pol, _ := ParsePolicy(3, "", 1)
		m, err := NewModel(d, w, pol, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Recommend(cat, m, Request{CapacityTB: 500, ThroughputMBps: 2000})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(r.Best.Groups, "", " ")
		t.Logf("%s: shapes %d cost %.0f groups %s lb %s×%d rated %.0f MB/s bottleneck %+v p99 %.1f", wl, r.Shapes, r.Best.Cost.Total, b, r.Best.LoadBalancer, r.Best.LoadBalancers, r.Best.Prediction.RatedMBps, r.Best.Prediction.Bottleneck, r.Best.Prediction.P99Ms)
	}
}
