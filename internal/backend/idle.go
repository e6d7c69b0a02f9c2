package backend

import (
	"context"
	"io"
	"sync"
	"time"
)

// idleTimer cancels a request when neither side has moved a byte for its duration: a node
// that stops reading a PUT or stops sending a GET is given up on, as Swift's node_timeout does,
// while a slow but moving transfer goes on.
type idleTimer struct {
	d  time.Duration
	mu sync.Mutex
	t  *time.Timer
}

func newIdleTimer(d time.Duration, cancel context.CancelFunc) *idleTimer {
	return &idleTimer{d: d, t: time.AfterFunc(d, cancel)}
}

func (t *idleTimer) reset() {
	t.mu.Lock()
	t.t.Reset(t.d)
	t.mu.Unlock()
}

func (t *idleTimer) stop() {
	t.mu.Lock()
	t.t.Stop()
	t.mu.Unlock()
}

// idleReader is a request body that keeps its request alive while it moves.
type idleReader struct {
	r io.Reader
	t *idleTimer
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.t.reset()
	}
	return n, err
}

// responseBody is an answer's body: reads keep the request alive, Close ends it.
type responseBody struct {
	io.ReadCloser
	t      *idleTimer
	cancel context.CancelFunc
	once   sync.Once
}

func (b *responseBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.t.reset()
	}
	return n, err
}

func (b *responseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() {
		b.t.stop()
		b.cancel()
	})
	return err
}
