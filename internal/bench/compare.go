package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
)

// ReadReport reads a report that a run wrote with --json.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("bench: %s is not a report: %w", path, err)
	}
	if r.Ops == nil {
		return nil, fmt.Errorf("bench: %s has no operations: not a report of cairn bench", path)
	}
	return &r, nil
}

// Compare prints runs side by side, operation by operation, with each run's ratio to the first
// (the baseline): throughput ratios above 1 and latency ratios below 1 favour the run.
func Compare(w io.Writer, names []string, runs []*Report) error {
	if len(runs) < 2 || len(names) != len(runs) {
		return errors.New("bench: compare needs two or more runs, each with a name")
	}
	ops := map[string]bool{}
	rows := make([]map[string]*OpStats, len(runs))
	for i, r := range runs {
		rows[i] = comparable(r)
		for op := range rows[i] {
			ops[op] = true
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "op\tmetric\t"
	for i, n := range names {
		head += n + "\t"
		if i > 0 {
			head += "ratio\t"
		}
	}
	fmt.Fprintln(tw, head)
	metrics := []struct {
		name string
		get  func(*OpStats) float64
	}{
		{"ops/s", func(s *OpStats) float64 { return s.OpsPerSec }},
		{"MB/s", func(s *OpStats) float64 { return s.MBPerSec }},
		{"p50 ms", func(s *OpStats) float64 { return s.Latency.P50 }},
		{"p99 ms", func(s *OpStats) float64 { return s.Latency.P99 }},
		{"p99.9 ms", func(s *OpStats) float64 { return s.Latency.P999 }},
		{"errors", func(s *OpStats) float64 { return float64(s.Errors) }},
	}
	for _, op := range sortedKeys(ops) {
		for _, m := range metrics {
			row := op + "\t" + m.name + "\t"
			var base float64
			for i := range runs {
				s, ok := rows[i][op]
				switch {
				case !ok:
					row += "-\t"
				case i == 0:
					base = m.get(s)
					row += fmt.Sprintf("%.2f\t", base)
				default:
					row += fmt.Sprintf("%.2f\t", m.get(s))
				}
				if i > 0 {
					if ok && base > 0 {
						row += fmt.Sprintf("%.2fx\t", m.get(s)/base)
					} else {
						row += "\t"
					}
				}
			}
			fmt.Fprintln(tw, row)
		}
	}
	cpu := "client\tCPU s/1000\t"
	for i, r := range runs {
		cpu += fmt.Sprintf("%.3f\t", r.ClientCPU.SecondsPer1000Ops)
		if i > 0 {
			cpu += "\t"
		}
	}
	fmt.Fprintln(tw, cpu)
	return tw.Flush()
}

// comparable lists what compare puts side by side: the operations of the measured stages
// together, and, when a run has more than one measured stage, each stage's as "stage/op".
func comparable(r *Report) map[string]*OpStats {
	out := make(map[string]*OpStats, len(r.Ops))
	for op, s := range r.Ops {
		out[op] = s
	}
	var measured []*StageReport
	for _, st := range r.Stages {
		if st.Kind == "main" || st.Kind == "ramp" {
			measured = append(measured, st)
		}
	}
	if len(measured) > 1 {
		for _, st := range measured {
			for op, s := range st.Ops {
				out[st.Name+"/"+op] = s
			}
		}
	}
	return out
}
