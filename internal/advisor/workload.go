package advisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/bench/workload"
)

// ErrInvalidWorkload is wrapped by a workload the model cannot use.
var ErrInvalidWorkload = errors.New("invalid workload")

// sizeSteps is how many equal-width pieces a uniform size range is cut into: enough that the
// inline threshold's step in disk operations falls inside the right piece to within 1/16 of
// the range, few enough that evaluating a configuration stays cheap.
const sizeSteps = 16

// Class is one kind of request of a workload: an operation on objects of one size, and the
// fraction of all requests it is.
type Class struct {
	Op     string  `json:"op"`
	Size   float64 `json:"size"`
	Weight float64 `json:"weight"`
}

// Workload is a workload as the model sees it: request classes whose weights sum to 1.
type Workload struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Classes     []Class `json:"classes"`
}

// MeanPayload is the mean object bytes a request moves (GET and PUT bodies): the factor from
// operations per second to MB/s.
func (w *Workload) MeanPayload() float64 {
	var b float64
	for _, c := range w.Classes {
		if c.Op == "get" || c.Op == "put" {
			b += c.Weight * c.Size
		}
	}
	return b
}

// Validate checks that the workload has classes with positive weights summing to 1.
func (w *Workload) Validate() error {
	if len(w.Classes) == 0 {
		return fmt.Errorf("%w: %s: no requests", ErrInvalidWorkload, w.Name)
	}
	var sum float64
	for _, c := range w.Classes {
		if c.Weight <= 0 || c.Size < 0 {
			return fmt.Errorf("%w: %s: class %s of %.0f bytes has weight %g", ErrInvalidWorkload, w.Name, c.Op, c.Size, c.Weight)
		}
		sum += c.Weight
	}
	if sum < 0.999 || sum > 1.001 {
		return fmt.Errorf("%w: %s: weights sum to %g, not 1", ErrInvalidWorkload, w.Name, sum)
	}
	return nil
}

// ResolveWorkload is a built-in bench workload (A–D and the others `cairn bench` knows), a
// `cairn bench` JSON result (a file ending in .json) or a workload file.
func ResolveWorkload(nameOrPath string) (*Workload, error) {
	if strings.HasSuffix(strings.ToLower(nameOrPath), ".json") {
		return LoadBenchResult(nameOrPath)
	}
	spec, err := workload.Resolve(nameOrPath)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidWorkload, err)
	}
	return FromSpec(spec)
}

// FromSpec is the workload a bench Spec runs in its measured stages (main and ramp; prepare
// and cleanup only set the stage), each stage weighted by its share of the stages.
func FromSpec(s *workload.Spec) (*Workload, error) {
	w := &Workload{Name: s.Name, Description: s.Description}
	var stages []workload.ResolvedStage
	for _, st := range s.Resolved() {
		if st.Kind == workload.StageMain || st.Kind == workload.StageRamp {
			stages = append(stages, st)
		}
	}
	if len(stages) == 0 {
		return nil, fmt.Errorf("%w: %s: no main or ramp stage", ErrInvalidWorkload, s.Name)
	}
	agg := newClassSet()
	for _, st := range stages {
		var total float64
		for _, v := range st.Mix {
			total += v
		}
		if total <= 0 {
			continue
		}
		sizes := sizePieces(st.Size)
		for op, v := range st.Mix {
			if v <= 0 {
				continue
			}
			for _, sz := range sizes {
				agg.add(string(op), sz.size, v/total*sz.weight/float64(len(stages)))
			}
		}
	}
	w.Classes = agg.classes()
	return w, w.Validate()
}

type sizePiece struct{ size, weight float64 }

// sizePieces cuts a size distribution into the points the model evaluates.
func sizePieces(d workload.SizeDist) []sizePiece {
	piecesOf := func(lo, hi, weight float64) []sizePiece {
		if hi <= lo {
			return []sizePiece{{lo, weight}}
		}
		out := make([]sizePiece, sizeSteps)
		step := (hi - lo) / sizeSteps
		for i := range out {
			out[i] = sizePiece{lo + step*(float64(i)+0.5), weight / sizeSteps}
		}
		return out
	}
	switch {
	case len(d.Buckets) > 0:
		var total float64
		for _, b := range d.Buckets {
			if b.Weight > 0 {
				total += b.Weight
			}
		}
		var out []sizePiece
		for _, b := range d.Buckets {
			if b.Weight > 0 && total > 0 {
				out = append(out, piecesOf(float64(b.Min), float64(b.Max), b.Weight/total)...)
			}
		}
		return out
	case d.Min != 0 || d.Max != 0:
		return piecesOf(float64(d.Min), float64(d.Max), 1)
	default:
		return []sizePiece{{float64(d.Constant), 1}}
	}
}

// LoadBenchResult is the workload a `cairn bench` run measured: its operations by kind, each
// at the mean size it moved (bytes over operations; a kind without bytes, as DELETE, at 0).
func LoadBenchResult(path string) (*Workload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading bench result: %w", err)
	}
	var r bench.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %s: not a cairn bench JSON result: %w", ErrInvalidWorkload, path, err)
	}
	name := r.Workload
	if name == "" {
		name = r.Kind
	}
	w := &Workload{Name: name, Description: "measured by cairn bench: " + path}
	var total float64
	for _, s := range r.Ops {
		total += float64(s.Operations)
	}
	if total == 0 {
		return nil, fmt.Errorf("%w: %s: the run completed no operations", ErrInvalidWorkload, path)
	}
	agg := newClassSet()
	for op, s := range r.Ops {
		if s.Operations == 0 {
			continue
		}
		agg.add(op, float64(s.Bytes)/float64(s.Operations), float64(s.Operations)/total)
	}
	w.Classes = agg.classes()
	return w, w.Validate()
}

// classSet merges classes of the same operation and size.
type classSet map[string]map[float64]float64

func newClassSet() classSet { return classSet{} }

func (s classSet) add(op string, size, weight float64) {
	if s[op] == nil {
		s[op] = map[float64]float64{}
	}
	s[op][size] += weight
}

func (s classSet) classes() []Class {
	var out []Class
	for op, m := range s {
		for size, w := range m {
			out = append(out, Class{Op: op, Size: size, Weight: w})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Op != out[j].Op {
			return out[i].Op < out[j].Op
		}
		return out[i].Size < out[j].Size
	})
	return out
}
