package bench_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/bench/workload"
	"github.com/cairn-store/cairn/internal/objclient"
)

func parseSpec(t *testing.T, y string) *workload.Spec {
	t.Helper()
	s, err := workload.Parse("test.yaml", []byte(y))
	if err != nil {
		t.Fatalf("workload: %v", err)
	}
	return s
}

func runWorkload(t *testing.T, c objclient.Client, spec *workload.Spec) *bench.Report {
	t.Helper()
	r, err := bench.RunWorkload(context.Background(), c, bench.WorkloadConfig{Spec: spec, Prefix: awkwardPrefix, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func stage(t *testing.T, r *bench.Report, name string) *bench.StageReport {
	t.Helper()
	for _, s := range r.Stages {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no stage %q in %+v", name, r.Stages)
	return nil
}

// TestWorkloadMixAgainstRealServer runs every operation kind concurrently against Cairn. The
// key space's state machine promises that no GET, HEAD or DELETE ever meets a missing object,
// so any error at all (a 404 above all) is a bug in the runner or the store.
func TestWorkloadMixAgainstRealServer(t *testing.T) {
	c := s3Client(t, startServer(t), "bench-secret")
	spec := parseSpec(t, `
name: mix
bucket_prefix: mix
buckets: 2
objects: 150
size: {min: 1KiB, max: 8KiB}
mix: {get: 50, put: 20, delete: 15, head: 10, list: 5}
concurrency: 8
duration: 2s
cleanup: true
`)
	r := runWorkload(t, c, spec)
	if len(r.Stages) != 3 {
		t.Fatalf("stages: %+v", r.Stages)
	}
	prep, main, clean := r.Stages[0], r.Stages[1], r.Stages[2]
	if prep.Kind != "prepare" || prep.Ops["put"].Operations != 150 || prep.Total.Errors != 0 {
		t.Fatalf("prepare: %+v %+v", prep, prep.Ops["put"])
	}
	for _, op := range []string{"get", "put", "delete", "head", "list"} {
		s := main.Ops[op]
		if s == nil || s.Operations == 0 || s.Errors != 0 {
			t.Errorf("main %s: %+v", op, s)
		}
	}
	if g := main.Ops["get"]; g.TTFB == nil || g.TTFB.P50 <= 0 || g.TTFB.P50 > g.Latency.Max {
		t.Errorf("get TTFB: %+v", g.TTFB)
	}
	if g := main.Ops["get"]; g.Bytes < g.Operations*1024 || g.Bytes > g.Operations*8192 {
		t.Errorf("get bytes %d for %d GETs of 1-8 KiB", g.Bytes, g.Operations)
	}
	var seriesOps int64
	for _, s := range main.Series {
		seriesOps += s.Operations
	}
	if seriesOps != main.Total.Operations || len(main.Series) < 2 || len(main.Series) > 3 {
		t.Errorf("series: %d samples, %d ops, total %d", len(main.Series), seriesOps, main.Total.Operations)
	}
	if r.Ops["get"].Operations != main.Ops["get"].Operations {
		t.Errorf("run totals count only measured stages: %+v vs %+v", r.Ops["get"], main.Ops["get"])
	}
	if clean.Kind != "cleanup" || clean.Total.Errors != 0 {
		t.Errorf("cleanup: %+v", clean.Total)
	}
	for _, b := range []string{"mix-0", "mix-1"} {
		if _, err := c.List(context.Background(), b, objclient.ListOptions{}); !objclient.IsNotFound(err) {
			t.Errorf("bucket %s after cleanup: %v", b, err)
		}
	}
}

// TestOpenLoopMeasuresFromTheSchedule: with one worker behind a 40 ms delay and 100 requests
// scheduled per second, requests queue, and their latency must include the queueing
// (coordinated omission would report ~40 ms). Only lower bounds are checked: the delay makes
// them certain on any machine.
func TestOpenLoopMeasuresFromTheSchedule(t *testing.T) {
	ep := startFaultProxy(t, startServer(t), &faultProxy{delay: 40 * time.Millisecond})
	c := s3Client(t, ep, "bench-secret")
	spec := parseSpec(t, `
name: open
objects: 10
size: 1KiB
mix: {put: 1}
keys: sequential
concurrency: 1
rate: 50
duration: 1s
prepopulate: false
`)
	r := runWorkload(t, c, spec)
	main := stage(t, r, "main")
	put := main.Ops["put"]
	// Slots 0..49 are scheduled within the second; each is sent, however late.
	if put.Operations+put.Errors != 50 || put.Errors != 0 {
		t.Fatalf("open loop: %+v", put)
	}
	if main.Late < 25 {
		t.Errorf("late = %d, want most of 50", main.Late)
	}
	// The 50th request is sent after 49 x 40 ms of service, ~1 s after its slot.
	if put.Latency.Max < 900 || put.Latency.P50 < 200 {
		t.Errorf("latency from the schedule: %+v", put.Latency)
	}
	if main.TargetRate != 50 {
		t.Errorf("target rate %v", main.TargetRate)
	}
}

// TestRampFindsTheKnee: a proxy that serves at most 4 requests at a time, each taking 20 ms,
// caps throughput at 200/s from 4 clients on: the ramp must stop once more clients stop
// helping, and name 4 as the knee.
func TestRampFindsTheKnee(t *testing.T) {
	ep := startFaultProxy(t, startServer(t), &faultProxy{delay: 20 * time.Millisecond, limit: make(chan struct{}, 4)})
	c := s3Client(t, ep, "bench-secret")
	spec := parseSpec(t, `
name: ramp
objects: 50
size: 1KiB
mix: {get: 1}
stages:
  - {name: load, kind: prepare}
  - name: ramp
    kind: ramp
    ramp: {start: 1, max: 64, step_duration: 1s, min_gain: 0.25, patience: 2, latency_factor: 1000}
`)
	r := runWorkload(t, c, spec)
	rp := stage(t, r, "ramp").Ramp
	if rp == nil {
		t.Fatal("no ramp report")
	}
	var cs []int
	for _, s := range rp.Steps {
		cs = append(cs, s.Concurrency)
	}
	if rp.StopReason != "throughput stopped rising" || rp.Knee.Concurrency != 4 || len(cs) != 5 || cs[4] != 16 {
		t.Fatalf("ramp: steps %v, knee %+v, %s", cs, rp.Knee, rp.StopReason)
	}
}

// TestEventDipAndRecovery: an event's command makes the store fail (a flag file the proxy
// watches) and a second one heals it; the report must place the failures during the event,
// show the dip, and see the recovery. The proxy's 20 ms delay sets the throughput (4 workers,
// ~200/s), so that a busy machine cannot make "after" look slower than "before".
func TestEventDipAndRecovery(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "down")
	ep := startFaultProxy(t, startServer(t), &faultProxy{failFile: flag, delay: 20 * time.Millisecond})
	c := s3Client(t, ep, "bench-secret")
	spec := parseSpec(t, `
name: fault
objects: 50
size: 1KiB
mix: {get: 1}
concurrency: 4
# An open loop: throughput is the schedule's, not what a loaded machine manages, so that
# "back to 90% of before" depends on the store and not on the neighbours.
rate: 100
stages:
  - {name: load, kind: prepare}
  - name: main
    duration: 8s
    events:
      - {name: stop, at: 2s, command: "touch '`+flag+`'"}
      - {name: start, at: 4s, command: "rm '`+flag+`'"}
`)
	r := runWorkload(t, c, spec)
	main := stage(t, r, "main")
	if len(main.Events) != 2 {
		t.Fatalf("events: %+v", main.Events)
	}
	stop := main.Events[0]
	if stop.ExitCode != 0 || stop.Before.Errors != 0 || stop.Before.OpsPerSec <= 0 || stop.During.Errors == 0 || stop.Dip < 90 {
		t.Errorf("stop event: %+v", stop)
	}
	if main.Ops["get"].ErrorKinds["503 SlowDown"] == 0 {
		t.Errorf("errors by kind: %v", main.Ops["get"].ErrorKinds)
	}
	if stop.RecoveredAfter == nil || *stop.RecoveredAfter < 1.5 {
		t.Errorf("recovery after the stop event: %v", stop.RecoveredAfter)
	}
	// Requests already failing when the flag went away land in the first second after it, so
	// a few errors there are the truth; the phase must be mostly successes.
	if start := main.Events[1]; start.After.Errors*10 > start.After.Operations || start.After.OpsPerSec <= 0 {
		t.Errorf("after the start event: %+v", start)
	}
}

// TestInterruptedWorkload: Ctrl-C ends the stage without counting errors and skips the rest.
func TestInterruptedWorkload(t *testing.T) {
	c := s3Client(t, startServer(t), "bench-secret")
	spec := parseSpec(t, `
name: long
objects: 20
size: 100
mix: {put: 1}
duration: 1m
stages:
  - {name: one}
  - {name: two}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r, err := bench.RunWorkload(ctx, c, bench.WorkloadConfig{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || len(r.Stages) != 1 || r.Stages[0].Total.Errors != 0 || r.Stages[0].Total.Operations == 0 || r.Seconds > 10 {
		t.Fatalf("interrupted: %+v / %+v", r, r.Stages)
	}
}

// TestWorkloadJSONNames pins the names scripts read (docs/bench.md).
func TestWorkloadJSONNames(t *testing.T) {
	c := s3Client(t, startServer(t), "bench-secret")
	spec := parseSpec(t, "name: j\nobjects: 10\nsize: 1KiB\nmix: {get: 1, put: 1}\nduration: 1s\nconcurrency: 2\n")
	data, err := json.Marshal(runWorkload(t, c, spec))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Stages []map[string]json.RawMessage `json:"stages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	st := doc.Stages[len(doc.Stages)-1]
	for _, k := range []string{"name", "kind", "ops", "total", "series", "client_cpu", "concurrency"} {
		if _, ok := st[k]; !ok {
			t.Errorf("stage has no %q", k)
		}
	}
	var ops map[string]map[string]json.RawMessage
	json.Unmarshal(st["ops"], &ops)
	for _, k := range []string{"operations", "errors", "ops_per_sec", "mb_per_sec", "latency_ms", "ttfb_ms"} {
		if _, ok := ops["get"][k]; !ok {
			t.Errorf("stage op get has no %q: %s", k, st["ops"])
		}
	}
	var lat map[string]float64
	json.Unmarshal(ops["get"]["latency_ms"], &lat)
	for _, k := range []string{"mean", "p50", "p95", "p99", "p999"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency_ms has no %q", k)
		}
	}
	if !strings.Contains(string(st["series"]), `"ops_per_sec"`) {
		t.Errorf("series: %s", st["series"])
	}
}
