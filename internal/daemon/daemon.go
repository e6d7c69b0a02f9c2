// Package daemon runs the passes of Cairn's background daemons (expirer, sweeper, and the
// cluster's replicator and auditor to come): one pass at a time, at an interval, until stopped,
// with the running pass's context canceled by Stop. It owns only the schedule; each daemon
// owns what a pass does.
package daemon

import (
	"context"
	"sync"
	"time"
)

// Loop is a running schedule of passes.
type Loop struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// Start runs pass every interval until Stop: at once and then every interval when immediate,
// otherwise first after one interval. A pass that outlasts the interval delays the next one
// rather than overlapping it.
func Start(interval time.Duration, immediate bool, pass func(ctx context.Context)) *Loop {
	l := &Loop{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		if !immediate {
			select {
			case <-l.stop:
				return
			case <-t.C:
			}
		}
		for {
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-l.stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			pass(ctx)
			cancel()
			select {
			case <-l.stop:
				return
			case <-t.C:
			}
		}
	}()
	return l
}

// Stop ends the schedule, canceling a running pass and waiting for it to return. It may be
// called more than once.
func (l *Loop) Stop() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

// Lease says whether this process holds a cluster-wide lease (taking or renewing it): the
// daemons that must run once per cluster, whatever the number of proxies, pass only while
// they hold theirs.
type Lease func(ctx context.Context) (held bool, err error)

// WhileHeld returns pass gated by lease: a pass runs only when the lease is held (nil: always).
// A lease that cannot be read counts as not held, so that two processes never both decide they
// hold it.
func WhileHeld(lease Lease, pass func(ctx context.Context)) func(ctx context.Context) {
	if lease == nil {
		return pass
	}
	return func(ctx context.Context) {
		if held, err := lease(ctx); err == nil && held {
			pass(ctx)
		}
	}
}
