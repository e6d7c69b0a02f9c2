package mosproof

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/advisor/netlab"
	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/bench/workload"
	"github.com/cairn-store/cairn/internal/objclient"
)

// timelineStages are the timeline's four stages, in order: the web tenant alone, the backup
// alone, both, then the web tenant stops (the backup alone again, from a shared allocation).
var timelineStages = []struct {
	name        string
	web, backup bool
}{{"web", true, false}, {"backup", false, true}, {"both", true, true}, {"web-stops", false, true}}

// TimelineStage is one stage of the timeline.
type TimelineStage struct {
	Name   string `json:"name"`
	Web    bool   `json:"web"`    // the web tenant ran in it
	Backup bool   `json:"backup"` // the backup ran in it
	// Each tenant's figures over the stage (zero when it was idle).
	WebP95Ms    float64 `json:"web_p95_ms"`
	WebOps      float64 `json:"web_ops_per_sec"`
	BackupP95Ms float64 `json:"backup_p95_ms"`
	BackupMBps  float64 `json:"backup_mb_per_sec"`
	Errors      int64   `json:"errors"`
	// The proxies of each microstore and of the pool at the stage's end; how many times the
	// allocation changed during the stage; and the seconds from the stage's start to its last
	// change (the time the manager took to settle; -1: no change).
	Allocation   map[string]int `json:"allocation"`
	Changes      int            `json:"changes"`
	SettledAfter float64        `json:"settled_after_seconds"`
}

// Timeline is RunTimeline's result: each stage, and both tenants' bench reports, each with
// the allocation over the run as samplers (charted beside the stages by the bench's HTML).
type Timeline struct {
	StageSeconds    float64         `json:"stage_seconds"`
	ManagerInterval float64         `json:"manager_interval_seconds"`
	WorkloadWindow  float64         `json:"workload_window_seconds"`
	Stages          []TimelineStage `json:"stages"`
	Web             *bench.Report   `json:"web"`
	Backup          *bench.Report   `json:"backup"`
}

// allocSample is the allocation at T seconds since the run began.
type allocSample struct {
	T     float64
	Alloc map[string]int
}

// allocWatch reads the allocation every second, keeping each reading for the timeline and the
// last one for the reports' probes (so that both reports chart the same readings).
type allocWatch struct {
	mu      sync.Mutex
	last    map[string]int
	samples []allocSample
}

func (w *allocWatch) run(ctx context.Context, r *rig, start time.Time) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		if a, err := r.allocation(ctx); err == nil && a != nil {
			w.mu.Lock()
			w.last = a
			w.samples = append(w.samples, allocSample{T: time.Since(start).Seconds(), Alloc: a})
			w.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probes chart the proxies of each microstore and of the pool.
func (w *allocWatch) probes() []bench.Probe {
	var out []bench.Probe
	for _, name := range []string{"small", "large", "pool"} {
		out = append(out, bench.Probe{Name: name + " proxies", Read: func(context.Context) (float64, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.last == nil {
				return 0, fmt.Errorf("no allocation read yet")
			}
			return float64(w.last[name]), nil
		}})
	}
	return out
}

// settle is the allocation at the end of (from, to], how many times it changed within, and the
// seconds from `from` to its last change (-1: none).
func (w *allocWatch) settle(from, to float64) (last map[string]int, changes int, after float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	after = -1
	for _, s := range w.samples {
		if s.T > to {
			break
		}
		if s.T > from && last != nil && !maps.Equal(s.Alloc, last) {
			changes++
			after = s.T - from
		}
		last = s.Alloc
	}
	return last, changes, after
}

// RunTimeline runs the dynamic layout through the timeline's four stages, each
// cfg.StageDuration long, with both tenants' load following them, and reports how the resource
// manager moved proxies in each and what each tenant saw.
func RunTimeline(ctx context.Context, cfg Config) (tl *Timeline, err error) {
	if err := cfg.Defaults(); err != nil {
		return nil, err
	}
	if err := netlab.Available(); err != nil {
		return nil, err
	}
	r, err := setUp(ctx, cfg, Dynamic)
	defer func() {
		if cerr := r.close(ctx); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("mosproof: timeline: %w", err)
	}
	webClient, backupClient, err := r.clients()
	if err != nil {
		return nil, err
	}
	defer webClient.Close()
	defer backupClient.Close()
	// The web tenant's objects first, so that its reads find them from the first second.
	if _, err := prepare(ctx, webClient, cfg.Web, "web-"); err != nil {
		return nil, err
	}

	tl = &Timeline{StageSeconds: cfg.StageDuration.Seconds(), ManagerInterval: cfg.ManagerInterval.Seconds(),
		WorkloadWindow: cfg.WorkloadWindow.Seconds()}
	start := time.Now()
	watch := &allocWatch{}
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); watch.run(wctx, r, start) }()
	var wg sync.WaitGroup
	var webErr, backupErr error
	wg.Go(func() {
		tl.Web, webErr = runStages(ctx, webClient, cfg.Web, cfg.StageDuration, "web-", true, func(i int) bool { return timelineStages[i].web }, watch.probes())
	})
	wg.Go(func() {
		tl.Backup, backupErr = runStages(ctx, backupClient, cfg.Backup, cfg.StageDuration, "backup-", false, func(i int) bool { return timelineStages[i].backup }, watch.probes())
	})
	wg.Wait()
	stopWatch()
	<-watched
	if err := errors.Join(webErr, backupErr); err != nil {
		return tl, err
	}
	// The stages' bounds are the web tenant's (both runs began within milliseconds), in
	// seconds since start.
	offset := tl.Web.Start.Sub(start).Seconds()
	for i, ts := range timelineStages {
		web, backup := tl.Web.Stages[i], tl.Backup.Stages[i]
		st := TimelineStage{Name: ts.name, Web: ts.web, Backup: ts.backup,
			WebP95Ms: web.Total.Latency.P95, WebOps: web.Total.OpsPerSec,
			BackupP95Ms: backup.Total.Latency.P95, BackupMBps: backup.Total.MBPerSec,
			Errors: web.Total.Errors + backup.Total.Errors}
		from := offset + web.Start
		st.Allocation, st.Changes, st.SettledAfter = watch.settle(from, from+web.Seconds)
		tl.Stages = append(tl.Stages, st)
	}
	return tl, nil
}

// prepare writes every object of a workload once, unmeasured.
func prepare(ctx context.Context, c objclient.Client, spec *workload.Spec, prefix string) (*bench.Report, error) {
	s := *spec
	s.Stages = []workload.Stage{{Name: "prepare", Kind: workload.StagePrepare}}
	s.Samplers = nil
	s.BucketPrefix, s.Buckets = bucketOf(spec), 1
	if err := s.Normalize(); err != nil {
		return nil, err
	}
	return bench.RunWorkload(ctx, c, bench.WorkloadConfig{Spec: &s, Prefix: prefix})
}

// runStages runs a workload's mix through the timeline's stages, each d long: measured where
// active says it runs, idle elsewhere. present: every key was written by an earlier prepare.
func runStages(ctx context.Context, c objclient.Client, spec *workload.Spec, d time.Duration, prefix string, present bool,
	active func(int) bool, probes []bench.Probe) (*bench.Report, error) {
	s := *spec
	s.Stages = nil
	for i, ts := range timelineStages {
		kind := workload.StageIdle
		if active(i) {
			kind = workload.StageMain
		}
		s.Stages = append(s.Stages, workload.Stage{Name: ts.name, Kind: kind, Duration: workload.Duration(d)})
	}
	s.Duration, s.Operations = workload.Duration(d), 0
	s.BucketPrefix, s.Buckets = bucketOf(spec), 1
	s.SetPrepopulate(false)
	if err := s.Normalize(); err != nil {
		return nil, err
	}
	return bench.RunWorkload(ctx, c, bench.WorkloadConfig{Spec: &s, Prefix: prefix, AssumePresent: present, Probes: probes})
}
