package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/advisor/netlab"
	"github.com/cairn-store/cairn/internal/bench/mosproof"
)

// newBenchMicrostoresCommand is `cairn bench microstores`: the microstores' proof (internal/bench/mosproof).
func newBenchMicrostoresCommand() *cobra.Command {
	var cfg mosproof.Config
	var jsonOut, dir string
	var proxyCPU, proxyNIC, storCPU, storNIC float64
	cmd := &cobra.Command{
		Use:   "microstores [--layouts monolithic,static,dynamic] [--duration 1m] [--warmup 30s] [--json FILE]",
		Short: "Prove the microstores: a web tenant (small objects, read) beside a backup tenant (large, written) on three layouts of emulated nodes (root)",
		Long: "Builds, for each layout, a cluster of emulated nodes on this machine (network namespaces with NIC rates and\n" +
			"CPU quotas, as cairn advisor validate does; root, ip, tc, a CPU cgroup controller and haproxy needed), runs\n" +
			"the web tenant alone and then beside the backup tenant through HAProxy configured by `cairn microstore\n" +
			"haproxy`, and prints the web tenant's p95 alone and beside the backup, the backup's throughput and the total:\n" +
			"monolithic (one policy over every node, every proxy for both), static (two microstores, half the nodes\n" +
			"and proxies each) and dynamic (the two microstores given proxies by the resource manager).",
		Args: usageArgs(0, 0, "cairn bench microstores [flags]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			cfg.Binary = bin
			cfg.Proxy = netlab.Spec{CPU: proxyCPU, NICMbps: proxyNIC}
			cfg.StorageNode = netlab.Spec{CPU: storCPU, NICMbps: storNIC}
			if dir == "" {
				if dir, err = os.MkdirTemp("", "cairn-mosproof-"); err != nil {
					return err
				}
				defer os.RemoveAll(dir)
			}
			cfg.Dir = filepath.Clean(dir)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			results, err := mosproof.Run(ctx, cfg)
			if len(results) > 0 {
				printProof(cmd, results)
				if jsonOut != "" {
					b, jerr := json.MarshalIndent(results, "", "  ")
					if jerr == nil {
						jerr = os.WriteFile(jsonOut, b, 0o644)
					}
					if jerr != nil && err == nil {
						err = jerr
					}
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&cfg.Layouts, "layouts", nil, "the layouts to run, in order (default monolithic,static,dynamic)")
	f.DurationVar(&cfg.Duration, "duration", time.Minute, "each measured phase")
	f.DurationVar(&cfg.Warmup, "warmup", 30*time.Second, "how long the backup runs before the web tenant is measured beside it")
	f.IntVar(&cfg.Storage, "storage", 2, "storage nodes per microstore (the monolithic layout has all of them in one policy)")
	f.IntVar(&cfg.Proxies, "proxies", 4, "proxies in all")
	f.Float64Var(&proxyCPU, "proxy-cpu", 0.25, "a proxy's CPU quota, in cores")
	f.Float64Var(&proxyNIC, "proxy-nic-mbps", 200, "a proxy's NIC, in Mbit/s each way")
	f.Float64Var(&storCPU, "storage-cpu", 0.25, "a storage node's CPU quota, in cores")
	f.Float64Var(&storNIC, "storage-nic-mbps", 200, "a storage node's NIC, in Mbit/s each way")
	f.DurationVar(&cfg.ManagerInterval, "manager-interval", 5*time.Second, "the dynamic layout's resource manager's interval")
	f.StringVar(&jsonOut, "json", "", "also write the results, with both tenants' bench reports, to this file")
	f.StringVar(&dir, "dir", "", "where the clusters' data goes (default: a temporary directory, removed)")
	return cmd
}

func printProof(cmd *cobra.Command, results []mosproof.Result) {
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYOUT\tWEB P95 ALONE\tWEB P95 WITH BACKUP\tRATIO\tWEB OPS/S\tBACKUP MB/S\tTOTAL OPS/S\tERRORS\tALLOCATION")
	for _, r := range results {
		ratio := 0.0
		if r.WebAloneP95Ms > 0 {
			ratio = r.WebWithBackupP95 / r.WebAloneP95Ms
		}
		fmt.Fprintf(tw, "%s\t%.1f ms\t%.1f ms\t%.2f\t%.0f\t%.1f\t%.0f\t%d\t%v\n", r.Layout, r.WebAloneP95Ms, r.WebWithBackupP95, ratio,
			r.WebWithBackupOps, r.BackupMBps, r.TotalOps, r.Errors, r.Allocation)
	}
	tw.Flush()
}
