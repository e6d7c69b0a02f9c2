package validate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cairn-store/cairn/internal/advisor"
)

// Refinement is what the refinement phase did to one resource's demands.
type Refinement struct {
	Resource string  `json:"resource"` // "proxy cpu", "storage nic out", ...
	Points   int     `json:"points"`   // validated configurations it bound
	Ratio    float64 `json:"measured_over_predicted"`
	Factor   float64 `json:"demand_factor"` // 1 / Ratio: what the demands were multiplied by
	Fields   string  `json:"fields"`
}

// refinedFields are the demand fields behind each bottleneck the model names: the ones whose
// product with throughput is that resource's busy time.
var refinedFields = map[string][]string{
	"proxy cpu":       {"proxy_cpu_s", "proxy_cpu_per_visit_s"},
	"storage cpu":     {"storage_cpu_s"},
	"sumo cpu":        {"proxy_cpu_s", "proxy_cpu_per_visit_s", "storage_cpu_s", "local_visit_saving_s"},
	"proxy nic in":    {"client_in_bytes", "backend_in_bytes"},
	"proxy nic out":   {"client_out_bytes", "backend_out_bytes"},
	"storage nic in":  {"backend_out_bytes"},
	"storage nic out": {"backend_in_bytes"},
}

// Refine is the refinement phase: for every resource that was the predicted bottleneck of
// some validated configuration, the median ratio of measured to predicted throughput over
// those configurations says by how much its demands were off (a resource that saturates at
// r × the predicted rate costs 1/r × the demand per request), so its demand fields are
// multiplied by 1/r, for the operations the workload ran (others were not measured). Points
// whose bottleneck is a resource the refinement cannot attribute (disks here are not shaped)
// are left out. It returns new demands; d is not changed.
func Refine(d *advisor.Demands, w *advisor.Workload, pts []Point) (*advisor.Demands, []Refinement, error) {
	ratios := map[string][]float64{}
	for _, p := range pts {
		if p.Predicted.OpsPerSec <= 0 || p.Measured.OpsPerSec <= 0 {
			continue
		}
		key := p.Predicted.Bottleneck
		if _, ok := refinedFields[key]; !ok {
			continue
		}
		ratios[key] = append(ratios[key], p.Measured.OpsPerSec/p.Predicted.OpsPerSec)
	}
	if len(ratios) == 0 {
		return nil, nil, fmt.Errorf("%w: no measured point to refine the demands with", ErrInvalidConfig)
	}
	out := cloneDemands(d)
	ops := map[string]bool{}
	for _, c := range w.Classes {
		ops[c.Op] = true
	}
	var refs []Refinement
	for _, key := range slices.Sorted(maps.Keys(ratios)) {
		r := median(ratios[key])
		f := 1 / r
		fields := refinedFields[key]
		for op := range ops {
			for i := range out.Ops[op] {
				scalePoint(&out.Ops[op][i], fields, f)
			}
		}
		refs = append(refs, Refinement{Resource: key, Points: len(ratios[key]), Ratio: r, Factor: f, Fields: strings.Join(fields, ", ")})
	}
	var notes []string
	for _, r := range refs {
		notes = append(notes, fmt.Sprintf("%s × %.3f", r.Fields, r.Factor))
	}
	out.Source = fmt.Sprintf("%s; refined by cairn advisor validate (%s, for %s)", d.Source, strings.Join(notes, "; "), strings.Join(slices.Sorted(maps.Keys(ops)), ", "))
	if err := out.Validate(); err != nil {
		return nil, nil, fmt.Errorf("validate: the refined demands: %w", err)
	}
	return out, refs, nil
}

func scalePoint(p *advisor.Point, fields []string, f float64) {
	for _, name := range fields {
		switch name {
		case "proxy_cpu_s":
			p.ProxyCPUSeconds *= f
		case "proxy_cpu_per_visit_s":
			p.ProxyCPUPerVisitSeconds *= f
		case "local_visit_saving_s":
			p.LocalVisitSavingSeconds *= f
		case "storage_cpu_s":
			p.StorageCPUSeconds *= f
		case "client_in_bytes":
			p.ClientInBytes *= f
		case "client_out_bytes":
			p.ClientOutBytes *= f
		case "backend_in_bytes":
			p.BackendInBytes *= f
		case "backend_out_bytes":
			p.BackendOutBytes *= f
		}
	}
}

func cloneDemands(d *advisor.Demands) *advisor.Demands {
	out := *d
	out.Ops = map[string][]advisor.Point{}
	for op, pts := range d.Ops {
		out.Ops[op] = slices.Clone(pts)
	}
	return &out
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
