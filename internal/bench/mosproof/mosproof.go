// Package mosproof owns the microstores' proof (issue 28, docs/microstores.md): on emulated
// nodes (the advisor's netns lab, each node a network namespace with a NIC rate and a CPU
// quota), it runs two tenants at once through real processes, a web tenant of small objects
// mostly read (the seed's workload A) and a backup tenant of large objects mostly written
// (workload D), on three layouts of the same machines:
//   - monolithic: one storage policy over every storage node, every proxy serving both;
//   - static: two microstores, each a policy over half the storage nodes and half the
//     proxies (the seed's configurations 2 and 3);
//   - dynamic: the same two microstores without proxies, every proxy in the free pool, and the
//     resource manager giving them out;
//   - sumo and sumo-lanes: one sumo node serving both tenants, without and with the request
//     lanes that keep large requests from starving small ones inside one process.
//
// A timeline (RunTimeline) runs the dynamic layout through four stages in which the mix
// changes, and charts the manager's allocation beside each tenant's latency.
//
// Clients reach the proxies through HAProxy configured by `cairn microstore haproxy` (made again
// and reloaded when the description changes), as an operator would run it. For each layout it
// measures the web tenant alone, then both tenants together once the backup has run for a
// warm-up, and reports A's p95 alone and with D, D's throughput and the total.
package mosproof

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/advisor/netlab"
	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/bench/workload"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/objclient"
)

// Layouts, in the order they run.
const (
	Monolithic = "monolithic"
	Static     = "static"
	Dynamic    = "dynamic"
	Sumo       = "sumo"
	SumoLanes  = "sumo-lanes"
)

// allLayouts are the layouts, in the order they run by default.
var allLayouts = []string{Monolithic, Static, Dynamic, Sumo, SumoLanes}

// Config is one proof run.
type Config struct {
	Binary  string // the cairn binary the nodes run
	Dir     string // the clusters' data, removed after each layout
	HAProxy string // the haproxy binary (default: from PATH, else /usr/sbin/haproxy)
	Layouts []string
	// Storage nodes per microstore (the monolithic layout has twice as many in one policy) and
	// proxies in all; each with its share of this machine.
	Storage, Proxies        int
	StorageNode, Proxy      netlab.Spec
	Sumo                    netlab.Spec // the sumo layouts' one node
	LaneShare               int         // the sumo-lanes layout's --lane-share
	Replicas                int
	WorkloadWindow          time.Duration // the nodes' workload monitors' window
	StageDuration           time.Duration // each of the timeline's four stages
	Warmup, Duration        time.Duration // the backup's head start, and each measured phase
	Web, Backup             *workload.Spec
	ManagerInterval         time.Duration // the dynamic layout's resource manager
	ManagerHigh, ManagerLow float64
	Logger                  *slog.Logger
}

// Defaults fills in what is not set: 2 storage nodes per microstore and 4 proxies, each held
// to a quarter of a core and 200 Mbit/s; a sumo node of a core and 800 Mbit/s (the four
// proxies' share) with a lane share of 1; 2 replicas; a 30 s workload window; 30 s of warm-up,
// 60 s phases and 90 s timeline stages; the seed's workloads A (8-64 KiB, 90% GETs, 8 clients)
// and D (4 MiB, 90% PUTs, 4 clients).
func (c *Config) Defaults() error {
	if len(c.Layouts) == 0 {
		c.Layouts = allLayouts
	}
	for _, l := range c.Layouts {
		if !slices.Contains(allLayouts, l) {
			return fmt.Errorf("mosproof: layout %q: want one of %v", l, allLayouts)
		}
	}
	if c.Storage == 0 {
		c.Storage = 2
	}
	if c.Proxies == 0 {
		c.Proxies = 4
	}
	if c.Proxies < 2 {
		return errors.New("mosproof: at least 2 proxies (one for each microstore)")
	}
	if c.StorageNode == (netlab.Spec{}) {
		c.StorageNode = netlab.Spec{CPU: 0.25, NICMbps: 200}
	}
	if c.Proxy == (netlab.Spec{}) {
		c.Proxy = netlab.Spec{CPU: 0.25, NICMbps: 200}
	}
	if c.Sumo == (netlab.Spec{}) {
		c.Sumo = netlab.Spec{CPU: 1, NICMbps: 800}
	}
	if c.LaneShare == 0 {
		c.LaneShare = 1
	}
	if c.LaneShare < 0 {
		return fmt.Errorf("mosproof: lane share %d", c.LaneShare)
	}
	if c.Replicas == 0 {
		c.Replicas = min(2, c.Storage)
	}
	if c.WorkloadWindow == 0 {
		c.WorkloadWindow = 30 * time.Second
	}
	if c.StageDuration == 0 {
		c.StageDuration = 90 * time.Second
	}
	if c.Warmup == 0 {
		c.Warmup = 30 * time.Second
	}
	if c.Duration == 0 {
		c.Duration = time.Minute
	}
	if c.ManagerInterval == 0 {
		c.ManagerInterval = 5 * time.Second
	}
	if c.HAProxy == "" {
		if p, err := exec.LookPath("haproxy"); err == nil {
			c.HAProxy = p
		} else {
			c.HAProxy = "/usr/sbin/haproxy"
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	var err error
	if c.Web == nil {
		if c.Web, err = workload.Parse("web", []byte("name: web\nobjects: 400\nsize: {min: 8KiB, max: 64KiB}\nmix: {get: 90, put: 10}\nconcurrency: 8\n")); err != nil {
			return err
		}
	}
	if c.Backup == nil {
		if c.Backup, err = workload.Parse("backup", []byte("name: backup\nobjects: 40\nsize: 4MiB\nmix: {put: 90, get: 10}\nconcurrency: 4\n")); err != nil {
			return err
		}
	}
	return nil
}

// Result is one layout's figures.
type Result struct {
	Layout string `json:"layout"`
	// The web tenant alone, then beside the backup.
	WebAloneP95Ms    float64 `json:"web_alone_p95_ms"`
	WebAloneOps      float64 `json:"web_alone_ops_per_sec"`
	WebWithBackupP95 float64 `json:"web_with_backup_p95_ms"`
	WebWithBackupOps float64 `json:"web_with_backup_ops_per_sec"`
	// The backup's throughput beside the web tenant, and both tenants' requests a second.
	BackupMBps float64 `json:"backup_mb_per_sec"`
	BackupOps  float64 `json:"backup_ops_per_sec"`
	TotalOps   float64 `json:"total_ops_per_sec"`
	Errors     int64   `json:"errors"`
	// Allocation is each microstore's proxies at the end (dynamic: as the manager left them).
	Allocation map[string]int `json:"allocation,omitempty"`
	Web        *bench.Report  `json:"web"`
	Backup     *bench.Report  `json:"backup"`
}

// Run runs every layout in turn.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if err := cfg.Defaults(); err != nil {
		return nil, err
	}
	if err := netlab.Available(); err != nil {
		return nil, err
	}
	var out []Result
	for _, l := range cfg.Layouts {
		r, err := runLayout(ctx, cfg, l)
		if err != nil {
			return out, fmt.Errorf("mosproof: %s: %w", l, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func runLayout(ctx context.Context, cfg Config, layout string) (res Result, err error) {
	res = Result{Layout: layout}
	r, err := setUp(ctx, cfg, layout)
	defer func() {
		if cerr := r.close(ctx); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err != nil {
		return res, err
	}
	webClient, backupClient, err := r.clients()
	if err != nil {
		return res, err
	}
	defer webClient.Close()
	defer backupClient.Close()

	// The web tenant alone.
	alone, err := runFor(ctx, webClient, cfg.Web, cfg.Duration, "web-", true, false)
	if err != nil {
		return res, err
	}
	res.WebAloneP95Ms, res.WebAloneOps = total(alone)

	// The backup starts; after its warm-up, both are measured together.
	bctx, stopBackup := context.WithCancel(ctx)
	defer stopBackup()
	var wg sync.WaitGroup
	var backupRep *bench.Report
	var backupErr error
	wg.Go(func() {
		backupRep, backupErr = runFor(bctx, backupClient, cfg.Backup, cfg.Warmup+cfg.Duration, "backup-", false, false)
	})
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(cfg.Warmup):
	}
	with, err := runFor(ctx, webClient, cfg.Web, cfg.Duration, "web-", false, true)
	wg.Wait()
	if err != nil {
		return res, err
	}
	if backupErr != nil {
		return res, backupErr
	}
	res.Web, res.Backup = with, backupRep
	res.WebWithBackupP95, res.WebWithBackupOps = total(with)
	// The backup's figures over the seconds the web tenant was measured beside it.
	for _, st := range backupRep.Stages {
		if st.Kind == string(workload.StageMain) {
			res.BackupMBps, res.BackupOps = seriesMean(st, cfg.Warmup.Seconds(), (cfg.Warmup + cfg.Duration).Seconds())
			res.Errors += st.Total.Errors
		}
	}
	res.TotalOps = res.WebWithBackupOps + res.BackupOps
	for _, st := range with.Stages {
		res.Errors += st.Total.Errors
	}
	if res.Allocation, err = r.allocation(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// tenant makes an account and a user, and returns its keys.
func tenant(ctx context.Context, adm *admin.Client, name string) (objclient.Config, error) {
	if _, err := adm.CreateAccount(ctx, name); err != nil {
		return objclient.Config{}, err
	}
	u, err := adm.CreateUser(ctx, name, "bench", true)
	if err != nil {
		return objclient.Config{}, err
	}
	return objclient.Config{AccessKey: u.AccessKey, SecretKey: u.SecretKey}, nil
}

// runFor runs a workload's mix for d, measured, with objects named from prefix: after writing
// every key once (unmeasured) when prepare, else on what is there (present: every key written
// by an earlier run with the prefix; not present: reads find only what this run wrote).
func runFor(ctx context.Context, c objclient.Client, spec *workload.Spec, d time.Duration, prefix string, prepare, present bool) (*bench.Report, error) {
	s := *spec
	s.Stages = nil
	s.Duration = workload.Duration(d)
	s.Operations = 0
	s.BucketPrefix, s.Buckets = bucketOf(spec), 1
	s.SetPrepopulate(prepare)
	if err := s.Normalize(); err != nil {
		return nil, err
	}
	return bench.RunWorkload(ctx, c, bench.WorkloadConfig{Spec: &s, Prefix: prefix, AssumePresent: present})
}

// seriesMean is a stage's mean MB/s and operations a second over its seconds in (from, to].
func seriesMean(st *bench.StageReport, from, to float64) (mbps, ops float64) {
	n := 0
	for _, smp := range st.Series {
		if smp.T > from && smp.T <= to {
			mbps, ops, n = mbps+smp.MBPerSec, ops+smp.OpsPerSec, n+1
		}
	}
	if n == 0 {
		return 0, 0
	}
	return mbps / float64(n), ops / float64(n)
}

// bucketOf is the one bucket a tenant's workload runs in.
func bucketOf(spec *workload.Spec) string { return "mos-" + spec.Name }

// total is a report's measured p95 (ms) and operations a second, all operations together.
func total(r *bench.Report) (p95, ops float64) {
	for _, st := range r.Stages {
		if st.Kind == string(workload.StageMain) {
			return st.Total.Latency.P95, st.Total.OpsPerSec
		}
	}
	return 0, 0
}

// allocated reports whether every microstore has a proxy.
func allocated(ctx context.Context, adm *admin.Client) bool {
	d, err := adm.Microstores(ctx)
	if err != nil || len(d.Microstores) == 0 {
		return false
	}
	return !slices.ContainsFunc(d.Microstores, func(m microstore.Microstore) bool { return len(m.Proxies) == 0 })
}

func waitFor(ctx context.Context, limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("not within " + limit.String())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
