package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/bench/htmlreport"
	"github.com/cairn-store/cairn/internal/bench/workload"
	"github.com/cairn-store/cairn/internal/objclient"
)

// benchFlags are the flags every bench subcommand shares.
type benchFlags struct {
	conn        connFlags
	bucket      string
	prefix      string
	concurrency int
	jsonOut     string
	htmlOut     string
}

func newBenchCommand() *cobra.Command {
	var bf benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure an object store (Cairn or any other, over S3 or Swift): run workloads, fill a bucket, list it, compare runs",
		Long: "Load generation and measurement against any S3 or Swift endpoint. Every flag can also be set as\n" +
			"CAIRN_<FLAG> in the environment (e.g. CAIRN_SECRET_KEY), which keeps keys off the command line.",
	}
	pf := cmd.PersistentFlags()
	bf.conn.register(pf)
	pf.StringVar(&bf.bucket, "bucket", "cairn-bench", "bucket (Swift: container) to use; a workload with several uses <bucket>-0, <bucket>-1, ...")
	pf.StringVar(&bf.prefix, "prefix", "", "key prefix; objects are <prefix>obj-0000000000, <prefix>obj-0000000001, ...")
	pf.IntVar(&bf.concurrency, "concurrency", 16, "concurrent clients (workers, one connection each)")
	pf.StringVar(&bf.jsonOut, "json", "", "also write the result as JSON to this file (- for stdout; the table then goes to stderr)")
	pf.StringVar(&bf.htmlOut, "html", "", "also write a self-contained HTML report with charts to this file")
	cmd.AddCommand(newBenchFillCommand(&bf), newBenchListCommand(&bf), newBenchRunCommand(&bf), newBenchCompareCommand(),
		newBenchWorkloadsCommand(), newBenchMicrostoresCommand())
	return cmd
}

// sizeFlag is a byte count given as 4096, 4KiB, 1MiB, ...
type sizeFlag int64

func (s *sizeFlag) String() string { return workload.FormatSize(int64(*s)) }
func (s *sizeFlag) Type() string   { return "size" }
func (s *sizeFlag) Set(v string) error {
	n, err := workload.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// start builds the client and makes the first request, so that a bad endpoint or key ends
// here in one line rather than as a run of counted errors. The caller has applied bindEnv and
// validated its own configuration, so that a bad flag costs no request. An empty bucket checks
// the credentials only (a workload creates its buckets itself).
func (bf *benchFlags) start(cmd *cobra.Command, bucket string, create bool) (context.Context, context.CancelFunc, objclient.Client, error) {
	if err := bf.conn.useAWSConfig(cmd); err != nil {
		return nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	c, err := bf.conn.open(ctx, bf.concurrency)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	checkCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := c.Check(checkCtx, bucket, create); err != nil {
		stop()
		c.Close()
		return nil, nil, nil, err
	}
	return ctx, stop, c, nil
}

// output prints the table and writes the JSON file, if asked for.
func (bf *benchFlags) output(cmd *cobra.Command, r *bench.Report) error {
	table := cmd.OutOrStdout()
	if bf.jsonOut == "-" {
		table = cmd.ErrOrStderr()
	}
	if err := bench.WriteTable(table, r); err != nil {
		return err
	}
	if bf.htmlOut != "" {
		if err := htmlreport.WriteFile(bf.htmlOut, r); err != nil {
			return fmt.Errorf("bench: writing --html: %w", err)
		}
	}
	if bf.jsonOut == "" {
		return nil
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: encoding JSON: %w", err)
	}
	data = append(data, '\n')
	if bf.jsonOut == "-" {
		_, err = cmd.OutOrStdout().Write(data)
		return err
	}
	if err := os.WriteFile(bf.jsonOut, data, 0o644); err != nil {
		return fmt.Errorf("bench: writing --json: %w", err)
	}
	return nil
}

func newBenchFillCommand(bf *benchFlags) *cobra.Command {
	var (
		cfg  bench.FillConfig
		size = sizeFlag(4 << 10)
	)
	cmd := &cobra.Command{
		Use:   "fill",
		Short: "PUT --objects objects of --size into --bucket (created if missing), reporting the rate per --report-every objects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			cfg.Bucket, cfg.Prefix, cfg.Size, cfg.Concurrency = bf.bucket, bf.prefix, int64(size), bf.concurrency
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx, stop, c, err := bf.start(cmd, bf.bucket, true)
			if err != nil {
				return err
			}
			defer stop()
			defer c.Close()
			progress := cmd.ErrOrStderr()
			cfg.Progress = func(w bench.Window) { printWindow(progress, w) }
			r, err := bench.Fill(ctx, c, cfg)
			if err != nil {
				return err
			}
			if err := bf.output(cmd, r); err != nil {
				return err
			}
			if s := r.Ops["put"]; s.Errors > 0 {
				return fmt.Errorf("bench fill: %d of %d PUTs failed", s.Errors, s.Errors+s.Operations)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Int64Var(&cfg.Objects, "objects", 100_000, "number of objects to PUT")
	f.Var(&size, "size", "object size (4096, 4KiB, 1MiB, ...)")
	f.Int64Var(&cfg.ReportEvery, "report-every", 0, "report throughput every this many objects (default 100000, or objects/10 if smaller)")
	f.Int64Var(&cfg.First, "first", 0, "index of the first object, to add to an earlier fill")
	return cmd
}

func printWindow(w io.Writer, win bench.Window) {
	fmt.Fprintf(w, "  %10d objects  %9.1f obj/s  %8.2f MB/s  p50 %.3f ms  p99 %.3f ms  errors %d\n",
		win.Through, win.OpsPerSec, win.MBPerSec, win.Latency.P50, win.Latency.P99, win.Errors)
}

func newBenchListCommand(bf *benchFlags) *cobra.Command {
	var cfg bench.ListConfig
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List all of --bucket (or --prefix) with ListObjectsV2 and report keys/s; with --objects, check the count",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			cfg.Bucket, cfg.Prefix = bf.bucket, bf.prefix
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx, stop, c, err := bf.start(cmd, bf.bucket, false)
			if err != nil {
				return err
			}
			defer stop()
			defer c.Close()
			r, err := bench.List(ctx, c, cfg)
			if r != nil {
				if oerr := bf.output(cmd, r); oerr != nil && err == nil {
					err = oerr
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.Int64Var(&cfg.Expected, "objects", 0, "expected number of keys (0: do not check)")
	f.IntVar(&cfg.MaxKeys, "max-keys", 1000, "keys per page")
	return cmd
}

// runFlags are the flags of `cairn bench run`: a workload (built-in or file) and command-line
// overrides of it, or the older fixed --op put|get form, which is a one-stage workload.
type runFlags struct {
	workload    string
	op          string
	size        string
	mix         string
	keys        string
	duration    time.Duration
	operations  int64
	objects     int64
	buckets     int
	rate        float64
	skipPrepare bool
	seed        uint64
}

func newBenchRunCommand(bf *benchFlags) *cobra.Command {
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a workload (built-in A|B|C|D|small-upload|... or a YAML file) and report it per stage and operation",
		Long: "Run a workload: --workload names a built-in (see `cairn bench workloads`) or a YAML file with\n" +
			"sizes, operation mix, key selection, stages (prepare, main, ramp, cleanup) and timed events.\n" +
			"Flags given on the command line override the file. Without --workload, --op put|get runs the\n" +
			"simple fixed load: put writes keys <prefix>obj-N; get first writes --objects objects (not\n" +
			"measured; --skip-prepare if a fill with the same --prefix did) and reads them at random.\n" +
			"--rate switches to an open loop: requests are sent on a fixed schedule and their latency is\n" +
			"measured from it, so that a slow store cannot hide its queueing (coordinated omission).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			spec, assumePresent, err := rf.spec(cmd, bf)
			if err != nil {
				return err
			}
			ctx, stop, c, err := bf.start(cmd, "", false)
			if err != nil {
				return err
			}
			defer stop()
			defer c.Close()
			progress := cmd.ErrOrStderr()
			r, err := bench.RunWorkload(ctx, c, bench.WorkloadConfig{
				Spec: spec, Prefix: bf.prefix, Progress: progress, Terminal: isTerminal(progress),
				AssumePresent: assumePresent, Seed: rf.seed,
			})
			if err != nil {
				return err
			}
			if err := bf.output(cmd, r); err != nil {
				return err
			}
			var failed int64
			for _, s := range r.Ops {
				failed += s.Errors
			}
			if failed > 0 {
				return fmt.Errorf("bench run: %d requests failed (counted by kind in the report)", failed)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&rf.workload, "workload", "", "built-in workload name or YAML file (see `cairn bench workloads`)")
	f.StringVar(&rf.op, "op", "", "without --workload: put or get, a one-operation load")
	f.StringVar(&rf.size, "size", "", "object size: 4KiB, or a uniform range 1KiB-128KiB (default 4KiB for --op)")
	f.StringVar(&rf.mix, "mix", "", "operation mix, e.g. get=90,put=5,delete=5 (also head, list)")
	f.StringVar(&rf.keys, "keys", "", "key selection: uniform, sequential or zipf")
	f.DurationVar(&rf.duration, "duration", 0, "length of each main stage (default 30s)")
	f.Int64Var(&rf.operations, "operations", 0, "stop each main stage after this many operations instead")
	f.Int64Var(&rf.objects, "objects", 0, "objects in the key space (default: the workload's; 1000 for --op get)")
	f.IntVar(&rf.buckets, "buckets", 0, "number of buckets (containers) the objects are spread over")
	f.Float64Var(&rf.rate, "rate", 0, "open loop: send this many requests per second in total (0: closed loop)")
	f.BoolVar(&rf.skipPrepare, "skip-prepare", false, "the objects already exist (an earlier fill with the same --prefix): do not write them first")
	f.Uint64Var(&rf.seed, "seed", 0, "random seed for sizes, keys and the mix (0: from the clock)")
	return cmd
}

// spec builds the workload to run from the flags.
func (rf *runFlags) spec(cmd *cobra.Command, bf *benchFlags) (*workload.Spec, bool, error) {
	var spec *workload.Spec
	switch {
	case rf.workload != "" && rf.op != "":
		return nil, false, errors.New("bench run: give --workload or --op, not both")
	case rf.workload != "":
		var err error
		if spec, err = workload.Resolve(rf.workload); err != nil {
			return nil, false, err
		}
	default:
		op := rf.op
		if op == "" {
			op = "put"
		}
		spec = &workload.Spec{Name: op}
		switch op {
		case "put":
			// Sequential keys from 0: each PUT a new key, as a fill writes them, until the key
			// space wraps around.
			spec.Mix = workload.Mix{workload.OpPut: 1}
			spec.Keys = workload.KeyDist{Kind: "sequential"}
			spec.Objects = 10_000_000
			spec.SetPrepopulate(false)
		case "get":
			spec.Mix = workload.Mix{workload.OpGet: 1}
			spec.Objects = 1000
		default:
			return nil, false, fmt.Errorf("bench run: --op %q: want put or get", op)
		}
		size := int64(4 << 10)
		spec.Size = workload.SizeDist{Constant: size}
		spec.Name += "-" + workload.FormatSize(size)
		if err := spec.Normalize(); err != nil {
			return nil, false, err
		}
	}
	o := workload.Overrides{Duration: rf.duration, Operations: rf.operations, Rate: rf.rate, Objects: rf.objects, Buckets: rf.buckets}
	if cmd.Flags().Changed("concurrency") || os.Getenv("CAIRN_CONCURRENCY") != "" {
		o.Concurrency = bf.concurrency
	}
	if cmd.Flags().Changed("bucket") || os.Getenv("CAIRN_BUCKET") != "" || rf.workload == "" {
		o.BucketPrefix = bf.bucket
	}
	if rf.size != "" {
		d, err := workload.ParseSizeDist(rf.size)
		if err != nil {
			return nil, false, fmt.Errorf("bench run: --size: %w", err)
		}
		o.Size = &d
		if rf.workload == "" {
			spec.Name = rf.op + "-" + rf.size
		}
	}
	if rf.mix != "" {
		m, err := workload.ParseMix(rf.mix)
		if err != nil {
			return nil, false, fmt.Errorf("bench run: --mix: %w", err)
		}
		o.Mix = m
	}
	if rf.keys != "" {
		o.Keys = &workload.KeyDist{Kind: rf.keys}
	}
	if rf.skipPrepare {
		spec.SetPrepopulate(false)
		spec.Stages = nil
	}
	if err := spec.Apply(o); err != nil {
		return nil, false, err
	}
	return spec, rf.skipPrepare, nil
}

func newBenchWorkloadsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "workloads [NAME]",
		Short: "List the built-in workloads, or print one as YAML to start a workload file from",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				for _, name := range workload.BuiltinNames() {
					s, _ := workload.Builtin(name)
					fmt.Fprintf(out, "%-15s %s\n", name, s.Description)
				}
				return nil
			}
			s, ok := workload.Builtin(args[0])
			if !ok {
				return fmt.Errorf("no built-in workload %q (have %s)", args[0], strings.Join(workload.BuiltinNames(), ", "))
			}
			y, err := s.YAML()
			if err != nil {
				return err
			}
			_, err = out.Write(y)
			return err
		},
	}
}

func newBenchCompareCommand() *cobra.Command {
	var htmlOut string
	cmd := &cobra.Command{
		Use:   "compare A.json B.json [...]",
		Short: "Print runs (from --json) side by side, each with its ratio to the first; --html for a page with charts",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var runs []*bench.Report
			var names []string
			for _, path := range args {
				r, err := bench.ReadReport(path)
				if err != nil {
					return err
				}
				runs = append(runs, r)
				names = append(names, strings.TrimSuffix(filepath.Base(path), ".json"))
			}
			if err := bench.Compare(cmd.OutOrStdout(), names, runs); err != nil {
				return err
			}
			if htmlOut != "" {
				return htmlreport.WriteCompareFile(htmlOut, names, runs)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&htmlOut, "html", "", "also write the comparison as a self-contained HTML page with charts")
	return cmd
}

// isTerminal says whether w is a terminal, where progress can be redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
