package workload

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"sync/atomic"

	"go.yaml.in/yaml/v3"
)

// Key distributions.
const (
	KeysUniform    = "uniform"
	KeysSequential = "sequential"
	KeysZipf       = "zipf"
)

// defaultZipfS is the Zipf exponent when none is given: a little above 1, the usual skew of
// web and storage traces (and the value YCSB-style generators default to).
const defaultZipfS = 1.1

// KeyDist is how each operation picks its object from the key space 0..Objects-1: uniform,
// sequential (0, 1, 2, … shared by all workers, wrapping around) or zipf (a few keys get most
// requests; S > 1 is the exponent, larger is more skewed). YAML: "uniform", "sequential",
// "zipf" or {kind: zipf, s: 1.2}.
type KeyDist struct {
	Kind string  `yaml:"kind"`
	S    float64 `yaml:"s"`
}

// String is "uniform", "sequential" or "zipf(s=1.1)".
func (k KeyDist) String() string {
	if k.Kind == KeysZipf {
		return "zipf(s=" + formatFloat(k.S) + ")"
	}
	return k.Kind
}

// normalize fills the defaults: uniform, and s = 1.1 for zipf.
func (k *KeyDist) normalize() {
	k.Kind = strings.ToLower(strings.TrimSpace(k.Kind))
	if k.Kind == "" {
		k.Kind = KeysUniform
	}
	if k.Kind == KeysZipf && k.S == 0 {
		k.S = defaultZipfS
	}
}

func (k KeyDist) check() *fieldError {
	switch k.Kind {
	case KeysUniform, KeysSequential:
		if k.S != 0 {
			return errAt([]string{"s"}, "only a zipf distribution has an exponent")
		}
	case KeysZipf:
		if !(k.S > 1) || math.IsInf(k.S, 0) {
			return errAt([]string{"s"}, "the zipf exponent must be > 1, got %s", formatFloat(k.S))
		}
	default:
		return errAt([]string{"kind"}, "unknown key distribution %q (want uniform, sequential or zipf)", k.Kind)
	}
	return nil
}

// UnmarshalYAML reads "zipf" or {kind: zipf, s: 1.2}.
func (k *KeyDist) UnmarshalYAML(n *yaml.Node) (err error) {
	defer anchorAt(n, &err)
	*k = KeyDist{}
	if n.Kind == yaml.ScalarNode {
		k.Kind = n.Value
		return nil
	}
	fields, err := mappingFields(n, nil, `"uniform", "sequential", "zipf" or {kind: zipf, s: 1.2}`, "kind", "s")
	if err != nil {
		return err
	}
	if v, ok := fields["kind"]; ok {
		v = deref(v)
		if v.Kind != yaml.ScalarNode {
			return nodeErr(v, []string{"kind"}, "want uniform, sequential or zipf")
		}
		k.Kind = v.Value
	}
	if v, ok := fields["s"]; ok {
		if k.S, err = floatNode(v, []string{"s"}); err != nil {
			return err
		}
	}
	return nil
}

// MarshalYAML writes the scalar form unless there is an exponent to keep.
func (k KeyDist) MarshalYAML() (any, error) {
	if k.S == 0 {
		return k.Kind, nil
	}
	return flowMap("kind", k.Kind, "s", formatFloat(k.S)), nil
}

// KeyPicker picks object indexes. Implementations are safe for concurrent use by goroutines
// that each pass their own *rand.Rand.
type KeyPicker interface {
	Pick(r *rand.Rand) int64
}

// Picker returns a picker over 0..n-1 (n < 1 is taken as 1). The seed only matters for zipf:
// it chooses which keys are the hot ones, so that two runs with the same seed hit the same
// keys and a run with another seed exercises another part of the key space.
func (k KeyDist) Picker(n int64, seed uint64) KeyPicker {
	n = max(n, 1)
	switch k.Kind {
	case KeysSequential:
		return &sequentialPicker{n: uint64(n)}
	case KeysZipf:
		s := k.S
		if !(s > 1) {
			s = defaultZipfS
		}
		return newZipfPicker(uint64(n), s, seed)
	default:
		return uniformPicker(n)
	}
}

type uniformPicker int64

func (n uniformPicker) Pick(r *rand.Rand) int64 { return r.Int64N(int64(n)) }

// sequentialPicker hands out 0, 1, 2, … across all goroutines, so that a prepare stage with
// Objects operations writes every key exactly once, and wraps around at n.
type sequentialPicker struct {
	next atomic.Uint64
	n    uint64
}

func (p *sequentialPicker) Pick(*rand.Rand) int64 {
	return int64((p.next.Add(1) - 1) % p.n)
}

// zipfPicker draws a popularity rank with P(rank k) ∝ (k+1)^-s, rank 0 the most popular, and
// maps it to a key with a fixed affine permutation. Without the permutation the hot keys would
// be 0, 1, 2, …: neighbours in the key order, so one bucket, one listing page and likely one
// storage partition would take all the heat, which is not what a popular-object workload does.
//
// The sampler is math/rand/v2's Zipf (rejection-inversion, Hörmann and Derflinger 1996) with
// v = 1, reimplemented here because rand.Zipf holds its own *rand.Rand and so cannot be shared
// by workers; the precomputed constants below are read-only, so this one can.
type zipfPicker struct {
	n                         uint64
	mul, add                  uint64 // key = (rank*mul + add) mod n, with gcd(mul, n) = 1
	imax, q                   float64
	oneMinusQ, oneMinusQInv   float64
	hxm, hx0MinusHxm, sThresh float64
}

func newZipfPicker(n uint64, s float64, seed uint64) *zipfPicker {
	z := &zipfPicker{n: n, imax: float64(n - 1), q: s}
	z.oneMinusQ = 1 - s
	z.oneMinusQInv = 1 / z.oneMinusQ
	z.hxm = z.h(z.imax + 0.5)
	z.hx0MinusHxm = z.h(0.5) - 1 - z.hxm // v = 1: exp(log(v)·(-q)) = 1
	z.sThresh = 1 - z.hinv(z.h(1.5)-math.Exp(-s*math.Log(2)))
	// The multiplier is near n/φ (Fibonacci hashing), which spreads consecutive ranks evenly
	// over the key space; it is moved up to the next value coprime with n so that the map is a
	// permutation. The seed only shifts the result.
	z.mul = 1
	if n > 2 {
		z.mul = uint64(float64(n) / math.Phi)
		for gcd(z.mul, n) != 1 {
			z.mul++
		}
	}
	z.add = mix64(seed) % n
	return z
}

func (z *zipfPicker) h(x float64) float64 {
	return math.Exp(z.oneMinusQ*math.Log(1+x)) * z.oneMinusQInv
}

func (z *zipfPicker) hinv(x float64) float64 {
	return math.Exp(z.oneMinusQInv*math.Log(z.oneMinusQ*x)) - 1
}

// rank draws a popularity rank in 0..n-1.
func (z *zipfPicker) rank(r *rand.Rand) uint64 {
	var k float64
	for {
		u := z.hxm + r.Float64()*z.hx0MinusHxm
		x := z.hinv(u)
		k = math.Floor(x + 0.5)
		if k-x <= z.sThresh || u >= z.h(k+0.5)-math.Exp(-math.Log(k+1)*z.q) {
			break
		}
	}
	return min(uint64(k), z.n-1)
}

func (z *zipfPicker) Pick(r *rand.Rand) int64 { return z.key(z.rank(r)) }

// key is the key of popularity rank: (rank*mul + add) mod n, in 128-bit arithmetic.
func (z *zipfPicker) key(rank uint64) int64 {
	hi, lo := bits.Mul64(rank, z.mul)
	hi %= z.n // keeps Rem64's input canonical; (hi·2^64 + lo) mod n is unchanged
	k := bits.Rem64(hi, lo, z.n)
	return int64((k + z.add) % z.n)
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// mix64 is SplitMix64's finalizer: nearby seeds give unrelated offsets.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
