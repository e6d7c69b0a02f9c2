package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/advisor/calibrate"
	"github.com/cairn-store/cairn/internal/bench/workload"
)

func newAdvisorCalibrateCommand() *cobra.Command {
	var (
		cfg                      calibrate.Config
		sizes                    string
		out                      string
		conn                     connFlags
		proxyProcs, storageProcs string
		target                   calibrate.Target
	)
	cmd := &cobra.Command{
		Use:   "calibrate [--out FILE] [--netns] | --proxy-procs RE --storage-procs RE [connection flags]",
		Short: "Measure per-request demands on a local cluster and write a demands file for recommend --demands",
		Long: "Runs a Cairn cluster on this machine (the processes of `cairn local-cluster`), drives it with\n" +
			"cairn bench one operation and object size at a time, and reads what each role used: CPU from\n" +
			"/proc/<pid>/stat, bytes from /proc/<pid>/io, fsyncs from the storage nodes' /metrics; then the\n" +
			"storage CPU again on one saturated storage node (--saturated-storage). Takes a few minutes;\n" +
			"run it on a quiet machine (see docs/advisor.md).\n\n" +
			"With --proxy-procs and --storage-procs it measures a cluster that runs already on this machine\n" +
			"instead (OpenStack Swift's servers, or Cairn's), reached with the connection flags of cairn\n" +
			"bench, its tiers' processes found by their command lines, and its syncs counted as flushes of\n" +
			"--disk (or from --metrics, Cairn's storage nodes' endpoints). --replicas must be its policy's.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			cfg.Sizes = nil
			for _, s := range strings.Split(sizes, ",") {
				n, err := workload.ParseSize(strings.TrimSpace(s))
				if err != nil {
					return fmt.Errorf("advisor calibrate: --sizes: %w", err)
				}
				cfg.Sizes = append(cfg.Sizes, n)
			}
			bin, err := os.Executable()
			if err != nil {
				return fmt.Errorf("advisor calibrate: %w", err)
			}
			cfg.Binary = bin
			cfg.Progress = cmd.ErrOrStderr()
			if proxyProcs != "" || storageProcs != "" {
				if proxyProcs == "" || storageProcs == "" {
					return fmt.Errorf("advisor calibrate: give both --proxy-procs and --storage-procs to measure a running cluster")
				}
				if target.ProxyProcs, err = regexp.Compile(proxyProcs); err != nil {
					return fmt.Errorf("advisor calibrate: --proxy-procs: %w", err)
				}
				if target.StorageProcs, err = regexp.Compile(storageProcs); err != nil {
					return fmt.Errorf("advisor calibrate: --storage-procs: %w", err)
				}
				target.Client = conn.cfg
				cfg.Target = &target
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			d, err := calibrate.Run(ctx, cfg)
			if err != nil {
				return err
			}
			y, err := d.YAML()
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = cmd.OutOrStdout().Write(y)
				return err
			}
			if err := os.WriteFile(out, y, 0o644); err != nil {
				return fmt.Errorf("advisor calibrate: writing --out: %w", err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Dir, "data", "cairn-calibrate", "data directory of the cluster: must not exist; removed afterwards unless --keep (put it on the disk to measure, not on tmpfs)")
	fl.BoolVar(&cfg.Keep, "keep", false, "keep the data directory (and the nodes' logs)")
	fl.IntVar(&cfg.Storage, "storage", 4, "storage nodes")
	fl.IntVar(&cfg.Replicas, "replicas", 3, "replicas")
	fl.BoolVar(&cfg.SaturatedStorage, "saturated-storage", true, "two more clusters: one saturated storage node (one replica), whose CPU per visit is what a storage node costs where it is the bottleneck, and one sumo node, which says what a visit served in process saves")
	fl.IntVar(&cfg.Concurrency, "concurrency", 16, "concurrent clients")
	fl.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long each operation and size is measured")
	fl.StringVar(&sizes, "sizes", "4KiB,1MiB", "object sizes to measure PUT and GET at (DELETE and HEAD at the first)")
	fl.Int64Var(&cfg.Objects, "objects", 200, "objects per size")
	fl.StringVar(&out, "out", "", "write the demands file here (default stdout)")
	fl.StringVar(&proxyProcs, "proxy-procs", "", "measure a running cluster: a regular expression matching its proxies' command lines (swift-proxy-server)")
	fl.StringVar(&storageProcs, "storage-procs", "", "measure a running cluster: a regular expression matching its storage processes' command lines (swift-(object|container|account)-server)")
	fl.StringSliceVar(&target.Metrics, "metrics", nil, "a running Cairn cluster's storage node endpoints, whose /metrics count fsyncs")
	fl.StringVar(&target.Disk, "disk", "", "a running cluster's block device (as in /proc/diskstats: vda, loop0) whose flushes count its fsyncs")
	fl.StringVar(&target.Name, "name", "", "what the running cluster is, for the demands' source (\"OpenStack Swift 2.30\")")
	fl.Int64Var(&target.InlineThreshold, "inline-threshold", 0, "a running cluster's inline threshold in bytes: 0 for OpenStack Swift, 65536 for Cairn's default")
	conn.register(fl)
	fl.BoolVar(&cfg.NetNS, "netns", false, "run each node in a network namespace of its own, joined to a bridge, as validate does (root): requests then cost the CPU packets between machines cost, not loopback's")
	return cmd
}
