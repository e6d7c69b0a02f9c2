// Package mosproof owns the microstores' proof (issue 28, docs/microstores.md): on emulated
// nodes (the advisor's netns lab, each node a network namespace with a NIC rate and a CPU
// quota), it runs two tenants at once through real processes, a web tenant of small objects
// mostly read (the seed's workload A) and a backup tenant of large objects mostly written
// (workload D), on three layouts of the same machines:
//   - monolithic: one storage policy over every storage node, every proxy serving both;
//   - static: two microstores, each a policy over half the storage nodes and half the
//     proxies (the seed's configurations 2 and 3);
//   - dynamic: the same two microstores without proxies, every proxy in the free pool, and the
//     resource manager giving them out.
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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-store/cairn/internal/admin"
	"github.com/cairn-store/cairn/internal/advisor/netlab"
	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/bench/workload"
	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/objclient"
	wl "github.com/cairn-store/cairn/internal/workload"
)

// Layouts, in the order they run.
const (
	Monolithic = "monolithic"
	Static     = "static"
	Dynamic    = "dynamic"
)

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
	Replicas                int
	Warmup, Duration        time.Duration // the backup's head start, and each measured phase
	Web, Backup             *workload.Spec
	ManagerInterval         time.Duration // the dynamic layout's resource manager
	ManagerHigh, ManagerLow float64
	Logger                  *slog.Logger
}

// Defaults fills in what is not set: 2 storage nodes per microstore and 4 proxies, each held
// to a quarter of a core and 200 Mbit/s; 2 replicas; 30 s of warm-up and 60 s phases; the
// seed's workloads A (8-64 KiB, 90% GETs, 8 clients) and D (4 MiB, 90% PUTs, 4 clients).
func (c *Config) Defaults() error {
	if len(c.Layouts) == 0 {
		c.Layouts = []string{Monolithic, Static, Dynamic}
	}
	for _, l := range c.Layouts {
		if l != Monolithic && l != Static && l != Dynamic {
			return fmt.Errorf("mosproof: layout %q: want monolithic, static or dynamic", l)
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
	if c.Replicas == 0 {
		c.Replicas = min(2, c.Storage)
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
	dir := filepath.Join(cfg.Dir, layout)
	var cl *localcluster.Cluster
	var lab *netlab.Lab
	var hp *haproxy
	defer func() {
		if hp != nil {
			hp.stop()
		}
		if cl != nil {
			cl.Close()
		}
		if lab != nil {
			if cerr := lab.Close(ctx); cerr != nil && err == nil {
				err = cerr
			}
		}
		os.RemoveAll(dir)
	}()
	if lab, err = netlab.Open(ctx, cfg.Logger); err != nil {
		return res, err
	}
	storage := 2 * cfg.Storage
	for i := 1; i <= storage; i++ {
		if _, err := lab.Add(ctx, "storage", i, cfg.StorageNode); err != nil {
			return res, err
		}
	}
	for i := 1; i <= cfg.Proxies; i++ {
		if _, err := lab.Add(ctx, "proxy", i, cfg.Proxy); err != nil {
			return res, err
		}
	}
	policies := []string{"gold"}
	if layout != Monolithic {
		policies = []string{fmt.Sprintf("gold@1-%d", cfg.Storage), fmt.Sprintf("silver@%d-%d", cfg.Storage+1, storage)}
	}
	args := []string{"--log-level", "warn", "--workload-window", "30s", "--microstore-manager-interval", "-1s"}
	if layout == Dynamic {
		args = []string{"--log-level", "warn", "--workload-window", "30s", "--microstore-manager-interval", cfg.ManagerInterval.String()}
		if cfg.ManagerHigh > 0 {
			args = append(args, "--microstore-manager-high", fmt.Sprint(cfg.ManagerHigh))
		}
		if cfg.ManagerLow > 0 {
			args = append(args, "--microstore-manager-low", fmt.Sprint(cfg.ManagerLow))
		}
	}
	ak, sk := randomHex(10), randomHex(20)
	if cl, err = localcluster.Start(ctx, localcluster.Config{Binary: cfg.Binary, Dir: dir, Storage: storage, Proxies: cfg.Proxies,
		Replicas: cfg.Replicas, Policies: policies, RootAccessKey: ak, RootSecretKey: sk, Args: args, Logger: cfg.Logger,
		NodeHost: lab.NodeHost, Wrap: lab.Wrap}); err != nil {
		return res, fmt.Errorf("starting the cluster: %w", err)
	}
	var proxies []string
	for _, n := range cl.Front() {
		proxies = append(proxies, n.Addr)
	}
	adm, err := admin.NewClient(admin.ClientConfig{Endpoint: cl.Front()[0].Endpoint(), AccessKey: ak, SecretKey: sk})
	if err != nil {
		return res, err
	}
	half := cfg.Proxies / 2
	switch layout {
	case Static:
		for _, m := range []microstore.Microstore{
			{Name: "small", Policy: "gold", Proxies: proxies[:half], Classes: []wl.Class{wl.SmallReads, wl.SmallWrites}},
			{Name: "large", Policy: "silver", Proxies: proxies[half:], Classes: []wl.Class{wl.LargeReads, wl.LargeWrites}},
		} {
			if _, err := adm.CreateMicrostore(ctx, m); err != nil {
				return res, err
			}
		}
	case Dynamic:
		for _, m := range []microstore.Microstore{
			{Name: "small", Policy: "gold", Classes: []wl.Class{wl.SmallReads, wl.SmallWrites}},
			{Name: "large", Policy: "silver", Classes: []wl.Class{wl.LargeReads, wl.LargeWrites}},
		} {
			if _, err := adm.CreateMicrostore(ctx, m); err != nil {
				return res, err
			}
		}
		if _, err := adm.SetMicrostorePool(ctx, proxies); err != nil {
			return res, err
		}
	}
	web, err := tenant(ctx, adm, "web")
	if err != nil {
		return res, err
	}
	backupLocation := "us-east-1:silver"
	if layout == Monolithic {
		backupLocation = "us-east-1:gold"
	}
	backup, err := tenant(ctx, adm, "backup")
	if err != nil {
		return res, err
	}
	// The buckets first, in their policies, so that HAProxy's map has them.
	for _, b := range []struct {
		t        objclient.Config
		spec     *workload.Spec
		location string
	}{{web, cfg.Web, "us-east-1:gold"}, {backup, cfg.Backup, backupLocation}} {
		b.t.Endpoint, b.t.BucketLocation = cl.Front()[0].Endpoint(), b.location
		c, err := objclient.New(b.t)
		if err != nil {
			return res, err
		}
		err = c.CreateBucket(ctx, bucketOf(b.spec))
		c.Close()
		if err != nil {
			return res, err
		}
	}
	if hp, err = startHAProxy(ctx, cfg, dir, adm, proxies); err != nil {
		return res, err
	}
	if layout == Dynamic {
		// The manager's equal shares first, then HAProxy follows every change.
		if err := waitFor(ctx, 2*time.Minute, func() bool { return allocated(ctx, adm) }); err != nil {
			return res, fmt.Errorf("the resource manager gave out no equal shares: %w", err)
		}
		fctx, stopFollowing := context.WithCancel(ctx)
		followed := make(chan struct{})
		go func() { defer close(followed); hp.follow(fctx, adm, proxies) }()
		defer func() { stopFollowing(); <-followed }() // before HAProxy stops
	}
	webClient, err := hp.client(web, cfg.Web.Concurrency, "us-east-1:gold")
	if err != nil {
		return res, err
	}
	defer webClient.Close()
	backupClient, err := hp.client(backup, cfg.Backup.Concurrency, backupLocation)
	if err != nil {
		return res, err
	}
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
	if d, err := adm.Microstores(ctx); err == nil && len(d.Microstores) > 0 {
		res.Allocation = map[string]int{"pool": len(d.Pool)}
		for _, m := range d.Microstores {
			res.Allocation[m.Name] = len(m.Proxies)
		}
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
	s.Prepopulate = &prepare
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

// haproxy is HAProxy in front of the proxies, configured from the description.
type haproxy struct {
	cfg      Config
	dir      string
	endpoint string
	mu       sync.Mutex
	cmd      *exec.Cmd
	gen      uint64
}

func startHAProxy(ctx context.Context, cfg Config, dir string, adm *admin.Client, proxies []string) (*haproxy, error) {
	port, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	h := &haproxy{cfg: cfg, dir: dir, endpoint: fmt.Sprintf("127.0.0.1:%d", port)}
	if err := h.reload(ctx, adm, proxies); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, time.Minute, func() bool {
		c, err := objclient.New(objclient.Config{Endpoint: "http://" + h.endpoint, AccessKey: "x", SecretKey: "y"})
		if err != nil {
			return false
		}
		defer c.Close()
		_, err = c.ListBuckets(ctx)
		var oe *objclient.Error
		return errors.As(err, &oe) // any answer of the store's: HAProxy passes requests on
	}); err != nil {
		return nil, fmt.Errorf("haproxy did not answer: %w", err)
	}
	return h, nil
}

// reload writes the configuration and its map from the description and the cluster's buckets,
// and starts HAProxy on them, the old one (if any) finishing its connections (-sf).
func (h *haproxy) reload(ctx context.Context, adm *admin.Client, proxies []string) error {
	d, err := adm.Microstores(ctx)
	if err != nil {
		return err
	}
	b, err := adm.MicrostoreBuckets(ctx)
	if err != nil {
		return err
	}
	mapFile := filepath.Join(h.dir, "haproxy-buckets.map")
	conf, m, err := d.HAProxy(microstore.HAProxyOptions{Bind: h.endpoint, Proxies: proxies, MapFile: mapFile}, b.Buckets)
	if err != nil {
		return err
	}
	cfgFile := filepath.Join(h.dir, "haproxy.cfg")
	if err := os.WriteFile(mapFile, m, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(cfgFile, conf, 0o644); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	args := []string{"-db", "-f", cfgFile}
	old := h.cmd
	if old != nil {
		args = append(args, "-sf", fmt.Sprint(old.Process.Pid))
	}
	cmd := exec.Command(h.cfg.HAProxy, args...)
	log, err := os.OpenFile(filepath.Join(h.dir, "haproxy.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting haproxy: %w", err)
	}
	go func() { cmd.Wait(); log.Close() }()
	h.cmd, h.gen = cmd, d.Generation
	return nil
}

// follow reloads HAProxy whenever the description changes (the resource manager's moves) or
// new buckets appear, until ctx ends.
func (h *haproxy) follow(ctx context.Context, adm *admin.Client, proxies []string) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
		d, err := adm.Microstores(ctx)
		h.mu.Lock()
		changed := err == nil && d.Generation != h.gen
		h.mu.Unlock()
		if changed {
			if err := h.reload(ctx, adm, proxies); err != nil {
				h.cfg.Logger.Warn("mosproof: reloading haproxy", "err", err)
			}
		}
	}
}

func (h *haproxy) client(t objclient.Config, concurrency int, location string) (objclient.Client, error) {
	t.Endpoint, t.Concurrency, t.BucketLocation = "http://"+h.endpoint, concurrency, location
	return objclient.New(t)
}

func (h *haproxy) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cmd != nil && h.cmd.Process != nil {
		h.cmd.Process.Signal(syscall.SIGTERM)
	}
}
