package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Op is one kind of request a workload makes.
type Op string

// The operations a mix can weigh. LIST lists a bucket; the others act on one object.
const (
	OpGet    Op = "get"
	OpPut    Op = "put"
	OpDelete Op = "delete"
	OpHead   Op = "head"
	OpList   Op = "list"
)

// Ops is every Op, in the order mixes are printed.
var Ops = []Op{OpGet, OpPut, OpDelete, OpHead, OpList}

func knownOp(op Op) bool { return slices.Contains(Ops, op) }

func opNames() string {
	names := make([]string, len(Ops))
	for i, op := range Ops {
		names[i] = string(op)
	}
	return strings.Join(names, ", ")
}

// Mix is the operation mix: each operation's relative weight. Weights need not add up to 100;
// an operation is picked with probability weight / (sum of weights). YAML: {get: 90, put: 5,
// delete: 5}.
type Mix map[Op]float64

// needsData reports whether the mix reads or removes objects, so that the key space must be
// written before it runs.
func (m Mix) needsData() bool { return m[OpGet] > 0 || m[OpHead] > 0 || m[OpDelete] > 0 }

// Pick draws an operation in proportion to the weights. It walks the mix in Ops order (never
// in map order, which would make runs with the same seed differ) and does not allocate; a
// worker making millions of picks can use Picker instead, which sums the weights once.
func (m Mix) Pick(r *rand.Rand) Op {
	var total float64
	for _, op := range Ops {
		if w := m[op]; w > 0 {
			total += w
		}
	}
	x := r.Float64() * total
	last := OpGet
	for _, op := range Ops {
		w := m[op]
		if w <= 0 {
			continue
		}
		last = op
		if x < w {
			return op
		}
		x -= w
	}
	return last
}

// MixPicker picks operations from a mix whose cumulative weights are computed once. It is
// read-only after Picker returns, so goroutines may share it, each with its own *rand.Rand.
type MixPicker struct {
	ops   []Op
	cum   []float64 // cum[i] is the sum of the weights of ops[0..i]
	total float64
}

// Picker precomputes m for fast picking. Operations of weight 0 are never picked; a mix with
// no positive weight (which Normalize rejects) always picks get.
func (m Mix) Picker() *MixPicker {
	p := &MixPicker{}
	for _, op := range Ops {
		if w := m[op]; w > 0 && !math.IsInf(w, 0) {
			p.total += w
			p.ops = append(p.ops, op)
			p.cum = append(p.cum, p.total)
		}
	}
	return p
}

// Pick draws an operation in proportion to the weights.
func (p *MixPicker) Pick(r *rand.Rand) Op {
	if len(p.ops) == 0 {
		return OpGet
	}
	x := r.Float64() * p.total
	for i, c := range p.cum {
		if x < c {
			return p.ops[i]
		}
	}
	return p.ops[len(p.ops)-1] // only reached through rounding
}

// String is "get 90 / put 5 / delete 5": the operations of positive weight in Ops order.
func (m Mix) String() string {
	var parts []string
	for _, op := range Ops {
		if w := m[op]; w > 0 {
			parts = append(parts, string(op)+" "+formatFloat(w))
		}
	}
	if len(parts) == 0 {
		return "(empty)"
	}
	return strings.Join(parts, " / ")
}

// ParseMix reads the flag form "get=90,put=5,delete=5" (spaces allowed, names case-insensitive).
func ParseMix(s string) (Mix, error) {
	m := Mix{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("mix %q: want op=weight pairs such as get=90,put=5,delete=5", s)
		}
		op := Op(strings.ToLower(strings.TrimSpace(name)))
		if !knownOp(op) {
			return nil, fmt.Errorf("mix %q: unknown operation %q (want %s)", s, strings.TrimSpace(name), opNames())
		}
		if _, dup := m[op]; dup {
			return nil, fmt.Errorf("mix %q: %s given twice", s, op)
		}
		w, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("mix %q: weight for %q is not a number", s, op)
		}
		m[op] = w
	}
	if e := m.check(); e != nil {
		return nil, fmt.Errorf("mix %q: %s", s, e.msg)
	}
	return m, nil
}

// check validates the weights. The error's leaf is the offending operation, so that a file's
// error points at its line.
func (m Mix) check() *fieldError {
	var total float64
	for op, w := range m {
		if !knownOp(op) {
			return errAt(nil, "unknown operation %q (want %s)", op, opNames())
		}
		total += w
	}
	// Ops order, so that of several bad weights the first one printed is reported.
	for _, op := range Ops {
		if w, ok := m[op]; ok && (!(w >= 0) || math.IsInf(w, 0)) {
			e := errAt(nil, "weight for %q must be ≥ 0 and finite, got %s", op, formatFloat(w))
			e.leaf = string(op)
			return e
		}
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return errAt(nil, "at least one weight must be > 0, e.g. {get: 90, put: 5, delete: 5}")
	}
	return nil
}

func (m Mix) clone() Mix {
	if m == nil {
		return nil
	}
	c := make(Mix, len(m))
	for op, w := range m {
		c[op] = w
	}
	return c
}

// UnmarshalYAML reads {get: 90, put: 5, delete: 5}. Operation names are case-insensitive and
// unknown ones are errors; the weights are checked by Normalize.
func (m *Mix) UnmarshalYAML(n *yaml.Node) (err error) {
	defer anchorAt(n, &err)
	if n.Kind != yaml.MappingNode {
		return nodeErr(n, nil, "want a mapping of operation to weight, e.g. {get: 90, put: 5, delete: 5}")
	}
	out := Mix{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		op := Op(strings.ToLower(k.Value))
		if k.Kind != yaml.ScalarNode || !knownOp(op) {
			return nodeErr(k, nil, "unknown operation %q (want %s)", k.Value, opNames())
		}
		if _, dup := out[op]; dup {
			return nodeErr(k, nil, "%s given twice", op)
		}
		w, err := floatNode(v, []string{string(op)})
		if err != nil {
			return err
		}
		out[op] = w
	}
	*m = out
	return nil
}

// MarshalYAML writes a one-line mapping in Ops order.
func (m Mix) MarshalYAML() (any, error) {
	var kv []string
	for _, op := range Ops {
		if w, ok := m[op]; ok {
			kv = append(kv, string(op), formatFloat(w))
		}
	}
	return flowMap(kv...), nil
}
