package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
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
// so any error at all (a 404 above all) is a bug in the runner or the store. The main stage is
// a count of operations, not a duration, so that every kind of the mix is among them however
// slow the machine (the rarest, LIST at 5%, is missing from 1000 with odds of 1 in 10²²).
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
operations: 1000
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
	// One sample per second of the stage, the last one partial or folded into the one before.
	var seriesOps int64
	for _, s := range main.Series {
		seriesOps += s.Operations
	}
	full := int(main.Seconds)
	if n := len(main.Series); seriesOps != main.Total.Operations || n < max(full, 1) || n > full+1 {
		t.Errorf("series of a %.3f s stage: %d samples, %d ops, total %d", main.Seconds, n, seriesOps, main.Total.Operations)
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

// TestRampFindsTheKnee: a proxy that serves at most 4 requests at a time, each held for
// rampService, caps throughput at 4/rampService from 4 clients on: the ramp must stop once more
// clients stop helping, and name 4 as the knee.
//
// The service time must dominate all else a request costs (the client, the real server behind
// the proxy, a machine busy with other work), or the curve is the machine's and not the
// proxy's: at 20 ms and g = 0.25, a machine adding over 5 ms to each request could move the
// knee to 8, and a loaded one did. Let x be that other time per request, D = rampService and
// g = min_gain. Up to 4 clients, each request takes D+x and c clients get c/(D+x); beyond 4 the
// proxy's slots are always busy and the rate is 4/(D+x'), x' the part of x spent inside a
// slot. The ramp gives this test's answer while
//
//   - 1→2 and 2→4 gain more than g: 2(D+x)/(D+x₂) > 1+g, true for any x₂ < (1-g)/(1+g)·D = D/2;
//   - 8 and 16 gain no more than g over 4: (D+x₄)/(D+x') ≤ 1+g, for any x₄ ≤ g·D = D/3;
//   - 2 is not within g of the best: (D+x')/(D+x₂) < 2(1-g), for any x' < (1-2g)·D = D/3.
//
// g = 1/3 makes the tightest of these as loose as it can be: with D = 500 ms a busy machine may
// add 160 ms to every request, or change its load that much between two steps. We have seen it
// add 150 ms to 4 clients' requests and 80 ms to those of 8 (2 cores, load average 20).
//
// A step is a whole number of requests per client and lasts until the last one ends, so c ≤ 4
// clients measure c/(D+x) exactly only if each gets the same count. In 1.5 s steps each gets
// three while x < 250 ms (two end before 1.5 s, three do not): no step is skewed by a client
// that squeezed in one more request than the others.
func TestRampFindsTheKnee(t *testing.T) {
	const rampService = 500 * time.Millisecond
	ep := startFaultProxy(t, startServer(t), &faultProxy{delay: rampService, limit: make(chan struct{}, 4)})
	c := s3Client(t, ep, "bench-secret")
	// Few objects, so that the prepare stage, which the proxy slows down too, is two rounds.
	spec := parseSpec(t, `
name: ramp
objects: 8
size: 1KiB
mix: {get: 1}
stages:
  - {name: load, kind: prepare}
  - name: ramp
    kind: ramp
    ramp: {start: 1, max: 64, step_duration: 1.5s, min_gain: 0.3333, patience: 2, latency_factor: 1000}
`)
	r := runWorkload(t, c, spec)
	rp := stage(t, r, "ramp").Ramp
	if rp == nil {
		t.Fatal("no ramp report")
	}
	var cs []int
	for _, s := range rp.Steps {
		cs = append(cs, s.Concurrency)
		// What the machine added to each request, for a failure's diagnosis: up to 4 clients
		// every request is one client's whole wait.
		if s.Concurrency <= 4 && s.OpsPerSec > 0 {
			t.Logf("%2d clients: %5.2f ops/s, %3.0f ms per request beyond the service time", s.Concurrency, s.OpsPerSec,
				(float64(s.Concurrency)/s.OpsPerSec-rampService.Seconds())*1000)
		} else {
			t.Logf("%2d clients: %5.2f ops/s", s.Concurrency, s.OpsPerSec)
		}
	}
	if rp.StopReason != "throughput stopped rising" || rp.Knee.Concurrency != 4 || len(cs) != 5 || cs[4] != 16 {
		t.Fatalf("ramp: steps %v, knee %+v, %s", cs, rp.Knee, rp.StopReason)
	}
}

// TestEventDipAndRecovery: an event's command makes the store fail (a flag file the proxy
// watches) and a second one heals it; the report must place the failures during the event,
// show the dip, and see the recovery.
//
// The report works on the stage's per-second series, which a busy machine bends: its timers
// fire late (the events ran up to 0.5 s late at load average 20), and a process stalled for a
// second files that second's answers under the next. So the test fixes what it can and checks
// the rest against the run's own series:
//   - an open loop of 100 requests a second sets the throughput, and 32 workers keep that
//     schedule while the machine adds up to 300 ms to every 20 ms request;
//   - the store fails for 4 s, so that whole seconds of it pass however late either event runs;
//   - recovery (three seconds in a row at 90% of the rate before) must be found if the series
//     has three such seconds after the heal, and never before the heal.
func TestEventDipAndRecovery(t *testing.T) {
	const workers = 32
	flag := filepath.Join(t.TempDir(), "down")
	ep := startFaultProxy(t, startServer(t), &faultProxy{failFile: flag, delay: 20 * time.Millisecond})
	c, err := objclient.New(objclient.Config{Endpoint: ep, AccessKey: "bench", SecretKey: "bench-secret", Concurrency: workers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	spec := parseSpec(t, fmt.Sprintf(`
name: fault
objects: 50
size: 1KiB
mix: {get: 1}
concurrency: %d
rate: 100
stages:
  - {name: load, kind: prepare}
  - name: main
    duration: 12s
    events:
      - {name: stop, at: 2s, command: "touch '%s'"}
      - {name: start, at: 6s, command: "rm '%s'"}
`, workers, flag, flag))
	r := runWorkload(t, c, spec)
	main := stage(t, r, "main")
	defer func() {
		if t.Failed() {
			for _, e := range main.Events {
				t.Logf("event %s at %.3f s, took %.3f s", e.Name, e.At, e.Elapsed)
			}
			for _, s := range main.Series {
				t.Logf("second %6.3f: %3d ok, %3d errors, p50 %4.0f ms, p99 %4.0f ms", s.T, s.Operations, s.Errors, s.P50, s.P99)
			}
		}
	}()
	if len(main.Events) != 2 {
		t.Fatalf("events: %+v", main.Events)
	}
	stop, start := main.Events[0], main.Events[1]
	if stop.Name != "stop" || stop.ExitCode != 0 || stop.At < 2 || start.Name != "start" || start.ExitCode != 0 || start.At < 6 {
		t.Fatalf("events ran: %+v", main.Events)
	}
	// Nothing fails before the flag exists. Only the requests under way when it came (at most
	// one per worker) can succeed after it, so some whole second inside the 4 s of failure has
	// next to no successes: the dip is near 100%.
	if stop.Before.Errors != 0 || stop.Before.OpsPerSec <= 0 || stop.During.Errors == 0 || stop.Dip < 90 {
		t.Errorf("stop event: %+v", stop)
	}
	if main.Ops["get"].ErrorKinds["503 SlowDown"] == 0 {
		t.Errorf("errors by kind: %v", main.Ops["get"].ErrorKinds)
	}
	// Each event's phases divide the stage between them, every second once.
	for _, e := range main.Events {
		if ops, errs := e.Before.Operations+e.During.Operations+e.After.Operations, e.Before.Errors+e.During.Errors+e.After.Errors; ops != main.Total.Operations || errs != main.Total.Errors {
			t.Errorf("event %s: phases hold %d ok and %d errors, the stage %d and %d", e.Name, ops, errs, main.Total.Operations, main.Total.Errors)
		}
	}

	// The first three whole seconds after the heal in which the store answered at 90% or
	// more of its rate before the failure: recovery must be found by the end of them.
	healed := start.At + start.Elapsed
	var good []bench.Sample
	recoveredBy := -1.0
	for _, s := range main.Series {
		if s.T-1 < healed || s.OpsPerSec < 0.9*stop.Before.OpsPerSec {
			good = good[:0]
			continue
		}
		if good = append(good, s); len(good) == 3 {
			recoveredBy = good[0].T - 1 - stop.At
			break
		}
	}
	switch {
	case recoveredBy < 0:
		t.Logf("the machine never kept the schedule three seconds in a row after the heal: recovery not judged (reported %v)", stop.RecoveredAfter)
	case stop.RecoveredAfter == nil || *stop.RecoveredAfter > recoveredBy+0.002:
		t.Errorf("recovery after the stop event: %v, want by %.3f s", stop.RecoveredAfter, recoveredBy)
	case start.RecoveredAfter == nil || start.After.OpsPerSec <= 0:
		t.Errorf("after the start event: %+v", start)
	}
	// A second before the heal has at most the stragglers as successes, one per worker: once
	// 90% of the rate before is more than that, no second of the failure can pass for a good
	// one, and recovery cannot be found before the second in which the heal came.
	if stop.RecoveredAfter != nil && 0.9*stop.Before.OpsPerSec > workers && *stop.RecoveredAfter < start.At-1-stop.At-0.002 {
		t.Errorf("recovered %.3f s after the stop event, before the heal %.3f s after it", *stop.RecoveredAfter, start.At-stop.At)
	}
}

// interruptingClient cancels the run's context (a Ctrl-C) once a PUT has succeeded: an event
// of the run, not a moment on the clock, so that a slow machine cannot be interrupted before
// its first answer.
type interruptingClient struct {
	objclient.Client
	interrupt context.CancelFunc
}

func (c *interruptingClient) Put(ctx context.Context, bucket, key string, body io.Reader, size int64, opts objclient.PutOptions) (objclient.PutResult, error) {
	r, err := c.Client.Put(ctx, bucket, key, body, size, opts)
	if err == nil {
		c.interrupt()
	}
	return r, err
}

// TestInterruptedWorkload: Ctrl-C ends the stage without counting errors and skips the rest.
func TestInterruptedWorkload(t *testing.T) {
	const stageSeconds = 60
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &interruptingClient{Client: s3Client(t, startServer(t), "bench-secret"), interrupt: cancel}
	spec := parseSpec(t, fmt.Sprintf(`
name: long
objects: 20
size: 100
mix: {put: 1}
duration: %ds
stages:
  - {name: one}
  - {name: two}
`, stageSeconds))
	r, err := bench.RunWorkload(ctx, c, bench.WorkloadConfig{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	// The PUTs under way when the interruption came are cancelled, not failed; the one that
	// interrupted counts. A stage that ignored the interruption would run its whole minute.
	if !r.Interrupted || len(r.Stages) != 1 || r.Stages[0].Total.Errors != 0 || r.Stages[0].Total.Operations == 0 ||
		r.Stages[0].Seconds >= stageSeconds {
		t.Fatalf("interrupted: %+v / %+v", r, r.Stages)
	}
}

// TestWorkloadJSONNames pins the names scripts read (docs/bench.md).
func TestWorkloadJSONNames(t *testing.T) {
	c := s3Client(t, startServer(t), "bench-secret")
	// A count of operations, not a duration: GETs must be among them however slow the machine.
	spec := parseSpec(t, "name: j\nobjects: 10\nsize: 1KiB\nmix: {get: 1, put: 1}\noperations: 50\nconcurrency: 2\n")
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

// Samplers run through the whole run: a command's first number is recorded with its time since
// the run began, across both stages; a command that fails or prints no number is counted, with
// why. Samples are read only where they fell, never against a time.
func TestSamplersRecordOverTheRun(t *testing.T) {
	c := s3Client(t, startServer(t), "bench-secret")
	dir := t.TempDir()
	spec := parseSpec(t, fmt.Sprintf(`
name: sampled
objects: 20
size: 100
mix: {put: 1}
samplers:
  - {name: counter, command: 'echo x >> %s/n; wc -l < %s/n', every: 100ms}
  - {name: broken, command: 'echo none', every: 100ms}
stages:
  - {name: one, duration: 1s}
  - {name: two, duration: 1s}
`, dir, dir))
	r := runWorkload(t, c, spec)
	if len(r.Samplers) != 2 {
		t.Fatalf("samplers %+v", r.Samplers)
	}
	counter, broken := r.Samplers[0], r.Samplers[1]
	if len(counter.Points) == 0 || counter.Errors != 0 {
		t.Fatalf("counter: %+v", counter)
	}
	for i, p := range counter.Points {
		if p.Value != float64(i+1) || p.T < 0 || p.T > r.Seconds || (i > 0 && p.T < counter.Points[i-1].T) {
			t.Errorf("counter point %d: %+v (run of %v s)", i, p, r.Seconds)
		}
	}
	if len(broken.Points) != 0 || broken.Errors == 0 || !strings.Contains(broken.LastError, "does not start with a number") {
		t.Errorf("broken: %+v", broken)
	}
}

// An idle stage sends nothing for its duration, its series a second of zeros at a time, so that
// workloads started together stay aligned; probes are read over the whole run beside the
// samplers, and reported with them.
func TestIdleStageAndProbes(t *testing.T) {
	c := s3Client(t, startServer(t), "bench-secret")
	spec := parseSpec(t, `
name: paused
objects: 10
size: 100
mix: {put: 1}
prepopulate: false
stages:
  - {name: busy, duration: 1s}
  - {name: pause, kind: idle, duration: 2s}
  - {name: again, duration: 1s}
`)
	var reads atomic.Int64
	r, err := bench.RunWorkload(context.Background(), c, bench.WorkloadConfig{Spec: spec, Prefix: "idle-", Seed: 1,
		Probes: []bench.Probe{{Name: "reads", Every: 100 * time.Millisecond, Read: func(context.Context) (float64, error) {
			return float64(reads.Add(1)), nil
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	busy, pause, again := stage(t, r, "busy"), stage(t, r, "pause"), stage(t, r, "again")
	if busy.Total.Operations == 0 || again.Total.Operations == 0 {
		t.Errorf("busy %d, again %d operations", busy.Total.Operations, again.Total.Operations)
	}
	if pause.Kind != "idle" || pause.Total.Operations != 0 || pause.Total.Errors != 0 || pause.Concurrency != 0 {
		t.Errorf("idle stage: kind %s, %d operations, %d errors, concurrency %d", pause.Kind, pause.Total.Operations, pause.Total.Errors, pause.Concurrency)
	}
	if pause.Seconds < 1.9 || again.Start < busy.Start+busy.Seconds+1.9 {
		t.Errorf("the idle stage lasted %v s; stages start at %v, %v, %v", pause.Seconds, busy.Start, pause.Start, again.Start)
	}
	if len(pause.Series) < 2 {
		t.Errorf("idle series %+v", pause.Series)
	}
	for _, p := range pause.Series {
		if p.Operations != 0 {
			t.Errorf("idle second %+v", p)
		}
	}
	if _, ok := r.Ops["put"]; !ok || r.Ops["put"].Operations != busy.Total.Operations+again.Total.Operations {
		t.Errorf("measured puts %+v, stages %d + %d", r.Ops["put"], busy.Total.Operations, again.Total.Operations)
	}
	if len(r.Samplers) != 1 || r.Samplers[0].Name != "reads" || r.Samplers[0].Command != "" || len(r.Samplers[0].Points) < 20 {
		t.Fatalf("probes: %+v", r.Samplers)
	}
	last := r.Samplers[0].Points[len(r.Samplers[0].Points)-1]
	if last.T < again.Start {
		t.Errorf("the probe stopped at %v s, before the last stage (%v s)", last.T, again.Start)
	}
}
