package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cairn-store/cairn/internal/bench/workload"
)

// WriteTable prints r as a compact table for a terminal. The JSON form (encoding/json of
// Report) is the one meant for machines; this one may change.
func WriteTable(w io.Writer, r *Report) error {
	if r.Prepare != nil {
		fmt.Fprintf(w, "prepare: %d objects written in %.1fs (not measured)\n",
			r.Prepare.Ops["put"].Operations, r.Prepare.Seconds)
	}
	head := r.Kind
	if r.Workload != "" {
		head += " " + r.Workload
	}
	head += fmt.Sprintf("  endpoint=%s  bucket=%s", r.Endpoint, r.Bucket)
	if r.Prefix != "" {
		head += "  prefix=" + r.Prefix
	}
	if r.Kind != "list" && r.ObjectSize > 0 {
		head += "  size=" + workload.FormatSize(r.ObjectSize)
	}
	if r.Kind != "list" {
		head += fmt.Sprintf("  concurrency=%d", r.Concurrency)
	}
	head += fmt.Sprintf("  %.2fs", r.Seconds)
	if r.Interrupted {
		head += "  (interrupted)"
	}
	fmt.Fprintln(w, head)

	if len(r.Windows) > 1 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "window\tthrough\tseconds\tops/s\tMB/s\tp50 ms\tp99 ms\terrors\t")
		for _, win := range r.Windows {
			fmt.Fprintf(tw, "%d\t%d\t%.2f\t%.1f\t%.2f\t%.3f\t%.3f\t%d\t\n", win.Index, win.Through,
				win.Seconds, win.OpsPerSec, win.MBPerSec, win.Latency.P50, win.Latency.P99, win.Errors)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, st := range r.Stages {
		line := fmt.Sprintf("\nstage %s (%s)  concurrency=%d", st.Name, st.Kind, st.Concurrency)
		if st.TargetRate > 0 {
			line += fmt.Sprintf("  rate=%.0f/s  late=%d", st.TargetRate, st.Late)
		}
		if st.NoKey > 0 {
			line += fmt.Sprintf("  no-key=%d", st.NoKey)
		}
		fmt.Fprintf(w, "%s  %.2fs\n", line, st.Seconds)
		if err := writeOps(w, st.Ops); err != nil {
			return err
		}
		if rp := st.Ramp; rp != nil {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "clients\tops/s\tMB/s\tp50 ms\tp99 ms\terrors\t")
			for _, s := range rp.Steps {
				fmt.Fprintf(tw, "%d\t%.1f\t%.2f\t%.3f\t%.3f\t%d\t\n", s.Concurrency, s.OpsPerSec, s.MBPerSec, s.Latency.P50, s.Latency.P99, s.Errors)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(w, "knee: %d clients, %.1f ops/s, p99 %.3f ms (%s)\n", rp.Knee.Concurrency, rp.Knee.OpsPerSec, rp.Knee.Latency.P99, rp.StopReason)
		}
		for _, e := range st.Events {
			fmt.Fprintf(w, "event %s at %.1fs (exit %d, %.1fs): before %.1f ops/s, during %.1f ops/s (%d errors), after %.1f ops/s; dip %.0f%%",
				e.Name, e.At, e.ExitCode, e.Elapsed, e.Before.OpsPerSec, e.During.OpsPerSec, e.During.Errors, e.After.OpsPerSec, e.Dip)
			if e.RecoveredAfter != nil {
				fmt.Fprintf(w, ", recovered after %.0fs\n", *e.RecoveredAfter)
			} else {
				fmt.Fprintln(w, ", did not recover in the stage")
			}
		}
	}
	if len(r.Stages) > 0 && len(r.Ops) > 0 {
		fmt.Fprintln(w, "\nmeasured stages together:")
	}
	if err := writeOps(w, r.Ops); err != nil {
		return err
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

// writeOps prints one row per operation kind, then the errors by kind.
func writeOps(w io.Writer, ops map[string]*OpStats) error {
	if len(ops) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\toperations\terrors\tops/s\tMB/s\tmean ms\tp50 ms\tp95 ms\tp99 ms\tp99.9 ms\tttfb p50\t")
	for _, op := range sortedKeys(ops) {
		s := ops[op]
		ttfb := "-"
		if s.TTFB != nil {
			ttfb = fmt.Sprintf("%.3f", s.TTFB.P50)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", op, s.Operations, s.Errors,
			s.OpsPerSec, s.MBPerSec, s.Latency.Mean, s.Latency.P50, s.Latency.P95, s.Latency.P99, s.Latency.P999, ttfb)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, op := range sortedKeys(ops) {
		s := ops[op]
		if len(s.ErrorKinds) == 0 {
			continue
		}
		var parts []string
		for _, k := range sortedKeys(s.ErrorKinds) {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, s.ErrorKinds[k]))
		}
		fmt.Fprintf(w, "%s errors: %s\n", op, strings.Join(parts, ", "))
	}
	return nil
}
