package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/admin"
)

// newStatusCommand is `cairn admin status`: the cluster's nodes, devices, fill, errors and
// the progress of replication, from any proxy.
func newStatusCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "status", Short: "Show the cluster: rings, nodes, devices, fill, errors, replication", Args: usageArgs(0, 0, "cairn admin status")}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return f.run(func(ctx context.Context, c *admin.Client, out io.Writer) error {
			st, err := c.Status(ctx)
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(out, st)
			}
			return printStatus(out, st, time.Now())
		})(cmd, args)
	}
	return cmd
}

func printStatus(out io.Writer, st admin.ClusterStatus, now time.Time) error {
	s := st.Summary
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "nodes:\t%d (%d down)\n", s.Nodes, s.NodesDown)
	fmt.Fprintf(tw, "devices:\t%d (%d failed)\n", s.Devices, s.DevicesFailed)
	used := s.TotalBytes - s.FreeBytes
	fill := 0.0
	if s.TotalBytes > 0 {
		fill = 100 * float64(used) / float64(s.TotalBytes)
	}
	fmt.Fprintf(tw, "space:\t%s of %s used (%.1f%%)\n", bytesString(used), bytesString(s.TotalBytes), fill)
	fmt.Fprintf(tw, "corrupt objects:\t%d\n", s.CorruptObjects)
	fmt.Fprintf(tw, "partitions away from home:\t%d\n", s.HandoffPartitions)
	if s.OldestReplicationPass != "" {
		fmt.Fprintf(tw, "oldest replication pass:\t%s\n", s.OldestReplicationPass)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nrings:")
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tPART POWER\tREPLICAS\tDEVICES\tVERSION")
	for _, r := range st.Rings {
		fmt.Fprintf(tw, "  %s\t%d\t%g\t%d\t%d\n", r.Name, r.PartPower, r.Replicas, r.Devices, r.Version)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nnodes:")
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODE\tDEVICE\tUSED\tSIZE\tCORRUPT\tSTATE")
	for _, n := range st.Nodes {
		if n.Error != "" {
			fmt.Fprintf(tw, "  %s\t-\t-\t-\t-\tDOWN: %s\n", n.Address, n.Error)
			continue
		}
		for _, d := range n.Devices {
			state := "ok"
			if d.Error != "" {
				state = "FAILED: " + d.Error
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%s\n", n.Address, d.Name, bytesString(d.TotalBytes-d.FreeBytes), bytesString(d.TotalBytes), d.CorruptObjects, state)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\ndaemons:")
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODE\tDAEMON\tPASSES\tPROGRESS\tLAST PASS\tLAST PASS FIGURES")
	for _, n := range st.Nodes {
		for _, name := range sortedKeys(n.Daemons) {
			d := n.Daemons[name]
			last := "never"
			if !d.LastPassEnd.IsZero() {
				last = fmt.Sprintf("%s ago, took %.1fs", now.Sub(d.LastPassEnd).Round(time.Second), d.LastPassSeconds)
			}
			figures := ""
			for _, k := range sortedKeys(d.Counters) {
				figures += fmt.Sprintf("%s=%d ", k, d.Counters[k])
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%.0f%%\t%s\t%s\n", n.Address, name, d.Passes, 100*d.Progress, last, figures)
		}
	}
	return tw.Flush()
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
