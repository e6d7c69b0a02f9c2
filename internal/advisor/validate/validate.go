// Package validate checks the advisor's model against real processes: it builds a
// scaled-down configuration on this machine — Cairn's proxy and storage processes (as
// `cairn local-cluster` runs them), each in a network namespace of its own, joined to a bridge
// by a veth pair shaped with tc's tbf to the node's NIC rate, and held to a CPU quota (a
// cgroup) in proportion to its node type's cores — runs a `cairn bench` workload against it,
// and sets the throughput measured against the throughput the model predicts for the same
// scaled configuration. A sweep of 1:N states the model's error; Refine feeds the measurements
// back into the demands (the refinement phase of the seeds' method).
//
// The scaling arithmetic, error statistics and refinement are pure (scale.go, refine.go); the
// namespaces, links and cgroups are package netlab's; this file runs a configuration.
package validate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/advisor"
	"github.com/cairn-store/cairn/internal/advisor/netlab"
	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/bench/workload"
	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/objclient"
)

// Config is how to run each validated configuration.
type Config struct {
	Binary string // the cairn binary the nodes run
	// Dir holds the clusters' data, one subdirectory per configuration; it must not exist,
	// and is removed afterwards.
	Dir     string
	Demands *advisor.Demands
	// The workload: one operation (get, put or head) on objects of Size bytes, over Objects
	// keys, by Concurrency clients for Duration after Warmup.
	Op          string
	Size        int64
	Objects     int64
	Concurrency int
	Duration    time.Duration
	Warmup      time.Duration
	Progress    io.Writer // one line per configuration; nil for none
	Logger      *slog.Logger
}

// Validate fills in defaults and checks the configuration.
func (c *Config) Validate() error {
	if c.Op == "" {
		c.Op = "get"
	}
	if c.Size == 0 {
		c.Size = 4 << 10
	}
	if c.Objects == 0 {
		c.Objects = 200
	}
	if c.Concurrency == 0 {
		c.Concurrency = 32
	}
	if c.Duration == 0 {
		c.Duration = 15 * time.Second
	}
	if c.Warmup == 0 {
		c.Warmup = 3 * time.Second
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Binary == "" || c.Dir == "" || c.Demands == nil:
		return fmt.Errorf("%w: a binary, a data directory and demands are required", ErrInvalidConfig)
	case c.Op != "get" && c.Op != "put" && c.Op != "head":
		return fmt.Errorf("%w: operation %q: want get, put or head", ErrInvalidConfig, c.Op)
	case c.Size < 1 || c.Size > workload.MaxObjectSize || c.Objects < 1 || c.Concurrency < 1:
		return fmt.Errorf("%w: size, objects and concurrency must be ≥ 1", ErrInvalidConfig)
	case c.Duration < time.Second:
		return fmt.Errorf("%w: duration %v: want at least 1s", ErrInvalidConfig, c.Duration)
	}
	if _, err := os.Stat(c.Dir); err == nil {
		return fmt.Errorf("%w: %s exists: give a directory that does not, validate makes its own clusters", ErrInvalidConfig, c.Dir)
	}
	return nil
}

// Workload is the model's view of the benchmark Config runs.
func (c *Config) Workload() (*advisor.Workload, error) {
	spec, err := c.spec(c.Op, 0, c.Duration)
	if err != nil {
		return nil, err
	}
	w, err := advisor.FromSpec(spec)
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	return w, nil
}

// Predicted is the model's side of a point.
type Predicted struct {
	OpsPerSec  float64 `json:"ops_per_sec"` // saturation (X_max)
	MBps       float64 `json:"mb_per_sec"`
	Bottleneck string  `json:"bottleneck"` // "proxy cpu", "storage nic out", ...
	// Second is the resource that saturates next, and its limit: how close the call was.
	Second      string  `json:"second"`
	SecondOps   float64 `json:"second_ops_per_sec"`
	ProxyCPUOps float64 `json:"proxy_cpu_limit_ops_per_sec"`
}

// Measured is the benchmark's side of a point.
type Measured struct {
	OpsPerSec float64 `json:"ops_per_sec"`
	MBps      float64 `json:"mb_per_sec"`
	Ops       int64   `json:"operations"`
	Errors    int64   `json:"errors"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	// Throttled is, per node, the fraction of CFS periods its quota ran out in: a node near 1
	// was CPU-bound.
	Throttled map[string]float64 `json:"throttled"`
	// CPU is, per node, the cores it used on average (to set against its quota), and
	// CPUPerOpMs the CPU milliseconds per request of the proxies and per storage visit of the
	// storage nodes (the demands' units), from /proc.
	CPU        map[string]float64 `json:"cpu_cores"`
	ProxyMsOp  float64            `json:"proxy_cpu_ms_per_request"`
	StorMsVist float64            `json:"storage_cpu_ms_per_visit"`
	// SumoMsOp is the CPU milliseconds per request of the sumo tier (its proxy and storage
	// work in one process: not to be split).
	SumoMsOp  float64 `json:"sumo_cpu_ms_per_request,omitempty"`
	ClientCPU float64 `json:"client_cpu_s"`
}

// Point is one validated configuration.
type Point struct {
	Shape     Shape     `json:"shape"`
	Predicted Predicted `json:"predicted"`
	Measured  Measured  `json:"measured"`
	Error     float64   `json:"error"` // (measured − predicted) / predicted
}

// Available says why this machine cannot run a validation, or nil (package netlab's needs).
func Available() error { return netlab.Available() }

// Run builds the shape on this machine, benchmarks it and returns the point. Namespaces,
// links, cgroups and the cluster's data are removed before it returns, whatever happened;
// leftovers of an earlier run are removed before it starts. cfg must have passed Validate
// (Sweep validates it, then creates Dir, which Validate would refuse).
func Run(ctx context.Context, cfg Config, s Shape) (pt Point, err error) {
	if err := s.Validate(); err != nil {
		return pt, err
	}
	w, err := cfg.Workload()
	if err != nil {
		return pt, err
	}
	pred, err := Predict(cfg.Demands, w, s)
	if err != nil {
		return pt, err
	}
	pt = Point{Shape: s, Predicted: summarize(pred)}
	log := cfg.Logger
	dir := filepath.Join(cfg.Dir, fmt.Sprintf("p%d-s%d-u%d", s.Proxies, s.Storage, s.Sumo))
	var cl *localcluster.Cluster
	var lab *netlab.Lab
	defer func() {
		// The nodes first, since a cgroup with processes in it cannot be removed.
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
	if lab, err = netlab.Open(ctx, log); err != nil {
		return pt, err
	}
	add := func(role string, count int, n Node) error {
		for i := 1; i <= count; i++ {
			if _, err := lab.Add(ctx, role, i, netlab.Spec{CPU: n.CPU, NICMbps: n.NICMbps}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add("storage", s.Storage, s.StorNode); err != nil {
		return pt, err
	}
	if err := add("proxy", s.Proxies, s.Proxy); err != nil {
		return pt, err
	}
	if err := add("sumo", s.Sumo, s.SumoNode); err != nil {
		return pt, err
	}
	nodes := lab.Nodes()
	ak, sk := randomHex(10), randomHex(20)
	lcfg := localcluster.Config{Binary: cfg.Binary, Dir: dir, Storage: s.Storage, Proxies: s.Proxies, Sumo: s.Sumo, Replicas: s.Replicas,
		RootAccessKey: ak, RootSecretKey: sk, Logger: log, NodeHost: lab.NodeHost, Wrap: lab.Wrap}
	if s.Proxies == 1 {
		lcfg.Listen = nodes["proxy1"].IP + ":0" // the proxy is the endpoint; more get a balancer here
	}
	if cl, err = localcluster.Start(ctx, lcfg); err != nil {
		return pt, fmt.Errorf("validate: starting the cluster: %w", err)
	}
	client, err := objclient.New(objclient.Config{Endpoint: cl.Endpoint, AccessKey: ak, SecretKey: sk, Concurrency: cfg.Concurrency})
	if err != nil {
		return pt, fmt.Errorf("validate: %w", err)
	}
	if cfg.Op != "put" { // reads need the objects: write every key once
		if _, err := cfg.bench(ctx, client, "put", cfg.Objects, 0, false); err != nil {
			return pt, err
		}
	}
	if _, err := cfg.bench(ctx, client, cfg.Op, 0, cfg.Warmup, true); err != nil {
		return pt, err
	}
	before := map[string][2]int64{}
	pids, cpu0 := map[string]int{}, map[string]float64{}
	for _, n := range cl.Nodes {
		if pids[n.Name], err = netlab.PidOf(n.DataDir); err != nil {
			return pt, err
		}
	}
	for name, n := range nodes {
		p, t := n.Throttled()
		before[name] = [2]int64{p, t}
		if cpu0[name], err = netlab.CPUSeconds(pids[name]); err != nil {
			return pt, err
		}
	}
	start := time.Now()
	rep, err := cfg.bench(ctx, client, cfg.Op, 0, cfg.Duration, true)
	if err != nil {
		return pt, err
	}
	elapsed := time.Since(start).Seconds()
	cpu := map[string]float64{}
	for name := range nodes {
		c, err := netlab.CPUSeconds(pids[name])
		if err != nil {
			return pt, err
		}
		cpu[name] = c - cpu0[name]
	}
	st := rep.Ops[cfg.Op]
	pt.Measured = Measured{OpsPerSec: st.OpsPerSec, MBps: st.MBPerSec, Ops: st.Operations, Errors: st.Errors,
		P50Ms: st.Latency.P50, P99Ms: st.Latency.P99, Throttled: map[string]float64{}, ClientCPU: rep.ClientCPU.UserSeconds + rep.ClientCPU.SystemSeconds}
	pt.Measured.CPU = map[string]float64{}
	var proxyCPU, storCPU, sumoCPU float64
	for name, c := range cpu {
		pt.Measured.CPU[name] = c / elapsed
		switch {
		case strings.HasPrefix(name, "proxy"):
			proxyCPU += c
		case strings.HasPrefix(name, "sumo"):
			sumoCPU += c
		default:
			storCPU += c
		}
	}
	if n := float64(st.Operations + st.Errors); n > 0 {
		visits := 1.0
		if cfg.Op == "put" {
			visits = float64(s.Replicas)
		}
		pt.Measured.ProxyMsOp = 1000 * proxyCPU / n
		pt.Measured.StorMsVist = 1000 * storCPU / (n * visits)
		pt.Measured.SumoMsOp = 1000 * sumoCPU / n
	}
	for name, n := range nodes {
		p, t := n.Throttled()
		if dp := p - before[name][0]; dp > 0 {
			pt.Measured.Throttled[name] = float64(t-before[name][1]) / float64(dp)
		}
	}
	if st.Errors > st.Operations/100 {
		return pt, fmt.Errorf("validate: %d errors in %d operations (node logs in %s are removed; rerun with a longer --warmup or fewer clients)", st.Errors, st.Operations, dir)
	}
	pt.Error = RelError(pt.Predicted.OpsPerSec, pt.Measured.OpsPerSec)
	return pt, nil
}

// Sweep runs shape with storage nodes (or, for sumo shapes, sumo nodes) from..to, one
// configuration at a time.
func Sweep(ctx context.Context, cfg Config, s Shape, from, to int) ([]Point, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	defer os.RemoveAll(cfg.Dir)
	var pts []Point
	for n := from; n <= to; n++ {
		sh := s
		if s.IsSumo() {
			sh.Sumo = n
		} else {
			sh.Storage = n
		}
		sh.Replicas = min(s.Replicas, n)
		pt, err := Run(ctx, cfg, sh)
		if err != nil {
			return pts, fmt.Errorf("validate: %s: %w", sh.Label(), err)
		}
		fmt.Fprintf(cfg.Progress, "validate: %s  predicted %8.1f ops/s (%s)  measured %8.1f ops/s  error %+6.1f%%\n",
			sh.Label(), pt.Predicted.OpsPerSec, pt.Predicted.Bottleneck, pt.Measured.OpsPerSec, 100*pt.Error)
		pts = append(pts, pt)
	}
	return pts, nil
}

// bench runs op: ops operations with sequential keys (a fill), or for d.
func (c *Config) bench(ctx context.Context, client objclient.Client, op string, ops int64, d time.Duration, present bool) (*bench.Report, error) {
	spec, err := c.spec(op, ops, d)
	if err != nil {
		return nil, err
	}
	rep, err := bench.RunWorkload(ctx, client, bench.WorkloadConfig{Spec: spec, Prefix: "v-", AssumePresent: present, Seed: 1})
	if err != nil {
		return nil, fmt.Errorf("validate: %s of %d bytes: %w", op, c.Size, err)
	}
	if st := rep.Ops[op]; st == nil || st.Operations == 0 {
		return nil, fmt.Errorf("validate: %s of %d bytes: no operation succeeded", op, c.Size)
	}
	return rep, nil
}

func (c *Config) spec(op string, ops int64, d time.Duration) (*workload.Spec, error) {
	no := false
	spec := &workload.Spec{
		Name: fmt.Sprintf("validate-%s-%s", op, strings.ReplaceAll(workload.FormatSize(c.Size), " ", "")), Buckets: 1, BucketPrefix: "validate",
		Objects: c.Objects, Size: workload.ConstantSize(c.Size), Mix: workload.Mix{workload.Op(op): 1}, Concurrency: c.Concurrency, Prepopulate: &no,
	}
	if ops > 0 {
		spec.Operations = ops
		spec.Keys = workload.KeyDist{Kind: workload.KeysSequential}
	} else {
		spec.Duration = workload.Duration(d)
	}
	if err := spec.Normalize(); err != nil {
		return nil, fmt.Errorf("validate: %s: %w", op, err)
	}
	return spec, nil
}

// summarize is the throughput side of a prediction.
func summarize(p advisor.Prediction) Predicted {
	out := Predicted{OpsPerSec: p.MaxOpsPerSec, MBps: p.MaxMBps, Bottleneck: p.Bottleneck.Tier + " " + p.Bottleneck.Resource}
	for _, r := range p.Resources {
		name := r.Tier + " " + r.Resource
		if name == "proxy cpu" {
			out.ProxyCPUOps = r.LimitOpsPerSec
		}
		if name == out.Bottleneck {
			continue
		}
		if out.SecondOps == 0 || r.LimitOpsPerSec < out.SecondOps {
			out.Second, out.SecondOps = name, r.LimitOpsPerSec
		}
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
