// Package daemon runs the passes of Cairn's background daemons (expirer, sweeper, auditor, and
// the cluster's replicator to come): one pass at a time, at an interval, until stopped,
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
			l.run(pass)
			select {
			case <-l.stop:
				return
			case <-t.C:
			}
		}
	}()
	return l
}

// StartPaused runs pass over and over until Stop, resting pause before each pass (the first
// included). It suits a daemon that works through everything all the time, paced by rate
// limits of its own (the auditor): with Start, a pass longer than the interval would be
// followed at once by the next, with no rest in between.
func StartPaused(pause time.Duration, pass func(ctx context.Context)) *Loop {
	l := &Loop{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			t := time.NewTimer(pause)
			select {
			case <-l.stop:
				t.Stop()
				return
			case <-t.C:
			}
			l.run(pass)
		}
	}()
	return l
}

// run runs one pass, with a context that Stop cancels.
func (l *Loop) run(pass func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-l.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	pass(ctx)
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
