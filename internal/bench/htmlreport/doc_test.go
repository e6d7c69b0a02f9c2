package htmlreport

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func sampleDoc() *Doc {
	return &Doc{
		Title:  "advisor <report>",
		Header: [][2]string{{"workload", "A<script>alert(1)</script>"}},
		Notes:  []string{"a note"},
		Sections: []DocSection{{
			Title:  "Sampling",
			Text:   []string{"text"},
			Tables: []DocTable{{Head: []string{"N", "MB/s"}, Rows: [][]string{{"1", "100"}, {"2", "200"}}, Num: true}},
			Charts: []LineChart{{Title: "cost per MB/s against N", XLabel: "N", YLabel: "USD per MB/s",
				Series: []Series{{Name: "cost", Points: [][2]float64{{1, 10}, {2, 6}, {3, 5}, {4, 7}}}, {Name: "other", Points: [][2]float64{{1, 3}, {4, 4}}, Dashed: true}},
				Marks:  []Mark{{X: 3, Y: 5, Label: "N = 3"}}}},
		}},
		Footer: "test.",
	}
}

func TestDocPage(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteDoc(&buf, sampleDoc()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	html := parse(t, page)
	if n := len(html.all(named("svg"))); n != 1 {
		t.Errorf("%d charts, want 1", n)
	}
	if n := len(html.all(named("td"))); n != 5 { // the header's value, then the table's 4
		t.Errorf("%d table cells, want 5", n)
	}
	if strings.Contains(page, "<script>") {
		t.Error("a header value's <script> reached the page unescaped")
	}
}

// A browser draws the doc's chart: the mark is a solid disc of MarkColor.
func TestChromiumRendersDoc(t *testing.T) {
	bin := findChromium(t)
	page := filepath.Join(t.TempDir(), "doc.html")
	if err := WriteDocFile(page, sampleDoc()); err != nil {
		t.Fatal(err)
	}
	px := toPixels(screenshot(t, bin, "file://"+page, "1280,1200"))
	if !px.hasSolidBlock(hexColor(MarkColor), 5) {
		t.Errorf("the mark (%s) is not drawn", MarkColor)
	}
	if !px.hasSolidBlock(hexColor(DocColors[0]), 1) {
		t.Errorf("the first series (%s) is not drawn", DocColors[0])
	}
}
