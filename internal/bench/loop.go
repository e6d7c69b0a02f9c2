package bench

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-store/cairn/internal/bench/workload"
	"github.com/cairn-store/cairn/internal/objclient"
)

// stageRecorder gathers one stage's results: a recorder per operation kind, one for all of
// them, and the per-second series.
type stageRecorder struct {
	mu     sync.Mutex
	ops    map[workload.Op]*recorder
	total  *recorder
	series *series
	// step, when set, also receives every outcome: a ramp's current step.
	step atomic.Pointer[recorder]
}

func newStageRecorder(start time.Time, concurrency *atomic.Int64) *stageRecorder {
	return &stageRecorder{ops: map[workload.Op]*recorder{}, total: newRecorder(), series: newSeries(start, concurrency)}
}

func (r *stageRecorder) op(op workload.Op) *recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.ops[op]
	if rec == nil {
		rec = newRecorder()
		r.ops[op] = rec
	}
	return rec
}

// record files one finished operation that took d (measured from its scheduled start in an
// open loop) and moved n bytes; ttfb is set for GETs.
func (r *stageRecorder) record(op workload.Op, d, ttfb time.Duration, n int64, err error) {
	now := time.Now()
	rec := r.op(op)
	step := r.step.Load()
	if err != nil {
		rec.fail(err)
		r.total.fail(err)
		if step != nil {
			step.fail(err)
		}
	} else {
		if op == workload.OpGet {
			rec.okTTFB(d, ttfb, n)
		} else {
			rec.ok(d, n)
		}
		r.total.ok(d, n)
		if step != nil {
			step.ok(d, n)
		}
	}
	r.series.add(now, string(op), d, n, err != nil)
}

// loop is the engine under every stage: workers that pick an operation and a key, issue the
// request and record it, closed-loop (each worker sends its next request when the last one
// is answered) or open-loop (requests are scheduled at a fixed rate, whatever the answers).
type loop struct {
	c    objclient.Client
	ks   *keyspace
	body []byte // random bytes; a PUT of size n sends body[:n]
	rec  *stageRecorder

	size workload.SizeDist
	mix  *workload.MixPicker
	keys workload.KeyPicker
	// listPrefix is what a LIST operation lists (the workload's key prefix).
	listPrefix string

	started atomic.Int64 // operations started, for an operation-count limit
	late    atomic.Int64
	noKey   atomic.Int64
}

// maxPicks bounds how many keys an operation tries before it is counted as NoKey: under
// heavy DELETE the live set can be empty, and a worker must not spin.
const maxPicks = 16

// phase is one stretch of load: concurrency workers until stop or limit operations
// (0: no limit), at rate ops/s (0: closed loop).
type phase struct {
	concurrency int
	rate        float64
	stop        time.Time
	limit       int64
	seed        uint64
}

func (l *loop) run(ctx context.Context, p phase) {
	var wg sync.WaitGroup
	start := time.Now()
	var seq atomic.Int64 // open loop: the next scheduled slot
	var interval time.Duration
	if p.rate > 0 {
		interval = time.Duration(float64(time.Second) / p.rate)
	}
	for w := range p.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(p.seed, uint64(w)+1))
			for ctx.Err() == nil {
				if p.limit > 0 && l.started.Add(1) > p.limit {
					return
				}
				var scheduled time.Time
				if interval > 0 {
					scheduled = start.Add(time.Duration(seq.Add(1)-1) * interval)
					if !scheduled.Before(p.stop) {
						return
					}
					if wait := time.Until(scheduled); wait > 0 {
						t := time.NewTimer(wait)
						select {
						case <-ctx.Done():
							t.Stop()
							return
						case <-t.C:
						}
					} else if wait < -time.Millisecond {
						l.late.Add(1)
					}
				} else {
					if !time.Now().Before(p.stop) {
						return
					}
					scheduled = time.Now()
				}
				if !l.do(ctx, rng, l.mix.Pick(rng), scheduled) && interval == 0 {
					// No object fit (all deleted, or the prepare failed): back off rather than
					// spin, so that a broken run does not burn the CPU it is measuring with.
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
}

// do issues one operation and records it, and reports false if no object suited it. Latency
// runs from scheduled, which in an open loop may be before now: time spent waiting for a free
// worker is part of what a user would see.
func (l *loop) do(ctx context.Context, rng *rand.Rand, op workload.Op, scheduled time.Time) bool {
	var (
		n    int64
		ttfb time.Duration
		err  error
	)
	switch op {
	case workload.OpPut:
		i, prev, ok := l.pickWrite(rng, false)
		if !ok {
			return false
		}
		size := l.size.Sample(rng)
		bucket, key := l.ks.bucketKey(i)
		_, err = l.c.Put(ctx, bucket, key, bytes.NewReader(l.body[:size]), size, objclient.PutOptions{})
		l.ks.releaseWrite(i, prev, err == nil || prev == slotIdle)
		n = size
	case workload.OpDelete:
		i, prev, ok := l.pickWrite(rng, true)
		if !ok {
			return false
		}
		bucket, key := l.ks.bucketKey(i)
		err = l.c.Delete(ctx, bucket, key)
		l.ks.releaseWrite(i, prev, err != nil)
	case workload.OpGet, workload.OpHead:
		i, ok := l.pickRead(rng)
		if !ok {
			return false
		}
		bucket, key := l.ks.bucketKey(i)
		if op == workload.OpGet {
			var res objclient.GetResult
			res, err = l.c.Get(ctx, bucket, key, objclient.GetOptions{})
			n, ttfb = res.Bytes, res.TTFB
		} else {
			_, err = l.c.Head(ctx, bucket, key)
		}
		l.ks.releaseRead(i)
	case workload.OpList:
		bucket := l.ks.buckets[rng.IntN(len(l.ks.buckets))]
		_, err = l.c.List(ctx, bucket, objclient.ListOptions{Prefix: l.listPrefix, Limit: 100})
	default:
		return false
	}
	if err != nil && ctx.Err() != nil {
		return true // stopped by the user: not a failure of the store
	}
	// TTFB stays as the client measured it, from the send: it describes the store, while d,
	// from the schedule, describes what a user waited.
	l.rec.record(op, time.Since(scheduled), ttfb, n, err)
	return true
}

func (l *loop) pickRead(rng *rand.Rand) (int64, bool) {
	for range maxPicks {
		i := l.ks.readIndex(l.keys.Pick(rng))
		if i < 0 {
			break
		}
		if l.ks.acquireRead(i) {
			return i, true
		}
	}
	l.noKey.Add(1)
	return 0, false
}

func (l *loop) pickWrite(rng *rand.Rand, mustBePresent bool) (int64, int32, bool) {
	for range maxPicks {
		i := l.keys.Pick(rng)
		if mustBePresent {
			if i = l.ks.readIndex(i); i < 0 {
				break
			}
		}
		if prev, ok := l.ks.acquireWrite(i, mustBePresent); ok {
			return i, prev, true
		}
	}
	l.noKey.Add(1)
	return 0, 0, false
}

// sweep applies op (put or delete) to every object of the key space once, with concurrency
// workers: the prepare stage writes them all, the cleanup stage deletes those present.
func (l *loop) sweep(ctx context.Context, op workload.Op, concurrency int, seed uint64) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)+1))
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= l.ks.n {
					return
				}
				prev, ok := l.ks.acquireWrite(i, op == workload.OpDelete)
				if !ok {
					continue // a delete of an object that is not there
				}
				bucket, key := l.ks.bucketKey(i)
				t0 := time.Now()
				var (
					err error
					n   int64
				)
				if op == workload.OpPut {
					n = l.size.Sample(rng)
					_, err = l.c.Put(ctx, bucket, key, bytes.NewReader(l.body[:n]), n, objclient.PutOptions{})
					l.ks.releaseWrite(i, prev, err == nil || prev == slotIdle)
				} else {
					err = l.c.Delete(ctx, bucket, key)
					l.ks.releaseWrite(i, prev, err != nil)
				}
				if err != nil && ctx.Err() != nil {
					return
				}
				l.rec.record(op, time.Since(t0), 0, n, err)
			}
		}()
	}
	wg.Wait()
}
