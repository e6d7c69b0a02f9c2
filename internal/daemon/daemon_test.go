package daemon

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestLoopRunsPassesAndStopCancelsTheRunningOne(t *testing.T) {
	var passes atomic.Int32
	started := make(chan struct{}, 10)
	l := Start(time.Millisecond, true, func(ctx context.Context) {
		if passes.Add(1) == 3 {
			started <- struct{}{}
			<-ctx.Done() // a long pass: only Stop ends it
		}
	})
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the third pass never started")
	}
	l.Stop()
	l.Stop()
	if n := passes.Load(); n != 3 {
		t.Fatalf("%d passes, want 3: a pass overlapped or followed the stop", n)
	}
}

func TestLoopNotImmediateWaitsOneInterval(t *testing.T) {
	var passes atomic.Int32
	l := Start(time.Hour, false, func(context.Context) { passes.Add(1) })
	l.Stop()
	if n := passes.Load(); n != 0 {
		t.Fatalf("%d passes before the first interval", n)
	}
}

func TestPausedLoopRestsBetweenPasses(t *testing.T) {
	var passes atomic.Int32
	started := make(chan struct{}, 10)
	l := StartPaused(time.Millisecond, func(ctx context.Context) {
		if passes.Add(1) == 3 {
			started <- struct{}{}
			<-ctx.Done()
		}
	})
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the third pass never started")
	}
	l.Stop()
	if n := passes.Load(); n != 3 {
		t.Fatalf("%d passes, want 3", n)
	}
	l = StartPaused(time.Hour, func(context.Context) { passes.Add(1) })
	l.Stop()
	if n := passes.Load(); n != 3 {
		t.Fatalf("a pass ran before the first pause: %d", n)
	}
}
