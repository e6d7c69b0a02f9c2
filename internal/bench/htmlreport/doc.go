package htmlreport

import (
	"fmt"
	"html/template"
	"io"
)

// Doc is a general report page, for tools other than bench that want the same self-contained
// page, style and charts (the advisor's report): header facts, notes, and sections of text
// tables and line charts. Every string is escaped by html/template, as in the bench pages.
type Doc struct {
	Title    string
	Header   [][2]string // name, value
	Notes    []string
	Sections []DocSection
	Footer   string
}

// DocSection is a titled part of a Doc.
type DocSection struct {
	Title  string
	Text   []string // paragraphs
	Tables []DocTable
	Charts []LineChart
}

// DocTable is a table of text cells; Num right-aligns every column but the first.
type DocTable struct {
	Head []string
	Rows [][]string
	Num  bool
}

// LineChart is a chart of lines against shared axes, with labelled points.
type LineChart struct {
	Title, XLabel, YLabel string
	Series                []Series
	Marks                 []Mark
}

// Series is one line; colours come from DocColors in order.
type Series struct {
	Name   string
	Points [][2]float64 // x, y
	Dashed bool
}

// Mark is a labelled dot drawn in MarkColor (the 1:N sweet spot).
type Mark struct {
	X, Y  float64
	Label string
}

// DocColors are the colours of a LineChart's series, in order; MarkColor is for marks only, so
// that a browser test can find a mark by its colour.
var DocColors = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf"}

// MarkColor is the colour of marks.
const MarkColor = colKnee

// docView is what the "doc" template shows.
type docView struct {
	Doc
	Sections []docSectionView
}

type docSectionView struct {
	DocSection
	SVGs []*svgChart
}

var docTemplate = template.Must(template.Must(pageTemplate.Clone()).Parse(docHTML))

const docHTML = `
{{- define "doc"}}{{template "head" .Title}}
<body>
<h1>{{.Title}}</h1>
<table class="meta">
{{- range .Header}}
<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{- end}}
</table>
{{- range .Notes}}
<p class="note">{{.}}</p>
{{- end}}
{{- range .Sections}}
<section>
<h2>{{.Title}}</h2>
{{- range .Text}}
<p>{{.}}</p>
{{- end}}
{{- range .Tables}}
<table{{if .Num}} class="num"{{end}}>
<thead><tr>{{range $i, $h := .Head}}<th{{if $i}}{{else}} class="l"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range $i, $c := .}}<td{{if $i}}{{else}} class="l"{{end}}>{{$c}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- if .SVGs}}
<div class="charts">
{{- range .SVGs}}{{template "svg" .}}{{end}}
</div>
{{- end}}
</section>
{{- end}}
<footer>{{.Footer}} Self-contained: this page loads nothing from anywhere.</footer>
</body>
</html>
{{end}}
`

// WriteDoc writes d as a self-contained HTML page.
func WriteDoc(w io.Writer, d *Doc) error {
	v := docView{Doc: *d}
	for _, s := range d.Sections {
		sv := docSectionView{DocSection: s}
		for _, c := range s.Charts {
			spec := lineSpec{Title: c.Title, XLabel: c.XLabel, YLabel: c.YLabel}
			for i, ser := range c.Series {
				ls := lineSeries{Name: ser.Name, Color: DocColors[i%len(DocColors)]}
				if ser.Dashed {
					ls.Dash = "6 4"
				}
				for _, p := range ser.Points {
					ls.Pts = append(ls.Pts, xy{p[0], p[1]})
				}
				spec.Series = append(spec.Series, ls)
			}
			for _, m := range c.Marks {
				spec.PMarks = append(spec.PMarks, pMark{X: m.X, Y: m.Y, Label: m.Label, Color: MarkColor})
			}
			sv.SVGs = append(sv.SVGs, lineChart(spec))
		}
		v.Sections = append(v.Sections, sv)
	}
	var buf writerBuffer
	if err := docTemplate.ExecuteTemplate(&buf, "doc", v); err != nil {
		return fmt.Errorf("htmlreport: rendering doc page: %w", err)
	}
	if _, err := w.Write(buf.b); err != nil {
		return fmt.Errorf("htmlreport: writing page: %w", err)
	}
	return nil
}

// WriteDocFile writes d to path atomically (a temporary file renamed into place).
func WriteDocFile(path string, d *Doc) error {
	return writeFileAtomic(path, func(w io.Writer) error { return WriteDoc(w, d) })
}

type writerBuffer struct{ b []byte }

func (w *writerBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
