package bench

import (
	"math"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cairn-store/cairn/internal/objclient"
)

// Latencies are recorded in microseconds from 1 µs to 10 minutes with 3 significant digits:
// 0.1% resolution everywhere in that range in a few tens of KiB per histogram.
const (
	histMinMicros = 1
	histMaxMicros = int64(10 * time.Minute / time.Microsecond)
	histSigFigs   = 3
)

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMinMicros, histMaxMicros, histSigFigs)
}

// Latency is a latency summary in milliseconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

func summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(us int64) float64 { return round3(float64(us) / 1000) }
	return Latency{
		Mean: round3(h.Mean() / 1000),
		P50:  ms(h.ValueAtQuantile(50)),
		P95:  ms(h.ValueAtQuantile(95)),
		P99:  ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)),
		Max:  ms(h.Max()),
	}
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// OpStats is the result of one kind of operation (put, get, list) over one measured period.
// Operations counts successful requests only, and every rate is computed from them, so that
// fast failures never inflate a throughput figure; failures are in Errors and ErrorKinds.
type OpStats struct {
	Operations int64            `json:"operations"`
	Errors     int64            `json:"errors"`
	ErrorKinds map[string]int64 `json:"error_kinds,omitempty"`
	Bytes      int64            `json:"bytes"`
	OpsPerSec  float64          `json:"ops_per_sec"`
	MBPerSec   float64          `json:"mb_per_sec"` // 10^6 bytes per second, as COSBench and fio report
	Latency    Latency          `json:"latency_ms"`
	// TTFB is the time to first byte of GETs: from sending the request to the response
	// headers arriving.
	TTFB *Latency `json:"ttfb_ms,omitempty"`
}

// recorder accumulates one operation's outcomes from many workers. One mutex is enough: a
// lock per request costs well under a microsecond, orders of magnitude below an HTTP round
// trip, and keeps windows exact.
type recorder struct {
	mu     sync.Mutex
	hist   *hdrhistogram.Histogram
	ops    int64
	errs   int64
	bytes  int64
	kinds  map[string]int64
	ttfb   *hdrhistogram.Histogram // GETs only; nil until the first one
	window *windowState            // nil unless windows are reported
}

func newRecorder() *recorder {
	return &recorder{hist: newHistogram(), kinds: map[string]int64{}}
}

func micros(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	if us < histMinMicros {
		us = histMinMicros
	}
	if us > histMaxMicros {
		us = histMaxMicros
	}
	return us
}

// ok records a successful request of n bytes that took d.
func (r *recorder) ok(d time.Duration, n int64) {
	us := micros(d)
	r.mu.Lock()
	r.hist.RecordValue(us)
	r.ops++
	r.bytes += n
	if w := r.window; w != nil {
		w.hist.RecordValue(us)
		w.ops++
		w.bytes += n
		if w.ops >= w.every {
			w.close(time.Now())
		}
	}
	r.mu.Unlock()
}

// okTTFB records a successful GET whose response headers arrived after ttfb.
func (r *recorder) okTTFB(d, ttfb time.Duration, n int64) {
	r.mu.Lock()
	if r.ttfb == nil {
		r.ttfb = newHistogram()
	}
	r.ttfb.RecordValue(micros(ttfb))
	r.mu.Unlock()
	r.ok(d, n)
}

// merge adds everything o recorded (used to total the measured stages of a workload).
func (r *recorder) merge(o *recorder) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hist.Merge(o.hist)
	if o.ttfb != nil {
		if r.ttfb == nil {
			r.ttfb = newHistogram()
		}
		r.ttfb.Merge(o.ttfb)
	}
	r.ops += o.ops
	r.errs += o.errs
	r.bytes += o.bytes
	for k, v := range o.kinds {
		r.kinds[k] += v
	}
}

// fail records a failed request.
func (r *recorder) fail(err error) {
	kind := objclient.ErrorKind(err)
	r.mu.Lock()
	r.errs++
	r.kinds[kind]++
	if w := r.window; w != nil {
		w.errs++
	}
	r.mu.Unlock()
}

// stats summarizes everything recorded, as rates over elapsed.
func (r *recorder) stats(elapsed time.Duration) OpStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := OpStats{Operations: r.ops, Errors: r.errs, Bytes: r.bytes, Latency: summarize(r.hist)}
	if r.ttfb != nil {
		t := summarize(r.ttfb)
		s.TTFB = &t
	}
	if len(r.kinds) > 0 {
		s.ErrorKinds = make(map[string]int64, len(r.kinds))
		for k, v := range r.kinds {
			s.ErrorKinds[k] = v
		}
	}
	if sec := elapsed.Seconds(); sec > 0 {
		s.OpsPerSec = round3(float64(r.ops) / sec)
		s.MBPerSec = round3(float64(r.bytes) / 1e6 / sec)
	}
	return s
}

// Window is the throughput of one block of consecutive successful operations (for example
// objects 100,001 to 200,000 of a fill), so that a slowdown as the store grows is visible.
type Window struct {
	Index   int     `json:"index"`   // 1-based
	Through int64   `json:"through"` // successful operations so far, at the end of this window
	Seconds float64 `json:"seconds"`
	OpStats
}

type windowState struct {
	every    int64
	start    time.Time
	hist     *hdrhistogram.Histogram
	ops      int64
	errs     int64
	bytes    int64
	total    int64
	done     []Window
	onWindow func(Window) // called with the recorder's lock held; must be quick
}

func (r *recorder) reportEvery(n int64, start time.Time, onWindow func(Window)) {
	r.window = &windowState{every: n, start: start, hist: newHistogram(), onWindow: onWindow}
}

// close ends the current window at now. The caller holds the recorder's lock.
func (w *windowState) close(now time.Time) {
	if w.ops == 0 && w.errs == 0 {
		return
	}
	el := now.Sub(w.start)
	w.total += w.ops
	win := Window{Index: len(w.done) + 1, Through: w.total, Seconds: round3(el.Seconds()), OpStats: OpStats{
		Operations: w.ops, Errors: w.errs, Bytes: w.bytes, Latency: summarize(w.hist),
	}}
	if s := el.Seconds(); s > 0 {
		win.OpsPerSec = round3(float64(w.ops) / s)
		win.MBPerSec = round3(float64(w.bytes) / 1e6 / s)
	}
	w.done = append(w.done, win)
	if w.onWindow != nil {
		w.onWindow(win)
	}
	w.start, w.ops, w.errs, w.bytes = now, 0, 0, 0
	w.hist.Reset()
}

// windows closes the last partial window and returns them all.
func (r *recorder) windows(now time.Time) []Window {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.window == nil {
		return nil
	}
	r.window.close(now)
	return r.window.done
}

// CPU is the benchmark process's own CPU use, to show that the load generator was not the
// bottleneck. It is getrusage(RUSAGE_SELF): when the server runs in the same process (tests),
// it includes the server's work too.
type CPU struct {
	UserSeconds   float64 `json:"user_seconds"`
	SystemSeconds float64 `json:"system_seconds"`
	// SecondsPer1000Ops is (user+system) CPU seconds per 1000 operations, successful or not.
	SecondsPer1000Ops float64 `json:"seconds_per_1000_ops"`
	// Utilization is CPU seconds per wall-clock second: 1.0 is one core fully busy.
	Utilization float64 `json:"utilization"`
}

type cpuMark struct{ user, sys time.Duration }

func cpuNow() cpuMark {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuMark{}
	}
	return cpuMark{user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano())}
}

func cpuSince(m cpuMark, ops int64, wall time.Duration) CPU {
	now := cpuNow()
	c := CPU{
		UserSeconds:   round3((now.user - m.user).Seconds()),
		SystemSeconds: round3((now.sys - m.sys).Seconds()),
	}
	total := (now.user - m.user + now.sys - m.sys).Seconds()
	if ops > 0 {
		c.SecondsPer1000Ops = math.Round(total/float64(ops)*1000*1e4) / 1e4
	}
	if wall > 0 {
		c.Utilization = round3(total / wall.Seconds())
	}
	return c
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
