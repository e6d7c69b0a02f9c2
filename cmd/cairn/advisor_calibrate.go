package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/advisor/calibrate"
	"github.com/cairn-store/cairn/internal/bench/workload"
)

func newAdvisorCalibrateCommand() *cobra.Command {
	var (
		cfg   calibrate.Config
		sizes string
		out   string
	)
	cmd := &cobra.Command{
		Use:   "calibrate [--out FILE]",
		Short: "Measure per-request demands on a local cluster and write a demands file for recommend --demands",
		Long: "Runs a Cairn cluster on this machine (the processes of `cairn local-cluster`), drives it with\n" +
			"cairn bench one operation and object size at a time, and reads what each role used: CPU from\n" +
			"/proc/<pid>/stat, bytes from /proc/<pid>/io, fsyncs from the storage nodes' /metrics. Takes a\n" +
			"few minutes; run it on a quiet machine (see docs/advisor.md).",
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
	fl.IntVar(&cfg.Concurrency, "concurrency", 16, "concurrent clients")
	fl.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long each operation and size is measured")
	fl.StringVar(&sizes, "sizes", "4KiB,1MiB", "object sizes to measure PUT and GET at (DELETE and HEAD at the first)")
	fl.Int64Var(&cfg.Objects, "objects", 200, "objects per size")
	fl.StringVar(&out, "out", "", "write the demands file here (default stdout)")
	fl.BoolVar(&cfg.NetNS, "netns", false, "run each node in a network namespace of its own, joined to a bridge, as validate does (root): requests then cost the CPU packets between machines cost, not loopback's")
	return cmd
}
