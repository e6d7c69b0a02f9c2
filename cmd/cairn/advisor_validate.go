package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/advisor"
	"github.com/cairn-store/cairn/internal/advisor/validate"
	"github.com/cairn-store/cairn/internal/bench/workload"
)

type validateFlags struct {
	sweep, size, demands, jsonOut, refine string
	catalog, proxyType, storageType       string
	recommendation                        string
	cpuPerCore, mbpsPerGbps               float64
	shape                                 validate.Shape
}

func newAdvisorValidateCommand() *cobra.Command {
	var (
		cfg validate.Config
		f   validateFlags
	)
	cmd := &cobra.Command{
		Use:   "validate [--sweep 1:N=1..4]",
		Short: "Build scaled-down configurations on this machine (namespaces, tc, cgroups), measure them and state the model's error",
		Long: "Runs each configuration of the sweep as Cairn processes, every node in a network namespace of\n" +
			"its own with its link shaped by tc (tbf) and its CPU held to a cgroup quota, benchmarks it with\n" +
			"one operation, and prints the throughput the model predicts for the same scaled configuration\n" +
			"against the throughput measured. Needs root. Node sizes come from --proxy-cpu/--storage-cpu and\n" +
			"--proxy-nic/--storage-nic, or from --catalog node types scaled by --cpu-per-core and\n" +
			"--mbit-per-gbps. See docs/advisor.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			return runValidate(cmd.OutOrStdout(), cmd.ErrOrStderr(), &cfg, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.sweep, "sweep", "1:N=1..4", "configurations: P proxies to N storage nodes, N from..to; sumo:N=1..4 for N sumo nodes")
	fl.IntVar(&f.shape.Replicas, "replicas", 3, "replicas (fewer when N is smaller)")
	fl.Float64Var(&f.shape.Proxy.CPU, "proxy-cpu", 0.4, "a proxy's CPU quota, in cores of this machine")
	fl.Float64Var(&f.shape.StorNode.CPU, "storage-cpu", 0.2, "a storage node's CPU quota, in cores of this machine")
	fl.Float64Var(&f.shape.SumoNode.CPU, "sumo-cpu", 0.3, "with --sweep sumo:…: a sumo node's CPU quota, in cores of this machine")
	fl.Float64Var(&f.shape.SumoNode.NICMbps, "sumo-nic", 1000, "with --sweep sumo:…: a sumo node's link rate, Mbit/s each way")
	fl.Float64Var(&f.shape.Proxy.NICMbps, "proxy-nic", 1000, "a proxy's link rate, Mbit/s each way")
	fl.Float64Var(&f.shape.StorNode.NICMbps, "storage-nic", 1000, "a storage node's link rate, Mbit/s each way")
	fl.StringVar(&f.catalog, "catalog", "", "take node sizes from this catalog's --proxy-type and --storage-type (first NIC option), scaled")
	fl.StringVar(&f.recommendation, "recommendation", "", "take node sizes from this `recommend --json` result's best configuration (its proxy and storage groups), scaled")
	fl.StringVar(&f.proxyType, "proxy-type", "", "with --catalog: the proxies' node type")
	fl.StringVar(&f.storageType, "storage-type", "", "with --catalog: the storage nodes' node type")
	fl.Float64Var(&f.cpuPerCore, "cpu-per-core", 0.025, "with --catalog or --recommendation: cores of this machine per core of a node type")
	fl.Float64Var(&f.mbpsPerGbps, "mbit-per-gbps", 20, "with --catalog or --recommendation: Mbit/s of a shaped link per Gbit/s of a NIC")
	fl.StringVar(&cfg.Op, "op", "get", "the operation benchmarked: get, put or head")
	fl.StringVar(&f.size, "size", "4KiB", "object size")
	fl.Int64Var(&cfg.Objects, "objects", 200, "objects (key space)")
	fl.IntVar(&cfg.Concurrency, "concurrency", 32, "concurrent clients: enough to saturate the bottleneck")
	fl.DurationVar(&cfg.Duration, "duration", 12*time.Second, "measured time per configuration")
	fl.DurationVar(&cfg.Warmup, "warmup", 3*time.Second, "unmeasured time before it")
	fl.StringVar(&cfg.Dir, "data", "cairn-validate", "data directory of the clusters: must not exist; removed afterwards")
	fl.StringVar(&f.demands, "demands", "", "per-request demands file (default: the shipped one)")
	fl.StringVar(&f.jsonOut, "json", "", "write the points as JSON here (-: stdout)")
	fl.StringVar(&f.refine, "refine", "", "write demands refined by the measurements here (the refinement phase)")
	return cmd
}

func runValidate(stdout, stderr io.Writer, cfg *validate.Config, f *validateFlags) error {
	proxies, from, to, err := validate.ParseSweep(f.sweep)
	if err != nil {
		return err
	}
	f.shape.Proxies = proxies
	if proxies == 0 && f.catalog != "" {
		return fmt.Errorf("%w: a sumo sweep takes its node from --sumo-cpu and --sumo-nic or --recommendation, not --catalog", validate.ErrInvalidConfig)
	}
	if f.catalog != "" {
		cat, err := advisor.LoadCatalog(f.catalog)
		if err != nil {
			return err
		}
		pick := func(name string) (*advisor.NodeType, error) {
			for i := range cat.NodeTypes {
				if cat.NodeTypes[i].Name == name && len(cat.NodeTypes[i].NICs) > 0 {
					return &cat.NodeTypes[i], nil
				}
			}
			return nil, fmt.Errorf("%w: no node type %q with a NIC in %s", validate.ErrInvalidConfig, name, f.catalog)
		}
		pt, err := pick(f.proxyType)
		if err != nil {
			return err
		}
		st, err := pick(f.storageType)
		if err != nil {
			return err
		}
		f.shape.Proxy = validate.Scale(pt, pt.NICs[0], f.cpuPerCore, f.mbpsPerGbps)
		f.shape.StorNode = validate.Scale(st, st.NICs[0], f.cpuPerCore, f.mbpsPerGbps)
	}
	if f.recommendation != "" {
		b, err := os.ReadFile(f.recommendation)
		if err != nil {
			return fmt.Errorf("advisor validate: --recommendation: %w", err)
		}
		var res advisor.Result
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("advisor validate: --recommendation %s: %w", f.recommendation, err)
		}
		nodes, err := validate.FromRecommendation(res.Best, f.cpuPerCore, f.mbpsPerGbps)
		if err != nil {
			return err
		}
		if sumo := nodes.SumoNode.CPU > 0; sumo != (proxies == 0) {
			return fmt.Errorf("%w: the recommendation is %s, the sweep %q: give --sweep sumo:N=… for sumo nodes, P:N=… for proxies and storage nodes", validate.ErrInvalidConfig, res.Best.Topology, f.sweep)
		}
		f.shape.Proxy, f.shape.StorNode, f.shape.SumoNode = nodes.Proxy, nodes.StorNode, nodes.SumoNode
	}
	if cfg.Size, err = workload.ParseSize(f.size); err != nil {
		return fmt.Errorf("advisor validate: --size: %w", err)
	}
	if f.demands != "" {
		cfg.Demands, err = advisor.LoadDemands(f.demands)
	} else {
		cfg.Demands, err = advisor.DefaultDemands()
	}
	if err != nil {
		return err
	}
	if err := validate.Available(); err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("advisor validate: %w", err)
	}
	cfg.Binary = bin
	cfg.Progress = stderr
	if err := cfg.Validate(); err != nil {
		return err
	}
	sh := f.shape
	if sh.IsSumo() {
		sh.Sumo = to
	} else {
		sh.Storage = to
	}
	sh.Replicas = min(sh.Replicas, to)
	if err := sh.Validate(); err != nil {
		return err
	}
	// The model takes each quota as the node's own; when they add up to more than the machine
	// has beside the client, the nodes compete and the comparison says little.
	if total, have := sh.TotalCPU(), float64(runtime.NumCPU()); total > have-0.5 {
		fmt.Fprintf(stderr, "advisor validate: warning: the %s configuration's quotas add up to %.2f cores of this machine's %.0f; leave at least half a core to the client (lower --cpu-per-core or the quotas)\n", sh.Label(), total, have)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pts, err := validate.Sweep(ctx, *cfg, f.shape, from, to)
	if len(pts) > 0 {
		printValidate(stdout, cfg, f.shape, pts)
	}
	if err != nil {
		return err
	}
	if f.jsonOut != "" {
		b, err := json.MarshalIndent(map[string]any{"sweep": f.sweep, "op": cfg.Op, "size": cfg.Size, "concurrency": cfg.Concurrency,
			"duration_s": cfg.Duration.Seconds(), "demands_source": cfg.Demands.Source, "points": pts, "median_abs_error": medianErr(pts)}, "", "  ")
		if err != nil {
			return err
		}
		if f.jsonOut == "-" {
			_, err = stdout.Write(append(b, '\n'))
		} else {
			err = os.WriteFile(f.jsonOut, append(b, '\n'), 0o644)
		}
		if err != nil {
			return fmt.Errorf("advisor validate: --json: %w", err)
		}
	}
	if f.refine != "" {
		w, err := cfg.Workload()
		if err != nil {
			return err
		}
		d, refs, err := validate.Refine(cfg.Demands, w, pts)
		if err != nil {
			return err
		}
		y, err := d.YAML()
		if err != nil {
			return err
		}
		if err := os.WriteFile(f.refine, y, 0o644); err != nil {
			return fmt.Errorf("advisor validate: --refine: %w", err)
		}
		for _, r := range refs {
			fmt.Fprintf(stderr, "refine: %s bound %d point(s), measured/predicted %.3f: %s × %.3f\n", r.Resource, r.Points, r.Ratio, r.Fields, r.Factor)
		}
	}
	return nil
}

func medianErr(pts []validate.Point) float64 {
	var errs []float64
	for _, p := range pts {
		errs = append(errs, p.Error)
	}
	return validate.MedianAbs(errs)
}

func printValidate(w io.Writer, cfg *validate.Config, s validate.Shape, pts []validate.Point) {
	if s.IsSumo() {
		fmt.Fprintf(w, "cairn advisor validate: %s of %s, %d clients, %v per point; sumo node %.2f cores %.0f Mbit/s\n",
			cfg.Op, workload.FormatSize(cfg.Size), cfg.Concurrency, cfg.Duration, s.SumoNode.CPU, s.SumoNode.NICMbps)
	} else {
		fmt.Fprintf(w, "cairn advisor validate: %s of %s, %d clients, %v per point; proxy %.2f cores %.0f Mbit/s, storage node %.2f cores %.0f Mbit/s\n",
			cfg.Op, workload.FormatSize(cfg.Size), cfg.Concurrency, cfg.Duration, s.Proxy.CPU, s.Proxy.NICMbps, s.StorNode.CPU, s.StorNode.NICMbps)
	}
	fmt.Fprintf(w, "demands: %s\n", cfg.Demands.Source)
	cpuCols := "cores used (proxy1, storage max)  throttled  CPU ms (proxy/req, storage/visit)"
	if s.IsSumo() {
		cpuCols = "cores used (-, sumo max)          throttled  CPU ms (sumo/req)"
	}
	fmt.Fprintf(w, "%-7s %-4s %-10s %-16s %-10s %-8s %s\n", "P:N", "repl", "pred ops/s", "bottleneck", "meas ops/s", "error", cpuCols)
	for _, p := range pts {
		var smax, cmax float64
		for name, v := range p.Measured.Throttled {
			if name != "proxy1" {
				smax = max(smax, v)
			}
		}
		for name, v := range p.Measured.CPU {
			if name != "proxy1" {
				cmax = max(cmax, v)
			}
		}
		perOp := fmt.Sprintf("%.3f / %.3f", p.Measured.ProxyMsOp, p.Measured.StorMsVist)
		if p.Shape.IsSumo() {
			perOp = fmt.Sprintf("%.3f", p.Measured.SumoMsOp)
		}
		fmt.Fprintf(w, "%-7s %-4d %-10.0f %-16s %-10.0f %+6.1f%%  %.2f, %.2f                         %.2f, %.2f  %s\n", p.Shape.Label(), p.Shape.Replicas,
			p.Predicted.OpsPerSec, p.Predicted.Bottleneck, p.Measured.OpsPerSec, 100*p.Error, p.Measured.CPU["proxy1"], cmax,
			p.Measured.Throttled["proxy1"], smax, perOp)
	}
	fmt.Fprintf(w, "median |error| over %d configurations: %.1f%%\n", len(pts), 100*medianErr(pts))
}
