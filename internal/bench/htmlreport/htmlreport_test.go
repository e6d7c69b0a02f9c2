package htmlreport

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/bench"
)

// node is a parsed element. The page is kept well-formed XML on purpose (see page.go), so a
// strict encoding/xml decoder both checks its structure and gives a tree to inspect.
type node struct {
	name     string
	attrs    map[string]string
	children []*node
	text     string // character data directly inside
}

func (n *node) all(pred func(*node) bool) []*node {
	var out []*node
	var walk func(*node)
	walk = func(m *node) {
		if pred(m) {
			out = append(out, m)
		}
		for _, c := range m.children {
			walk(c)
		}
	}
	walk(n)
	return out
}

func named(name string) func(*node) bool { return func(n *node) bool { return n.name == name } }

// textOf concatenates the character data of n and everything inside it.
func (n *node) textOf() string {
	var b strings.Builder
	b.WriteString(n.text)
	for _, c := range n.children {
		b.WriteString(c.textOf())
	}
	return b.String()
}

// parse fails the test unless page is one well-formed <html> element. It also rejects any
// element or attribute that could load or run something.
func parse(t *testing.T, page string) *node {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = true
	root := &node{name: "#document"}
	stack := []*node{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("page is not well-formed: %v", err)
		}
		top := stack[len(stack)-1]
		switch tk := tok.(type) {
		case xml.StartElement:
			n := &node{name: tk.Name.Local, attrs: map[string]string{}}
			switch n.name {
			case "script", "img", "link", "iframe", "object", "embed", "image", "use", "audio", "video", "source", "foreignObject":
				t.Errorf("page has a <%s> element", n.name)
			}
			for _, a := range tk.Attr {
				n.attrs[a.Name.Local] = a.Value
				if k := strings.ToLower(a.Name.Local); strings.HasPrefix(k, "on") || k == "src" || k == "href" || k == "srcset" {
					t.Errorf("<%s> has a %s attribute: %q", n.name, k, a.Value)
				}
			}
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top.text += string(tk)
		}
	}
	if len(root.children) != 1 || root.children[0].name != "html" {
		t.Fatalf("page's root is not one <html> element")
	}
	return root.children[0]
}

func renderPage(t *testing.T, r *bench.Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.String()
}

// checkClean fails on anything that would show as a broken chart or reach outside the page.
func checkClean(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"NaN", "Inf"} {
		if i := strings.Index(page, bad); i >= 0 {
			t.Errorf("page contains %q: ...%s...", bad, page[max(0, i-80):min(len(page), i+40)])
		}
	}
	// The endpoint is shown as text; nothing else may name a URL or load a resource.
	rest := strings.ReplaceAll(page, endpoint, "")
	for _, bad := range []string{"http://", "https://", "url(", "@import", "//fonts", "<script"} {
		if strings.Contains(strings.ToLower(rest), bad) {
			t.Errorf("page contains %q", bad)
		}
	}
}

func charts(html *node) map[string]*node {
	m := map[string]*node{}
	for _, s := range html.all(named("svg")) {
		m[s.attrs["aria-label"]] = s
	}
	return m
}

func TestWorkloadPage(t *testing.T) {
	page := renderPage(t, workloadReport())
	checkClean(t, page)
	html := parse(t, page)
	if n := len(html.all(named("svg"))); n != workloadCharts {
		t.Errorf("%d charts, want %d", n, workloadCharts)
	}

	// User-controlled strings arrive as text, never as markup.
	text := html.textOf()
	for _, s := range []string{evilStage, evilOutput, evilKind, evilEvent, `ssh node-3 "systemctl stop cairn" && echo '<done>'`} {
		if !strings.Contains(text, s) {
			t.Errorf("page text lacks %q", s)
		}
	}
	for _, raw := range []string{"<script>", "<img", "<b>node-3", "<done>"} {
		if strings.Contains(page, raw) {
			t.Errorf("page contains unescaped %q", raw)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(") {
		t.Error("stage name not escaped as text")
	}

	for _, want := range []string{"mixed-64k", "s3", endpoint, "2026-03-01 12:00:00 UTC", "76.0 s",
		"12.50 s user + 8.25 s system", evilKind + " ×30, timeout ×10", "51.8 %", "throughput stopped rising"} {
		if !strings.Contains(text, want) {
			t.Errorf("page text lacks %q", want)
		}
	}
	// The GET row of the main stage carries TTFB; the PUT row does not.
	var getRow *node
	for _, tr := range html.all(named("tr")) {
		if tds := tr.all(named("td")); len(tds) > 2 && tds[0].textOf() == evilStage && tds[1].textOf() == "get" {
			getRow = tr
		}
	}
	if getRow == nil {
		t.Fatal("no summary row for the main stage's get")
	}
	if tds := getRow.all(named("td")); tds[12].textOf() != "1.200" || tds[13].textOf() != "3.600" {
		t.Errorf("TTFB cells %q %q, want 1.200 3.600", tds[12].textOf(), tds[13].textOf())
	}

	cs := charts(html)
	tput := cs[evilStage+": throughput"]
	if tput == nil {
		t.Fatalf("no throughput chart for the main stage; charts: %v", keys(cs))
	}
	strokes := map[string]int{}
	for _, p := range tput.all(named("path")) {
		strokes[p.attrs["stroke"]]++
		if n := strings.Count(p.attrs["d"], "L"); n != 29 {
			t.Errorf("throughput line %s has %d segments, want 29 (30 seconds)", p.attrs["stroke"], n)
		}
	}
	for _, c := range []string{colTotal, opColors["get"], opColors["put"], colErrors} {
		if strokes[c] != 1 {
			t.Errorf("throughput chart: %d lines of colour %s, want 1", strokes[c], c)
		}
	}
	if got := tickLabels(tput, "end"); strings.Join(got, " ") != "0 1000 2000 3000" {
		t.Errorf("throughput y ticks %q, want 0 1000 2000 3000", got)
	}
	if got := tickLabels(tput, "middle"); strings.Join(got, " ") != "0 5 10 15 20 25 30" {
		t.Errorf("time ticks %q, want 0 5 ... 30", got)
	}
	for _, title := range []string{": throughput", ": data rate", ": latency"} {
		c := cs[evilStage+title]
		if c == nil {
			t.Fatalf("no chart %q", title)
		}
		var marked bool
		for _, l := range c.all(named("line")) {
			marked = marked || l.attrs["stroke"] == colEvent && l.attrs["x1"] == l.attrs["x2"]
		}
		if !marked || !strings.Contains(c.textOf(), evilEvent) {
			t.Errorf("chart %q lacks the event's labelled vertical line", title)
		}
	}
	if lat := cs[evilStage+": latency"]; len(lat.all(named("path"))) != 2 {
		t.Errorf("latency chart has %d lines, want p50 and p99", len(lat.all(named("path"))))
	}
	bars := 0
	for _, r := range cs[evilStage+": latency percentiles"].all(named("rect")) {
		if len(r.all(named("title"))) > 0 {
			bars++
		}
	}
	if bars != 8 {
		t.Errorf("percentile chart has %d bars, want 2 ops × 4 percentiles", bars)
	}

	ramp := cs["ramp: ramp"]
	if ramp == nil {
		t.Fatalf("no ramp curve; charts: %v", keys(cs))
	}
	var knee bool
	for _, c := range ramp.all(named("circle")) {
		knee = knee || c.attrs["fill"] == colKnee
	}
	if !knee || !strings.Contains(ramp.textOf(), "knee: 32 workers, 4900 ops/s") {
		t.Error("ramp curve lacks the labelled knee marker")
	}
	if got := tickLabels(ramp, "start"); len(got) == 0 || got[len(got)-1] == "" {
		t.Errorf("ramp curve has no right-hand (p99) axis: %q", got)
	}
	if knees := html.all(func(n *node) bool { return n.name == "tr" && n.attrs["class"] == "knee" }); len(knees) != 1 ||
		knees[0].all(named("td"))[0].textOf() != "32" {
		t.Error("ramp table does not highlight the knee's step")
	}
}

// tickLabels returns a chart's axis tick labels with the given anchor: "end" the left axis,
// "start" the right one, "middle" the x axis. Legends sit above the plot area, axis titles are
// larger, event labels have their own colour.
func tickLabels(svg *node, anchor string) []string {
	var out []string
	for _, tx := range svg.all(named("text")) {
		y, _ := strconv.ParseFloat(tx.attrs["y"], 64)
		if tx.attrs["text-anchor"] == anchor && tx.attrs["font-size"] == "11" && tx.attrs["fill"] == colText && y > marginT {
			out = append(out, tx.text)
		}
	}
	return out
}

func keys(m map[string]*node) []string { return sortedKeys(m) }

func TestOlderKinds(t *testing.T) {
	t.Run("fill", func(t *testing.T) {
		page := renderPage(t, fillReport())
		checkClean(t, page)
		html := parse(t, page)
		svgs := html.all(named("svg"))
		if len(svgs) != 1 {
			t.Fatalf("%d charts, want the windows chart", len(svgs))
		}
		if got := strings.Join(tickLabels(svgs[0], "middle"), " "); got != "0 100k 200k 300k 400k 500k" {
			t.Errorf("objects axis %q", got)
		}
		if !strings.Contains(html.textOf(), "13333.3") {
			t.Error("windows table lacks the last window's rate")
		}
	})
	t.Run("list", func(t *testing.T) {
		bad := false
		r := &bench.Report{Kind: "list", Endpoint: endpoint, Bucket: "b", Seconds: 2,
			Ops:  map[string]*bench.OpStats{"list": opStats(10, 0, 2, 0, 5)},
			List: &bench.ListStats{Keys: 9999, Pages: 10, KeysPerSec: 5000, Expected: 10000, CountOK: &bad, Ordered: true}}
		page := renderPage(t, r)
		checkClean(t, page)
		html := parse(t, page)
		if n := len(html.all(named("svg"))); n != 0 {
			t.Errorf("%d charts for a listing", n)
		}
		if !strings.Contains(html.textOf(), "COUNT MISMATCH (expected 10000)") {
			t.Error("listing outcome missing")
		}
	})
	t.Run("run without stages", func(t *testing.T) {
		r := &bench.Report{Kind: "run", Endpoint: endpoint, Bucket: "b", Seconds: 10, Interrupted: true,
			Ops:     map[string]*bench.OpStats{"get": opStats(1000, 0, 10, 4096, 1)},
			Prepare: &bench.Report{Kind: "fill", Seconds: 3, Ops: map[string]*bench.OpStats{"put": opStats(500, 0, 3, 4096, 1)}}}
		page := renderPage(t, r)
		checkClean(t, page)
		text := parse(t, page).textOf()
		for _, want := range []string{"Prepare: 500 objects written in 3.0 s", "Interrupted", "100.0"} {
			if !strings.Contains(text, want) {
				t.Errorf("page text lacks %q", want)
			}
		}
	})
}

// Empty, single-sample and non-finite data must still give well-formed charts.
func TestDegenerateData(t *testing.T) {
	page := renderPage(t, degenerateReport())
	checkClean(t, page)
	html := parse(t, page)
	if n := len(html.all(named("svg"))); n != 4+4+5 {
		t.Errorf("%d charts, want 13", n)
	}
	if !strings.Contains(page, "no data") {
		t.Error(`an empty chart does not say "no data"`)
	}
	// The single sample becomes a dot: a one-point path draws nothing.
	one := charts(html)["one: throughput"]
	if one == nil || len(one.all(named("circle"))) != 1 {
		t.Error("single-sample throughput is not drawn as a dot")
	}
}

func TestNiceAxis(t *testing.T) {
	for _, tc := range []struct{ lo, hi float64 }{
		{0, 2800}, {0, 1}, {0, 0.037}, {0, 7}, {3, 97}, {-5, 5}, {0, 123456789}, {1, 30},
		{0, 0}, {5, 5}, {-3, -3}, {math.NaN(), 3}, {0, math.Inf(1)}, {10, 2}, {0, 1e-12},
	} {
		a := niceAxis(tc.lo, tc.hi, 5, 0, 100)
		m := a.step / math.Pow(10, math.Floor(math.Log10(a.step)))
		if math.Abs(m-1) > 1e-9 && math.Abs(m-2) > 1e-9 && math.Abs(m-5) > 1e-9 {
			t.Errorf("%v: step %v is not 1, 2 or 5 × 10^k", tc, a.step)
		}
		if n := len(a.ticks); n < 2 || n > 12 {
			t.Errorf("%v: %d ticks", tc, n)
		}
		if finite(tc.lo) && finite(tc.hi) && (a.lo > math.Min(tc.lo, tc.hi) || a.hi < math.Max(tc.lo, tc.hi)) {
			t.Errorf("%v: axis [%v, %v] does not cover the data", tc, a.lo, a.hi)
		}
		for _, v := range a.ticks {
			if q := v / a.step; math.Abs(q-math.Round(q)) > 1e-6 || !finite(a.pos(v)) {
				t.Errorf("%v: tick %v is not a multiple of %v", tc, v, a.step)
			}
		}
	}
	a := niceAxis(0, 14000, 5, 0, 100)
	if got := []string{a.label(0), a.label(5000), a.label(15000)}; strings.Join(got, " ") != "0 5k 15k" {
		t.Errorf("labels %q", got)
	}
	if a := niceAxis(0, 1, 5, 0, 100); a.label(0.2) != "0.2" {
		t.Errorf("label(0.2) = %q", a.label(0.2))
	}
	// A right-hand axis gets exactly the left one's number of steps and still covers its data.
	for _, hi := range []float64{1, 76, 99, 101, 4999, 0} {
		a := alignedAxis(0, hi, 6, 0, 100)
		if len(a.ticks) != 7 || a.hi < hi {
			t.Errorf("aligned(0, %v): ticks %v", hi, a.ticks)
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := WriteFile(path, workloadReport()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := renderPage(t, workloadReport()); string(got) != want {
		t.Error("file differs from Write's output")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left behind: %d entries", len(ents))
	}
	err = WriteFile(filepath.Join(dir, "missing", "r.html"), workloadReport())
	if err == nil || !strings.Contains(err.Error(), "htmlreport") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("writing into a missing directory: %v", err)
	}
	if err := Write(io.Discard, nil); err == nil {
		t.Error("Write(nil) succeeded")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	err := Write(failWriter{}, fillReport())
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "htmlreport") {
		t.Errorf("err = %v", err)
	}
}

// Guard against a coordinate printed in exponent form or with a long tail.
func TestCoord(t *testing.T) {
	for v, want := range map[float64]string{12.345: "12.35", 0: "0", -3.2: "-3.2", 1e-9: "0", 600: "600"} {
		if got := coord(v); got != want {
			t.Errorf("coord(%v) = %q, want %q", v, got, want)
		}
	}
	if coord(math.NaN()) != "0" || coord(math.Inf(-1)) != "0" {
		t.Error("non-finite coordinates are not replaced")
	}
}

func TestComparePage(t *testing.T) {
	a, b := workloadReport(), workloadReport()
	b.Ops["get"].OpsPerSec *= 1.5 // faster
	b.Ops["put"].Latency.P99 *= 2 // slower tail
	b.Stages[2].Ramp.Knee = b.Stages[2].Ramp.Steps[4]
	var buf bytes.Buffer
	names := []string{"baseline", `<script>alert("run")</script>`}
	if err := WriteCompare(&buf, names, []*bench.Report{a, b}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkClean(t, page)
	html := parse(t, page)
	// Bars for throughput and p99, the main stages overlaid, the ramp curves overlaid.
	cs := charts(html)
	if len(cs) != 4 {
		t.Errorf("charts %v, want 4", keys(cs))
	}
	if c := cs["ramp: throughput by concurrency"]; c == nil || len(c.all(named("circle"))) != 2 {
		t.Error("ramp overlay lacks one knee per run")
	}
	text := html.textOf()
	if !strings.Contains(text, names[1]) || strings.Contains(page, "<script>") {
		t.Error("run name not shown as escaped text")
	}
	cells := map[string]string{} // "op metric" → class of the second run's ratio cell
	for _, tr := range html.all(named("tr")) {
		tds := tr.all(named("td"))
		if len(tds) == 5 && tds[1].textOf() != "" {
			cells[tds[1].textOf()+" "+tds[4].textOf()] = tds[4].attrs["class"]
		}
	}
	if cells["ops/s 1.50×"] != "good" || cells["p99 ms 2.00×"] != "bad" || cells["p50 ms 1.00×"] != "" {
		t.Errorf("ratio cells %v", cells)
	}
	if err := WriteCompare(io.Discard, names[:1], []*bench.Report{a}); err == nil {
		t.Error("a one-run comparison succeeded")
	}
}

// The samplers' section: one chart per sampler over the whole run (beside the run's p99, the
// stages marked), and each stage's p95 with each sampler's mean and last value in it; a stage
// without samples shows "-". A sampler's name arrives as text.
func TestSamplersSection(t *testing.T) {
	r := workloadReport()
	r.Samplers = []bench.SamplerReport{{Name: "<b>proxies</b>", Command: "cairn microstore show large --json | jq '.proxies|length'"}}
	for s := 4.0; s < 74; s += 2 { // none in prepare (0-4) and cleanup (74-76)
		v := 1.0
		if s >= 34 {
			v = 3
		}
		r.Samplers[0].Points = append(r.Samplers[0].Points, bench.SamplePoint{T: s, Value: v})
	}
	page := renderPage(t, r)
	checkClean(t, page)
	html := parse(t, page)
	if n := len(html.all(named("svg"))); n != workloadCharts+1 {
		t.Errorf("%d charts, want %d", n, workloadCharts+1)
	}
	if strings.Contains(page, "<b>proxies") {
		t.Error("a sampler's name is markup")
	}
	var rows []string
	for _, tr := range html.all(named("tr")) {
		rows = append(rows, tr.textOf()) // the cells' texts, run together
	}
	for _, want := range []string{
		"prepare" + "4.0" + "6.000" + "-" + "-", // stage, seconds, p95, then mean and last
		evilStage + "30.0" + "5.200" + "1.00" + "1.00",
		"ramp" + "40.0" + "6.000" + "3.00" + "3.00",
		"cleanup" + "2.0" + "2.000" + "-" + "-",
	} {
		if !slices.Contains(rows, want) {
			t.Errorf("no row %q in %q", want, rows)
		}
	}
}
