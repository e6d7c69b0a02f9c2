package server

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Of two proxies' daemons, one holds the lease; the other takes it only once it has expired
// without renewal; and of many racing for a free lease, exactly one wins.
func TestClusterLease(t *testing.T) {
	newProxy, _ := testCluster(t)
	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	a := clusterLease(newProxy(), "expirer", "proxy-a", time.Minute, now)
	b := clusterLease(newProxy(), "expirer", "proxy-b", time.Minute, now)
	must := func(l func(context.Context) (bool, error), want bool, what string) {
		t.Helper()
		held, err := l(ctx)
		if err != nil || held != want {
			t.Fatalf("%s: held %v, %v; want %v", what, held, err, want)
		}
	}
	must(a, true, "a takes the free lease")
	must(b, false, "b while a holds it")
	clock.Add(int64(50 * time.Second))
	must(a, true, "a renews")
	clock.Add(int64(50 * time.Second))
	must(b, false, "b after a renewed")
	clock.Add(int64(2 * time.Minute))
	must(b, true, "b once a's lease expired")
	must(a, false, "a after b took it")

	// Racing for a free lease: one winner.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 6 {
		l := clusterLease(newProxy(), "race", "racer-"+string(rune('a'+i)), time.Minute, now)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if held, err := l(ctx); err == nil && held {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d racers hold the lease, want 1", wins.Load())
	}
}
