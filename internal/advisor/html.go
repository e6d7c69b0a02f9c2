package advisor

import (
	"fmt"
	"strconv"

	"github.com/cairn-store/cairn/internal/bench/htmlreport"
)

// The HTML report: the recommendation's tables and the seeds' charts (cost per MB/s against
// N, throughput against cluster size and against cost), drawn by the bench report's page and
// chart code so that both reports look and are checked alike.

func f0(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// Doc is the report of r as a page.
func Doc(r *Result) *htmlreport.Doc {
	best := &r.Best
	p := &best.Prediction
	d := &htmlreport.Doc{
		Title: "cairn advisor: " + goalText(r.Objective) + " for workload " + r.Workload,
		Header: [][2]string{
			{"workload", r.Workload},
			{"durability", best.Policy.String()},
			{"given", givenText(r)},
			{"margins", fmt.Sprintf("at most %.0f%% utilization, disks filled to %.0f%%", r.Options.MaxUtilization*100, r.Options.Fill*100)},
			{"demands", r.Demands},
		},
		Notes:  []string{"Predictions come from a queueing model on per-request demands; their error against measurement is not yet stated (cairn advisor validate is still to come)."},
		Footer: "cairn advisor report.",
	}
	groups := htmlreport.DocTable{Head: []string{"role", "type", "count", "cores", "NIC", "disks per node", "listing device"}}
	if best.LoadBalancers > 0 {
		groups.Rows = append(groups.Rows, []string{"lb", best.LoadBalancer, strconv.Itoa(best.LoadBalancers), "", "", "", ""})
	}
	for _, g := range best.Groups {
		disks, listing := "", ""
		if g.Disk != "" {
			disks, listing = fmt.Sprintf("%d × %s", g.DisksPerNode, g.Disk), "on data disks"
			if g.ListingDisk != "" {
				listing = g.ListingDisk
			}
		}
		groups.Rows = append(groups.Rows, []string{g.Role, g.NodeType, strconv.Itoa(g.Count), strconv.Itoa(g.Cores),
			fmt.Sprintf("%s (%g Gb/s)", g.NIC, g.NICGbps), disks, listing})
	}
	facts := htmlreport.DocTable{Head: []string{"", ""}, Rows: [][]string{
		{"cost", fmt.Sprintf("%s %s over %g years (purchase %s + %g × %s/year)", money(best.Cost.Total), best.Cost.Currency, best.Cost.Years, money(best.Cost.Purchase), best.Cost.Years, money(best.Cost.Yearly))},
		{"ring", fmt.Sprintf("%s, partition power %d", best.Policy, best.PartPower)},
		{"capacity", fmt.Sprintf("raw %s TB, usable %s TB", f0(best.RawTB), f0(best.UsableTB))},
		{"throughput", fmt.Sprintf("rated %s; saturates at %s", throughput(p.RatedMBps, p.RatedOpsPerSec), throughput(p.MaxMBps, p.MaxOpsPerSec))},
		{"latency", fmt.Sprintf("at %s: mean %s ms, p99 %s ms", throughput(p.AtMBps, p.AtOpsPerSec), f1(p.MeanMs), f1(p.P99Ms))},
		{"bottleneck", fmt.Sprintf("%s %s (%s)", p.Bottleneck.Tier, p.Bottleneck.Resource, p.Bottleneck.NodeType)},
	}}
	util := htmlreport.DocTable{Head: []string{"tier", "type", "resource", "servers", "utilization", "saturates at ops/s"}, Num: true}
	for _, u := range p.Resources {
		util.Rows = append(util.Rows, []string{u.Tier, u.NodeType, u.Resource, f0(u.Servers), fmt.Sprintf("%.0f%%", u.Utilization*100), f0(u.LimitOpsPerSec)})
	}
	d.Sections = append(d.Sections, htmlreport.DocSection{Title: "Recommended", Tables: []htmlreport.DocTable{groups, facts, util}})

	if sw := r.Sweeps; len(sw.Sampling) > 0 {
		cost := htmlreport.Series{Name: "cost per MB/s"}
		mbps := htmlreport.Series{Name: "MB/s"}
		var mark []htmlreport.Mark
		for _, s := range sw.Sampling {
			cost.Points = append(cost.Points, [2]float64{float64(s.Storage), s.CostPerMBps})
			mbps.Points = append(mbps.Points, [2]float64{float64(s.Storage), s.MBps})
			if s.Storage == sw.SweetSpot {
				mark = []htmlreport.Mark{{X: float64(s.Storage), Y: s.CostPerMBps, Label: fmt.Sprintf("N = %d", s.Storage)}}
			}
		}
		d.Sections = append(d.Sections, htmlreport.DocSection{
			Title: "Sampling: 1 proxy to N storage nodes",
			Text:  []string{fmt.Sprintf("The lowest cost per MB/s is at N = %d: below it the storage nodes bound the cluster and the proxy idles, above it the proxy does and storage nodes idle.", sw.SweetSpot)},
			Charts: []htmlreport.LineChart{
				{Title: "cost per MB/s against N", XLabel: "storage nodes per proxy (N)", YLabel: best.Cost.Currency + " per MB/s", Series: []htmlreport.Series{cost}, Marks: mark},
				{Title: "throughput of 1:N against N", XLabel: "storage nodes per proxy (N)", YLabel: "MB/s", Series: []htmlreport.Series{mbps}},
			}})
	}
	if len(r.Sweeps.Profiles) > 0 {
		size := htmlreport.LineChart{Title: "throughput against cluster size", XLabel: "nodes", YLabel: "MB/s"}
		cost := htmlreport.LineChart{Title: "throughput against cost", XLabel: best.Cost.Currency, YLabel: "MB/s"}
		tbl := htmlreport.DocTable{Head: []string{"load balancers", "proxies", "storage", "MB/s", "ops/s", "cost", "bottleneck"}, Num: true}
		for i, pr := range r.Sweeps.Profiles {
			name := fmt.Sprintf("%d load balancer(s)", pr.LBs)
			if pr.LBs == 0 {
				name = "no load balancer"
			}
			ss := htmlreport.Series{Name: name, Dashed: i > 0}
			cs := ss
			for _, s := range pr.Points {
				nodes := float64(s.Storage)
				if s.Proxies != s.Storage { // not sumo
					nodes += float64(s.Proxies)
				}
				ss.Points = append(ss.Points, [2]float64{nodes, s.MBps})
				cs.Points = append(cs.Points, [2]float64{s.Cost, s.MBps})
				tbl.Rows = append(tbl.Rows, []string{strconv.Itoa(pr.LBs), strconv.Itoa(s.Proxies), strconv.Itoa(s.Storage), f0(s.MBps), f0(s.OpsPerSec), money(s.Cost), s.BottleneckAt + " " + s.Bottleneck})
			}
			size.Series, cost.Series = append(size.Series, ss), append(cost.Series, cs)
		}
		d.Sections = append(d.Sections, htmlreport.DocSection{
			Title:  "Profiling: c:cN clusters",
			Text:   []string{"Throughput of c proxies and c·N storage nodes as c grows, with the recommended number of load balancers, twice as many, and none: where a curve goes flat below the one without, the balancers cap it."},
			Charts: []htmlreport.LineChart{size, cost},
			Tables: []htmlreport.DocTable{tbl},
		})
	}
	if len(r.RunnersUp) > 0 {
		tbl := htmlreport.DocTable{Head: []string{"cost", "rated MB/s", "usable TB", "p99 ms", "nodes", "load balancers", "bottleneck"}, Num: true}
		for _, ru := range r.RunnersUp {
			nodes := ""
			for i, g := range ru.Groups {
				if i > 0 {
					nodes += " + "
				}
				nodes += fmt.Sprintf("%d %s %s", g.Count, g.Role, g.NodeType)
				if g.Disk != "" {
					nodes += fmt.Sprintf(" (%d × %s)", g.DisksPerNode, g.Disk)
				}
			}
			tbl.Rows = append(tbl.Rows, []string{money(ru.Cost.Total), f0(ru.Prediction.RatedMBps), f0(ru.UsableTB), f1(ru.Prediction.P99Ms), nodes,
				fmt.Sprintf("%d %s", ru.LoadBalancers, ru.LoadBalancer), ru.Prediction.Bottleneck.Tier + " " + ru.Prediction.Bottleneck.Resource})
		}
		d.Sections = append(d.Sections, htmlreport.DocSection{Title: "Runners-up", Tables: []htmlreport.DocTable{tbl}})
	}
	return d
}

func givenText(r *Result) string {
	s := ""
	add := func(x string) {
		if s != "" {
			s += ", "
		}
		s += x
	}
	if r.Given.CapacityTB > 0 {
		add(fmt.Sprintf("usable capacity ≥ %g TB", r.Given.CapacityTB))
	}
	if r.Given.ThroughputMBps > 0 {
		add(fmt.Sprintf("throughput ≥ %g MB/s", r.Given.ThroughputMBps))
	}
	if r.Given.ThroughputOps > 0 {
		add(fmt.Sprintf("throughput ≥ %g ops/s", r.Given.ThroughputOps))
	}
	if r.Given.Budget > 0 {
		add("budget ≤ " + money(r.Given.Budget))
	}
	if r.Options.P99Seconds > 0 {
		add(fmt.Sprintf("p99 ≤ %g ms", r.Options.P99Seconds*1000))
	}
	return s
}

// WriteHTMLFile writes the HTML report of r to path.
func WriteHTMLFile(path string, r *Result) error {
	if err := htmlreport.WriteDocFile(path, Doc(r)); err != nil {
		return fmt.Errorf("advisor: --html: %w", err)
	}
	return nil
}
