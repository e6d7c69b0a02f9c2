package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxObjectSize is the largest object a workload may ask for: 5 GiB, the largest single PUT
// S3 accepts. Larger objects need multipart uploads, which a workload does not describe.
const MaxObjectSize = 5 << 30

// SizeDist is the distribution of object sizes in bytes. Exactly one form is in use:
// a histogram when Buckets is non-empty, else uniform over [Min, Max] when Min or Max is
// non-zero, else the constant Constant. The zero value is a constant 0 bytes (empty objects).
//
// YAML forms: "4KiB" or 4096 (constant), {constant: 4KiB}, {min: 1KiB, max: 128KiB}
// (uniform, both ends included), and {histogram: [{size: 4KiB, weight: 70},
// {min: 1MiB, max: 8MiB, weight: 30}]} (pick an entry by weight, then a size in it uniformly).
type SizeDist struct {
	Constant int64
	Min, Max int64
	Buckets  []SizeBucket
}

// SizeBucket is one entry of a size histogram: sizes in [Min, Max] (Min == Max for one fixed
// size), chosen with probability Weight / (sum of weights).
type SizeBucket struct {
	Min, Max int64
	Weight   float64
}

// ConstantSize is the distribution that is always n bytes.
func ConstantSize(n int64) SizeDist { return SizeDist{Constant: n} }

// UniformSize is the uniform distribution over [lo, hi].
func UniformSize(lo, hi int64) SizeDist { return SizeDist{Min: lo, Max: hi} }

func (d SizeDist) isHistogram() bool { return len(d.Buckets) > 0 }
func (d SizeDist) isUniform() bool   { return !d.isHistogram() && (d.Min != 0 || d.Max != 0) }

// Sample draws one size. It never allocates, so a worker can call it per request. On a
// distribution Normalize would reject it still returns a size rather than panicking.
func (d SizeDist) Sample(r *rand.Rand) int64 {
	switch {
	case d.isHistogram():
		var total float64
		for _, b := range d.Buckets {
			if b.Weight > 0 {
				total += b.Weight
			}
		}
		x := r.Float64() * total
		last := d.Buckets[0]
		for _, b := range d.Buckets {
			if b.Weight <= 0 {
				continue
			}
			last = b
			if x < b.Weight {
				return uniform(r, b.Min, b.Max)
			}
			x -= b.Weight
		}
		return uniform(r, last.Min, last.Max) // only reached through rounding
	case d.isUniform():
		return uniform(r, d.Min, d.Max)
	default:
		return d.Constant
	}
}

func uniform(r *rand.Rand, lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + r.Int64N(hi-lo+1)
}

// MaxSize is the largest size Sample can return: the runner allocates one random buffer this
// big and sends prefixes of it. (It cannot be called Max: that is the field.)
func (d SizeDist) MaxSize() int64 {
	switch {
	case d.isHistogram():
		var m int64
		for _, b := range d.Buckets {
			m = max(m, b.Min, b.Max)
		}
		return m
	case d.isUniform():
		return max(d.Min, d.Max)
	default:
		return d.Constant
	}
}

// Mean is the expected size in bytes, for estimating a prepare stage's volume.
func (d SizeDist) Mean() float64 {
	switch {
	case d.isHistogram():
		var sum, total float64
		for _, b := range d.Buckets {
			if b.Weight > 0 {
				sum += b.Weight * (float64(b.Min) + float64(b.Max)) / 2
				total += b.Weight
			}
		}
		if total == 0 {
			return 0
		}
		return sum / total
	case d.isUniform():
		return (float64(d.Min) + float64(d.Max)) / 2
	default:
		return float64(d.Constant)
	}
}

// String is "4KiB", "1KiB–128KiB" or "histogram(4KiB:70, 1MiB–8MiB:30)".
func (d SizeDist) String() string {
	switch {
	case d.isHistogram():
		parts := make([]string, len(d.Buckets))
		for i, b := range d.Buckets {
			parts[i] = rangeString(b.Min, b.Max) + ":" + formatFloat(b.Weight)
		}
		return "histogram(" + strings.Join(parts, ", ") + ")"
	case d.isUniform():
		return rangeString(d.Min, d.Max)
	default:
		return FormatSize(d.Constant)
	}
}

func rangeString(lo, hi int64) string {
	if lo == hi {
		return FormatSize(lo)
	}
	return FormatSize(lo) + "–" + FormatSize(hi)
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// check validates the distribution. Errors name the sub-field (keys below "size").
func (d SizeDist) check() *fieldError {
	inRange := func(keys []string, n int64) *fieldError {
		if n < 0 || n > MaxObjectSize {
			return errAt(keys, "must be between 0 and 5GiB, got %s", signedSize(n))
		}
		return nil
	}
	switch {
	case d.isHistogram():
		if d.Constant != 0 || d.Min != 0 || d.Max != 0 {
			return errAt(nil, "use one of constant, min/max and histogram, not several")
		}
		var total float64
		for i, b := range d.Buckets {
			k := []string{"histogram", strconv.Itoa(i)}
			if e := inRange(append(k, "min"), b.Min); e != nil {
				return e
			}
			if e := inRange(append(k, "max"), b.Max); e != nil {
				return e
			}
			if b.Min > b.Max {
				return errAt(k, "min %s is larger than max %s", FormatSize(b.Min), FormatSize(b.Max))
			}
			if !(b.Weight >= 0) || math.IsInf(b.Weight, 0) {
				return errAt(append(k, "weight"), "must be a number ≥ 0, got %s", formatFloat(b.Weight))
			}
			total += b.Weight
		}
		if !(total > 0) || math.IsInf(total, 0) {
			return errAt([]string{"histogram"}, "at least one weight must be > 0 (and the sum finite)")
		}
	case d.isUniform():
		if d.Constant != 0 {
			return errAt(nil, "use one of constant, min/max and histogram, not several")
		}
		if e := inRange([]string{"min"}, d.Min); e != nil {
			return e
		}
		if e := inRange([]string{"max"}, d.Max); e != nil {
			return e
		}
		if d.Min > d.Max {
			return errAt([]string{"min"}, "%s is larger than max (%s)", FormatSize(d.Min), FormatSize(d.Max))
		}
	default:
		return inRange(nil, d.Constant)
	}
	return nil
}

func signedSize(n int64) string {
	if n < 0 {
		return strconv.FormatInt(n, 10)
	}
	return FormatSize(n)
}

// clone returns a copy that shares no memory with d.
func (d SizeDist) clone() SizeDist {
	d.Buckets = append([]SizeBucket(nil), d.Buckets...)
	return d
}

// UnmarshalYAML reads every YAML form of a size distribution. It checks the form (known keys,
// parsable sizes); the values are checked by Normalize, which also sees distributions built in
// Go.
func (d *SizeDist) UnmarshalYAML(n *yaml.Node) (err error) {
	defer anchorAt(n, &err)
	*d = SizeDist{}
	if n.Kind == yaml.ScalarNode {
		v, err := sizeNode(n, nil)
		d.Constant = v
		return err
	}
	fields, err := mappingFields(n, nil, "a size (4KiB), {min: …, max: …}, {constant: …} or {histogram: […]}",
		"constant", "min", "max", "histogram")
	if err != nil {
		return err
	}
	// A fixed order, so that of several problems the same one is reported every time.
	for _, key := range []string{"constant", "min", "max", "histogram"} {
		v, ok := fields[key]
		if !ok {
			continue
		}
		var err error
		switch key {
		case "constant":
			d.Constant, err = sizeNode(v, []string{key})
		case "min":
			d.Min, err = sizeNode(v, []string{key})
		case "max":
			d.Max, err = sizeNode(v, []string{key})
		case "histogram":
			d.Buckets, err = histogramNode(v)
		}
		if err != nil {
			return err
		}
	}
	_, hasC := fields["constant"]
	_, hasMin := fields["min"]
	_, hasMax := fields["max"]
	_, hasH := fields["histogram"]
	switch {
	case btoi(hasC)+btoi(hasMin || hasMax)+btoi(hasH) > 1:
		return nodeErr(n, nil, "use one of constant, min/max and histogram, not several")
	case !hasC && !hasMin && !hasMax && !hasH:
		return nodeErr(n, nil, "empty; want a size (4KiB), {min: …, max: …} or {histogram: […]}")
	case hasH && len(d.Buckets) == 0:
		return nodeErr(fields["histogram"], []string{"histogram"}, "needs at least one entry")
	case hasMin && !hasMax:
		return nodeErr(n, []string{"max"}, "missing (a uniform range needs min and max)")
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func histogramNode(n *yaml.Node) ([]SizeBucket, error) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		return nil, nodeErr(n, []string{"histogram"}, "want a list of {size: …, weight: …} or {min: …, max: …, weight: …}")
	}
	out := make([]SizeBucket, 0, len(n.Content))
	for i, item := range n.Content {
		item = deref(item)
		keys := []string{"histogram", strconv.Itoa(i)}
		fields, err := mappingFields(item, keys, "{size: …, weight: …} or {min: …, max: …, weight: …}",
			"size", "min", "max", "weight")
		if err != nil {
			return nil, err
		}
		var b SizeBucket
		sz, hasSize := fields["size"]
		lo, hasMin := fields["min"]
		hi, hasMax := fields["max"]
		switch {
		case hasSize && (hasMin || hasMax):
			return nil, nodeErr(item, keys, "use size or min/max, not both")
		case hasSize:
			if b.Min, err = sizeNode(sz, append(keys, "size")); err != nil {
				return nil, err
			}
			b.Max = b.Min
		case hasMin && hasMax:
			if b.Min, err = sizeNode(lo, append(keys, "min")); err != nil {
				return nil, err
			}
			if b.Max, err = sizeNode(hi, append(keys, "max")); err != nil {
				return nil, err
			}
		default:
			return nil, nodeErr(item, keys, "needs size, or both min and max")
		}
		w, ok := fields["weight"]
		if !ok {
			return nil, nodeErr(item, append(keys, "weight"), "missing")
		}
		if b.Weight, err = floatNode(w, append(keys, "weight")); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// MarshalYAML writes the shortest form UnmarshalYAML reads back to the same distribution.
func (d SizeDist) MarshalYAML() (any, error) {
	switch {
	case d.isHistogram():
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, b := range d.Buckets {
			if b.Min == b.Max {
				seq.Content = append(seq.Content, flowMap("size", FormatSize(b.Min), "weight", formatFloat(b.Weight)))
			} else {
				seq.Content = append(seq.Content, flowMap("min", FormatSize(b.Min), "max", FormatSize(b.Max),
					"weight", formatFloat(b.Weight)))
			}
		}
		return &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("histogram"), seq}}, nil
	case d.isUniform():
		return flowMap("min", FormatSize(d.Min), "max", FormatSize(d.Max)), nil
	default:
		return FormatSize(d.Constant), nil
	}
}

// ParseSizeDist reads the flag form of a size distribution, which is also what String prints:
// "4KiB" (constant), "1KiB-128KiB" or "1KiB–128KiB" (uniform), and "4KiB:70,1MiB-8MiB:30"
// (a histogram of sizes or ranges with weights; "histogram(…)" around it is allowed).
func ParseSizeDist(s string) (SizeDist, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimPrefix(t, "histogram("), ")")
	parseRange := func(r string) (lo, hi int64, err error) {
		a, b, isRange := strings.Cut(strings.ReplaceAll(r, "–", "-"), "-")
		if lo, err = ParseSize(a); err != nil || !isRange {
			return lo, lo, err
		}
		hi, err = ParseSize(b)
		return lo, hi, err
	}
	var d SizeDist
	if strings.ContainsAny(t, ":,") {
		for part := range strings.SplitSeq(t, ",") {
			r, w, ok := strings.Cut(part, ":")
			if !ok {
				return SizeDist{}, fmt.Errorf("size %q: a histogram entry needs a weight, as in 4KiB:70,1MiB-8MiB:30", s)
			}
			var b SizeBucket
			var err error
			if b.Min, b.Max, err = parseRange(r); err != nil {
				return SizeDist{}, fmt.Errorf("size %q: %w", s, err)
			}
			if b.Weight, err = strconv.ParseFloat(strings.TrimSpace(w), 64); err != nil {
				return SizeDist{}, fmt.Errorf("size %q: weight %q is not a number", s, strings.TrimSpace(w))
			}
			d.Buckets = append(d.Buckets, b)
		}
	} else {
		lo, hi, err := parseRange(t)
		if err != nil {
			return SizeDist{}, err
		}
		d = ConstantSize(lo)
		if lo != hi {
			d = UniformSize(lo, hi)
		}
	}
	if e := d.check(); e != nil {
		return SizeDist{}, fmt.Errorf("size %q: %w", s, e)
	}
	return d, nil
}

// ParseSize reads an object size: a plain byte count ("4096") or a number with a unit, binary
// (KiB, MiB, GiB, and the shorthands K, M, G) or decimal (KB, MB, GB). Case is ignored. A
// fraction is allowed when the result is a whole number of bytes ("1.5MiB").
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	var mult float64
	switch unit {
	case "", "b":
		mult = 1
	case "k", "kib":
		mult = 1 << 10
	case "m", "mib":
		mult = 1 << 20
	case "g", "gib":
		mult = 1 << 30
	case "kb":
		mult = 1e3
	case "mb":
		mult = 1e6
	case "gb":
		mult = 1e9
	}
	if num == "" || mult == 0 {
		return 0, fmt.Errorf("size %q: want bytes or a number with KiB, MiB, GiB, KB, MB or GB", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: not a number", s)
	}
	v := f * mult
	if v != math.Trunc(v) || v > 1<<40 {
		return 0, fmt.Errorf("size %q: not a whole number of bytes up to 1 TiB", s)
	}
	return int64(v), nil
}

// FormatSize prints n bytes the way ParseSize reads them back: in the largest binary unit that
// divides n exactly, else the largest decimal one (so the decimal sizes of the Swift workloads
// print as 100KB, not 100000B), else in bytes.
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		v    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}} {
		if n >= u.v && n%u.v == 0 {
			return strconv.FormatInt(n/u.v, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
