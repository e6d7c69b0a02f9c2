// Package workload is the workload monitor of the microstores (docs/microstores.md, the MOS
// design of seed 004): what each bucket's clients ask of it, over a sliding window, and the
// workload class it puts the bucket in. The protocol front ends tell it of every request they
// serve (Observe); it keeps, per account and bucket, the operations by kind, the bytes moved,
// the sizes of the objects read and written and the requests' latencies, in time slots that
// age out of the window. Snapshot summarizes them (op mix, ops/s, bytes/s, size and latency
// percentiles); Class says which of the seed's workloads A-D a bucket runs, with hysteresis so
// that a bucket near a boundary does not flap. It does no I/O and starts no goroutines: the
// clock is passed in.
package workload

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"time"
)

// Kind is what an operation does to a bucket's data.
type Kind uint8

const (
	Other  Kind = iota // anything else (bucket settings, uploads begun or ended): the zero Kind
	Read               // an object's bytes or metadata read (GET, HEAD)
	Write              // an object written (PUT, a part, a copy, a POST of metadata)
	Delete             // an object deleted
	List               // a listing
	kinds
)

var kindNames = [kinds]string{"other", "read", "write", "delete", "list"}

func (k Kind) String() string {
	if k < kinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Observation is one request a front end served.
type Observation struct {
	Account, Bucket string
	Kind            Kind
	// Size is the size of the object read or written (the bytes moved for a ranged read), or
	// -1 when the request moved no object's bytes (a HEAD, a listing, a failure).
	Size int64
	// In and Out are the bytes of the request's and the response's bodies.
	In, Out int64
	Latency time.Duration
}

// Config shapes a Monitor.
type Config struct {
	// Window is how far back the monitor looks (default 5 minutes), in Slots slots of equal
	// length (default 10): a request leaves the window whole slots at a time.
	Window time.Duration
	Slots  int
	// MaxBuckets bounds the buckets tracked at once (default 4096): a new bucket beyond it
	// takes the place of the one with the fewest requests in the window.
	MaxBuckets int
	// Classes are the classifier's thresholds (DefaultThresholds when zero).
	Classes Thresholds
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Validate checks the configuration, its defaults filled in.
func (c *Config) Validate() error {
	if c.Window == 0 {
		c.Window = 5 * time.Minute
	}
	if c.Slots == 0 {
		c.Slots = 10
	}
	if c.MaxBuckets == 0 {
		c.MaxBuckets = 4096
	}
	if c.Classes == (Thresholds{}) {
		c.Classes = DefaultThresholds
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	switch {
	case c.Window < time.Second:
		return fmt.Errorf("workload: window %v: %w", c.Window, ErrConfig)
	case c.Slots < 1 || c.Slots > 1000:
		return fmt.Errorf("workload: %d slots, 1 to 1000: %w", c.Slots, ErrConfig)
	case c.MaxBuckets < 1:
		return fmt.Errorf("workload: at most %d buckets: %w", c.MaxBuckets, ErrConfig)
	}
	return c.Classes.validate()
}

// ErrConfig: a Config that cannot be used.
var ErrConfig = errors.New("invalid workload monitor configuration")

// sizeBuckets and latencyBuckets are the histograms' buckets: sizes by powers of two (bucket i
// holds sizes below 2^i), latencies by half powers of two of microseconds, up to about 18
// minutes. Percentiles are read at a bucket's upper bound, so they are within a factor of 2
// (sizes) or about 1.41 (latencies) of the truth, which is what a class needs.
const (
	sizeBuckets    = 48
	latencyBuckets = 60
)

// slot is one bucket's requests in one slot of time.
type slot struct {
	start   int64 // the slot's index in time (unix time / slot length); -1: unused
	ops     [kinds]uint32
	in, out uint64
	sizes   [2][sizeBuckets]uint32        // of objects read, written
	latency [kinds][latencyBuckets]uint32 // by kind
}

// bucketState is one bucket's window and class.
type bucketState struct {
	account, bucket string
	slots           []slot // a ring, indexed by slot index modulo its length
	class           Class
	// pending is the class the recent evaluations found, other than class, and how many
	// evaluations in a row found it: the class changes when it persists (hysteresis).
	pending      Class
	pendingCount int
	evaluatedAt  int64 // the slot index of the last evaluation
}

type bucketKey struct{ account, bucket string }

// Monitor is the workload monitor of one process. Safe for concurrent use.
type Monitor struct {
	cfg     Config
	slotLen time.Duration
	mu      sync.Mutex
	buckets map[bucketKey]*bucketState
	// large counts, by bucket name, the buckets of that name (of any account) classed C or D,
	// for LargeBucket on a request's path; prunedAt is the slot the buckets that aged out of
	// the window were last forgotten in (so that a quiet bucket stops counting).
	large    map[string]int
	prunedAt int64
}

// New returns a Monitor.
func New(cfg Config) (*Monitor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Monitor{cfg: cfg, slotLen: cfg.Window / time.Duration(cfg.Slots), buckets: map[bucketKey]*bucketState{}, large: map[string]int{}}, nil
}

// Window is how far back the monitor looks.
func (m *Monitor) Window() time.Duration { return m.cfg.Window }

// slotIndex is the slot a time falls in.
func (m *Monitor) slotIndex(t time.Time) int64 { return t.UnixNano() / int64(m.slotLen) }

// Observe records one request. Requests without a bucket (an account's listing, sign-in) are
// not a bucket's workload and are left out.
func (m *Monitor) Observe(o Observation) {
	if o.Bucket == "" || o.Kind >= kinds {
		return
	}
	now := m.slotIndex(m.cfg.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune(now)
	b := m.bucket(bucketKey{o.Account, o.Bucket}, now)
	s := b.slot(now)
	s.ops[o.Kind]++
	s.in += uint64(max(o.In, 0))
	s.out += uint64(max(o.Out, 0))
	if o.Size >= 0 {
		switch o.Kind {
		case Read:
			s.sizes[0][sizeBucket(o.Size)]++
		case Write:
			s.sizes[1][sizeBucket(o.Size)]++
		}
	}
	s.latency[o.Kind][latencyBucket(o.Latency)]++
	m.evaluate(b, now)
}

// bucket returns the state of k, making room for it when it is new.
func (m *Monitor) bucket(k bucketKey, now int64) *bucketState {
	if b, ok := m.buckets[k]; ok {
		return b
	}
	if len(m.buckets) >= m.cfg.MaxBuckets {
		var quietest bucketKey
		least := uint64(math.MaxUint64)
		for key, b := range m.buckets {
			if n := b.requests(now, m.cfg.Slots); n < least {
				quietest, least = key, n
			}
		}
		m.forget(quietest)
	}
	b := &bucketState{account: k.account, bucket: k.bucket, slots: make([]slot, m.cfg.Slots), evaluatedAt: now}
	for i := range b.slots {
		b.slots[i].start = -1
	}
	m.buckets[k] = b
	return b
}

// slot returns the bucket's slot for index now, cleared if it last held an older one.
func (b *bucketState) slot(now int64) *slot {
	s := &b.slots[int(now%int64(len(b.slots)))]
	if s.start != now {
		*s = slot{start: now}
	}
	return s
}

// live reports whether a slot is inside the window that ends with slot now.
func live(s *slot, now int64, slots int) bool {
	return s.start >= 0 && s.start > now-int64(slots) && s.start <= now
}

// requests counts the bucket's requests in the window.
func (b *bucketState) requests(now int64, slots int) uint64 {
	var n uint64
	for i := range b.slots {
		if s := &b.slots[i]; live(s, now, slots) {
			for _, c := range s.ops {
				n += uint64(c)
			}
		}
	}
	return n
}

func sizeBucket(n int64) int {
	if n <= 0 {
		return 0
	}
	return min(bits.Len64(uint64(n)), sizeBuckets-1)
}

// sizeBound is the upper bound of a size bucket.
func sizeBound(i int) int64 {
	if i == 0 {
		return 0
	}
	return int64(1)<<i - 1
}

func latencyBucket(d time.Duration) int {
	us := d.Microseconds()
	if us <= 0 {
		return 0
	}
	// Two buckets per power of two: the upper half of [2^k, 2^(k+1)) is the odd one.
	k := bits.Len64(uint64(us)) - 1
	i := 2*k + 1
	if k > 0 && uint64(us)&(1<<(k-1)) != 0 {
		i++
	}
	return min(i, latencyBuckets-1)
}

// latencyBound is the upper bound of a latency bucket: bucket 2k+1 holds [2^k, 1.5*2^k)
// microseconds, bucket 2k+2 the rest up to 2^(k+1).
func latencyBound(i int) time.Duration {
	if i == 0 {
		return 0
	}
	k := (i - 1) / 2
	us := int64(1)<<(k+1) - 1 // the upper half's
	if (i-1)%2 == 0 {
		us = 1
		if k > 0 {
			us = int64(1)<<k + int64(1)<<(k-1) - 1
		}
	}
	return time.Duration(us) * time.Microsecond
}

// percentile reads the p-th percentile (0 < p <= 1) of a histogram at its buckets' upper
// bounds; ok is false for an empty histogram.
func percentile(h []uint64, p float64) (bucket int, ok bool) {
	var total uint64
	for _, c := range h {
		total += c
	}
	if total == 0 {
		return 0, false
	}
	rank := uint64(math.Ceil(p * float64(total)))
	var seen uint64
	for i, c := range h {
		seen += c
		if seen >= rank {
			return i, true
		}
	}
	return len(h) - 1, true
}

// Stats is a bucket's workload over the window.
type Stats struct {
	Account string `json:"account"`
	Bucket  string `json:"bucket"`
	Class   Class  `json:"class"`
	// Window is the time the figures cover: the window, or less for a bucket first seen
	// within it.
	Window time.Duration `json:"window_ns"`
	// Ops counts the requests by kind; OpsPerSecond is their total rate.
	Ops          map[string]uint64 `json:"ops"`
	OpsPerSecond float64           `json:"ops_per_second"`
	// ReadShare is the reads' share of the reads and writes (0 when there were neither).
	ReadShare float64 `json:"read_share"`
	// BytesInPerSecond and BytesOutPerSecond are the rates of request and response bodies.
	BytesInPerSecond  float64 `json:"bytes_in_per_second"`
	BytesOutPerSecond float64 `json:"bytes_out_per_second"`
	// MedianSize and P95Size are of the objects read and written (-1: none).
	MedianSize int64 `json:"median_size"`
	P95Size    int64 `json:"p95_size"`
	// Latency percentiles of reads and writes (0: none).
	ReadP50  time.Duration `json:"read_p50_ns"`
	ReadP95  time.Duration `json:"read_p95_ns"`
	ReadP99  time.Duration `json:"read_p99_ns"`
	WriteP50 time.Duration `json:"write_p50_ns"`
	WriteP95 time.Duration `json:"write_p95_ns"`
	WriteP99 time.Duration `json:"write_p99_ns"`
}

// Snapshot returns the workload of every bucket with requests in the window, by account and
// bucket name.
func (m *Monitor) Snapshot() []Stats {
	now := m.slotIndex(m.cfg.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune(now) // what aged out of the window
	var out []Stats
	for _, b := range m.buckets {
		m.evaluate(b, now)
		out = append(out, m.stats(b, now))
	}
	slices.SortFunc(out, func(a, b Stats) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.Bucket, b.Bucket))
	})
	return out
}

// forget drops a bucket's state. m.mu is held.
func (m *Monitor) forget(k bucketKey) {
	if b, ok := m.buckets[k]; ok && b.class.Large() {
		m.countLarge(k.bucket, -1)
	}
	delete(m.buckets, k)
}

// classChanged keeps m.large in step with a bucket's class. m.mu is held.
func (m *Monitor) classChanged(b *bucketState, was Class) {
	switch {
	case b.class.Large() && !was.Large():
		m.countLarge(b.bucket, 1)
	case !b.class.Large() && was.Large():
		m.countLarge(b.bucket, -1)
	}
}

func (m *Monitor) countLarge(bucket string, n int) {
	if m.large[bucket] += n; m.large[bucket] <= 0 {
		delete(m.large, bucket)
	}
}

// LargeBucket reports whether a bucket of that name, of any account, is classed as large
// objects (C or D): the request lanes' hint for a read whose size is not known before it is
// served. It costs a map lookup, for the request path.
func (m *Monitor) LargeBucket(bucket string) bool {
	now := m.slotIndex(m.cfg.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune(now)
	return m.large[bucket] > 0
}

// prune forgets the buckets with nothing in the window, once a slot. m.mu is held.
func (m *Monitor) prune(now int64) {
	if now == m.prunedAt {
		return
	}
	m.prunedAt = now
	for k, b := range m.buckets {
		if b.requests(now, m.cfg.Slots) == 0 {
			m.forget(k)
		}
	}
}

// Class returns the class of a bucket (Unclassified when the monitor has too little of it).
func (m *Monitor) Class(account, bucket string) Class {
	now := m.slotIndex(m.cfg.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.buckets[bucketKey{account, bucket}]
	if !ok {
		return Unclassified
	}
	m.evaluate(b, now)
	return b.class
}

// AccountClass returns the class of an account's workload: of its buckets' classes (those
// classed), the one with the most requests in the window; Unclassified when none is classed.
// It is the class a new bucket of the account is placed by, having no workload of its own yet.
func (m *Monitor) AccountClass(account string) Class {
	now := m.slotIndex(m.cfg.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	var requests [LargeWrites + 1]uint64
	for k, b := range m.buckets {
		if k.account != account {
			continue
		}
		m.evaluate(b, now)
		if b.class != Unclassified {
			requests[b.class] += b.requests(now, m.cfg.Slots)
		}
	}
	best := Unclassified
	for c := SmallReads; c <= LargeWrites; c++ {
		if requests[c] > requests[best] {
			best = c
		}
	}
	return best
}

// window sums a bucket's live slots.
type window struct {
	ops     [kinds]uint64
	in, out uint64
	sizes   [sizeBuckets]uint64
	latency [2][latencyBuckets]uint64 // reads, writes
	first   int64                     // the oldest live slot's index
}

func (m *Monitor) sum(b *bucketState, now int64) window {
	w := window{first: now}
	for i := range b.slots {
		s := &b.slots[i]
		if !live(s, now, m.cfg.Slots) {
			continue
		}
		w.first = min(w.first, s.start)
		for k, c := range s.ops {
			w.ops[k] += uint64(c)
		}
		w.in += s.in
		w.out += s.out
		for j := range sizeBuckets {
			w.sizes[j] += uint64(s.sizes[0][j]) + uint64(s.sizes[1][j])
		}
		for j := range latencyBuckets {
			w.latency[0][j] += uint64(s.latency[Read][j])
			w.latency[1][j] += uint64(s.latency[Write][j])
		}
	}
	return w
}

func (m *Monitor) stats(b *bucketState, now int64) Stats {
	w := m.sum(b, now)
	// The figures cover the live slots, the current one counted as whole: a rate over a part
	// slot would read high.
	span := time.Duration(now-w.first+1) * m.slotLen
	st := Stats{Account: b.account, Bucket: b.bucket, Class: b.class, Window: span, Ops: map[string]uint64{},
		MedianSize: -1, P95Size: -1}
	var total uint64
	for k, c := range w.ops {
		if c > 0 {
			st.Ops[Kind(k).String()] = c
		}
		total += c
	}
	secs := span.Seconds()
	st.OpsPerSecond = float64(total) / secs
	st.BytesInPerSecond, st.BytesOutPerSecond = float64(w.in)/secs, float64(w.out)/secs
	if rw := w.ops[Read] + w.ops[Write]; rw > 0 {
		st.ReadShare = float64(w.ops[Read]) / float64(rw)
	}
	if i, ok := percentile(w.sizes[:], 0.5); ok {
		st.MedianSize = sizeBound(i)
		j, _ := percentile(w.sizes[:], 0.95)
		st.P95Size = sizeBound(j)
	}
	lat := func(h []uint64, p float64) time.Duration {
		if i, ok := percentile(h, p); ok {
			return latencyBound(i)
		}
		return 0
	}
	st.ReadP50, st.ReadP95, st.ReadP99 = lat(w.latency[0][:], 0.5), lat(w.latency[0][:], 0.95), lat(w.latency[0][:], 0.99)
	st.WriteP50, st.WriteP95, st.WriteP99 = lat(w.latency[1][:], 0.5), lat(w.latency[1][:], 0.95), lat(w.latency[1][:], 0.99)
	return st
}
