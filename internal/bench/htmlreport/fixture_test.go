package htmlreport

import (
	"math"
	"time"

	"github.com/cairn-store/cairn/internal/bench"
)

// Hostile strings: every one of them comes from a user's workload file, a server's error or a
// fault command's output, and must reach the page as text.
const (
	evilStage  = `main <script>alert("stage")</script>`
	evilOutput = "node-3 stopped\n<script>alert('output')</script>\n& done"
	evilKind   = `503 <img src=x onerror=alert(1)>`
	evilEvent  = `kill <b>node-3</b>`
	endpoint   = "http://10.0.0.7:9000"
)

// Expected charts: main has throughput, MB/s, latency over time and percentiles; the ramp has
// those and its curve; prepare and cleanup have none.
const workloadCharts = 4 + 5

func lat(p50 float64) bench.Latency {
	return bench.Latency{Mean: p50 * 1.1, P50: p50, P95: p50 * 2, P99: p50 * 3, P999: p50 * 5, Max: p50 * 8}
}

func opStats(ops, errs int64, secs, size, p50 float64) *bench.OpStats {
	return &bench.OpStats{Operations: ops, Errors: errs, Bytes: ops * int64(size),
		OpsPerSec: float64(ops) / secs, MBPerSec: float64(ops) * size / 1e6 / secs, Latency: lat(p50)}
}

// workloadReport is a workload run: prepare, a 30-second main stage with a fault event that
// halves throughput for five seconds, a ramp with a knee at 32 workers, and cleanup.
func workloadReport() *bench.Report {
	prepare := &bench.StageReport{Name: "prepare", Kind: "prepare", Concurrency: 16, Seconds: 4,
		Ops: map[string]*bench.OpStats{"put": opStats(4000, 0, 4, 65536, 3)}}
	prepare.Total = *prepare.Ops["put"]

	get := opStats(60000, 40, 30, 65536, 2.1)
	ttfb := lat(1.2)
	get.TTFB = &ttfb
	get.ErrorKinds = map[string]int64{evilKind: 30, "timeout": 10}
	put := opStats(20000, 0, 30, 65536, 4.3)
	main := &bench.StageReport{Name: evilStage, Kind: "main", Concurrency: 64, Start: 4, Seconds: 30,
		Ops: map[string]*bench.OpStats{"get": get, "put": put}}
	main.Total = *opStats(80000, 40, 30, 65536, 2.6)
	main.Total.ErrorKinds = get.ErrorKinds
	for s := 1; s <= 30; s++ {
		g, p, e := int64(2100), int64(700), int64(0)
		if s > 12 && s <= 17 { // node-3 stopped at t=12: a dip, errors, then recovery
			g, p, e = 1000, 350, 8
		}
		smp := bench.Sample{T: float64(s), Concurrency: 64, Operations: g + p, Errors: e,
			OpsPerSec: float64(g + p), MBPerSec: float64(g+p) * 65536 / 1e6,
			P50: 2 + float64(e)/4, P99: 9 + float64(e), ByOp: map[string]int64{"get": g, "put": p}}
		main.Series = append(main.Series, smp)
	}
	rec := 5.0
	main.Events = []bench.EventReport{{
		Name: evilEvent, Command: `ssh node-3 "systemctl stop cairn" && echo '<done>'`, At: 12, Elapsed: 0.4,
		Output: evilOutput,
		Before: bench.Phase{Seconds: 12, Operations: 33600, OpsPerSec: 2800},
		During: bench.Phase{Seconds: 5, Operations: 6750, Errors: 40, OpsPerSec: 1350},
		After:  bench.Phase{Seconds: 13, Operations: 36400, OpsPerSec: 2800},
		Dip:    51.8, RecoveredAfter: &rec,
	}}

	ramp := &bench.StageReport{Name: "ramp", Kind: "ramp", Concurrency: 128, Start: 34, Seconds: 40,
		Ops: map[string]*bench.OpStats{"get": opStats(150000, 0, 40, 65536, 3)}}
	ramp.Total = *ramp.Ops["get"]
	rr := &bench.RampReport{StopReason: "throughput stopped rising"}
	for i, c := range []int{4, 8, 16, 32, 64, 128} {
		tput := []float64{900, 1750, 3200, 4900, 5000, 5050}[i]
		rr.Steps = append(rr.Steps, bench.RampStep{Concurrency: c, Seconds: 5, Operations: int64(tput * 5),
			OpsPerSec: tput, MBPerSec: tput * 65536 / 1e6,
			Latency: lat(float64(c) * 1000 / tput)})
		for s := 0; s < 5; s++ {
			t := float64(i*5 + s + 1)
			ramp.Series = append(ramp.Series, bench.Sample{T: t, Concurrency: c, Operations: int64(tput),
				OpsPerSec: tput, MBPerSec: tput * 65536 / 1e6, P50: float64(c) * 1000 / tput, P99: float64(c) * 3000 / tput,
				ByOp: map[string]int64{"get": int64(tput)}})
		}
	}
	rr.Knee = rr.Steps[3]
	ramp.Ramp = rr

	cleanup := &bench.StageReport{Name: "cleanup", Kind: "cleanup", Concurrency: 16, Start: 74, Seconds: 2,
		Ops: map[string]*bench.OpStats{"delete": opStats(4000, 0, 2, 0, 1)}}
	cleanup.Total = *cleanup.Ops["delete"]

	return &bench.Report{
		Kind: "run", Protocol: "s3", Workload: "mixed-64k", Endpoint: endpoint, Bucket: "cairn-bench",
		Concurrency: 64, ObjectSize: 65536, Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Seconds: 76,
		Ops: map[string]*bench.OpStats{
			"get": opStats(210000, 40, 70, 65536, 2.5), "put": opStats(20000, 0, 30, 65536, 4.3)},
		ClientCPU: bench.CPU{UserSeconds: 12.5, SystemSeconds: 8.25, SecondsPer1000Ops: 0.09, Utilization: 0.27},
		Stages:    []*bench.StageReport{prepare, main, ramp, cleanup},
	}
}

// fillReport is an older kind: no stages, throughput per window of objects.
func fillReport() *bench.Report {
	r := &bench.Report{Kind: "fill", Endpoint: endpoint, Bucket: "b", Concurrency: 16, ObjectSize: 4096,
		Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Seconds: 50,
		Ops: map[string]*bench.OpStats{"put": opStats(500000, 3, 50, 4096, 1.5)}}
	for i := 1; i <= 5; i++ {
		r.Windows = append(r.Windows, bench.Window{Index: i, Through: int64(i) * 100000, Seconds: 10,
			OpStats: *opStats(100000, 0, 10-float64(i)/2, 4096, 1+float64(i)/5)})
	}
	return r
}

// degenerateReport has everything that breaks naive chart code: an empty series, a single
// sample, zero operations, a ramp of one step without a knee, and non-finite values.
func degenerateReport() *bench.Report {
	nan, inf := math.NaN(), math.Inf(1)
	empty := &bench.StageReport{Name: "empty", Kind: "main", Ops: map[string]*bench.OpStats{}}
	one := &bench.StageReport{Name: "one", Kind: "main", Seconds: 0.5,
		Ops:    map[string]*bench.OpStats{"get": {Operations: 3, OpsPerSec: inf, Latency: bench.Latency{P50: nan, P99: 2}}},
		Series: []bench.Sample{{T: 0.5, Concurrency: 1, Operations: 3, OpsPerSec: 6, P50: nan, P99: inf}}}
	idle := &bench.StageReport{Name: "idle", Kind: "ramp", Seconds: 3,
		Ops:    map[string]*bench.OpStats{"get": {}},
		Series: []bench.Sample{{T: 1}, {T: 2}, {T: 3}},
		Ramp:   &bench.RampReport{Steps: []bench.RampStep{{Concurrency: 1}}, StopReason: "reached max"}}
	return &bench.Report{Kind: "run", Endpoint: endpoint, Seconds: nan,
		Ops:    map[string]*bench.OpStats{"get": {OpsPerSec: nan}},
		Stages: []*bench.StageReport{empty, one, idle, nil}}
}
