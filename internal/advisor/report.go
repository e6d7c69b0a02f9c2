package advisor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the result for scripts: the field names are an interface (docs/advisor.md),
// so extend, never rename.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing advisor JSON: %w", err)
	}
	return nil
}

func money(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func goalText(objective string) string {
	return map[string]string{MinimizeCost: "lowest cost", MaximizeThroughput: "highest throughput", MaximizeCapacity: "largest usable capacity"}[objective]
}

func pct(u float64) string { return fmt.Sprintf("%.0f%%", u*100) }

// throughput prints ops/s as MB/s and ops/s.
func throughput(mbps, ops float64) string {
	if mbps > 0 {
		return fmt.Sprintf("%.0f MB/s (%.0f ops/s)", mbps, ops)
	}
	return fmt.Sprintf("%.0f ops/s", ops)
}

// WriteText writes the result as the table `cairn advisor recommend` prints.
func WriteText(w io.Writer, r *Result) error {
	var b strings.Builder
	goal := goalText(r.Objective)
	best := &r.Best
	fmt.Fprintf(&b, "cairn advisor: %s for workload %s, %s\n", goal, r.Workload, best.Policy)
	var given []string
	if r.Given.CapacityTB > 0 {
		given = append(given, fmt.Sprintf("usable capacity ≥ %g TB", r.Given.CapacityTB))
	}
	if r.Given.ThroughputMBps > 0 {
		given = append(given, fmt.Sprintf("throughput ≥ %g MB/s", r.Given.ThroughputMBps))
	}
	if r.Given.ThroughputOps > 0 {
		given = append(given, fmt.Sprintf("throughput ≥ %g ops/s", r.Given.ThroughputOps))
	}
	if r.Given.Budget > 0 {
		given = append(given, fmt.Sprintf("budget ≤ %s %s", money(r.Given.Budget), best.Cost.Currency))
	}
	if r.Options.P99Seconds > 0 {
		given = append(given, fmt.Sprintf("p99 ≤ %g ms", r.Options.P99Seconds*1000))
	}
	fmt.Fprintf(&b, "given: %s; at most %s utilization of any resource, disks filled to %s\n",
		strings.Join(given, ", "), pct(r.Options.MaxUtilization), pct(r.Options.Fill))
	fmt.Fprintf(&b, "demands: %s\n", r.Demands)
	fmt.Fprintf(&b, "searched %d shapes (node, NIC, disk types, disks per node, listing device, load balancer)\n\n", r.Shapes)

	c := best.Cost
	fmt.Fprintf(&b, "RECOMMENDED  cost %s %s over %g years (purchase %s + %g × %s/year)\n",
		money(c.Total), c.Currency, c.Years, money(c.Purchase), c.Years, money(c.Yearly))
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  role\ttype\tcount\tcores\tNIC\tdisks per node\tlisting device")
	if best.LoadBalancers > 0 {
		fmt.Fprintf(tw, "  lb\t%s\t%d\t\t\t\t\n", best.LoadBalancer, best.LoadBalancers)
	}
	for _, g := range best.Groups {
		disks, listing := "", ""
		if g.Disk != "" {
			disks = fmt.Sprintf("%d × %s", g.DisksPerNode, g.Disk)
			listing = "on data disks"
			if g.ListingDisk != "" {
				listing = g.ListingDisk
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%s (%g Gb/s)\t%s\t%s\n", g.Role, g.NodeType, g.Count, g.Cores, g.NIC, g.NICGbps, disks, listing)
	}
	tw.Flush()
	p := &best.Prediction
	fmt.Fprintf(&b, "  ring: %s, partition power %d\n", best.Policy, best.PartPower)
	fmt.Fprintf(&b, "  capacity: raw %.0f TB, usable %.0f TB\n", best.RawTB, best.UsableTB)
	fmt.Fprintf(&b, "  throughput: rated %s; saturates at %s\n", throughput(p.RatedMBps, p.RatedOpsPerSec), throughput(p.MaxMBps, p.MaxOpsPerSec))
	fmt.Fprintf(&b, "  latency at %s: mean %.1f ms, p99 %.1f ms\n", throughput(p.AtMBps, p.AtOpsPerSec), p.MeanMs, p.P99Ms)
	fmt.Fprintf(&b, "  bottleneck: %s %s (%s), %s busy at that load\n", p.Bottleneck.Tier, p.Bottleneck.Resource, p.Bottleneck.NodeType, pct(p.Bottleneck.Utilization))
	fmt.Fprintf(&b, "  busiest resource per tier at that load:\n")
	tw = tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	for _, t := range p.Tiers {
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", t.Tier, t.NodeType, t.Resource, pct(t.Utilization))
	}
	tw.Flush()

	if sw := r.Sweeps; len(sw.Sampling) > 0 {
		fmt.Fprintf(&b, "\nsampling 1:N (1 proxy : N storage nodes of these types): lowest cost per MB/s at N = %d\n", sw.SweetSpot)
		tw = tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  N\tMB/s\tcost\tcost per MB/s\tbottleneck")
		for _, s := range sw.Sampling {
			if s.Storage <= 12 || s.Storage == sw.SweetSpot || s.Storage%8 == 0 && s.Storage <= 4*max(sw.SweetSpot, 8) {
				fmt.Fprintf(tw, "  %d\t%.0f\t%s\t%.1f\t%s %s\n", s.Storage, s.MBps, money(s.Cost), s.CostPerMBps, s.BottleneckAt, s.Bottleneck)
			}
		}
		tw.Flush()
	}
	for _, pr := range r.Sweeps.Profiles {
		if pr.LBs == 0 {
			fmt.Fprintf(&b, "\nprofile c:cN with no load balancer:\n")
		} else {
			fmt.Fprintf(&b, "\nprofile c:cN with %d load balancer(s):\n", pr.LBs)
		}
		tw = tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  proxies\tstorage\tMB/s\tops/s\tcost\tbottleneck")
		for i, s := range pr.Points {
			if i < 4 || i%4 == 3 {
				fmt.Fprintf(tw, "  %d\t%d\t%.0f\t%.0f\t%s\t%s %s\n", s.Proxies, s.Storage, s.MBps, s.OpsPerSec, money(s.Cost), s.BottleneckAt, s.Bottleneck)
			}
		}
		tw.Flush()
	}
	if len(r.RunnersUp) > 0 {
		fmt.Fprintf(&b, "\nrunners-up:\n")
		tw = tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  cost\trated MB/s\tusable TB\tp99 ms\tnodes\tload balancers\tbottleneck")
		for _, ru := range r.RunnersUp {
			var nodes []string
			for _, g := range ru.Groups {
				s := fmt.Sprintf("%d %s %s", g.Count, g.Role, g.NodeType)
				if g.Disk != "" {
					s += fmt.Sprintf(" (%d × %s)", g.DisksPerNode, g.Disk)
				}
				nodes = append(nodes, s)
			}
			lb := "-"
			if ru.LoadBalancers > 0 {
				lb = fmt.Sprintf("%d %s", ru.LoadBalancers, ru.LoadBalancer)
			}
			rp := &ru.Prediction
			fmt.Fprintf(tw, "  %s\t%.0f\t%.0f\t%.1f\t%s\t%s\t%s %s\n", money(ru.Cost.Total), rp.RatedMBps, ru.UsableTB, rp.P99Ms,
				strings.Join(nodes, " + "), lb, rp.Bottleneck.Tier, rp.Bottleneck.Resource)
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}
