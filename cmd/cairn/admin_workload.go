package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/admin"
)

// newWorkloadCommand is `cairn admin workload`: what the workload monitor of the proxy that
// answers saw of each bucket, and the class it puts the bucket in.
func newWorkloadCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "workload", Short: "Show each bucket's workload (op mix, rates, sizes, latencies) and class, as the proxy that answers saw them",
		Args: usageArgs(0, 0, "cairn admin workload")}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			w, err := c.Workload(ctx)
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(out, w)
			}
			return printWorkload(out, w)
		})(cmd, args)
	}
	return cmd
}

func printWorkload(out io.Writer, w admin.Workload) error {
	fmt.Fprintf(out, "over the last %v\n\nclasses:\n", w.Window)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  CLASS\tBUCKETS\tREQ/S\tIN/S\tOUT/S\tREAD P95\tWRITE P95\tWHAT")
	for _, c := range w.Classes {
		fmt.Fprintf(tw, "  %s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\n", c.Class, c.Buckets, c.OpsPerSecond, bytesString(int64(c.BytesInPerSecond)),
			bytesString(int64(c.BytesOutPerSecond)), latencyString(c.ReadP95), latencyString(c.WriteP95), c.Class.Describe())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nbuckets:")
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ACCOUNT\tBUCKET\tCLASS\tREQ/S\tREADS\tIN/S\tOUT/S\tMEDIAN SIZE\tREAD P95\tWRITE P95")
	for _, b := range w.Buckets {
		median := "-"
		if b.MedianSize >= 0 {
			median = bytesString(b.MedianSize)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%.1f\t%.0f%%\t%s\t%s\t%s\t%s\t%s\n", b.Account, b.Bucket, b.Class, b.OpsPerSecond, 100*b.ReadShare,
			bytesString(int64(b.BytesInPerSecond)), bytesString(int64(b.BytesOutPerSecond)), median, latencyString(b.ReadP95), latencyString(b.WriteP95))
	}
	return tw.Flush()
}

// latencyString is a latency percentile as the monitor reads it (within its histogram's
// precision), "-" when there was nothing to measure.
func latencyString(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(10 * time.Microsecond).String()
}
