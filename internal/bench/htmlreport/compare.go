package htmlreport

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/bench/workload"
)

// The comparison page is `cairn bench compare` as HTML: the same per-operation metrics and
// ratios to the first run (the baseline), plus charts that overlay the runs.

// runColors tell runs apart on comparison charts; the first run, the baseline, keeps the
// colour a single-run page gives its throughput line.
var runColors = []string{colTotal, "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"}

type comparePage struct {
	Title  string
	Names  []string
	Runs   []compareRun
	Rows   []compareRow
	Charts []*svgChart
}

type compareRun struct {
	Name, Kind, Workload, Endpoint, Start, Duration, Concurrency, Size, CPU string
}

type compareRow struct {
	Op, Metric string
	First      bool // first metric of an operation: carries the op's name and a rule above
	Cells      []compareCell
}

type compareCell struct {
	Value    string
	Ratio    string // to the first run; empty for the first run itself or without a base
	HasRatio bool   // a ratio column exists (every run but the first)
	Better   bool   // the ratio favours this run
	Worse    bool
}

type metric struct {
	name         string
	higherBetter bool
	get          func(*bench.OpStats) float64
	count        bool // a whole number: no decimals
}

var compareMetrics = []metric{
	{"ops/s", true, func(s *bench.OpStats) float64 { return s.OpsPerSec }, false},
	{"MB/s", true, func(s *bench.OpStats) float64 { return s.MBPerSec }, false},
	{"p50 ms", false, func(s *bench.OpStats) float64 { return s.Latency.P50 }, false},
	{"p99 ms", false, func(s *bench.OpStats) float64 { return s.Latency.P99 }, false},
	{"p99.9 ms", false, func(s *bench.OpStats) float64 { return s.Latency.P999 }, false},
	{"errors", false, func(s *bench.OpStats) float64 { return float64(s.Errors) }, true},
}

// WriteCompare renders runs side by side on one page, each named by names (file names, say):
// per-operation metrics with ratios to the first run, and charts overlaying them.
func WriteCompare(w io.Writer, names []string, runs []*bench.Report) error {
	if len(runs) < 2 || len(names) != len(runs) {
		return errors.New("htmlreport: compare needs two or more runs, each with a name")
	}
	for i, r := range runs {
		if r == nil {
			return fmt.Errorf("htmlreport: run %q has no report", names[i])
		}
	}
	return render(w, "compare", buildCompare(names, runs))
}

func buildCompare(names []string, runs []*bench.Report) *comparePage {
	p := &comparePage{Title: "cairn bench compare", Names: names}
	opSet := map[string]bool{}
	for i, r := range runs {
		cr := compareRun{Name: names[i], Kind: r.Kind, Workload: r.Workload, Endpoint: r.Endpoint,
			Duration: fmtSeconds(r.Seconds), Concurrency: fmt.Sprint(r.Concurrency),
			CPU: fixed(r.ClientCPU.SecondsPer1000Ops, 4)}
		if !r.Start.IsZero() {
			cr.Start = r.Start.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		if r.ObjectSize > 0 {
			cr.Size = workload.FormatSize(r.ObjectSize)
		}
		p.Runs = append(p.Runs, cr)
		for op := range r.Ops {
			opSet[op] = true
		}
	}
	ops := sortedKeys(opSet)
	for _, op := range ops {
		for mi, m := range compareMetrics {
			row := compareRow{Op: op, Metric: m.name, First: mi == 0}
			var base *bench.OpStats
			for i, r := range runs {
				s := r.Ops[op]
				if i == 0 {
					base = s
				}
				cell := compareCell{Value: "-", HasRatio: i > 0}
				switch {
				case s != nil && m.count:
					cell.Value = fixed(m.get(s), 0)
				case s != nil:
					cell.Value = fmtNum(m.get(s))
				}
				if i > 0 && s != nil && base != nil && m.get(base) > 0 {
					ratio := m.get(s) / m.get(base)
					cell.Ratio = fmt.Sprintf("%.2f×", ratio)
					// Within 2% is noise for a benchmark: neither better nor worse.
					cell.Better = m.higherBetter && ratio > 1.02 || !m.higherBetter && ratio < 0.98
					cell.Worse = m.higherBetter && ratio < 0.98 || !m.higherBetter && ratio > 1.02
				}
				row.Cells = append(row.Cells, cell)
			}
			p.Rows = append(p.Rows, row)
		}
	}

	// Bars: throughput and tail latency of each operation, one bar per run.
	tput := barSpec{Title: "throughput per operation", YLabel: "operations/s", Groups: ops}
	tail := barSpec{Title: "p99 latency per operation", YLabel: "latency (ms)", Groups: ops}
	for i, r := range runs {
		tb := barSeries{Name: names[i], Color: runColors[i%len(runColors)]}
		lb := tb
		for _, op := range ops {
			v, l := math.NaN(), math.NaN()
			if s := r.Ops[op]; s != nil {
				v, l = s.OpsPerSec, s.Latency.P99
			}
			tb.Values = append(tb.Values, v)
			lb.Values = append(lb.Values, l)
		}
		tput.Bars = append(tput.Bars, tb)
		tail.Bars = append(tail.Bars, lb)
	}
	p.Charts = append(p.Charts, barChart(tput), barChart(tail))

	// Lines: the first main stage's throughput over time, and the ramp curves, of every run
	// that has them.
	over := lineSpec{Title: "throughput over time (first main stage)", XLabel: "time since stage start (s)",
		YLabel: "operations/s"}
	curve := lineSpec{Title: "ramp: throughput by concurrency", XLabel: "concurrency (workers)", YLabel: "operations/s"}
	for i, r := range runs {
		col := runColors[i%len(runColors)]
		if st := firstStage(r, "main"); st != nil && len(st.Series) > 0 {
			ls := lineSeries{Name: names[i], Color: col, Width: 2}
			for _, s := range st.Series {
				ls.Pts = append(ls.Pts, xy{s.T, s.OpsPerSec})
			}
			over.Series = append(over.Series, ls)
		}
		if st := firstStage(r, "ramp"); st != nil && st.Ramp != nil && len(st.Ramp.Steps) > 0 {
			ls := lineSeries{Name: names[i], Color: col, Width: 2}
			for _, s := range st.Ramp.Steps {
				ls.Pts = append(ls.Pts, xy{float64(s.Concurrency), s.OpsPerSec})
			}
			curve.Series = append(curve.Series, ls)
			if k := st.Ramp.Knee; k.Concurrency > 0 {
				curve.PMarks = append(curve.PMarks, pMark{X: float64(k.Concurrency), Y: k.OpsPerSec, Color: col,
					Label: fmt.Sprintf("%s: knee %d", names[i], k.Concurrency)})
			}
		}
	}
	if len(over.Series) > 0 {
		p.Charts = append(p.Charts, lineChart(over))
	}
	if len(curve.Series) > 0 {
		p.Charts = append(p.Charts, lineChart(curve))
	}
	return p
}

func firstStage(r *bench.Report, kind string) *bench.StageReport {
	for _, st := range r.Stages {
		if st != nil && st.Kind == kind {
			return st
		}
	}
	return nil
}
