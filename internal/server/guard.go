package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/httpwire"
)

// Defaults of the request guard (Config).
const (
	DefaultBodyIdleTimeout       = 20 * time.Second // about what S3 waits before RequestTimeout
	DefaultMaxConcurrentRequests = 1024
	DefaultAdmissionWait         = time.Second
)

// guard stands in front of both front ends and bounds what a client can hold:
//   - a request body that delivers no byte for idle fails its read with
//     httpwire.ErrBodyTimeout (S3 RequestTimeout, Swift 408), so the handler returns, its temp
//     file is removed and its slot is freed; the connection is closed after the answer;
//   - a response the client takes no byte of for idle fails its write (idleWriter), so the
//     handler returns and the connection is closed;
//   - at most cap(slots) requests are served at once; one over that waits up to wait for a slot,
//     then gets the reject answer of its protocol (S3 503 SlowDown, Swift 503).
//
// Stalled requests hold slots until the idle timeout frees them; both together keep a server
// that a few hundred stalled uploads meet serving the clients that behave.
type guard struct {
	next   http.Handler
	reject func(http.ResponseWriter, *http.Request) // the protocol's 503
	idle   time.Duration                            // 0: bodies are not watched
	slots  chan struct{}                            // nil: no limit
	wait   time.Duration                            // 0: refuse at once when full
	lanes  *lanes                                   // nil: no lanes

	inFlight      atomic.Int64
	rejected      prometheus.Counter
	bodyTimeouts  prometheus.Counter
	writeTimeouts prometheus.Counter
}

func newGuard(cfg Config, next http.Handler, reject func(http.ResponseWriter, *http.Request), reg prometheus.Registerer) (*guard, error) {
	g := &guard{next: next, reject: reject, idle: max(cfg.BodyIdleTimeout, 0), wait: max(cfg.AdmissionWait, 0),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_http_requests_rejected_total",
			Help: "Requests refused with 503 (S3 SlowDown) because the limit of requests in flight was reached."}),
		bodyTimeouts: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_http_body_timeouts_total",
			Help: "Requests whose body sent no byte for the body idle timeout (S3 RequestTimeout, Swift 408)."}),
		writeTimeouts: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_http_response_timeouts_total",
			Help: "Responses cut off because the client took no byte of them for the idle timeout."}),
	}
	if cfg.MaxConcurrentRequests > 0 {
		g.slots = make(chan struct{}, cfg.MaxConcurrentRequests)
	}
	var err error
	if g.lanes, err = newLanes(cfg, reg); err != nil {
		return nil, err
	}
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cairn_http_requests_in_flight",
		Help: "S3, Swift and admin requests being served (/healthz and /metrics excluded)."},
		func() float64 { return float64(g.inFlight.Load()) })
	limit := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cairn_http_requests_in_flight_limit",
		Help: "The limit of requests in flight (--max-requests; 0: none)."},
		func() float64 { return float64(cap(g.slots)) })
	for _, c := range []prometheus.Collector{g.rejected, g.bodyTimeouts, g.writeTimeouts, inFlight, limit} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: metrics: %w", err)
		}
	}
	return g, nil
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.idle > 0 {
		iw := &idleWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: g.idle, timeouts: g.writeTimeouts}
		iw.arm()
		defer iw.finish()
		w = iw
	}
	if g.idle > 0 && r.Body != nil && r.Body != http.NoBody {
		// A copy of the request carries the watched body; net/http keeps the original, whose
		// state (read to the end or not) decides whether the connection can be reused.
		b := &idleBody{body: r.Body, rc: http.NewResponseController(w), idle: g.idle, timeouts: g.bodyTimeouts}
		defer b.finish()
		r2 := new(http.Request)
		*r2 = *r
		r2.Body = b
		r = r2
	}
	// A large request waits for its lane before it takes one of the slots, which it would
	// otherwise hold while waiting.
	if g.lanes != nil {
		done, ok := g.lanes.admit(r.Context(), g.lanes.laneOf(r))
		if !ok {
			g.reject(w, r)
			return
		}
		defer done()
	}
	if !g.admit(r.Context()) {
		g.rejected.Inc()
		g.reject(w, r)
		return
	}
	g.inFlight.Add(1)
	defer func() {
		g.inFlight.Add(-1)
		if g.slots != nil {
			<-g.slots
		}
	}()
	g.next.ServeHTTP(w, r)
}

// admit takes a slot, waiting up to g.wait for one; false when none came free in time (or the
// client went away meanwhile).
func (g *guard) admit(ctx context.Context) bool {
	if g.slots == nil {
		return true
	}
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	if g.wait <= 0 {
		return false
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// States of an idleBody.
const (
	bodyReading     = iota // the deadline is armed at each Read
	bodyEnded              // EOF seen (net/http's background read now owns the deadline) or closed
	bodyTimedOut           // no byte for idle: the connection is not read again
	bodyUnsupported        // the connection has no read deadline (not net/http's own writer)
)

// idleBody fails a read that waits more than idle for the client's next byte. Before a Read it
// moves the connection's read deadline past now+idle (http.ResponseController); a read that
// meets the deadline fails with httpwire.ErrBodyTimeout from then on. Once the body ended it
// never touches the deadline again: net/http then reads the connection in the background (to
// notice a client that leaves), without a deadline, and one set here would cancel the request.
type idleBody struct {
	body     io.ReadCloser
	rc       *http.ResponseController
	idle     time.Duration
	timeouts prometheus.Counter
	state    atomic.Int32 // read by finish, which may run on another goroutine than Read
	armed    time.Time    // when the deadline last moved
	err      error        // sticky after a timeout
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) > 0 && b.state.Load() == bodyReading {
		// Moving the deadline costs more than a read of a few KiB, so it moves only when an
		// eighth of idle has passed since it last did, to idle and an eighth from then: a read
		// fails after idle to idle+idle/8 without a byte.
		if now := time.Now(); now.Sub(b.armed) >= b.idle/8 {
			b.armed = now
			if b.rc.SetReadDeadline(now.Add(b.idle+b.idle/8)) != nil {
				b.state.Store(bodyUnsupported)
			}
		}
	}
	n, err := b.body.Read(p)
	switch {
	case err == nil:
	case err == io.EOF:
		b.state.Store(bodyEnded)
	case errors.Is(err, os.ErrDeadlineExceeded) && b.state.Load() == bodyReading:
		b.state.Store(bodyTimedOut)
		b.timeouts.Inc()
		b.err = fmt.Errorf("%w (%v)", httpwire.ErrBodyTimeout, b.idle)
		err = b.err
	}
	return n, err
}

// Close closes the body; net/http then reads up to 256 KiB of what is left, within idle.
func (b *idleBody) Close() error {
	if b.state.Load() == bodyReading {
		b.rc.SetReadDeadline(time.Now().Add(b.idle))
	}
	err := b.body.Close()
	if b.state.Load() == bodyReading {
		b.state.Store(bodyEnded)
	}
	return err
}

// finish runs when the handler returns. A body not read to its end is what net/http reads next
// (it discards up to 256 KiB to reuse the connection): bound that by idle too, or a client that
// stalls would hold the connection. After a timeout the deadline is made to have passed again
// (a handler may have moved it, as S3's drain of refused bodies does), so that net/http closes
// the connection at once rather than read on.
func (b *idleBody) finish() {
	switch b.state.Load() {
	case bodyReading:
		b.rc.SetReadDeadline(time.Now().Add(b.idle))
	case bodyTimedOut:
		b.rc.SetReadDeadline(longAgo)
	}
}

// longAgo is a read deadline that has passed.
var longAgo = time.Unix(1, 0)
