package bench

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestKeyspaceStateMachine hammers one small key space with concurrent reads, writes and
// deletes and checks the promise the runner relies on: a read only ever overlaps a present,
// unwritten object, and writes of one key never overlap.
func TestKeyspaceStateMachine(t *testing.T) {
	ks := newKeyspace(8, []string{"b"}, "")
	var inWrite [8]atomic.Int32
	var present [8]atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Int64
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(1, uint64(w)))
			for range 20000 {
				i := rng.Int64N(8)
				switch rng.IntN(3) {
				case 0:
					if ks.acquireRead(i) {
						if inWrite[i].Load() != 0 || !present[i].Load() {
							bad.Add(1)
						}
						ks.releaseRead(i)
					}
				case 1, 2:
					del := rng.IntN(2) == 0
					prev, ok := ks.acquireWrite(i, del)
					if !ok {
						continue
					}
					if inWrite[i].Add(1) != 1 || (del && !present[i].Load()) {
						bad.Add(1)
					}
					present[i].Store(!del)
					inWrite[i].Add(-1)
					ks.releaseWrite(i, prev, !del)
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d violations", bad.Load())
	}
	var n int64
	for i := range 8 {
		if present[i].Load() {
			n++
		}
	}
	if ks.present.Load() != n {
		t.Errorf("present count %d, want %d", ks.present.Load(), n)
	}
}

func TestKeyspaceReadsOnlyTheWrittenPart(t *testing.T) {
	ks := newKeyspace(1_000_000, []string{"a", "b"}, "p/")
	if i := ks.readIndex(123); i != -1 {
		t.Fatalf("empty key space read index %d", i)
	}
	prev, _ := ks.acquireWrite(9, false)
	ks.releaseWrite(9, prev, true)
	if i := ks.readIndex(123456); i < 0 || i > 9 {
		t.Fatalf("read index %d outside the written 0..9", i)
	}
	if b, k := ks.bucketKey(9); b != "b" || k != ObjectKey("p/", 9) {
		t.Errorf("object 9 is %s/%s", b, k)
	}
	if got := len(ks.chunks); got != (1_000_000+chunkSlots-1)/chunkSlots {
		t.Errorf("%d chunks", got)
	}
	allocated := 0
	for i := range ks.chunks {
		if ks.chunks[i].Load() != nil {
			allocated++
		}
	}
	if allocated != 1 {
		t.Errorf("%d chunks allocated for one object", allocated)
	}
}

// TestSeriesShowsStalls: seconds in which nothing completes are zeros, not gaps.
func TestSeriesShowsStalls(t *testing.T) {
	start := time.Unix(1000, 0)
	var c atomic.Int64
	c.Store(4)
	s := newSeries(start, &c)
	s.add(start.Add(100*time.Millisecond), "get", time.Millisecond, 10, false)
	s.add(start.Add(200*time.Millisecond), "get", time.Millisecond, 10, true)
	s.tick(start.Add(2500 * time.Millisecond))
	s.add(start.Add(3500*time.Millisecond), "put", 3*time.Millisecond, 1e6, false)
	got := s.finish(start.Add(3750 * time.Millisecond))
	if len(got) != 4 {
		t.Fatalf("%d samples: %+v", len(got), got)
	}
	if got[0].Operations != 1 || got[0].Errors != 1 || got[0].ByOp["get"] != 1 || got[0].Concurrency != 4 {
		t.Errorf("second 1: %+v", got[0])
	}
	if got[1].Operations != 0 || got[2].Operations != 0 || got[1].T != 2 {
		t.Errorf("stall: %+v %+v", got[1], got[2])
	}
	if last := got[3]; last.T != 3.75 || last.OpsPerSec != 1.333 || last.MBPerSec != 1.333 {
		t.Errorf("partial last second: %+v", last)
	}
}

func TestSeriesFoldsATinyTail(t *testing.T) {
	start := time.Unix(1000, 0)
	var c atomic.Int64
	s := newSeries(start, &c)
	for i := range 10 {
		s.add(start.Add(time.Duration(i)*100*time.Millisecond), "get", time.Millisecond, 0, false)
	}
	s.add(start.Add(1010*time.Millisecond), "get", time.Millisecond, 0, false)
	got := s.finish(start.Add(1020 * time.Millisecond))
	if len(got) != 1 || got[0].Operations != 11 || got[0].T != 1.02 || got[0].OpsPerSec != 10.784 || got[0].ByOp["get"] != 11 {
		t.Fatalf("samples: %+v", got)
	}
}

func TestEventPhases(t *testing.T) {
	var ss []Sample
	rates := []float64{100, 100, 100, 100, 10, 0, 50, 95, 100, 100, 100}
	for i, r := range rates {
		ss = append(ss, Sample{T: float64(i + 1), Operations: int64(r), OpsPerSec: r})
	}
	e := &eventRun{ran: true, at: 4 * time.Second, elapsed: 100 * time.Millisecond}
	r, ok := e.report(ss)
	if !ok {
		t.Fatal("no report")
	}
	if r.Before.OpsPerSec != 100 || r.Before.Seconds != 4 || r.Dip != 100 {
		t.Errorf("before/dip: %+v dip %v", r.Before, r.Dip)
	}
	// Seconds 5..7 (rates 10, 0, 50) are the event; 8..10 (95, 100, 100) the recovery.
	if r.RecoveredAfter == nil || *r.RecoveredAfter != 3 || r.During.Operations != 60 || r.After.Operations != 395 {
		t.Errorf("during %+v after %+v recovered %v", r.During, r.After, r.RecoveredAfter)
	}
}
