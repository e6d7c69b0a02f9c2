package htmlreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Charts are computed here as plain geometry (rectangles, lines, paths, circles, texts) and
// drawn by the page template ({{template "svg"}} in page.go). Keeping every piece of markup in
// html/template means no label (a workload or event name from a user's file) ever reaches the
// page unescaped, and keeping the arithmetic here means a NaN or an infinity is caught once,
// before it can become an invalid SVG coordinate.

// svgChart is one chart: a fixed-size SVG canvas and what to draw on it, back to front.
type svgChart struct {
	Title   string // the figure caption, also the SVG's accessible name
	W, H    int
	Rects   []svgRect
	Lines   []svgLine
	Paths   []svgPath
	Circles []svgCircle
	Texts   []svgText
}

type svgRect struct {
	X, Y, W, H float64
	Fill       string
	Opacity    float64
	Tip        string // hover text (an SVG <title>), empty for none
}

type svgLine struct {
	X1, Y1, X2, Y2 float64
	Stroke         string
	Width          float64
	Dash           string
}

type svgPath struct {
	D      string // built only from numbers formatted here
	Stroke string
	Width  float64
	Dash   string
}

type svgCircle struct {
	X, Y, R float64
	Fill    string
	Stroke  string
	Tip     string
}

type svgText struct {
	X, Y   float64
	Text   string
	Anchor string // start, middle, end
	Fill   string
	Size   float64
	Rotate bool // -90°, for a vertical axis label
	Bold   bool
}

// Colours. The browser test looks for colTotal and colKnee pixels in a screenshot, so each is
// used for one purpose only.
const (
	colTotal   = "#1f77b4" // total ops/s over time, and ops/s of the ramp curve
	colKnee    = "#d62728" // the ramp's knee marker
	colMB      = "#6a51a3"
	colP50     = "#3182bd"
	colP99     = "#e6550d"
	colErrors  = "#8b0000"
	colWorkers = "#969696"
	colEvent   = "#b8860b"
	colAxis    = "#888888"
	colGrid    = "#e6e6e6"
	colText    = "#333333"
)

// opColors gives each operation kind a stable colour across charts and pages.
var opColors = map[string]string{
	"get": "#2ca02c", "put": "#ff7f0e", "delete": "#9467bd", "head": "#8c564b", "list": "#17becf",
}

var spareColors = []string{"#bcbd22", "#e377c2", "#7f7f7f", "#aec7e8", "#98df8a"}

func opColor(op string, i int) string {
	if c, ok := opColors[op]; ok {
		return c
	}
	return spareColors[i%len(spareColors)]
}

// Canvas size and margins. Charts are drawn at their natural size (no viewBox scaling) so
// that stroke colours reach the screen unblended.
const (
	chartW   = 600
	chartH   = 280
	marginT  = 30 // legend
	marginB  = 42 // x tick labels and axis label
	marginL  = 60
	marginR  = 16
	marginR2 = 60 // with a right-hand axis
)

type xy struct{ X, Y float64 }

// lineSeries is one line. A point whose Y is not finite is a gap: the line breaks there
// (latency of a second in which nothing completed is unknown, not zero).
type lineSeries struct {
	Name  string
	Color string
	Pts   []xy
	Width float64
	Dash  string
	Right bool // measured on the right-hand axis
}

// vMark is a labelled vertical line at X (an event), optionally shading Band x-units after it.
type vMark struct {
	X     float64
	Band  float64
	Label string
	Color string
}

// pMark is a labelled dot at a data point (the knee of a ramp).
type pMark struct {
	X, Y  float64
	Right bool
	Label string
	Color string
}

type lineSpec struct {
	Title, XLabel, YLabel, Y2Label string
	Series                         []lineSeries
	VMarks                         []vMark
	PMarks                         []pMark
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// axis maps data values in [lo, hi] to pixels in [p0, p1].
type axis struct {
	lo, hi, step float64
	ticks        []float64
	p0, p1       float64
}

func (a axis) pos(v float64) float64 {
	if !finite(v) || a.hi <= a.lo {
		return a.p0
	}
	f := (v - a.lo) / (a.hi - a.lo)
	f = math.Max(0, math.Min(1, f))
	return a.p0 + f*(a.p1-a.p0)
}

// niceAxis extends [lo, hi] to round tick steps (1, 2 or 5 times a power of ten) with about
// target ticks. Degenerate ranges (no data, one point, all equal) get a usable axis instead of
// a division by zero.
func niceAxis(lo, hi float64, target int, p0, p1 float64) axis {
	if !finite(lo) || !finite(hi) || !finite(hi-lo) {
		lo, hi = 0, 1
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		switch {
		case lo > 0:
			lo = 0
		case lo < 0:
			hi = 0
		default:
			hi = 1
		}
	}
	step := niceStep((hi - lo) / float64(target))
	a := axis{lo: math.Floor(lo/step) * step, hi: math.Ceil(hi/step) * step, step: step, p0: p0, p1: p1}
	for i := 0; i <= 4*target; i++ {
		v := a.lo + float64(i)*step
		if v > a.hi+step/2 {
			break
		}
		a.ticks = append(a.ticks, v)
	}
	return a
}

// alignedAxis is niceAxis with exactly n round steps.
func alignedAxis(lo, hi float64, n int, p0, p1 float64) axis {
	a := niceAxis(lo, hi, max(n, 1), p0, p1)
	if n < 1 {
		return a
	}
	// niceAxis may have rounded lo and hi outwards; widen the step until n of them cover hi.
	step, start := a.step, a.lo
	for i := 0; i < 10 && start+float64(n)*step < a.hi; i++ {
		step = niceStep(step * 1.01)
		start = math.Floor(a.lo/step) * step
	}
	a.lo, a.step, a.hi, a.ticks = start, step, start+float64(n)*step, nil
	for i := 0; i <= n; i++ {
		a.ticks = append(a.ticks, a.lo+float64(i)*step)
	}
	return a
}

func niceStep(raw float64) float64 {
	if !(raw > 0) || !finite(raw) {
		return 1
	}
	base := math.Pow(10, math.Floor(math.Log10(raw)))
	var f float64
	switch m := raw / base; {
	case m <= 1:
		f = 1
	case m <= 2:
		f = 2
	case m <= 5:
		f = 5
	default:
		f = 10
	}
	return f * base
}

// label prints a tick value with as many decimals as the step needs, and k/M for large axes
// (decided once per axis so that 0, 5000, 10k never mix).
func (a axis) label(v float64) string {
	if v == 0 {
		return "0"
	}
	scale, suffix := 1.0, ""
	top := math.Max(math.Abs(a.lo), math.Abs(a.hi))
	switch {
	case top >= 1e6 && a.step >= 1e5:
		scale, suffix = 1e6, "M"
	case top >= 1e4 && a.step >= 1e3:
		scale, suffix = 1e3, "k"
	}
	dec := 0
	if s := a.step / scale; s < 1 {
		dec = min(int(math.Ceil(-math.Log10(s)-1e-9)), 6)
	}
	s := strconv.FormatFloat(v/scale, 'f', dec, 64)
	if strings.Trim(s, "-0.") == "" {
		return "0" // not "-0" or "0k"
	}
	return s + suffix
}

// frame holds what every chart with axes shares: canvas, plot area and axes.
type frame struct {
	c           *svgChart
	x, y, y2    axis
	left, right float64 // plot area, pixels
	top, bottom float64
	hasY2       bool
}

func newFrame(title string, right bool) *frame {
	mr := float64(marginR)
	if right {
		mr = marginR2
	}
	return &frame{
		c:      &svgChart{Title: title, W: chartW, H: chartH},
		left:   marginL,
		right:  chartW - mr,
		top:    marginT,
		bottom: chartH - marginB,
		hasY2:  right,
	}
}

func (f *frame) text(x, y float64, s, anchor, fill string, size float64) {
	f.c.Texts = append(f.c.Texts, svgText{X: x, Y: y, Text: s, Anchor: anchor, Fill: fill, Size: size})
}

// axes draws grid lines, ticks, tick labels and axis titles.
func (f *frame) axes(xLabel, yLabel, y2Label string, xTicks bool) {
	c := f.c
	for _, v := range f.y.ticks {
		py := f.y.pos(v)
		c.Lines = append(c.Lines, svgLine{X1: f.left, Y1: py, X2: f.right, Y2: py, Stroke: colGrid, Width: 1})
		f.text(f.left-6, py+4, f.y.label(v), "end", colText, 11)
	}
	if f.hasY2 {
		for _, v := range f.y2.ticks {
			f.text(f.right+6, f.y2.pos(v)+4, f.y2.label(v), "start", colText, 11)
		}
		c.Lines = append(c.Lines, svgLine{X1: f.right, Y1: f.top, X2: f.right, Y2: f.bottom, Stroke: colAxis, Width: 1})
		c.Texts = append(c.Texts, svgText{X: chartW - 12, Y: (f.top + f.bottom) / 2, Text: y2Label,
			Anchor: "middle", Fill: colText, Size: 12, Rotate: true})
	}
	if xTicks {
		for _, v := range f.x.ticks {
			px := f.x.pos(v)
			c.Lines = append(c.Lines, svgLine{X1: px, Y1: f.bottom, X2: px, Y2: f.bottom + 5, Stroke: colAxis, Width: 1})
			f.text(px, f.bottom+18, f.x.label(v), "middle", colText, 11)
		}
	}
	c.Lines = append(c.Lines,
		svgLine{X1: f.left, Y1: f.bottom, X2: f.right, Y2: f.bottom, Stroke: colAxis, Width: 1},
		svgLine{X1: f.left, Y1: f.top, X2: f.left, Y2: f.bottom, Stroke: colAxis, Width: 1})
	f.text((f.left+f.right)/2, chartH-6, xLabel, "middle", colText, 12)
	c.Texts = append(c.Texts, svgText{X: 14, Y: (f.top + f.bottom) / 2, Text: yLabel,
		Anchor: "middle", Fill: colText, Size: 12, Rotate: true})
}

type legendItem struct{ name, color string }

// legend lays items out left to right along the top margin, wrapping if they do not fit.
// Widths are estimated (7 px a character at 11 px): no fonts are measured without a browser.
func (f *frame) legend(items []legendItem) {
	x, y := f.left, 14.0
	for _, it := range items {
		w := 22 + 7*float64(len([]rune(it.name))) + 12
		if x+w > chartW && x > f.left {
			x, y = f.left, y+13
		}
		f.c.Rects = append(f.c.Rects, svgRect{X: x, Y: y - 5, W: 16, H: 4, Fill: it.color, Opacity: 1})
		f.text(x+20, y, it.name, "start", colText, 11)
		x += w
	}
}

// lineChart draws series of points against shared x and y axes (and a right-hand y axis for
// series marked Right), with vertical event marks and point marks.
func lineChart(s lineSpec) *svgChart {
	hasRight := false
	xlo, xhi, ylo, yhi, y2lo, y2hi := math.Inf(1), math.Inf(-1), 0.0, 0.0, 0.0, 0.0
	for _, ser := range s.Series {
		hasRight = hasRight || ser.Right
		for _, p := range ser.Pts {
			if !finite(p.X) || !finite(p.Y) {
				continue
			}
			xlo, xhi = math.Min(xlo, p.X), math.Max(xhi, p.X)
			if ser.Right {
				y2lo, y2hi = math.Min(y2lo, p.Y), math.Max(y2hi, p.Y)
			} else {
				ylo, yhi = math.Min(ylo, p.Y), math.Max(yhi, p.Y)
			}
		}
	}
	empty := xlo > xhi
	if empty {
		xlo, xhi = 0, 1
	}
	// Start x at zero unless the data sits far from it: a stage's first sample is at t=1 and an
	// event at t=0 must fit; a ramp's first step at 4 workers still reads best from 0.
	if xlo > 0 && xlo <= (xhi-xlo) {
		xlo = 0
	}
	for _, m := range s.VMarks {
		if finite(m.X) {
			xlo, xhi = math.Min(xlo, m.X), math.Max(xhi, m.X)
		}
	}
	f := newFrame(s.Title, hasRight)
	f.x = niceAxis(xlo, xhi, 8, f.left, f.right)
	f.y = niceAxis(ylo, yhi, 5, f.bottom, f.top)
	if hasRight {
		// Give the right-hand axis as many steps as the left-hand one, so both share its grid.
		f.y2 = alignedAxis(y2lo, y2hi, len(f.y.ticks)-1, f.bottom, f.top)
	}
	f.axes(s.XLabel, s.YLabel, s.Y2Label, true)

	c := f.c
	for i, m := range s.VMarks {
		if !finite(m.X) {
			continue
		}
		px := f.x.pos(m.X)
		if m.Band > 0 && finite(m.Band) {
			end := f.x.pos(m.X + m.Band)
			c.Rects = append(c.Rects, svgRect{X: px, Y: f.top, W: end - px, H: f.bottom - f.top,
				Fill: m.Color, Opacity: 0.12, Tip: m.Label})
		}
		c.Lines = append(c.Lines, svgLine{X1: px, Y1: f.top, X2: px, Y2: f.bottom, Stroke: m.Color, Width: 1.5, Dash: "5 3"})
		anchor, dx := "start", 4.0
		if px > f.left+0.75*(f.right-f.left) {
			anchor, dx = "end", -4
		}
		// Stagger labels so that events a few seconds apart stay readable.
		f.text(px+dx, f.top+11+float64(i%3)*12, m.Label, anchor, m.Color, 11)
	}

	var items []legendItem
	for _, ser := range s.Series {
		items = append(items, legendItem{ser.Name, ser.Color})
		ax := f.y
		if ser.Right {
			ax = f.y2
		}
		w := ser.Width
		if w == 0 {
			w = 2
		}
		var d strings.Builder
		run := 0 // points in the current unbroken run
		var last xy
		flush := func() {
			if run == 1 { // a lone point draws nothing as a path
				c.Circles = append(c.Circles, svgCircle{X: last.X, Y: last.Y, R: w + 1, Fill: ser.Color})
			}
			run = 0
		}
		for _, p := range ser.Pts {
			if !finite(p.X) || !finite(p.Y) {
				flush()
				continue
			}
			px, py := f.x.pos(p.X), ax.pos(p.Y)
			cmd := "L"
			if run == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f ", cmd, px, py)
			last = xy{px, py}
			run++
		}
		flush()
		if d.Len() > 0 {
			c.Paths = append(c.Paths, svgPath{D: strings.TrimSpace(d.String()), Stroke: ser.Color, Width: w, Dash: ser.Dash})
		}
	}
	f.legend(items)

	for i, m := range s.PMarks {
		if !finite(m.X) || !finite(m.Y) {
			continue
		}
		ax := f.y
		if m.Right {
			ax = f.y2
		}
		px, py := f.x.pos(m.X), ax.pos(m.Y)
		c.Lines = append(c.Lines, svgLine{X1: px, Y1: py, X2: px, Y2: f.bottom, Stroke: m.Color, Width: 1, Dash: "3 3"})
		c.Circles = append(c.Circles, svgCircle{X: px, Y: py, R: 7, Fill: m.Color, Stroke: "#ffffff", Tip: m.Label})
		anchor, dx := "start", 10.0
		if px > (f.left+f.right)/2 {
			anchor, dx = "end", -10
		}
		// Above the point, or below when there is no room; marks of several runs step down.
		ly := py - 10 + float64(i)*16
		if py-10 < f.top+10 {
			ly = py + 20 + float64(i)*16
		}
		c.Texts = append(c.Texts, svgText{X: px + dx, Y: ly, Text: m.Label, Anchor: anchor, Fill: m.Color, Size: 12, Bold: true})
	}
	if empty {
		f.text((f.left+f.right)/2, (f.top+f.bottom)/2, "no data", "middle", colAxis, 14)
	}
	return c
}

// barSeries is one bar in every group (p99 of each operation).
type barSeries struct {
	Name   string
	Color  string
	Values []float64 // one per group; missing or non-finite values draw no bar
}

type barSpec struct {
	Title, YLabel string
	Groups        []string
	Bars          []barSeries
}

// barChart draws grouped bars: one group per label along x, one bar per series in each.
func barChart(s barSpec) *svgChart {
	f := newFrame(s.Title, false)
	hi := 0.0
	for _, b := range s.Bars {
		for _, v := range b.Values {
			if finite(v) {
				hi = math.Max(hi, v)
			}
		}
	}
	f.y = niceAxis(0, hi, 5, f.bottom, f.top)
	f.axes("", s.YLabel, "", false)
	c := f.c
	var items []legendItem
	for _, b := range s.Bars {
		items = append(items, legendItem{b.Name, b.Color})
	}
	f.legend(items)
	if len(s.Groups) == 0 || len(s.Bars) == 0 {
		f.text((f.left+f.right)/2, (f.top+f.bottom)/2, "no data", "middle", colAxis, 14)
		return c
	}
	gw := (f.right - f.left) / float64(len(s.Groups))
	bw := math.Min(gw*0.8/float64(len(s.Bars)), 40)
	for g, name := range s.Groups {
		gx := f.left + gw*float64(g) + (gw-bw*float64(len(s.Bars)))/2
		for i, b := range s.Bars {
			if g >= len(b.Values) || !finite(b.Values[g]) {
				continue
			}
			v := b.Values[g]
			py := f.y.pos(math.Max(v, 0))
			c.Rects = append(c.Rects, svgRect{X: gx + bw*float64(i), Y: py, W: math.Max(bw-1, 1), H: f.bottom - py,
				Fill: b.Color, Opacity: 1, Tip: fmt.Sprintf("%s %s: %s", name, b.Name, fmtNum(v))})
		}
		f.text(f.left+gw*(float64(g)+0.5), f.bottom+18, name, "middle", colText, 12)
	}
	return c
}

// fmtNum prints a measurement with precision suited to its size.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case !finite(v):
		return "-"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}
