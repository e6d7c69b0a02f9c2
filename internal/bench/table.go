package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints r as a compact table for a terminal. The JSON form (encoding/json of
// Report) is the one meant for machines; this one may change.
func WriteTable(w io.Writer, r *Report) error {
	if r.Prepare != nil {
		fmt.Fprintf(w, "prepare: %d objects written in %.1fs (not measured)\n",
			r.Prepare.Ops["put"].Operations, r.Prepare.Seconds)
	}
	head := fmt.Sprintf("%s  endpoint=%s  bucket=%s", r.Kind, r.Endpoint, r.Bucket)
	if r.Prefix != "" {
		head += "  prefix=" + r.Prefix
	}
	if r.Kind != "list" {
		head += fmt.Sprintf("  size=%s  concurrency=%d", FormatSize(r.ObjectSize), r.Concurrency)
	}
	head += fmt.Sprintf("  %.2fs", r.Seconds)
	if r.Interrupted {
		head += "  (interrupted)"
	}
	fmt.Fprintln(w, head)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(r.Windows) > 1 {
		fmt.Fprintln(tw, "window\tthrough\tseconds\tops/s\tMB/s\tp50 ms\tp99 ms\terrors\t")
		for _, win := range r.Windows {
			fmt.Fprintf(tw, "%d\t%d\t%.2f\t%.1f\t%.2f\t%.3f\t%.3f\t%d\t\n", win.Index, win.Through,
				win.Seconds, win.OpsPerSec, win.MBPerSec, win.Latency.P50, win.Latency.P99, win.Errors)
		}
		fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t")
	}
	fmt.Fprintln(tw, "op\toperations\terrors\tops/s\tMB/s\tmean ms\tp50 ms\tp95 ms\tp99 ms\tp99.9 ms\t")
	for _, op := range sortedKeys(r.Ops) {
		s := r.Ops[op]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", op, s.Operations, s.Errors,
			s.OpsPerSec, s.MBPerSec, s.Latency.Mean, s.Latency.P50, s.Latency.P95, s.Latency.P99, s.Latency.P999)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, op := range sortedKeys(r.Ops) {
		s := r.Ops[op]
		if len(s.ErrorKinds) == 0 {
			continue
		}
		var parts []string
		for _, k := range sortedKeys(s.ErrorKinds) {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, s.ErrorKinds[k]))
		}
		fmt.Fprintf(w, "%s errors: %s\n", op, strings.Join(parts, ", "))
	}
	if l := r.List; l != nil {
		line := fmt.Sprintf("listed %d keys in %d pages: %.0f keys/s", l.Keys, l.Pages, l.KeysPerSec)
		if l.CountOK != nil {
			if *l.CountOK {
				line += fmt.Sprintf(", count OK (%d)", l.Expected)
			} else {
				line += fmt.Sprintf(", COUNT MISMATCH (expected %d)", l.Expected)
			}
		}
		if !l.Ordered {
			line += ", KEYS OUT OF ORDER"
		}
		fmt.Fprintln(w, line)
	}
	c := r.ClientCPU
	_, err := fmt.Fprintf(w, "client CPU: %.2fs user + %.2fs system = %.4fs per 1000 requests, %.2f cores busy\n",
		c.UserSeconds, c.SystemSeconds, c.SecondsPer1000Ops, c.Utilization)
	return err
}
