package advisor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/bench/htmlreport"
)

// The HTML report has the recommendation's tables and the three charts of the issue: cost per
// MB/s against N, throughput against cluster size and against cost.
func TestHTMLReport(t *testing.T) {
	cat := loadExample(t)
	m := model(t, "A", threeReplicas)
	r, err := Recommend(cat, m, Request{CapacityTB: 500, ThroughputMBps: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Best.Topology != "proxy+storage" {
		t.Fatalf("best is %s: sampling needs proxies and storage nodes", r.Best.Topology)
	}
	var buf bytes.Buffer
	if err := htmlreport.WriteDoc(&buf, Doc(r)); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"cost per MB/s against N", "throughput against cluster size", "throughput against cost", "Runners-up", "no load balancer"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d charts, want 4 (two of sampling, two of profiling)", n)
	}
}
