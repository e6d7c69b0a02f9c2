package workload

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// clock is a settable clock for a Monitor.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newMonitor(t *testing.T, cfg Config) (*Monitor, *clock) {
	t.Helper()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	cfg.Now = c.now
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

func TestBucketBounds(t *testing.T) {
	for _, n := range []int64{1, 2, 3, 4, 1000, 1 << 20, 1<<20 + 1, 128 << 20, 1 << 46} {
		i := sizeBucket(n)
		if n > sizeBound(i) || (i > 0 && n <= sizeBound(i-1)) {
			t.Errorf("size %d in bucket %d, bounds (%d, %d]", n, i, sizeBound(i-1), sizeBound(i))
		}
	}
	prev := time.Duration(-1)
	for i := range latencyBuckets {
		b := latencyBound(i)
		if i != 2 && b <= prev { // bucket 2 (the upper half of [1, 2) µs) holds nothing
			t.Errorf("latency bound %d = %v, not above %v", i, b, prev)
		}
		if i != 2 {
			prev = b
		}
	}
	for _, d := range []time.Duration{0, time.Microsecond, 3 * time.Microsecond, 5 * time.Microsecond, 7 * time.Microsecond,
		time.Millisecond, 1500 * time.Microsecond, 2*time.Millisecond - time.Microsecond, time.Second, time.Minute} {
		i := latencyBucket(d)
		lower := time.Duration(-1)
		for j := i - 1; j >= 0; j-- {
			if j != 2 {
				lower = latencyBound(j)
				break
			}
		}
		if d.Truncate(time.Microsecond) > latencyBound(i) || d.Truncate(time.Microsecond) <= lower {
			t.Errorf("latency %v in bucket %d, bounds (%v, %v]", d, i, lower, latencyBound(i))
		}
		// Within the stated precision: the bound is less than 1.5 times the latency.
		if d >= time.Microsecond && float64(latencyBound(i)) >= 1.5*float64(d.Truncate(time.Microsecond))+float64(time.Microsecond) {
			t.Errorf("latency %v read as %v", d, latencyBound(i))
		}
	}
}

func TestSnapshotFigures(t *testing.T) {
	m, c := newMonitor(t, Config{Window: time.Minute, Slots: 6})
	// 30 reads of 4 KiB at 2 ms, 10 writes of 4 KiB at 8 ms, 5 listings, in one 10 s slot.
	for range 30 {
		m.Observe(Observation{Account: "acct", Bucket: "web", Kind: Read, Size: 4096, Out: 4096, Latency: 2 * time.Millisecond})
	}
	for range 10 {
		m.Observe(Observation{Account: "acct", Bucket: "web", Kind: Write, Size: 4096, In: 4096, Latency: 8 * time.Millisecond})
	}
	for range 5 {
		m.Observe(Observation{Account: "acct", Bucket: "web", Kind: List, Size: -1, Out: 300, Latency: time.Millisecond})
	}
	m.Observe(Observation{Account: "acct", Kind: List, Size: -1}) // no bucket: not a bucket's workload
	s := m.Snapshot()
	if len(s) != 1 {
		t.Fatalf("snapshot: %+v", s)
	}
	st := s[0]
	if st.Ops["read"] != 30 || st.Ops["write"] != 10 || st.Ops["list"] != 5 || st.ReadShare != 0.75 {
		t.Errorf("ops %v, read share %v", st.Ops, st.ReadShare)
	}
	if st.Window != 10*time.Second || st.OpsPerSecond != 4.5 || st.BytesOutPerSecond != (30*4096+5*300)/10.0 || st.BytesInPerSecond != 4096 {
		t.Errorf("over %v: %v ops/s, %v B/s in, %v B/s out", st.Window, st.OpsPerSecond, st.BytesInPerSecond, st.BytesOutPerSecond)
	}
	if st.MedianSize != 8191 || st.P95Size != 8191 {
		t.Errorf("sizes: median %d, p95 %d (4 KiB objects: the bucket up to 8 KiB)", st.MedianSize, st.P95Size)
	}
	if st.ReadP50 < 2*time.Millisecond || st.ReadP50 > 3*time.Millisecond || st.WriteP99 < 8*time.Millisecond || st.WriteP99 > 12*time.Millisecond {
		t.Errorf("latencies: read p50 %v, write p99 %v", st.ReadP50, st.WriteP99)
	}

	// The figures leave the window a slot at a time.
	c.advance(30 * time.Second)
	m.Observe(Observation{Account: "acct", Bucket: "web", Kind: Read, Size: 1 << 20, Out: 1 << 20, Latency: time.Millisecond})
	if st := m.Snapshot()[0]; st.Ops["read"] != 31 || st.Window != 40*time.Second {
		t.Errorf("30 s on: %v over %v, want 31 reads over 40 s", st.Ops, st.Window)
	}
	c.advance(40 * time.Second)
	if st := m.Snapshot()[0]; st.Ops["read"] != 1 || st.Ops["write"] != 0 || st.MedianSize != 1<<21-1 {
		t.Errorf("70 s on: %v, median %d; want the first slot gone", st.Ops, st.MedianSize)
	}
	c.advance(time.Minute)
	if s := m.Snapshot(); len(s) != 0 {
		t.Errorf("a bucket without requests in the window is still shown: %+v", s)
	}
}

// traffic observes n requests of a bucket, reads with probability readShare, each of an object
// of size drawn from [lo, hi).
func traffic(m *Monitor, rng *rand.Rand, bucket string, n int, readShare float64, lo, hi int64) {
	for range n {
		size := lo + rng.Int64N(hi-lo)
		k := Write
		if rng.Float64() < readShare {
			k = Read
		}
		m.Observe(Observation{Account: "acct", Bucket: bucket, Kind: k, Size: size, Latency: time.Millisecond})
	}
}

func TestClassesOfTheSeedsWorkloads(t *testing.T) {
	const kb, mb = int64(1) << 10, int64(1) << 20
	cases := []struct {
		name      string
		readShare float64
		lo, hi    int64
		want      Class
	}{
		{"A: web hosting", 0.9, 1 * kb, 128 * kb, SmallReads},
		{"B: online games", 0.05, 1 * kb, 128 * kb, SmallWrites},
		{"C: video sharing", 0.9, 1 * mb, 128 * mb, LargeReads},
		{"D: enterprise backup", 0.05, 1 * mb, 128 * mb, LargeWrites},
	}
	for _, tc := range cases {
		m, c := newMonitor(t, Config{})
		rng := rand.New(rand.NewPCG(1, 2))
		traffic(m, rng, "b", 15, tc.readShare, tc.lo, tc.hi)
		if got := m.Class("acct", "b"); got != Unclassified {
			t.Errorf("%s: classed %v after 15 requests", tc.name, got)
		}
		traffic(m, rng, "b", 200, tc.readShare, tc.lo, tc.hi)
		if got := m.Class("acct", "b"); got != tc.want {
			t.Errorf("%s: class %v, want %v, as soon as it has enough requests", tc.name, got, tc.want)
		}
		c.advance(30 * time.Second)
		if got := m.Class("acct", "b"); got != tc.want {
			t.Errorf("%s: class %v, want %v", tc.name, got, tc.want)
		}
	}
	m, c := newMonitor(t, Config{})
	traffic(m, rand.New(rand.NewPCG(1, 2)), "quiet", 10, 0.9, 1*kb, 128*kb)
	c.advance(30 * time.Second)
	if got := m.Class("acct", "quiet"); got != Unclassified {
		t.Errorf("10 requests: class %v, want unclassified (too few)", got)
	}
	if got := m.Class("acct", "never"); got != Unclassified {
		t.Errorf("a bucket never seen: class %v", got)
	}
}

// A bucket near a boundary keeps its class; one whose workload really changed takes the new
// class after Persist evaluations (slots) in a row.
func TestClassHysteresis(t *testing.T) {
	const kb = int64(1) << 10
	m, c := newMonitor(t, Config{Window: time.Minute, Slots: 6})
	rng := rand.New(rand.NewPCG(3, 4))
	traffic(m, rng, "b", 100, 0.9, 8*kb, 64*kb)
	c.advance(10 * time.Second)
	if got := m.Class("acct", "b"); got != SmallReads {
		t.Fatalf("class %v, want A", got)
	}
	// Reads at 42% (inside the band, on its writes' side) of objects of 600-900 KiB (between
	// 256 KiB and 1 MiB, on the large side of its middle): a bucket first seen so would be D,
	// this one stays A through two windows of it.
	for i := range 12 {
		traffic(m, rng, "b", 200, 0.42, 600*kb, 900*kb)
		c.advance(10 * time.Second)
		if got := m.Class("acct", "b"); got != SmallReads {
			t.Fatalf("slot %d in the bands: class %v, want A kept", i, got)
		}
	}
	fresh, fc := newMonitor(t, Config{Window: time.Minute, Slots: 6})
	traffic(fresh, rng, "b", 200, 0.42, 600*kb, 900*kb)
	fc.advance(10 * time.Second)
	if got := fresh.Class("acct", "b"); got != LargeWrites {
		t.Errorf("a bucket first seen in the bands: class %v, want D (the bands' middles)", got)
	}

	// Now large writes, a window's worth at once: not at the first evaluation that finds
	// them, at the second.
	var classes []Class
	for range 3 {
		traffic(m, rng, "b", 3000, 0.05, 4<<20, 64<<20)
		c.advance(10 * time.Second)
		classes = append(classes, m.Class("acct", "b"))
	}
	if classes[0] != SmallReads || classes[1] != LargeWrites || classes[2] != LargeWrites {
		t.Errorf("classes in the slots after the change: %v, want [A D D]", classes)
	}
	// A bucket that goes quiet keeps its class while anything is left in the window (its
	// last writes are 50 s old at the LIST, in a window of 60).
	c.advance(40 * time.Second)
	m.Observe(Observation{Account: "acct", Bucket: "b", Kind: List, Size: -1})
	c.advance(10 * time.Second)
	if got := m.Class("acct", "b"); got != LargeWrites {
		t.Errorf("a quiet bucket: class %v, want D kept", got)
	}
}

func TestMaxBucketsEvictsTheQuietest(t *testing.T) {
	m, _ := newMonitor(t, Config{MaxBuckets: 2})
	for range 5 {
		m.Observe(Observation{Account: "a", Bucket: "busy", Kind: Read, Size: 1})
	}
	m.Observe(Observation{Account: "a", Bucket: "quiet", Kind: Read, Size: 1})
	m.Observe(Observation{Account: "a", Bucket: "new", Kind: Read, Size: 1})
	var names []string
	for _, s := range m.Snapshot() {
		names = append(names, s.Bucket)
	}
	if len(names) != 2 || names[0] != "busy" || names[1] != "new" {
		t.Errorf("tracked %v, want [busy new]", names)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []Config{
		{Window: time.Millisecond},
		{Slots: -1},
		{MaxBuckets: -1},
		{Classes: Thresholds{Large: 1, Small: 2, Persist: 1}},
		{Classes: Thresholds{Large: 2, Small: 1, ReadHeavy: 0.3, WriteHeavy: 0.6, Persist: 1}},
		{Classes: Thresholds{Large: 2, Small: 1, ReadHeavy: 0.6, WriteHeavy: 0.4}},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
	}
}

func TestClassText(t *testing.T) {
	for c := Unclassified; c <= LargeWrites; c++ {
		b, _ := c.MarshalText()
		var back Class
		if err := back.UnmarshalText(b); err != nil || back != c {
			t.Errorf("%v: %q read back as %v, %v", c, b, back, err)
		}
	}
	var c Class
	if err := c.UnmarshalText([]byte("E")); err == nil {
		t.Error("class E read")
	}
}

func TestByClassAndCollector(t *testing.T) {
	const kb = int64(1) << 10
	m, c := newMonitor(t, Config{Window: time.Minute, Slots: 6})
	rng := rand.New(rand.NewPCG(5, 6))
	traffic(m, rng, "web1", 100, 0.9, 1*kb, 128*kb)
	traffic(m, rng, "web2", 100, 0.9, 1*kb, 128*kb)
	traffic(m, rng, "backup", 100, 0.05, 1<<20, 128<<20)
	m.Observe(Observation{Account: "acct", Bucket: "new", Kind: Read, Size: 1, Latency: time.Second})
	c.advance(10 * time.Second)
	got := m.ByClass()
	if len(got) != 3 || got[0].Class != Unclassified || got[0].Buckets != 1 || got[1].Class != SmallReads || got[1].Buckets != 2 ||
		got[2].Class != LargeWrites || got[2].Buckets != 1 {
		t.Fatalf("by class: %+v", got)
	}
	if got[1].OpsPerSecond != 10 || got[0].ReadP95 < time.Second || got[1].ReadP95 > 2*time.Millisecond {
		t.Errorf("class A: %+v; unclassified: %+v", got[1], got[0])
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Collector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, mf := range mfs {
		series[mf.GetName()] = len(mf.GetMetric())
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "bucket" || l.GetName() == "account" {
					t.Errorf("%s names a %s: /metrics must not name tenants' buckets", mf.GetName(), l.GetName())
				}
			}
		}
	}
	if series["cairn_workload_buckets"] != 3 || series["cairn_workload_bytes_per_second"] != 6 || series["cairn_workload_latency_p95_seconds"] != 6 {
		t.Errorf("series: %v", series)
	}
}

// An account's class is that of its busiest classed buckets, summed by class: a new bucket of
// the account is placed by it. Unclassed buckets and other accounts' buckets do not count.
func TestAccountClass(t *testing.T) {
	const kb, mb = int64(1) << 10, int64(1) << 20
	m, _ := newMonitor(t, Config{})
	rng := rand.New(rand.NewPCG(3, 4))
	if got := m.AccountClass("acct"); got != Unclassified {
		t.Fatalf("an account never seen: %v", got)
	}
	traffic(m, rng, "new", 10, 0.05, 1*mb, 128*mb) // too few to be classed
	if got := m.AccountClass("acct"); got != Unclassified {
		t.Fatalf("an account of one unclassed bucket: %v", got)
	}
	// Two backup buckets of 60 requests each outweigh one site of 100.
	traffic(m, rng, "backup1", 60, 0.05, 1*mb, 128*mb)
	traffic(m, rng, "backup2", 60, 0.05, 1*mb, 128*mb)
	traffic(m, rng, "site", 100, 0.9, 1*kb, 128*kb)
	m.Observe(Observation{Account: "other", Bucket: "x", Kind: Read, Size: kb})
	for range 300 {
		m.Observe(Observation{Account: "other", Bucket: "busy", Kind: Read, Size: kb})
	}
	if got := m.AccountClass("acct"); got != LargeWrites {
		t.Errorf("account class %v, want D (120 requests of D against 100 of A)", got)
	}
	traffic(m, rng, "site", 50, 0.9, 1*kb, 128*kb)
	if got := m.AccountClass("acct"); got != SmallReads {
		t.Errorf("account class %v, want A once its site has 150 requests", got)
	}
	if got := m.AccountClass("other"); got != SmallReads {
		t.Errorf("the other account: %v", got)
	}
}

// LargeBucket follows the classes: a name is large while a bucket of that name is classed C or
// D, and no longer once it has aged out of the window.
func TestLargeBucket(t *testing.T) {
	const kb, mb = int64(1) << 10, int64(1) << 20
	m, c := newMonitor(t, Config{})
	rng := rand.New(rand.NewPCG(5, 6))
	if m.LargeBucket("backups") {
		t.Fatal("a bucket never seen is large")
	}
	traffic(m, rng, "backups", 40, 0.05, 1*mb, 128*mb)
	traffic(m, rng, "site", 40, 0.9, 1*kb, 128*kb)
	if !m.LargeBucket("backups") || m.LargeBucket("site") {
		t.Errorf("backups large %v, site large %v", m.LargeBucket("backups"), m.LargeBucket("site"))
	}
	c.advance(6 * time.Minute) // nothing else looks at the monitor meanwhile
	if m.LargeBucket("backups") {
		t.Error("a bucket aged out of the window is still large")
	}
}
