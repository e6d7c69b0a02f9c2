// Package calibrate measures the per-request resource demands the advisor's model rests on:
// it runs a Cairn cluster on this machine (`cairn local-cluster`'s processes: storage nodes
// and a proxy), drives it with `cairn bench` workloads one operation and object size at a
// time, and reads what each role used from the operating system (/proc/<pid>/stat for CPU,
// /proc/<pid>/io for bytes) and from the storage nodes' /metrics (fsyncs). It owns that I/O;
// the arithmetic from counters to a demand point is in compute.go.
package calibrate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-store/cairn/internal/advisor"
	"github.com/cairn-store/cairn/internal/advisor/netlab"
	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/bench/workload"
	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/engine"
	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/objclient"
)

// ErrInvalidConfig is wrapped by a Config that cannot run.
var ErrInvalidConfig = errors.New("calibrate: invalid configuration")

// Config is what to measure and how.
type Config struct {
	Binary string // the cairn binary the nodes run
	// Dir is the cluster's data directory: created, and removed afterwards unless Keep. It
	// must not exist, so that a calibration never reuses another cluster's data or keys.
	Dir         string
	Keep        bool
	Storage     int           // storage nodes, default 4
	Replicas    int           // default 3
	Concurrency int           // clients, default 16
	Duration    time.Duration // per measured class, default 10s
	Sizes       []int64       // object sizes, default 4 KiB and 1 MiB
	Objects     int64         // key space of each size, default 200
	Progress    io.Writer     // one line per class; nil for none
	ProcDir     string        // default /proc
	// NetNS runs every node in a network namespace of its own, linked to a bridge (package
	// netlab, as validate builds its clusters, without CPU quotas or shaping), so that requests
	// cross a veth, a bridge and a qdisc as packets between machines cross a NIC's driver and
	// stack, instead of loopback, which costs less CPU per request. Needs root.
	NetNS bool
	// SaturatedStorage measures the storage CPU per visit on a second cluster of one storage
	// node and one replica, saturated, instead of on the configured cluster, and the saving of
	// a visit served in process on a third of one sumo node (see Run).
	SaturatedStorage bool
	Logger           *slog.Logger // nil: none
	// Target, when set, is a running cluster to measure instead of one calibrate starts:
	// Binary, Dir, Keep, Storage and NetNS do not apply, Replicas must be its policy's.
	Target *Target
}

// Target is a cluster already running on this machine — Cairn's, or OpenStack Swift's
// servers — whose processes calibrate reads while it drives them through Client.
type Target struct {
	Client objclient.Config
	// ProxyProcs and StorageProcs select the tiers' processes by their command lines
	// (arguments joined by spaces): every process that matches counts, workers and parents.
	ProxyProcs, StorageProcs *regexp.Regexp
	// Metrics are the storage nodes' /metrics endpoints (Cairn's), whose fsync counters
	// count the syncs; without them Disk's flushes do (a server without metrics).
	Metrics []string
	// Disk is the block device (as /proc/diskstats names it: vda, loop0) whose flush requests
	// count the storage tier's syncs when there are no Metrics; "" leaves syncs unmeasured.
	Disk string
	// Name says what the cluster is, for the demands' source ("OpenStack Swift 2.30").
	Name string
	// InlineThreshold is the object size up to which its storage nodes keep objects in their
	// LSM (a Cairn cluster: engine.DefaultInlineThreshold unless configured otherwise; Swift:
	// 0, every object is a file).
	InlineThreshold int64
}

// Validate fills in defaults and checks the configuration.
func (c *Config) Validate() error {
	if c.Storage == 0 {
		c.Storage = 4
	}
	if c.Replicas == 0 {
		c.Replicas = min(3, c.Storage)
	}
	if c.Concurrency == 0 {
		c.Concurrency = 16
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if len(c.Sizes) == 0 {
		c.Sizes = []int64{4 << 10, 1 << 20}
	}
	if c.Objects == 0 {
		c.Objects = 200
	}
	if c.ProcDir == "" {
		c.ProcDir = "/proc"
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if t := c.Target; t != nil {
		switch {
		case t.ProxyProcs == nil || t.StorageProcs == nil:
			return fmt.Errorf("%w: a running cluster needs patterns for its proxy and storage processes", ErrInvalidConfig)
		case c.Replicas < 1 || c.Concurrency < 1 || c.Duration < time.Second || c.Objects < 1:
			return fmt.Errorf("%w: replicas, concurrency, objects ≥ 1 and duration ≥ 1s", ErrInvalidConfig)
		}
		for _, s := range c.Sizes {
			if s < 1 || s > workload.MaxObjectSize {
				return fmt.Errorf("%w: object size %d", ErrInvalidConfig, s)
			}
		}
		return nil
	}
	switch {
	case c.Binary == "" || c.Dir == "":
		return fmt.Errorf("%w: a binary and a data directory are required", ErrInvalidConfig)
	case c.Storage < 1 || c.Replicas < 1 || c.Replicas > c.Storage:
		return fmt.Errorf("%w: %d replicas over %d storage nodes", ErrInvalidConfig, c.Replicas, c.Storage)
	case c.Concurrency < 1 || c.Duration < time.Second || c.Objects < 1:
		return fmt.Errorf("%w: concurrency, objects ≥ 1 and duration ≥ 1s", ErrInvalidConfig)
	}
	for _, s := range c.Sizes {
		if s < 1 || s > workload.MaxObjectSize {
			return fmt.Errorf("%w: object size %d", ErrInvalidConfig, s)
		}
	}
	if _, err := os.Stat(c.Dir); err == nil {
		return fmt.Errorf("%w: %s exists: give a directory that does not, calibrate makes its own cluster", ErrInvalidConfig, c.Dir)
	}
	return nil
}

// step is one run of a calibration: a measured class, or a fill that prepares one.
type step struct {
	op      string
	measure bool
	ops     int64 // 0: run for Duration
	seq     bool  // sequential keys (a fill, a delete of every key once)
}

// runner is one calibration in progress.
type runner struct {
	cfg     Config
	client  objclient.Client
	proxies []int    // pids
	storage []int    // pids
	nodes   []string // the storage nodes' endpoints, for their /metrics
	disk    string   // the device whose flushes count syncs, without nodes
}

// Run measures the demands. It takes minutes: each class runs for Duration, after fills, on
// up to three clusters in turn. The configured one (Storage nodes, Replicas) gives every figure
// but the storage nodes' CPU: there each storage node carries a fraction of the visits and
// idles between them, and a Go server that idles spends more CPU per request than a saturated
// one, which batches its wake-ups. A node's demand matters to the model where the node is the
// bottleneck, saturated; so the storage CPU per visit comes from a second cluster of one
// storage node holding the one replica, which the clients keep saturated, and the proxy's CPU
// per write is split per request and per replica from the two. A third, of one sumo node,
// gives what a visit served in process saves. SaturatedStorage false: the configured cluster
// alone.
func Run(ctx context.Context, cfg Config) (_ *advisor.Demands, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Target != nil {
		return runTarget(ctx, cfg)
	}
	defer func() {
		if !cfg.Keep {
			os.RemoveAll(cfg.Dir)
		}
	}()
	d, err := runLocal(ctx, cfg, localShape{name: "cluster", storage: cfg.Storage, replicas: cfg.Replicas})
	if err != nil || !cfg.SaturatedStorage {
		return d, err
	}
	// With namespaces the node is also held to a CPU quota, so that it saturates on cores of
	// its own, as a bottleneck node does, instead of competing with the clients and the proxy
	// for the machine's.
	quota := 0.0
	if cfg.NetNS {
		quota = saturatedStorageCores
	}
	one := d // a configured cluster of one storage node and one replica, without a quota, is it
	if cfg.Storage != 1 || cfg.Replicas != 1 || quota > 0 {
		fmt.Fprintf(cfg.Progress, "calibrate: storage CPU at saturation: one storage node, one replica%s\n",
			map[bool]string{true: fmt.Sprintf(", held to %.2f cores", quota)}[quota > 0])
		if one, err = runLocal(ctx, cfg, localShape{name: "one-node", storage: 1, replicas: 1, cpu: quota}); err != nil {
			return nil, err
		}
		if err := takeStorageCPU(d, one); err != nil {
			return nil, err
		}
		splitProxyCPU(d, one, cfg.Replicas)
	}
	// A sumo node reaches its own storage in process, not over HTTP: a third cluster of one
	// sumo node, saturated as the storage node was, says what a visit saves that way.
	fmt.Fprintf(cfg.Progress, "calibrate: a visit in process: one sumo node, one replica%s\n",
		map[bool]string{true: fmt.Sprintf(", held to %.2f cores", quota)}[quota > 0])
	sumo, err := runLocal(ctx, cfg, localShape{name: "sumo", sumo: 1, replicas: 1, cpu: quota})
	if err != nil {
		return nil, err
	}
	localVisitSaving(d, one, sumo)
	d.Source += "; storage CPU per visit from a second cluster of one saturated storage node (one replica), the proxy's CPU per write split into a part per request and a part per replica from the two, and what a visit a sumo node serves in process saves from a third of one sumo node"
	return d, d.Validate()
}

// localVisitSaving sets each point's saving of a visit served in process: what one proxy and
// one storage node spend on a one-replica request (one) less what one sumo node spends on it
// (sumo: all its CPU is counted as storage CPU, it has no proxy process).
func localVisitSaving(d, one, sumo *advisor.Demands) {
	for op, pts := range d.Ops {
		for i := range pts {
			p := &pts[i]
			find := func(dm *advisor.Demands) (advisor.Point, bool) {
				j := slices.IndexFunc(dm.Ops[op], func(q advisor.Point) bool { return q.Size == p.Size })
				if j < 0 {
					return advisor.Point{}, false
				}
				return dm.Ops[op][j], true
			}
			o, ok1 := find(one)
			u, ok2 := find(sumo)
			if ok1 && ok2 {
				p.LocalVisitSavingSeconds = max(0, o.ProxyCPUSeconds+o.StorageCPUSeconds-u.ProxyCPUSeconds-u.StorageCPUSeconds)
			}
		}
	}
}

// localShape is one of calibrate's local clusters: storage nodes behind one proxy, or sumo
// nodes alone; cpu > 0 holds each storage or sumo node to that many cores (NetNS only).
type localShape struct {
	name                    string
	storage, sumo, replicas int
	cpu                     float64
}

// takeStorageCPU sets each point's storage CPU to the same point's of sat.
func takeStorageCPU(d, sat *advisor.Demands) error {
	for op, pts := range d.Ops {
		for i := range pts {
			j := slices.IndexFunc(sat.Ops[op], func(p advisor.Point) bool { return p.Size == pts[i].Size })
			if j < 0 {
				return fmt.Errorf("calibrate: the one-node cluster has no %s of %d bytes", op, pts[i].Size)
			}
			pts[i].StorageCPUSeconds = sat.Ops[op][j].StorageCPUSeconds
		}
	}
	d.Background.StorageCores = max(d.Background.StorageCores, sat.Background.StorageCores)
	return nil
}

// splitProxyCPU divides the proxy's CPU per write (PUT, DELETE: one visit per replica) into a
// part per request and a part per visit, from the same write with replicas visits (d) and with
// one (one). Noise that makes the one-replica write dearer leaves it all per request.
func splitProxyCPU(d, one *advisor.Demands, replicas int) {
	if replicas < 2 {
		return
	}
	for _, op := range []string{"put", "delete"} {
		for i := range d.Ops[op] {
			p := &d.Ops[op][i]
			j := slices.IndexFunc(one.Ops[op], func(q advisor.Point) bool { return q.Size == p.Size })
			if j < 0 {
				continue
			}
			total, r := p.ProxyCPUSeconds, float64(replicas)
			perVisit := (total - one.Ops[op][j].ProxyCPUSeconds) / (r - 1)
			if perVisit <= 0 {
				continue
			}
			if fixed := total - r*perVisit; fixed < 0 {
				// The one-replica write came out cheaper than one visit (two clusters, two
				// loads): all of it per visit, so that the model gives back the measured total.
				perVisit = total / r
			}
			p.ProxyCPUSeconds = max(0, total-r*perVisit)
			p.ProxyCPUPerVisitSeconds = perVisit
		}
	}
}

// saturatedStorageCores is the CPU quota of the saturated storage node with --netns: below a
// core, so that the node saturates while the machine has room for the clients and the proxy.
const saturatedStorageCores = 0.5

// runLocal starts the cluster sh in cfg.Dir/sh.name and measures it.
func runLocal(ctx context.Context, cfg Config, sh localShape) (_ *advisor.Demands, err error) {
	storage, replicas := sh.storage, sh.replicas
	cfg.Storage, cfg.Replicas = storage, replicas
	proxies := 1
	if sh.sumo > 0 {
		proxies = 0
	}
	ak, sk := randomHex(10), randomHex(20)
	lcfg := localcluster.Config{Binary: cfg.Binary, Dir: filepath.Join(cfg.Dir, sh.name), Storage: storage, Proxies: proxies, Sumo: sh.sumo,
		Replicas: replicas, RootAccessKey: ak, RootSecretKey: sk, Logger: cfg.Logger}
	var lab *netlab.Lab
	var cl *localcluster.Cluster
	defer func() {
		if cl != nil {
			cl.Close()
		}
		if lab != nil {
			lab.Close(ctx)
		}
	}()
	if cfg.NetNS {
		if lab, err = startLab(ctx, cfg, sh); err != nil {
			return nil, err
		}
		lcfg.NodeHost, lcfg.Wrap = lab.NodeHost, lab.Wrap
		if p, ok := lab.Nodes()["proxy1"]; ok {
			lcfg.Listen = p.IP + ":0"
		}
	}
	cl, err = localcluster.Start(ctx, lcfg)
	if err != nil {
		return nil, fmt.Errorf("calibrate: starting the cluster: %w", err)
	}
	r := &runner{cfg: cfg}
	for _, n := range cl.Nodes {
		pid, err := readPid(n.DataDir + ".pid")
		if err != nil {
			return nil, err
		}
		if n.Role == "proxy" {
			r.proxies = append(r.proxies, pid)
		} else { // storage and sumo nodes: a sumo node's CPU all counts as storage CPU
			r.storage = append(r.storage, pid)
			r.nodes = append(r.nodes, n.Endpoint())
		}
	}
	if r.client, err = objclient.New(objclient.Config{Endpoint: cl.Endpoint, AccessKey: ak, SecretKey: sk, Concurrency: cfg.Concurrency}); err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	d := &advisor.Demands{
		Schema:          advisor.DemandsSchema,
		Source:          fmt.Sprintf("measured by cairn advisor calibrate: local cluster of 1 proxy and %d storage processes, %d replicas, %d clients, %v per class%s", storage, replicas, cfg.Concurrency, cfg.Duration, map[bool]string{true: ", every node in a network namespace of its own (--netns)"}[cfg.NetNS]),
		MeasuredOn:      machine(replicas, cfg.NetNS),
		InlineThreshold: engine.DefaultInlineThreshold, // the nodes run with the default
		Ops:             map[string][]advisor.Point{},
	}
	// What a node costs with nothing to do, before it holds anything: after a moment for
	// the start's own work (first replication pass, index build).
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Second):
	}
	if d.Background, err = r.background(ctx, min(cfg.Duration, 5*time.Second)); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Progress, "calibrate: idle CPU %.4f cores per proxy, %.4f per storage node\n", d.Background.ProxyCores, d.Background.StorageCores)
	return r.measure(ctx, d)
}

// runTarget measures a cluster that runs already (Config.Target).
func runTarget(ctx context.Context, cfg Config) (*advisor.Demands, error) {
	t := cfg.Target
	r := &runner{cfg: cfg, nodes: t.Metrics, disk: t.Disk}
	var err error
	if r.proxies, err = findProcs(cfg.ProcDir, t.ProxyProcs); err != nil {
		return nil, err
	}
	if r.storage, err = findProcs(cfg.ProcDir, t.StorageProcs); err != nil {
		return nil, err
	}
	if len(r.proxies) == 0 || len(r.storage) == 0 {
		return nil, fmt.Errorf("%w: %d processes match %q and %d match %q: is the cluster running here?", ErrInvalidConfig,
			len(r.proxies), t.ProxyProcs, len(r.storage), t.StorageProcs)
	}
	if r.disk != "" && len(r.nodes) == 0 {
		if _, err := diskFlushes(cfg.ProcDir, r.disk); err != nil {
			return nil, err
		}
	}
	cc := t.Client
	cc.Concurrency = cfg.Concurrency
	if r.client, err = objclient.New(cc); err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	syncs := "fsyncs from the storage nodes' /metrics"
	switch {
	case len(r.nodes) == 0 && r.disk != "":
		syncs = "fsyncs counted as flushes of " + r.disk
	case len(r.nodes) == 0:
		syncs = "fsyncs not measured"
	}
	name := t.Name
	if name == "" {
		name = "a running cluster"
	}
	m := machine(cfg.Replicas, false)
	m.Note = fmt.Sprintf("%s on this machine: %d proxy processes (%s), %d storage processes (%s)", name, len(r.proxies), t.ProxyProcs, len(r.storage), t.StorageProcs)
	d := &advisor.Demands{
		Schema: advisor.DemandsSchema,
		Source: fmt.Sprintf("measured by cairn advisor calibrate on %s (%s protocol), %d replicas, %d clients, %v per class, %s",
			name, protocolOf(cc), cfg.Replicas, cfg.Concurrency, cfg.Duration, syncs),
		MeasuredOn:      m,
		InlineThreshold: t.InlineThreshold,
		Ops:             map[string][]advisor.Point{},
	}
	if d, err = r.measure(ctx, d); err != nil {
		return nil, err
	}
	if socketBytesUnseen(d) {
		assumeBackendBytes(d)
		d.Source += fmt.Sprintf("; its proxy's socket bytes are not in /proc/<pid>/io (recv/send): backend bytes assumed, the body plus %d bytes of headers out and %d back per visit",
			assumedRequestHeaderBytes, assumedResponseHeaderBytes)
		fmt.Fprintf(cfg.Progress, "calibrate: the proxy's socket bytes are not visible in /proc/<pid>/io: backend bytes assumed (body + headers)\n")
	}
	return d, nil
}

func protocolOf(c objclient.Config) string {
	if c.Protocol == "" {
		return objclient.ProtocolS3
	}
	return c.Protocol
}

// measure runs every class and fills in d.
func (r *runner) measure(ctx context.Context, d *advisor.Demands) (*advisor.Demands, error) {
	cfg := r.cfg
	for i, size := range cfg.Sizes {
		prefix := fmt.Sprintf("s%d-", size)
		bucket := fmt.Sprintf("calibrate-%d", size)
		steps := []step{{"put", true, 0, false}, {"put", false, cfg.Objects, true}, {"get", true, 0, false}}
		if i == 0 {
			steps = append(steps, step{"head", true, 0, false}, step{"delete", true, cfg.Objects, true})
		}
		for _, st := range steps {
			m, err := r.run(ctx, bucket, prefix, st.op, size, st.ops, st.seq, cfg.Concurrency, st.op != "put")
			if err != nil {
				return nil, err
			}
			if !st.measure {
				continue
			}
			p, err := m.point()
			if err != nil {
				return nil, err
			}
			if st.op == "head" || st.op == "delete" {
				p.Size = 0 // their cost does not depend on the object's size
			}
			d.Ops[st.op] = append(d.Ops[st.op], p)
			fmt.Fprintf(cfg.Progress, "calibrate: %-6s %-8s %6d ops, proxy %.3f ms CPU, storage %.3f ms CPU per visit, %.2f fsyncs per visit\n",
				st.op, workload.FormatSize(size), m.Ops, p.ProxyCPUSeconds*1000, p.StorageCPUSeconds*1000, p.Fsyncs)
		}
	}
	// The latency no resource accounts for: a HEAD's median with one client, an idle cluster.
	m, err := r.run(ctx, fmt.Sprintf("calibrate-%d", cfg.Sizes[0]), fmt.Sprintf("s%d-", cfg.Sizes[0]), "put", cfg.Sizes[0], cfg.Objects, true, cfg.Concurrency, false)
	if err == nil {
		r.cfg.Duration = min(cfg.Duration, 3*time.Second)
		m, err = r.run(ctx, fmt.Sprintf("calibrate-%d", cfg.Sizes[0]), fmt.Sprintf("s%d-", cfg.Sizes[0]), "head", cfg.Sizes[0], 0, false, 1, true)
	}
	if err != nil {
		return nil, err
	}
	d.BaseLatencyMs = m.P50Ms
	if d.ECEncodeMBpsPerCore, err = measureEncode(); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Progress, "calibrate: base latency %.3f ms, EC 4+2 encoding %.0f MB/s per core\n", d.BaseLatencyMs, d.ECEncodeMBpsPerCore)
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("calibrate: the measured demands: %w", err)
	}
	return d, nil
}

// background is the CPU each node uses with no requests, over d of an idle cluster. Its
// daemons' work grows with the data they replicate and audit, up to their rate limits
// (--audit-bytes-per-second); measured on an empty cluster, this is the floor, not that.
func (r *runner) background(ctx context.Context, d time.Duration) (advisor.Background, error) {
	before, err := r.snapshot()
	if err != nil {
		return advisor.Background{}, err
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return advisor.Background{}, ctx.Err()
	case <-time.After(d):
	}
	after, err := r.snapshot()
	if err != nil {
		return advisor.Background{}, err
	}
	secs := time.Since(start).Seconds()
	u := after.sub(before)
	return advisor.Background{
		ProxyCores:   nonNeg(u.Proxy.CPUSeconds / (secs * float64(len(r.proxies)))),
		StorageCores: nonNeg(u.Storage.CPUSeconds / (secs * float64(len(r.storage)))),
	}, nil
}

// startLab makes the network namespaces of sh's nodes (links unshaped; storage and sumo nodes
// held to sh.cpu cores when > 0, the proxy to none).
func startLab(ctx context.Context, cfg Config, sh localShape) (*netlab.Lab, error) {
	if err := netlab.Available(); err != nil {
		return nil, fmt.Errorf("calibrate: --netns: %w", err)
	}
	lab, err := netlab.Open(ctx, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	add := func(role string, n int, spec netlab.Spec) error {
		for i := 1; i <= n; i++ {
			if _, err := lab.Add(ctx, role, i, spec); err != nil {
				lab.Close(ctx)
				return fmt.Errorf("calibrate: %w", err)
			}
		}
		return nil
	}
	proxies := 1
	if sh.sumo > 0 {
		proxies = 0
	}
	if err := add("storage", sh.storage, netlab.Spec{CPU: sh.cpu}); err != nil {
		return nil, err
	}
	if err := add("sumo", sh.sumo, netlab.Spec{CPU: sh.cpu}); err != nil {
		return nil, err
	}
	if err := add("proxy", proxies, netlab.Spec{}); err != nil {
		return nil, err
	}
	return lab, nil
}

// run runs one class (op on objects of size) and returns what the cluster used during it.
func (r *runner) run(ctx context.Context, bucket, prefix, op string, size, ops int64, seq bool, conc int, present bool) (measurement, error) {
	no := false
	spec := &workload.Spec{
		Name: "calibrate-" + op, Buckets: 1, BucketPrefix: bucket, Objects: r.cfg.Objects,
		Size: workload.ConstantSize(size), Mix: workload.Mix{workload.Op(op): 1}, Concurrency: conc, Prepopulate: &no,
	}
	if seq {
		spec.Keys = workload.KeyDist{Kind: workload.KeysSequential}
	}
	if ops > 0 {
		spec.Operations = ops
	} else {
		spec.Duration = workload.Duration(r.cfg.Duration)
	}
	if err := spec.Normalize(); err != nil {
		return measurement{}, fmt.Errorf("calibrate: %s: %w", op, err)
	}
	before, err := r.snapshot()
	if err != nil {
		return measurement{}, err
	}
	rep, err := bench.RunWorkload(ctx, r.client, bench.WorkloadConfig{Spec: spec, Prefix: prefix, AssumePresent: present, Seed: 1})
	if err != nil {
		return measurement{}, fmt.Errorf("calibrate: %s of %d bytes: %w", op, size, err)
	}
	after, err := r.snapshot()
	if err != nil {
		return measurement{}, err
	}
	st := rep.Ops[op]
	if st == nil || st.Operations == 0 {
		return measurement{}, fmt.Errorf("%w: %s of %d bytes", ErrNoOperations, op, size)
	}
	if st.Errors > st.Operations/100 {
		return measurement{}, fmt.Errorf("calibrate: %s of %d bytes: %d errors in %d operations", op, size, st.Errors, st.Operations)
	}
	visits := 1.0
	if op == "put" || op == "delete" {
		visits = float64(r.cfg.Replicas)
	}
	return measurement{Op: op, Size: size, Ops: st.Operations, Body: float64(st.Bytes) / float64(st.Operations), Visits: visits,
		Used: after.sub(before), P50Ms: st.Latency.P50, Replicas: r.cfg.Replicas}, nil
}

func (r *runner) snapshot() (snapshot, error) {
	var s snapshot
	for _, pid := range r.proxies {
		p, err := readProc(r.cfg.ProcDir, pid)
		if err != nil {
			return s, err
		}
		s.Proxy = s.Proxy.add(p)
	}
	for _, pid := range r.storage {
		p, err := readProc(r.cfg.ProcDir, pid)
		if err != nil {
			return s, err
		}
		s.Storage = s.Storage.add(p)
	}
	for _, ep := range r.nodes {
		n, err := scrapeSyncs(httpClient, ep)
		if err != nil {
			return s, err
		}
		s.Syncs += n
	}
	if len(r.nodes) == 0 && r.disk != "" {
		n, err := diskFlushes(r.cfg.ProcDir, r.disk)
		if err != nil {
			return s, err
		}
		s.Syncs = n
	}
	return s, nil
}

// measureEncode is the proxy's EC 4+2 encoding speed: bytes of fragments (data and parity)
// made per CPU second of this process, in MB.
func measureEncode() (float64, error) {
	s, err := ec.New(4, 2, 0)
	if err != nil {
		return 0, fmt.Errorf("calibrate: %w", err)
	}
	data := make([]byte, 16<<20)
	if _, err := rand.Read(data); err != nil {
		return 0, fmt.Errorf("calibrate: %w", err)
	}
	ws := make([]io.Writer, s.Fragments())
	for i := range ws {
		ws[i] = io.Discard
	}
	start := cpuNow()
	var made float64
	for cpuNow()-start < 0.5 {
		if _, err := s.Encode(bytes.NewReader(data), ws); err != nil {
			return 0, fmt.Errorf("calibrate: encoding: %w", err)
		}
		made += float64(len(data)) * 6 / 4
	}
	return made / (cpuNow() - start) / 1e6, nil
}

// cpuNow is this process's CPU seconds so far (user + system).
func cpuNow() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("calibrate: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("calibrate: %s: %w", filepath.Base(path), err)
	}
	return pid, nil
}

// machine describes this machine, where the demands are measured.
func machine(replicas int, netns bool) advisor.Machine {
	m := advisor.Machine{Cores: runtime.NumCPU(), Date: time.Now().UTC().Format("2006-01-02"), Replicas: replicas,
		Note: "every process on this machine, loopback networking, each storage node one device (listings included)"}
	if netns {
		m.Note = "every process on this machine, each node in a network namespace joined by a veth pair to a bridge (tbf at 10 Gbit/s, no CPU quota), each storage node one device (listings included)"
	}
	m.Host, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 7 {
				m.Commit = s.Value[:7]
			}
		}
	}
	return m
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
