package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cairn-store/cairn/internal/objclient"
)

// maxAttempts bounds the tries of one part, range or whole-object request. objclient never
// retries (a benchmark must see every failure); a file transfer should survive a dropped
// connection or a busy store without losing its other parts.
const maxAttempts = 4

// firstBackoff is the wait before the first retry; it doubles for each later one.
const firstBackoff = 500 * time.Millisecond

// job is what the workers of one Upload or Download share.
type job struct {
	opts     Options
	throttle *throttle

	done        atomic.Int64 // progress: bytes moved, or found already there
	transferred atomic.Int64 // bytes moved by requests that succeeded
	resumed     atomic.Int64 // bytes found already there from an earlier run
}

func newJob(opts Options) *job {
	return &job{opts: opts, throttle: newThrottle(opts.RateLimit)}
}

// skip accounts for n bytes an earlier run already moved.
func (j *job) skip(n int64) {
	j.done.Add(n)
	j.resumed.Add(n)
}

// move runs one request that carries a body through a stream, retrying it on failures that a
// retry can cure (network errors, 5xx, 408/429, a stall). Every attempt gets a fresh stream and
// a stall watchdog.
func (j *job) move(ctx context.Context, request func(ctx context.Context, s *stream) error) error {
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		reqCtx, cancel := context.WithCancelCause(ctx)
		s := &stream{ctx: reqCtx, throttle: j.throttle, progress: &j.done}
		s.alive()
		stopWatching := s.watch(j.opts.StallTimeout, cancel)
		err := request(reqCtx, s)
		stopWatching()
		stalled := errors.Is(context.Cause(reqCtx), errStalled)
		cancel(nil)
		if err == nil {
			j.transferred.Add(s.moved.Load())
			return nil
		}
		j.done.Add(-s.moved.Load())
		switch local := s.localError(); {
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case local != nil:
			return local
		case stalled:
			err = fmt.Errorf("%w for %v: %v", errStalled, j.opts.StallTimeout, err)
		}
		if attempt >= maxAttempts || !retryable(err) {
			if attempt > 1 {
				return fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// retryable tells a failure that may pass (a network error, an overloaded or failing store, a
// stall) from one that will not (a refused credential, a missing object, a bad request).
func retryable(err error) bool {
	var oe *objclient.Error
	switch {
	case errors.As(err, &oe):
		return oe.Status >= 500 || oe.Status == http.StatusRequestTimeout || oe.Status == http.StatusTooManyRequests
	case errors.Is(err, errStalled), errors.Is(err, objclient.ErrShortBody):
		return true
	case errors.Is(err, errObjectChanged), errors.Is(err, context.Canceled):
		return false
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// forEach runs work for every item on up to n goroutines, handing them out in order. The first
// error stops the others and is returned; so is the cause of ctx ending.
func forEach[T any](ctx context.Context, n int, items []T, work func(ctx context.Context, item T) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() {
			first = err
			cancel(err)
		})
	}
	queue := make(chan T)
	for range min(n, len(items)) {
		wg.Go(func() {
			for item := range queue {
				if ctx.Err() != nil {
					continue // drain: the feeder may still be handing out work
				}
				if err := work(ctx, item); err != nil {
					fail(err)
				}
			}
		})
	}
feed:
	for _, item := range items {
		select {
		case queue <- item:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	if first != nil {
		return first
	}
	return context.Cause(ctx)
}

// interruptedError reads as what happened to the user (who pressed Ctrl-C, usually) while
// keeping the cancellation for errors.Is.
type interruptedError struct{ cause error }

func (e interruptedError) Error() string { return "interrupted" }
func (e interruptedError) Unwrap() error { return e.cause }

// asInterruption turns a cancellation into an interruptedError and leaves other errors alone.
func asInterruption(err error) error {
	if errors.Is(err, context.Canceled) {
		return interruptedError{err}
	}
	return err
}
