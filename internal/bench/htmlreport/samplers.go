package htmlreport

import (
	"math"

	"github.com/cairn-store/cairn/internal/bench"
)

// samplersView shows the workload's samplers: each one's numbers over the whole run beside the
// run's p99 latency, the stages marked, and a table of each stage's p95 and the sampler's
// values while it ran (a resource manager's allocation at each stage of a changing load).
type samplersView struct {
	Charts []*svgChart
	Names  []string
	Rows   []samplerRow
}

type samplerRow struct {
	Stage   string
	Seconds float64
	P95     float64
	// Cells are each sampler's mean and last value over the stage, in turn (NaN: no sample in
	// it).
	Cells []float64
}

func buildSamplers(r *bench.Report) *samplersView {
	if len(r.Samplers) == 0 {
		return nil
	}
	v := &samplersView{}
	var marks []vMark
	p99 := lineSeries{Name: "p99 latency (ms)", Color: colP99, Width: 1.5, Dash: "4 2", Right: true}
	for _, st := range r.Stages {
		if st == nil {
			continue
		}
		marks = append(marks, vMark{X: st.Start, Label: st.Name, Color: colEvent})
		for _, s := range st.Series {
			l := math.NaN()
			if s.Operations > 0 {
				l = s.P99
			}
			p99.Pts = append(p99.Pts, xy{st.Start + s.T, l})
		}
	}
	for _, sm := range r.Samplers {
		v.Names = append(v.Names, sm.Name)
		line := lineSeries{Name: sm.Name, Color: colTotal, Width: 2.5}
		for _, p := range sm.Points {
			line.Pts = append(line.Pts, xy{p.T, p.Value})
		}
		v.Charts = append(v.Charts, lineChart(lineSpec{Title: sm.Name + " over the run", XLabel: "time since the run began (s)",
			YLabel: sm.Name, Y2Label: "p99 latency (ms)", Series: []lineSeries{line, p99}, VMarks: marks}))
	}
	for _, st := range r.Stages {
		if st == nil {
			continue
		}
		row := samplerRow{Stage: st.Name, Seconds: st.Seconds, P95: st.Total.Latency.P95}
		for _, sm := range r.Samplers {
			sum, n, last := 0.0, 0, math.NaN()
			for _, p := range sm.Points {
				if p.T >= st.Start && p.T < st.Start+st.Seconds {
					sum, n, last = sum+p.Value, n+1, p.Value
				}
			}
			mean := math.NaN()
			if n > 0 {
				mean = sum / float64(n)
			}
			row.Cells = append(row.Cells, mean, last)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}
