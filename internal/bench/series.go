package bench

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// series builds a stage's per-second time series. Operations are filed under the second in
// which they completed; a ticker closes seconds even when nothing completes, so that a stall
// (a stopped node, a full disk) shows as seconds of zero rather than vanishing from the chart.
type series struct {
	start       time.Time
	concurrency *atomic.Int64 // workers running now (a ramp changes it)

	mu      sync.Mutex
	cur     int // index of the open second
	hist    *hdrhistogram.Histogram
	ops     int64
	errs    int64
	bytes   int64
	byOp    map[string]int64
	samples []Sample
}

func newSeries(start time.Time, concurrency *atomic.Int64) *series {
	return &series{start: start, concurrency: concurrency, hist: newHistogram(), byOp: map[string]int64{}}
}

// add files one completed operation; err != nil counts it as an error.
func (s *series) add(now time.Time, op string, d time.Duration, n int64, failed bool) {
	sec := int(now.Sub(s.start) / time.Second)
	s.mu.Lock()
	s.advance(sec)
	if failed {
		s.errs++
	} else {
		s.hist.RecordValue(micros(d))
		s.ops++
		s.bytes += n
		s.byOp[op]++
	}
	s.mu.Unlock()
}

// tick closes every second that has fully passed by now.
func (s *series) tick(now time.Time) {
	s.mu.Lock()
	s.advance(int(now.Sub(s.start) / time.Second))
	s.mu.Unlock()
}

// advance closes seconds up to (not including) sec. Operations that complete a little late
// for their second (a worker descheduled between finishing and recording) land in the open
// one: a second's worth of skew in one sample, never a lost operation.
func (s *series) advance(sec int) {
	for s.cur < sec {
		smp := Sample{
			T: float64(s.cur + 1), Concurrency: int(s.concurrency.Load()),
			Operations: s.ops, Errors: s.errs,
			OpsPerSec: float64(s.ops), MBPerSec: round3(float64(s.bytes) / 1e6),
		}
		if s.ops > 0 {
			l := summarize(s.hist)
			smp.P50, smp.P99 = l.P50, l.P99
			smp.ByOp = s.byOp
			s.byOp = map[string]int64{}
		}
		s.samples = append(s.samples, smp)
		s.hist.Reset()
		s.ops, s.errs, s.bytes = 0, 0, 0
		s.cur++
	}
}

// finish closes the last second, which may be partial: its rates are scaled to its length.
// A sliver under half a second (requests still in flight when the stage's time ran out) is
// folded into the second before it, because a handful of operations over a few milliseconds
// would otherwise draw a spike that never happened.
func (s *series) finish(now time.Time) []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := now.Sub(s.start)
	full := int(el / time.Second)
	s.advance(full)
	frac := (el - time.Duration(full)*time.Second).Seconds()
	if frac <= 0 || (s.ops == 0 && s.errs == 0) {
		return s.samples
	}
	if frac < 0.5 && len(s.samples) > 0 {
		last := &s.samples[len(s.samples)-1]
		mb := last.MBPerSec + float64(s.bytes)/1e6
		last.Operations += s.ops
		last.Errors += s.errs
		span := 1 + frac
		last.T = round3(el.Seconds())
		last.OpsPerSec = round3(float64(last.Operations) / span)
		last.MBPerSec = round3(mb / span)
		if len(s.byOp) > 0 && last.ByOp == nil {
			last.ByOp = map[string]int64{}
		}
		for op, n := range s.byOp {
			last.ByOp[op] += n
		}
		return s.samples
	}
	s.advance(full + 1)
	last := &s.samples[len(s.samples)-1]
	last.T = round3(el.Seconds())
	last.OpsPerSec = round3(float64(last.Operations) / frac)
	last.MBPerSec = round3(last.MBPerSec / frac)
	return s.samples
}

// last returns the most recent closed second, for live progress.
func (s *series) last() (Sample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return Sample{}, false
	}
	return s.samples[len(s.samples)-1], true
}
