package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/advisor/netlab"
	"github.com/cairn-store/cairn/internal/bench/htmlreport"
	"github.com/cairn-store/cairn/internal/bench/mosproof"
)

// newBenchMicrostoresCommand is `cairn bench microstores`: the microstores' proof (internal/bench/mosproof).
func newBenchMicrostoresCommand() *cobra.Command {
	var cfg mosproof.Config
	var jsonOut, dir string
	var timeline bool
	var proxyCPU, proxyNIC, storCPU, storNIC, sumoCPU, sumoNIC float64
	cmd := &cobra.Command{
		Use:   "microstores [--layouts monolithic,static,dynamic,sumo,sumo-lanes] [--duration 1m] [--warmup 30s] [--timeline] [--json FILE] [--html FILE]",
		Short: "Prove the microstores: a web tenant (small objects, read) beside a backup tenant (large, written) on layouts of emulated nodes (root)",
		Long: "Builds, for each layout, a cluster of emulated nodes on this machine (network namespaces with NIC rates and\n" +
			"CPU quotas, as cairn advisor validate does; root, ip, tc, a CPU cgroup controller and haproxy needed), runs\n" +
			"the web tenant alone and then beside the backup tenant through HAProxy configured by `cairn microstore\n" +
			"haproxy`, and prints the web tenant's p95 alone and beside the backup, the backup's throughput and the total:\n" +
			"monolithic (one policy over every node, every proxy for both), static (two microstores, half the nodes\n" +
			"and proxies each), dynamic (the two microstores given proxies by the resource manager), and sumo and\n" +
			"sumo-lanes (one sumo node serving both tenants, without and with request lanes: --lane-share).\n\n" +
			"With --timeline it runs the dynamic layout through four stages instead (the web tenant alone, the backup\n" +
			"alone, both, the web tenant stops), each --stage-duration long, and prints each stage's figures, the\n" +
			"allocation at its end and how long the resource manager took to settle; --html writes both tenants'\n" +
			"bench reports (FILE, and FILE with -backup before its extension), which chart the allocation beside\n" +
			"the stages.",
		Args: usageArgs(0, 0, "cairn bench microstores [flags]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			cfg.Binary = bin
			cfg.Proxy = netlab.Spec{CPU: proxyCPU, NICMbps: proxyNIC}
			cfg.StorageNode = netlab.Spec{CPU: storCPU, NICMbps: storNIC}
			cfg.Sumo = netlab.Spec{CPU: sumoCPU, NICMbps: sumoNIC}
			if dir == "" {
				if dir, err = os.MkdirTemp("", "cairn-mosproof-"); err != nil {
					return err
				}
				defer os.RemoveAll(dir)
			}
			cfg.Dir = filepath.Clean(dir)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			if timeline {
				return runTimeline(ctx, cmd, cfg, jsonOut)
			}
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
	f.StringSliceVar(&cfg.Layouts, "layouts", nil, "the layouts to run, in order (default monolithic,static,dynamic,sumo,sumo-lanes)")
	f.DurationVar(&cfg.Duration, "duration", time.Minute, "each measured phase")
	f.DurationVar(&cfg.Warmup, "warmup", 30*time.Second, "how long the backup runs before the web tenant is measured beside it")
	f.IntVar(&cfg.Storage, "storage", 2, "storage nodes per microstore (the monolithic layout has all of them in one policy)")
	f.IntVar(&cfg.Proxies, "proxies", 4, "proxies in all")
	f.Float64Var(&proxyCPU, "proxy-cpu", 0.25, "a proxy's CPU quota, in cores")
	f.Float64Var(&proxyNIC, "proxy-nic-mbps", 200, "a proxy's NIC, in Mbit/s each way")
	f.Float64Var(&storCPU, "storage-cpu", 0.25, "a storage node's CPU quota, in cores")
	f.Float64Var(&storNIC, "storage-nic-mbps", 200, "a storage node's NIC, in Mbit/s each way")
	f.Float64Var(&sumoCPU, "sumo-cpu", 1, "the sumo layouts' node's CPU quota, in cores")
	f.Float64Var(&sumoNIC, "sumo-nic-mbps", 800, "the sumo layouts' node's NIC, in Mbit/s each way")
	f.IntVar(&cfg.LaneShare, "lane-share", 1, "the sumo-lanes layout's --lane-share: large-object requests served at once while small ones are")
	f.DurationVar(&cfg.WorkloadWindow, "workload-window", 30*time.Second, "the nodes' workload monitors' window (the resource manager's view of the load)")
	f.BoolVar(&timeline, "timeline", false, "run the dynamic layout through the four-stage timeline instead of the layouts")
	f.DurationVar(&cfg.StageDuration, "stage-duration", 90*time.Second, "each stage of the timeline")
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

// runTimeline is `cairn bench microstores --timeline`.
func runTimeline(ctx context.Context, cmd *cobra.Command, cfg mosproof.Config, jsonOut string) error {
	tl, err := mosproof.RunTimeline(ctx, cfg)
	if tl == nil || tl.Web == nil || tl.Backup == nil {
		return err
	}
	printTimeline(cmd, tl)
	var errs []error
	if jsonOut != "" {
		b, jerr := json.MarshalIndent(tl, "", "  ")
		if jerr == nil {
			jerr = os.WriteFile(jsonOut, b, 0o644)
		}
		errs = append(errs, jerr)
	}
	if htmlOut, _ := cmd.Flags().GetString("html"); htmlOut != "" {
		ext := filepath.Ext(htmlOut)
		errs = append(errs, htmlreport.WriteFile(htmlOut, tl.Web),
			htmlreport.WriteFile(strings.TrimSuffix(htmlOut, ext)+"-backup"+ext, tl.Backup))
	}
	return errors.Join(append([]error{err}, errs...)...)
}

func printTimeline(cmd *cobra.Command, tl *mosproof.Timeline) {
	fmt.Fprintf(cmd.OutOrStdout(), "stages of %.0f s, the resource manager every %.0f s, workload window %.0f s\n",
		tl.StageSeconds, tl.ManagerInterval, tl.WorkloadWindow)
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tWEB P95\tWEB OPS/S\tBACKUP P95\tBACKUP MB/S\tERRORS\tALLOCATION AT THE END\tCHANGES\tSETTLED AFTER")
	for _, st := range tl.Stages {
		settled := "-"
		if st.SettledAfter >= 0 {
			settled = fmt.Sprintf("%.0f s", st.SettledAfter)
		}
		web, backup := "idle", "idle"
		if st.Web {
			web = fmt.Sprintf("%.1f ms", st.WebP95Ms)
		}
		if st.Backup {
			backup = fmt.Sprintf("%.0f ms", st.BackupP95Ms)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%s\t%.1f\t%d\t%v\t%d\t%s\n", st.Name, web, st.WebOps, backup, st.BackupMBps, st.Errors,
			st.Allocation, st.Changes, settled)
	}
	tw.Flush()
}
