package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/bench"
)

// benchFlags are the flags every bench subcommand shares.
type benchFlags struct {
	client      bench.ClientConfig
	bucket      string
	prefix      string
	concurrency int
	jsonOut     string
}

func newBenchCommand() *cobra.Command {
	var bf benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure an S3 endpoint (Cairn or any other): fill a bucket, list it, or run a fixed PUT/GET load",
		Long: "Load generation and measurement against any S3 endpoint. Every flag can also be set as\n" +
			"CAIRN_<FLAG> in the environment (e.g. CAIRN_SECRET_KEY), which keeps keys off the command line.",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&bf.client.Endpoint, "endpoint", "http://"+defaultBenchListen, "S3 endpoint URL (path-style requests)")
	pf.StringVar(&bf.client.AccessKey, "access-key", "", "access key")
	pf.StringVar(&bf.client.SecretKey, "secret-key", "", "secret key")
	pf.StringVar(&bf.client.Region, "region", "us-east-1", "region used in the signature")
	pf.StringVar(&bf.bucket, "bucket", "cairn-bench", "bucket to use")
	pf.StringVar(&bf.prefix, "prefix", "", "key prefix; objects are <prefix>obj-0000000000, <prefix>obj-0000000001, ...")
	pf.IntVar(&bf.concurrency, "concurrency", 16, "concurrent clients (workers, one connection each)")
	pf.StringVar(&bf.jsonOut, "json", "", "also write the result as JSON to this file (- for stdout; the table then goes to stderr)")
	cmd.AddCommand(newBenchFillCommand(&bf), newBenchListCommand(&bf), newBenchRunCommand(&bf), newBenchCompareCommand())
	return cmd
}

// defaultBenchListen mirrors the server's default address without importing the server: bench
// measures from the outside.
const defaultBenchListen = "127.0.0.1:8787"

// sizeFlag is a byte count given as 4096, 4KiB, 1MiB, ...
type sizeFlag int64

func (s *sizeFlag) String() string { return bench.FormatSize(int64(*s)) }
func (s *sizeFlag) Type() string   { return "size" }
func (s *sizeFlag) Set(v string) error {
	n, err := bench.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// start builds the client and makes the first request, so that a bad endpoint or key ends
// here in one line rather than as a run of counted errors. The caller has applied bindEnv and
// validated its own configuration, so that a bad flag costs no request.
func (bf *benchFlags) start(cmd *cobra.Command, create bool) (context.Context, context.CancelFunc, *bench.Client, error) {
	bf.client.Concurrency = bf.concurrency
	c, err := bench.NewClient(bf.client)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	checkCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := c.Check(checkCtx, bf.bucket, create); err != nil {
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
			ctx, stop, c, err := bf.start(cmd, true)
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
			ctx, stop, c, err := bf.start(cmd, false)
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

func newBenchRunCommand(bf *benchFlags) *cobra.Command {
	var (
		cfg  bench.RunConfig
		size = sizeFlag(4 << 10)
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a fixed workload: --op put or get of --size for --duration with --concurrency clients",
		Long: "Run a fixed workload for --duration with --concurrency closed-loop clients.\n" +
			"put writes new keys <prefix>obj-N from --first upward. get first writes --objects objects\n" +
			"(not measured; --skip-prepare if a fill with the same --prefix and --size did) and then\n" +
			"reads them at random.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			cfg.Bucket, cfg.Prefix, cfg.Size, cfg.Concurrency = bf.bucket, bf.prefix, int64(size), bf.concurrency
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx, stop, c, err := bf.start(cmd, cfg.Op == "put" || !cfg.SkipPrepare)
			if err != nil {
				return err
			}
			defer stop()
			defer c.Close()
			r, err := bench.Run(ctx, c, cfg)
			if r != nil {
				if oerr := bf.output(cmd, r); oerr != nil && err == nil {
					err = oerr
				}
			}
			if err == nil && r.Ops[cfg.Op].Errors > 0 {
				err = fmt.Errorf("bench run: %d requests failed", r.Ops[cfg.Op].Errors)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Op, "op", "put", "operation: put or get")
	f.Var(&size, "size", "object size (4096, 4KiB, 1MiB, ...)")
	f.DurationVar(&cfg.Duration, "duration", 30*time.Second, "how long to run")
	f.Int64Var(&cfg.Objects, "objects", 1000, "get: number of objects read at random")
	f.BoolVar(&cfg.SkipPrepare, "skip-prepare", false, "get: the objects already exist; do not write them first")
	f.Int64Var(&cfg.PutStart, "first", 0, "put: index of the first key written")
	return cmd
}

func newBenchCompareCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "compare A.json B.json [...]",
		Short: "Print runs (from --json) side by side, each with its ratio to the first",
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
			return bench.Compare(cmd.OutOrStdout(), names, runs)
		},
	}
}
