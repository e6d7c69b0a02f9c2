package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-store/cairn/internal/bench/workload"
	"github.com/cairn-store/cairn/internal/objclient"
)

// WorkloadConfig configures RunWorkload.
type WorkloadConfig struct {
	Spec   *workload.Spec // normalized
	Prefix string         // key prefix: objects are ObjectKey(Prefix, i)
	// Progress receives a live status line each second; nil for none. Terminal says it is a
	// terminal, where the line is rewritten in place; elsewhere a line is printed every
	// ProgressEvery (default 5 s), so that logs stay readable.
	Progress      io.Writer
	Terminal      bool
	ProgressEvery time.Duration
	// AssumePresent declares the whole key space already written (by an earlier fill with the
	// same prefix): reads start at once, without a prepare stage.
	AssumePresent bool
	Seed          uint64 // 0: from the clock
	// EventEnv is added to the environment of event and sampler commands.
	EventEnv []string
	// Probes are read over the run beside the workload's samplers, and reported with them.
	Probes []Probe
}

// RunWorkload runs every stage of cfg.Spec against c and reports each one, and the measured
// (main and ramp) stages together in Report.Ops. A failure to create the buckets is an error
// before any load; failures during the run are counted, never fatal. A cancelled ctx (Ctrl-C)
// ends the stage under way and skips the rest, except cleanup, so that the report still covers
// what ran.
func RunWorkload(ctx context.Context, c objclient.Client, cfg WorkloadConfig) (*Report, error) {
	spec := cfg.Spec
	if spec == nil {
		return nil, errors.New("bench: no workload")
	}
	stages := spec.Resolved()
	if len(stages) == 0 {
		return nil, errors.New("bench: workload has no stages")
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	buckets := spec.BucketNames()
	for _, b := range buckets {
		if err := c.CreateBucket(ctx, b); err != nil {
			return nil, fmt.Errorf("bench: creating bucket %q: %w", b, err)
		}
	}
	var maxSize int64
	for _, st := range stages {
		maxSize = max(maxSize, st.Size.MaxSize())
	}
	body, err := payload(maxSize)
	if err != nil {
		return nil, err
	}
	ks := newKeyspace(spec.Objects, buckets, cfg.Prefix)
	if cfg.AssumePresent {
		ks.markAllPresent()
	}

	r := &Report{
		Kind: "run", Protocol: c.Protocol(), Workload: spec.Name, Endpoint: c.Endpoint(),
		Bucket: buckets[0], Prefix: cfg.Prefix, Concurrency: spec.Concurrency,
		Ops: map[string]*OpStats{},
	}
	if spec.Size.Min == 0 && spec.Size.Max == 0 && len(spec.Size.Buckets) == 0 {
		r.ObjectSize = spec.Size.Constant
	}
	cpu0 := cpuNow()
	r.Start = time.Now()
	stopSamplers := startSamplers(ctx, spec.Samplers, cfg.Probes, r.Start, cfg.EventEnv)
	measured := map[workload.Op]*recorder{}
	var measuredSeconds float64
	for i, st := range stages {
		if ctx.Err() != nil && st.Kind != workload.StageCleanup {
			continue
		}
		sctx := ctx
		if st.Kind == workload.StageCleanup && ctx.Err() != nil {
			// Cleanup after Ctrl-C still runs, bounded, so that a benchmark does not leave
			// its objects behind; a second Ctrl-C is the operator's business.
			var cancel context.CancelFunc
			sctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
			defer cancel()
		}
		sr, rec := runStage(sctx, c, ks, body, cfg, st, seed+uint64(i)*7919, r.Start)
		r.Stages = append(r.Stages, sr)
		if st.Kind == workload.StageMain || st.Kind == workload.StageRamp {
			measuredSeconds += sr.Seconds
			for op, or := range rec.ops {
				if measured[op] == nil {
					measured[op] = newRecorder()
				}
				measured[op].merge(or)
			}
		}
		if st.Kind == workload.StageCleanup {
			for _, b := range buckets {
				// Only empty buckets go; one the user filled otherwise stays (409, ignored).
				_ = c.DeleteBucket(sctx, b)
			}
		}
	}
	r.Samplers = stopSamplers()
	el := time.Since(r.Start)
	r.Seconds = round3(el.Seconds())
	for op, rec := range measured {
		st := rec.stats(time.Duration(measuredSeconds * float64(time.Second)))
		r.Ops[string(op)] = &st
	}
	r.ClientCPU = cpuSince(cpu0, r.totalRequests(), el)
	r.Interrupted = ctx.Err() != nil
	return r, nil
}

// runStage runs one stage and reports it, with its recorder for the run's totals.
func runStage(ctx context.Context, c objclient.Client, ks *keyspace, body []byte, cfg WorkloadConfig,
	st workload.ResolvedStage, seed uint64, runStart time.Time) (*StageReport, *stageRecorder) {
	start := time.Now()
	var conc atomic.Int64
	conc.Store(int64(st.Concurrency))
	rec := newStageRecorder(start, &conc)
	l := &loop{
		c: c, ks: ks, body: body, rec: rec, size: st.Size, listPrefix: cfg.Prefix,
		mix: st.Mix.Picker(), keys: st.Keys.Picker(ks.n, seed),
	}
	sr := &StageReport{Name: st.Name, Kind: string(st.Kind), Concurrency: st.Concurrency, TargetRate: st.Rate,
		Start: round3(start.Sub(runStart).Seconds())}
	cpu0 := cpuNow()

	stopProgress := startProgress(cfg, st, rec, start)
	var events []*eventRun
	var ewg sync.WaitGroup
	for _, ev := range st.Events {
		e := &eventRun{ev: ev}
		events = append(events, e)
		ewg.Add(1)
		go func() { defer ewg.Done(); e.run(ctx, start, cfg.EventEnv, st.Name, c.Endpoint()) }()
	}

	switch st.Kind {
	case workload.StagePrepare:
		l.sweep(ctx, workload.OpPut, st.Concurrency, seed)
	case workload.StageCleanup:
		l.sweep(ctx, workload.OpDelete, st.Concurrency, seed)
	case workload.StageRamp:
		sr.Ramp = runRamp(ctx, l, st, &conc, seed)
		sr.Concurrency = int(conc.Load())
	case workload.StageIdle:
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(stopTime(start, st))):
		}
	default:
		l.run(ctx, phase{concurrency: st.Concurrency, rate: st.Rate, stop: stopTime(start, st), limit: st.Operations, seed: seed})
	}
	end := time.Now()
	// Events scheduled after the load ended never run; the ones under way are waited for.
	for _, e := range events {
		e.cancelIfPending()
	}
	ewg.Wait()
	stopProgress()

	el := end.Sub(start)
	sr.Seconds = round3(el.Seconds())
	sr.Ops = map[string]*OpStats{}
	for op, or := range rec.ops {
		s := or.stats(el)
		sr.Ops[string(op)] = &s
	}
	sr.Total = rec.total.stats(el)
	sr.Late, sr.NoKey = l.late.Load(), l.noKey.Load()
	sr.Series = rec.series.finish(end)
	for _, e := range events {
		if er, ok := e.report(sr.Series); ok {
			sr.Events = append(sr.Events, er)
		}
	}
	sr.ClientCPU = cpuSince(cpu0, sr.Total.Operations+sr.Total.Errors, el)
	sr.Interrupted = ctx.Err() != nil
	return sr, rec
}

// stopTime is when a timed stage ends; a stage limited by operation count alone runs until
// the count is reached (with a day's cap so that a typo cannot run forever unnoticed).
func stopTime(start time.Time, st workload.ResolvedStage) time.Time {
	if st.Duration > 0 {
		return start.Add(st.Duration)
	}
	return start.Add(24 * time.Hour)
}

// startProgress prints a live status line each second until the returned func is called.
func startProgress(cfg WorkloadConfig, st workload.ResolvedStage, rec *stageRecorder, start time.Time) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	every := cfg.ProgressEvery
	if every <= 0 {
		every = 5 * time.Second
	}
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		lastPrint := start
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				rec.series.tick(now)
				if cfg.Progress == nil {
					continue
				}
				if !cfg.Terminal && now.Sub(lastPrint) < every {
					continue
				}
				lastPrint = now
				line := progressLine(st, rec, now.Sub(start))
				if cfg.Terminal {
					fmt.Fprintf(cfg.Progress, "\r\033[K%s", line)
				} else {
					fmt.Fprintln(cfg.Progress, line)
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		if cfg.Progress != nil {
			if cfg.Terminal {
				fmt.Fprint(cfg.Progress, "\r\033[K")
			}
			tot := rec.total.stats(time.Since(start))
			fmt.Fprintf(cfg.Progress, "stage %s (%s): %d ops, %.1f ops/s, %.2f MB/s, p50 %.3f ms, p99 %.3f ms, %d errors in %.1fs\n",
				st.Name, st.Kind, tot.Operations, tot.OpsPerSec, tot.MBPerSec, tot.Latency.P50, tot.Latency.P99, tot.Errors,
				time.Since(start).Seconds())
		}
	}
}

func progressLine(st workload.ResolvedStage, rec *stageRecorder, el time.Duration) string {
	line := fmt.Sprintf("[%s %s", st.Name, el.Truncate(time.Second))
	if st.Duration > 0 && st.Kind != workload.StageRamp {
		line += "/" + st.Duration.String()
	}
	line += "]"
	s, ok := rec.series.last()
	if !ok {
		return line + " starting"
	}
	return line + fmt.Sprintf(" c=%d %.0f ops/s %.2f MB/s p50 %.2f ms p99 %.2f ms errors %d",
		s.Concurrency, s.OpsPerSec, s.MBPerSec, s.P50, s.P99, s.Errors)
}
