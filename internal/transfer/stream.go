package transfer

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// throttle is the one token bucket that all streams of a transfer draw from, so that
// RateLimit caps their sum, not each of them.
type throttle struct {
	limiter *rate.Limiter
	// chunk is the most bytes one Read or Write passes at a time: the bucket's burst, because
	// WaitN refuses more than the burst, and short enough that the parallel streams take turns.
	chunk int
}

// newThrottle returns nil for no limit. The burst is an eighth of a second's worth, between
// 16 KiB and 1 MiB: big enough that a fast limit does not cost a wait per network buffer, small
// enough that the limit holds over short transfers.
func newThrottle(bytesPerSecond int64) *throttle {
	if bytesPerSecond <= 0 {
		return nil
	}
	burst := int(min(max(bytesPerSecond/8, 16<<10), 1<<20))
	return &throttle{limiter: rate.NewLimiter(rate.Limit(bytesPerSecond), burst), chunk: burst}
}

// stream accounts for the bytes of one request: it throttles them, adds them to the
// transfer's progress, and marks the request alive for its stall watchdog. A failed request's
// bytes are taken back out of the progress, so that a retried part is not counted twice.
type stream struct {
	ctx      context.Context
	throttle *throttle
	progress *atomic.Int64
	moved    atomic.Int64 // body bytes, read by the caller after the request
	lastByte atomic.Int64 // unix nanoseconds of the last sign of life

	mu       sync.Mutex
	localErr error // the local file failed, not the network: not worth a retry
}

func (s *stream) alive() { s.lastByte.Store(time.Now().UnixNano()) }

func (s *stream) setLocalErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.localErr == nil {
		s.localErr = err
	}
}

func (s *stream) localError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.localErr
}

// wait blocks until the throttle allows n more bytes. Waiting for the throttle is not a stall.
func (s *stream) wait(n int) error {
	if s.throttle == nil || n == 0 {
		return nil
	}
	s.alive()
	err := s.throttle.limiter.WaitN(s.ctx, n)
	s.alive()
	return err
}

func (s *stream) count(n int) {
	if n > 0 {
		s.moved.Add(int64(n))
		s.progress.Add(int64(n))
		s.alive()
	}
}

// maxChunk is how much of p one step may move.
func (s *stream) maxChunk(p []byte) []byte {
	if s.throttle != nil && len(p) > s.throttle.chunk {
		return p[:s.throttle.chunk]
	}
	return p
}

// reader wraps a request body read from a local file.
func (s *stream) reader(r io.Reader) io.Reader { return &streamReader{s: s, r: r} }

type streamReader struct {
	s *stream
	r io.Reader
}

func (r *streamReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(r.s.maxChunk(p))
	if err != nil && !errors.Is(err, io.EOF) {
		r.s.setLocalErr(err)
	}
	if werr := r.s.wait(n); werr != nil {
		return 0, werr
	}
	r.s.count(n)
	return n, err
}

// writer wraps the destination of a response body.
func (s *stream) writer(w io.Writer) io.Writer { return &streamWriter{s: s, w: w} }

type streamWriter struct {
	s *stream
	w io.Writer
}

func (w *streamWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		chunk := w.s.maxChunk(p)
		if err := w.s.wait(len(chunk)); err != nil {
			return written, err
		}
		n, err := w.w.Write(chunk)
		written += n
		w.s.count(n)
		if err != nil {
			w.s.setLocalErr(err)
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// errStalled is the cause given to a request's context when no byte moved for StallTimeout.
var errStalled = errors.New("no data moved")

// watch cancels the stream's request with errStalled once it has shown no sign of life for
// timeout. The returned function stops watching.
func (s *stream) watch(timeout time.Duration, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(max(timeout/8, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				if now.Sub(time.Unix(0, s.lastByte.Load())) > timeout {
					cancel(errStalled)
					return
				}
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// reportProgress calls fn with the progress at most every 100 ms until stop is called, and
// once more then, from one goroutine at a time. It does nothing when fn is nil.
func reportProgress(fn ProgressFunc, done *atomic.Int64, total int64) (stop func()) {
	if fn == nil {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		fn(done.Load(), total)
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				fn(done.Load(), total)
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
		fn(done.Load(), total)
	}
}
