package workload

import "fmt"

// Class is a bucket's workload as the seed's MOS design names them: small objects (1-128 KB)
// or large (1-128 MB), mostly read or mostly written.
type Class uint8

const (
	Unclassified Class = iota // too few requests in the window to tell
	SmallReads                // A: web hosting (small objects, 90% GETs)
	SmallWrites               // B: online games (small objects, 90% PUTs)
	LargeReads                // C: video sharing (large objects, 90% GETs)
	LargeWrites               // D: enterprise backup (large objects, 90% PUTs)
)

var classNames = [...]string{"unclassified", "A", "B", "C", "D"}

// String is the seed's letter, or "unclassified".
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", c)
}

// Describe says what the class is in words.
func (c Class) Describe() string {
	switch c {
	case SmallReads:
		return "small objects, mostly read"
	case SmallWrites:
		return "small objects, mostly written"
	case LargeReads:
		return "large objects, mostly read"
	case LargeWrites:
		return "large objects, mostly written"
	}
	return "too few requests to tell"
}

// MarshalText writes the class as String does.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (c *Class) UnmarshalText(b []byte) error {
	for i, n := range classNames {
		if n == string(b) {
			*c = Class(i)
			return nil
		}
	}
	return fmt.Errorf("workload: no class %q", b)
}

// Large reports whether the class is of large objects.
func (c Class) Large() bool { return c == LargeReads || c == LargeWrites }

// Reads reports whether the class mostly reads.
func (c Class) Reads() bool { return c == SmallReads || c == LargeReads }

// Thresholds are the classifier's. Each dimension has two thresholds with a band between them
// in which a bucket keeps what it was (hysteresis): a bucket whose median object size sits at
// a boundary would otherwise change class with every few requests.
type Thresholds struct {
	// A bucket is large once the median size of the objects it reads and writes reaches
	// Large, and small once it falls below Small (defaults 1 MiB and 256 KiB: the seed's
	// classes are 1-128 KB and 1-128 MB).
	Large, Small int64
	// A bucket mostly reads once reads reach ReadHeavy of its reads and writes, and mostly
	// writes once they fall to WriteHeavy (defaults 0.6 and 0.4).
	ReadHeavy, WriteHeavy float64
	// MinOps is how many reads and writes the window must hold for a class (default 20).
	MinOps uint64
	// Persist is how many evaluations in a row (one a slot) must find a new class before a
	// classified bucket takes it (default 2).
	Persist int
}

// DefaultThresholds are the classifier's defaults.
var DefaultThresholds = Thresholds{Large: 1 << 20, Small: 256 << 10, ReadHeavy: 0.6, WriteHeavy: 0.4, MinOps: 20, Persist: 2}

func (t Thresholds) validate() error {
	switch {
	case t.Small <= 0 || t.Large < t.Small:
		return fmt.Errorf("workload: size thresholds %d (small) and %d (large): %w", t.Small, t.Large, ErrConfig)
	case t.WriteHeavy < 0 || t.ReadHeavy > 1 || t.ReadHeavy < t.WriteHeavy:
		return fmt.Errorf("workload: read shares %v (write-heavy) and %v (read-heavy): %w", t.WriteHeavy, t.ReadHeavy, ErrConfig)
	case t.Persist < 1:
		return fmt.Errorf("workload: persist %d evaluations, at least 1: %w", t.Persist, ErrConfig)
	}
	return nil
}

// classify returns the class the window w says, for a bucket of class was: each dimension
// keeps was's side while it is inside its band. An unclassified bucket inside a band takes the
// side nearer the middle of it.
func (t Thresholds) classify(w *window, was Class) Class {
	rw := w.ops[Read] + w.ops[Write]
	i, sized := percentile(w.sizes[:], 0.5)
	if rw < t.MinOps || !sized {
		return Unclassified
	}
	median := sizeBound(i)
	var large bool
	switch {
	case median >= t.Large:
		large = true
	case median < t.Small:
		large = false
	case was != Unclassified:
		large = was.Large()
	default:
		large = float64(median)*float64(median) >= float64(t.Small)*float64(t.Large) // the geometric middle
	}
	share := float64(w.ops[Read]) / float64(rw)
	var reads bool
	switch {
	case share >= t.ReadHeavy:
		reads = true
	case share <= t.WriteHeavy:
		reads = false
	case was != Unclassified:
		reads = was.Reads()
	default:
		reads = share >= (t.ReadHeavy+t.WriteHeavy)/2
	}
	switch {
	case large && reads:
		return LargeReads
	case large:
		return LargeWrites
	case reads:
		return SmallReads
	}
	return SmallWrites
}

// evaluate classifies a bucket again once a slot: the first class it earns is taken at once
// (an unclassified bucket is evaluated whenever it is looked at, so that it is classed as soon
// as it has enough requests), a change only when Persist evaluations in a row find it.
func (m *Monitor) evaluate(b *bucketState, now int64) {
	if now <= b.evaluatedAt && b.class != Unclassified {
		return
	}
	b.evaluatedAt = now
	was := b.class
	defer func() { m.classChanged(b, was) }()
	w := m.sum(b, now)
	found := m.cfg.Classes.classify(&w, b.class)
	switch {
	case found == b.class:
		b.pending, b.pendingCount = Unclassified, 0
	case b.class == Unclassified:
		b.class, b.pending, b.pendingCount = found, Unclassified, 0
	case found == Unclassified:
		// Too few requests to tell: the bucket keeps its class until it has more.
	default:
		if found == b.pending {
			b.pendingCount++
		} else {
			b.pending, b.pendingCount = found, 1
		}
		if b.pendingCount >= m.cfg.Classes.Persist {
			b.class, b.pending, b.pendingCount = found, Unclassified, 0
		}
	}
}
