// Package htmlreport renders a bench.Report as one self-contained HTML page: header, summary
// tables per stage and operation, and inline SVG charts (throughput and latency over time with
// fault events marked, latency percentiles, the ramp curve with its knee, fill windows). The
// page references nothing outside itself (no scripts, fonts, images or style sheets), so it
// can be mailed, attached to a ticket or opened years later from an archive. It only reads
// reports; the numbers are bench's.
package htmlreport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/bench/workload"
)

// Write renders r as a complete HTML page. Nothing is written if rendering fails.
func Write(w io.Writer, r *bench.Report) error {
	if r == nil {
		return errors.New("htmlreport: no report")
	}
	return render(w, "report", buildPage(r))
}

// WriteFile writes r's page to path through a temporary file in the same directory, renamed
// into place, so that a reader (a browser reloading it, a CI artifact upload) never sees half
// a page.
func WriteFile(path string, r *bench.Report) error {
	return writeFileAtomic(path, func(w io.Writer) error { return Write(w, r) })
}

// WriteCompareFile writes the comparison page of runs to path, as WriteFile does.
func WriteCompareFile(path string, names []string, runs []*bench.Report) error {
	return writeFileAtomic(path, func(w io.Writer) error { return WriteCompare(w, names, runs) })
}

func writeFileAtomic(path string, write func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("htmlreport: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	// CreateTemp makes the file 0600; a report is meant to be shared like any output file.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("htmlreport: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("htmlreport: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("htmlreport: %w", err)
	}
	return nil
}

// render executes one of the page templates into a buffer first, so that a failure leaves w
// untouched rather than holding a truncated page.
func render(w io.Writer, name string, data any) error {
	var buf bytes.Buffer
	if err := pageTemplate.ExecuteTemplate(&buf, name, data); err != nil {
		return fmt.Errorf("htmlreport: rendering %s page: %w", name, err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("htmlreport: writing page: %w", err)
	}
	return nil
}

// page is what the "report" template shows.
type page struct {
	Title    string
	Header   []field
	Notes    []string // one-line facts: interruption, prepare, listing outcome
	Rows     []opRow  // the summary table: per stage and op, then the run's measured totals
	Stages   []stageView
	Fill     *fillView
	Samplers *samplersView
}

type field struct{ Name, Value string }

// opRow is one line of a summary table.
type opRow struct {
	Stage string // shown on a stage's first row only
	Op    string
	Total bool // a stage total or run total: shown in bold
	S     bench.OpStats
	Kinds string // error kinds, "503 SlowDown ×12, timeout ×3"
}

type stageView struct {
	ID     string // the HTML anchor; from the index, never the user's name
	Name   string
	Facts  []field
	Charts []*svgChart
	Events []eventView
	Ramp   *rampView
}

type eventView struct {
	bench.EventReport
	Recovered string
}

type rampView struct {
	Steps      []bench.RampStep
	Knee       int // the knee's concurrency, 0 if none
	StopReason string
}

type fillView struct {
	Chart   *svgChart
	Windows []bench.Window
}

func buildPage(r *bench.Report) *page {
	p := &page{Title: "cairn bench " + r.Kind}
	if r.Workload != "" {
		p.Title += ": " + r.Workload
	}
	add := func(name, value string) {
		if value != "" {
			p.Header = append(p.Header, field{name, value})
		}
	}
	add("kind", r.Kind)
	add("workload", r.Workload)
	add("protocol", r.Protocol)
	add("endpoint", r.Endpoint)
	add("bucket", r.Bucket)
	add("prefix", r.Prefix)
	if !r.Start.IsZero() {
		add("start", r.Start.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	add("duration", fmtSeconds(r.Seconds))
	if r.Concurrency > 0 {
		add("concurrency", fmt.Sprint(r.Concurrency))
	}
	if r.ObjectSize > 0 {
		add("object size", workload.FormatSize(r.ObjectSize))
	}
	add("client CPU", fmtCPU(r.ClientCPU))

	if r.Interrupted {
		p.Notes = append(p.Notes, "Interrupted: the figures cover what ran before the run was stopped.")
	}
	if pr := r.Prepare; pr != nil {
		var n int64
		if s := pr.Ops["put"]; s != nil {
			n = s.Operations
		}
		p.Notes = append(p.Notes, fmt.Sprintf("Prepare: %d objects written in %s (not measured).", n, fmtSeconds(pr.Seconds)))
	}
	if l := r.List; l != nil {
		line := fmt.Sprintf("Listed %d keys in %d pages: %.0f keys/s", l.Keys, l.Pages, l.KeysPerSec)
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
		p.Notes = append(p.Notes, line+".")
	}

	for i, st := range r.Stages {
		if st == nil {
			continue
		}
		p.Rows = append(p.Rows, stageRows(st.Name, st.Ops, &st.Total)...)
		p.Stages = append(p.Stages, buildStage(i, st))
	}
	label := "run"
	if len(r.Stages) > 0 {
		label = "all measured" // Report.Ops sums the main and ramp stages only
	}
	p.Rows = append(p.Rows, stageRows(label, r.Ops, nil)...)
	if len(r.Windows) > 0 {
		p.Fill = &fillView{Chart: windowsChart(r.Windows), Windows: r.Windows}
	}
	p.Samplers = buildSamplers(r)
	return p
}

// stageRows lists each operation of a stage, then the stage total when there is one and it
// adds something (more than one operation).
func stageRows(stage string, ops map[string]*bench.OpStats, total *bench.OpStats) []opRow {
	var rows []opRow
	for _, op := range sortedKeys(ops) {
		if s := ops[op]; s != nil {
			rows = append(rows, opRow{Op: op, S: *s, Kinds: fmtKinds(s.ErrorKinds)})
		}
	}
	if total != nil && (len(rows) != 1 || total.Operations+total.Errors != rows[0].S.Operations+rows[0].S.Errors) {
		rows = append(rows, opRow{Op: "total", Total: true, S: *total, Kinds: fmtKinds(total.ErrorKinds)})
	}
	if len(rows) == 0 {
		rows = append(rows, opRow{Op: "-"})
	}
	rows[0].Stage = stage
	return rows
}

func buildStage(i int, st *bench.StageReport) stageView {
	v := stageView{ID: fmt.Sprintf("stage-%d", i+1), Name: st.Name}
	add := func(name, value string) {
		if value != "" {
			v.Facts = append(v.Facts, field{name, value})
		}
	}
	add("kind", st.Kind)
	add("start", "+"+fmtSeconds(st.Start))
	add("length", fmtSeconds(st.Seconds))
	add("concurrency", fmt.Sprint(st.Concurrency))
	if st.TargetRate > 0 {
		add("target rate", fmtNum(st.TargetRate)+" ops/s (open loop)")
	}
	if st.Late > 0 {
		add("late starts", fmt.Sprint(st.Late))
	}
	if st.NoKey > 0 {
		add("skipped (no key)", fmt.Sprint(st.NoKey))
	}
	add("client CPU", fmtCPU(st.ClientCPU))
	if st.Interrupted {
		add("interrupted", "yes")
	}
	for _, e := range st.Events {
		ev := eventView{EventReport: e, Recovered: "not within the stage"}
		if e.RecoveredAfter != nil {
			ev.Recovered = fmtSeconds(*e.RecoveredAfter)
		}
		v.Events = append(v.Events, ev)
	}
	if rp := st.Ramp; rp != nil {
		v.Ramp = &rampView{Steps: rp.Steps, Knee: rp.Knee.Concurrency, StopReason: rp.StopReason}
	}
	// Prepare and cleanup are set-up and tear-down, and an idle stage sends nothing: their
	// tables say enough.
	if st.Kind != "prepare" && st.Kind != "cleanup" && st.Kind != "idle" {
		v.Charts = stageCharts(st)
	}
	return v
}

// stageCharts draws a measured stage: throughput, MB/s and latency over time (events marked),
// latency percentiles per operation and, for a ramp, the curve with its knee.
func stageCharts(st *bench.StageReport) []*svgChart {
	var marks []vMark
	for _, e := range st.Events {
		marks = append(marks, vMark{X: e.At, Band: e.During.Seconds, Label: e.Name, Color: colEvent})
	}
	// A sample's own length: whole seconds except a partial last one, whose rates bench scaled
	// but whose per-operation counts it did not.
	durs := make([]float64, len(st.Series))
	prev := 0.0
	for i, s := range st.Series {
		durs[i] = s.T - prev
		if !(durs[i] > 0) {
			durs[i] = 1
		}
		prev = s.T
	}

	var tput []lineSeries
	opSet := map[string]bool{}
	for op := range st.Ops {
		opSet[op] = true
	}
	for _, s := range st.Series {
		for op := range s.ByOp {
			opSet[op] = true
		}
	}
	// With one operation its line would hide under the total.
	if ops := sortedKeys(opSet); len(ops) > 1 {
		for i, op := range ops {
			ls := lineSeries{Name: op + " ops/s", Color: opColor(op, i), Width: 1.5}
			for j, s := range st.Series {
				ls.Pts = append(ls.Pts, xy{s.T, float64(s.ByOp[op]) / durs[j]})
			}
			tput = append(tput, ls)
		}
	}
	total := lineSeries{Name: "total ops/s", Color: colTotal, Width: 3}
	mb := lineSeries{Name: "MB/s", Color: colMB, Width: 2.5}
	errs := lineSeries{Name: "errors/s", Color: colErrors, Width: 1.5, Dash: "4 2"}
	workers := lineSeries{Name: "workers", Color: colWorkers, Width: 1.5, Dash: "2 2", Right: true}
	p50 := lineSeries{Name: "p50", Color: colP50, Width: 2}
	p99 := lineSeries{Name: "p99", Color: colP99, Width: 2}
	anyErr, varying := false, false
	for j, s := range st.Series {
		total.Pts = append(total.Pts, xy{s.T, s.OpsPerSec})
		mb.Pts = append(mb.Pts, xy{s.T, s.MBPerSec})
		errs.Pts = append(errs.Pts, xy{s.T, float64(s.Errors) / durs[j]})
		workers.Pts = append(workers.Pts, xy{s.T, float64(s.Concurrency)})
		anyErr = anyErr || s.Errors > 0
		varying = varying || s.Concurrency != st.Series[0].Concurrency
		// A second in which nothing completed has no latency: a gap, not a zero.
		l50, l99 := math.NaN(), math.NaN()
		if s.Operations > 0 {
			l50, l99 = s.P50, s.P99
		}
		p50.Pts = append(p50.Pts, xy{s.T, l50})
		p99.Pts = append(p99.Pts, xy{s.T, l99})
	}
	tput = append(tput, total)
	if anyErr {
		tput = append(tput, errs)
	}
	tspec := lineSpec{Title: st.Name + ": throughput", XLabel: "time since stage start (s)",
		YLabel: "operations/s", Series: tput, VMarks: marks}
	if varying || st.Kind == "ramp" {
		tspec.Series = append(tspec.Series, workers)
		tspec.Y2Label = "workers"
	}
	charts := []*svgChart{
		lineChart(tspec),
		lineChart(lineSpec{Title: st.Name + ": data rate", XLabel: "time since stage start (s)",
			YLabel: "MB/s (10⁶ bytes)", Series: []lineSeries{mb}, VMarks: marks}),
		lineChart(lineSpec{Title: st.Name + ": latency", XLabel: "time since stage start (s)",
			YLabel: "latency (ms)", Series: []lineSeries{p50, p99}, VMarks: marks}),
		percentileChart(st.Name+": latency percentiles", st.Ops),
	}
	if st.Ramp != nil {
		charts = append(charts, rampChart(st.Name+": ramp", st.Ramp))
	}
	return charts
}

// percentileChart draws p50, p95, p99 and p99.9 side by side for each operation.
func percentileChart(title string, ops map[string]*bench.OpStats) *svgChart {
	spec := barSpec{Title: title, YLabel: "latency (ms)", Bars: []barSeries{
		{Name: "p50", Color: "#9ecae1"}, {Name: "p95", Color: "#4292c6"},
		{Name: "p99", Color: "#08519c"}, {Name: "p99.9", Color: "#08306b"},
	}}
	for _, op := range sortedKeys(ops) {
		s := ops[op]
		if s == nil || s.Operations == 0 {
			continue
		}
		spec.Groups = append(spec.Groups, op)
		for i, v := range []float64{s.Latency.P50, s.Latency.P95, s.Latency.P99, s.Latency.P999} {
			spec.Bars[i].Values = append(spec.Bars[i].Values, v)
		}
	}
	return barChart(spec)
}

// rampChart draws throughput against concurrency, p99 latency on the right-hand axis, and the
// knee: the fewest workers that reached (nearly) the best throughput.
func rampChart(title string, rp *bench.RampReport) *svgChart {
	ops := lineSeries{Name: "ops/s", Color: colTotal, Width: 3}
	p99 := lineSeries{Name: "p99 latency (ms)", Color: colP99, Width: 2, Dash: "6 3", Right: true}
	for _, s := range rp.Steps {
		ops.Pts = append(ops.Pts, xy{float64(s.Concurrency), s.OpsPerSec})
		p99.Pts = append(p99.Pts, xy{float64(s.Concurrency), s.Latency.P99})
	}
	spec := lineSpec{Title: title, XLabel: "concurrency (workers)", YLabel: "operations/s",
		Y2Label: "p99 latency (ms)", Series: []lineSeries{ops, p99}}
	if k := rp.Knee; k.Concurrency > 0 {
		spec.PMarks = []pMark{{X: float64(k.Concurrency), Y: k.OpsPerSec, Color: colKnee,
			Label: fmt.Sprintf("knee: %d workers, %s ops/s", k.Concurrency, fmtNum(k.OpsPerSec))}}
	}
	return lineChart(spec)
}

// windowsChart draws a fill's throughput per window against the objects written so far, so
// that a store slowing down as it grows shows as a falling line.
func windowsChart(ws []bench.Window) *svgChart {
	ops := lineSeries{Name: "ops/s", Color: colTotal, Width: 3}
	p99 := lineSeries{Name: "p99 latency (ms)", Color: colP99, Width: 2, Dash: "6 3", Right: true}
	for _, w := range ws {
		ops.Pts = append(ops.Pts, xy{float64(w.Through), w.OpsPerSec})
		p99.Pts = append(p99.Pts, xy{float64(w.Through), w.Latency.P99})
	}
	return lineChart(lineSpec{Title: "fill: throughput per window", XLabel: "objects written",
		YLabel: "operations/s", Y2Label: "p99 latency (ms)", Series: []lineSeries{ops, p99}})
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func fmtKinds(kinds map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(kinds) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, kinds[k]))
	}
	return strings.Join(parts, ", ")
}

func fmtSeconds(s float64) string {
	if !finite(s) {
		return "-"
	}
	if s < 120 {
		return fmt.Sprintf("%.1f s", s)
	}
	return fmt.Sprintf("%.0f s (%s)", s, time.Duration(s*float64(time.Second)).Round(time.Second))
}

func fmtCPU(c bench.CPU) string {
	if c == (bench.CPU{}) {
		return ""
	}
	return fmt.Sprintf("%.2f s user + %.2f s system, %.4f s per 1000 requests, %.2f cores busy",
		c.UserSeconds, c.SystemSeconds, c.SecondsPer1000Ops, c.Utilization)
}
