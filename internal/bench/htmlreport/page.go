package htmlreport

import (
	"html/template"
	"math"
	"strconv"
)

// The page templates. html/template escapes every value by context, so names and outputs
// from workload files, servers and fault commands cannot inject markup. The markup is kept
// well-formed XML (void elements self-closed, every element closed) so that tests can check
// its structure with encoding/xml, and free of external references: the style sheet is inline,
// charts are inline SVG, there are no scripts, fonts or images.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"c":       coord,
	"opacity": opacity,
	"f1":      func(v float64) string { return fixed(v, 1) },
	"f2":      func(v float64) string { return fixed(v, 2) },
	"f3":      func(v float64) string { return fixed(v, 3) },
	"sec":     fmtSeconds,
}).Parse(pageHTML))

// coord prints an SVG coordinate or length. Chart code never produces a non-finite value; this
// is the last guard that keeps "NaN" out of an attribute whatever happens upstream.
func coord(v float64) string {
	if !finite(v) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

func opacity(v float64) string {
	if !finite(v) || v <= 0 || v >= 1 {
		return "1"
	}
	return coord(v)
}

func fixed(v float64, dec int) string {
	if !finite(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

const pageHTML = `
{{- define "head" -}}
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.}}</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#222;margin:16px auto;max-width:1250px;padding:0 12px}
h1{font-size:22px;margin:8px 0}
h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:8px 0}
th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
th{background:#f4f4f4;font-weight:600}
table.num td,table.num th{text-align:right}
table.num td.l,table.num th.l{text-align:left}
table.meta th{background:none;text-align:left;padding-right:16px}
tr.first td{border-top:2px solid #ccc}
tr.total td{font-weight:bold}
tr.knee td{background:#fde0dd;font-weight:bold}
.bad{color:#b00000}
.good{color:#1a7f37}
.note{background:#fff8e1;padding:6px 10px;border-left:3px solid #f0b400}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(604px,1fr));gap:12px}
figure{margin:0}
figcaption{font-weight:600;margin:4px 0}
svg.chart{background:#fff;border:1px solid #eee;max-width:100%;height:auto}
pre{background:#f6f6f6;padding:8px;overflow:auto;max-height:300px;white-space:pre-wrap;margin:4px 0}
footer{margin-top:32px;color:#888;font-size:12px}
</style>
</head>
{{- end}}

{{- define "svg"}}
<figure>
<figcaption>{{.Title}}</figcaption>
<svg class="chart" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Title}}">
<rect x="0" y="0" width="{{.W}}" height="{{.H}}" fill="#ffffff"/>
{{- range .Lines}}
<line x1="{{c .X1}}" y1="{{c .Y1}}" x2="{{c .X2}}" y2="{{c .Y2}}" stroke="{{.Stroke}}" stroke-width="{{c .Width}}"{{if .Dash}} stroke-dasharray="{{.Dash}}"{{end}}/>
{{- end}}
{{- range .Rects}}
<rect x="{{c .X}}" y="{{c .Y}}" width="{{c .W}}" height="{{c .H}}" fill="{{.Fill}}" fill-opacity="{{opacity .Opacity}}">{{if .Tip}}<title>{{.Tip}}</title>{{end}}</rect>
{{- end}}
{{- range .Paths}}
<path d="{{.D}}" fill="none" stroke="{{.Stroke}}" stroke-width="{{c .Width}}" stroke-linejoin="round" stroke-linecap="round"{{if .Dash}} stroke-dasharray="{{.Dash}}"{{end}}/>
{{- end}}
{{- range .Circles}}
<circle cx="{{c .X}}" cy="{{c .Y}}" r="{{c .R}}" fill="{{.Fill}}"{{if .Stroke}} stroke="{{.Stroke}}" stroke-width="1.5"{{end}}>{{if .Tip}}<title>{{.Tip}}</title>{{end}}</circle>
{{- end}}
{{- range .Texts}}
<text x="{{c .X}}" y="{{c .Y}}" text-anchor="{{.Anchor}}" fill="{{.Fill}}" font-size="{{c .Size}}"{{if .Bold}} font-weight="bold"{{end}}{{if .Rotate}} transform="rotate(-90 {{c .X}} {{c .Y}})"{{end}}>{{.Text}}</text>
{{- end}}
</svg>
</figure>
{{- end}}

{{- define "optable"}}
<table class="num">
<thead><tr><th class="l">stage</th><th class="l">op</th><th>operations</th><th>errors</th><th>ops/s</th><th>MB/s</th><th>mean ms</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>TTFB p50 ms</th><th>TTFB p99 ms</th><th class="l">error kinds</th></tr></thead>
<tbody>
{{- range .}}
<tr class="{{if .Stage}}first{{end}}{{if .Total}} total{{end}}"><td class="l">{{.Stage}}</td><td class="l">{{.Op}}</td><td>{{.S.Operations}}</td><td{{if .S.Errors}} class="bad"{{end}}>{{.S.Errors}}</td><td>{{f1 .S.OpsPerSec}}</td><td>{{f2 .S.MBPerSec}}</td><td>{{f3 .S.Latency.Mean}}</td><td>{{f3 .S.Latency.P50}}</td><td>{{f3 .S.Latency.P95}}</td><td>{{f3 .S.Latency.P99}}</td><td>{{f3 .S.Latency.P999}}</td><td>{{f3 .S.Latency.Max}}</td>
{{- with .S.TTFB}}<td>{{f3 .P50}}</td><td>{{f3 .P99}}</td>{{else}}<td></td><td></td>{{end}}<td class="l bad">{{.Kinds}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}

{{- define "phase"}}{{f1 .OpsPerSec}} ops/s, {{.Errors}} errors, {{sec .Seconds}}{{end}}

{{- define "events"}}
<h3>Events</h3>
<table class="num">
<thead><tr><th class="l">event</th><th>at</th><th>took</th><th>exit</th><th>before</th><th>during</th><th>after</th><th>dip</th><th>recovered after</th></tr></thead>
<tbody>
{{- range .}}
<tr><td class="l">{{.Name}}</td><td>{{sec .At}}</td><td>{{sec .Elapsed}}</td><td{{if or .ExitCode .Error}} class="bad"{{end}}>{{.ExitCode}}</td><td>{{template "phase" .Before}}</td><td>{{template "phase" .During}}</td><td>{{template "phase" .After}}</td><td>{{f1 .Dip}} %</td><td>{{.Recovered}}</td></tr>
{{- end}}
</tbody>
</table>
{{- range .}}
<details><summary>{{.Name}}: <code>{{.Command}}</code>{{if .Error}} <span class="bad">{{.Error}}</span>{{end}}</summary>
{{- if .Output}}<pre>{{.Output}}</pre>{{else}}<p>(no output)</p>{{end}}</details>
{{- end}}
{{- end}}

{{- define "ramp"}}
<h3>Ramp</h3>
<p>Stopped: {{.StopReason}}.{{if .Knee}} Knee at {{.Knee}} workers: more only add latency.{{end}}</p>
<table class="num">
<thead><tr><th>workers</th><th>seconds</th><th>operations</th><th>errors</th><th>ops/s</th><th>MB/s</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th></tr></thead>
<tbody>
{{- $knee := .Knee}}
{{- range .Steps}}
<tr{{if eq .Concurrency $knee}} class="knee"{{end}}><td>{{.Concurrency}}</td><td>{{f1 .Seconds}}</td><td>{{.Operations}}</td><td{{if .Errors}} class="bad"{{end}}>{{.Errors}}</td><td>{{f1 .OpsPerSec}}</td><td>{{f2 .MBPerSec}}</td><td>{{f3 .Latency.P50}}</td><td>{{f3 .Latency.P99}}</td><td>{{f3 .Latency.P999}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}

{{- define "report"}}{{template "head" .Title}}
<body>
<h1>{{.Title}}</h1>
<table class="meta">
{{- range .Header}}
<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>
{{- end}}
</table>
{{- range .Notes}}
<p class="note">{{.}}</p>
{{- end}}
<h2>Summary</h2>
{{template "optable" .Rows}}
{{- range .Stages}}
<section id="{{.ID}}">
<h2>Stage {{.Name}}</h2>
<table class="meta"><tr>{{range .Facts}}<th>{{.Name}}</th><td>{{.Value}}</td>{{end}}</tr></table>
{{- if .Charts}}
<div class="charts">
{{- range .Charts}}{{template "svg" .}}{{end}}
</div>
{{- end}}
{{- if .Events}}{{template "events" .Events}}{{end}}
{{- with .Ramp}}{{template "ramp" .}}{{end}}
</section>
{{- end}}
{{- with .Samplers}}
<h2>Samplers</h2>
<div class="charts">
{{- range .Charts}}{{template "svg" .}}{{end}}
</div>
<table class="num">
<thead><tr><th class="l">stage</th><th>seconds</th><th>p95 ms</th>{{range .Names}}<th>{{.}}: mean</th><th>{{.}}: last</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr><td class="l">{{.Stage}}</td><td>{{f1 .Seconds}}</td><td>{{f3 .P95}}</td>{{range .Cells}}<td>{{f2 .}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- with .Fill}}
<h2>Fill windows</h2>
<div class="charts">{{template "svg" .Chart}}</div>
<table class="num">
<thead><tr><th>window</th><th>through</th><th>seconds</th><th>ops/s</th><th>MB/s</th><th>p50 ms</th><th>p99 ms</th><th>errors</th></tr></thead>
<tbody>
{{- range .Windows}}
<tr><td>{{.Index}}</td><td>{{.Through}}</td><td>{{f2 .Seconds}}</td><td>{{f1 .OpsPerSec}}</td><td>{{f2 .MBPerSec}}</td><td>{{f3 .Latency.P50}}</td><td>{{f3 .Latency.P99}}</td><td{{if .Errors}} class="bad"{{end}}>{{.Errors}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}
<footer>cairn bench report. Self-contained: this page loads nothing from anywhere.</footer>
</body>
</html>
{{end}}

{{- define "compare"}}{{template "head" .Title}}
<body>
<h1>{{.Title}}</h1>
<p>Ratios are to the first run, the baseline: above 1 for throughput and below 1 for latency and errors favour a run (green); red is worse by more than 2%.</p>
<table class="num">
<thead><tr><th class="l">run</th><th class="l">kind</th><th class="l">workload</th><th class="l">endpoint</th><th class="l">start</th><th>duration</th><th>concurrency</th><th>object size</th><th>client CPU s/1000 req</th></tr></thead>
<tbody>
{{- range .Runs}}
<tr><td class="l">{{.Name}}</td><td class="l">{{.Kind}}</td><td class="l">{{.Workload}}</td><td class="l">{{.Endpoint}}</td><td class="l">{{.Start}}</td><td>{{.Duration}}</td><td>{{.Concurrency}}</td><td>{{.Size}}</td><td>{{.CPU}}</td></tr>
{{- end}}
</tbody>
</table>
<h2>Operations</h2>
<table class="num">
<thead><tr><th class="l">op</th><th class="l">metric</th>{{range $i, $n := .Names}}<th>{{$n}}</th>{{if $i}}<th>ratio</th>{{end}}{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr{{if .First}} class="first"{{end}}><td class="l">{{if .First}}{{.Op}}{{end}}</td><td class="l">{{.Metric}}</td>
{{- range .Cells}}<td>{{.Value}}</td>{{if .HasRatio}}<td class="{{if .Better}}good{{else if .Worse}}bad{{end}}">{{.Ratio}}</td>{{end}}{{end}}</tr>
{{- end}}
</tbody>
</table>
<h2>Charts</h2>
<div class="charts">
{{- range .Charts}}{{template "svg" .}}{{end}}
</div>
<footer>cairn bench compare. Self-contained: this page loads nothing from anywhere.</footer>
</body>
</html>
{{end}}
`
