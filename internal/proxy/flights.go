package proxy

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
)

// Flights are the writes of each name that a caller has stamped through this proxy and not
// yet finished. A versioned write (internal/versions) is stamped when its version's name is
// minted, long before its link lands; a conditional write stamped after it, and linked
// before it, would have its condition tested without it and then hide it, its link being the
// newer: both would be told 200 in an order no history explains. On nodes of this process
// alone (the embedded default) nothing else orders the two (in a cluster the primaries do,
// docs/consistency.md "Plain writes and decisions"), so a conditional write is stamped only
// when no plain write of its name stamped before it is in flight; it waits a little for them.
type Flights struct {
	mu    sync.Mutex
	names map[string]*flight
}

type flight struct {
	n    int
	done chan struct{} // closed when n drops to 0
}

// Flights returns the proxy's flights, shared by every caller in the process.
func (p *Proxy) Flights() *Flights { return p.flights }

// StampPlain stamps a plain write of key with stamp and counts it in flight until end is
// called (once, when the write is finished, whatever became of it).
func (f *Flights) StampPlain(key string, stamp func() meta.Timestamp) (ts meta.Timestamp, end func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.names == nil {
		f.names = map[string]*flight{}
	}
	fl := f.names[key]
	if fl == nil {
		fl = &flight{done: make(chan struct{})}
		f.names[key] = fl
	}
	fl.n++
	var once sync.Once
	return stamp(), func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if fl.n--; fl.n == 0 {
				close(fl.done)
				delete(f.names, key)
			}
		})
	}
}

// StampAlone stamps a conditional write of key with stamp once no plain write of key is in
// flight, waiting at most wait for them: every plain write in flight then was stamped before
// and has landed, and every one stamped later sorts after this one. It answers
// ErrConditionalConflict (409: try again) when they are still in flight after wait.
func (f *Flights) StampAlone(ctx context.Context, key string, wait time.Duration, stamp func() meta.Timestamp) (meta.Timestamp, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		fl := f.names[key]
		if fl == nil {
			defer f.mu.Unlock()
			return stamp(), nil
		}
		f.mu.Unlock()
		select {
		case <-fl.done:
		case <-deadline.C:
			return 0, fmt.Errorf("%q: a plain write stamped before this one is still in flight: %w", key, ErrConditionalConflict)
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}
}
