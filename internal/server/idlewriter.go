package server

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// idleWriter is the response side of the guard's idle timeout: a client that stops reading a
// response (a GET whose reader stalls) would otherwise hold its connection, its slot and the
// open object forever, since the server sets no write timeout (a download may rightly take
// hours). Before a Write it moves the connection's write deadline past now+idle, so a write
// that waits more than idle for the client to take bytes fails, and the handler returns. The
// deadline moves only when an eighth of idle has passed since it last did (a deadline costs
// more than a small write). It is armed when the request starts (net/http may write a 100
// Continue), and once more when the handler returns, for what net/http flushes after it; the
// next request on a kept-alive connection arms its own.
type idleWriter struct {
	http.ResponseWriter
	rc       *http.ResponseController
	idle     time.Duration
	armed    time.Time
	off      bool // the connection has no write deadline
	timeouts prometheus.Counter
	timedOut bool
}

func (w *idleWriter) arm() {
	if w.off {
		return
	}
	if now := time.Now(); now.Sub(w.armed) >= w.idle/8 {
		w.armed = now
		if w.rc.SetWriteDeadline(now.Add(w.idle+w.idle/8)) != nil {
			w.off = true
		}
	}
}

func (w *idleWriter) Write(p []byte) (int, error) {
	w.arm()
	n, err := w.ResponseWriter.Write(p)
	if err != nil && !w.timedOut && isTimeout(err) {
		w.timedOut = true
		w.timeouts.Inc()
	}
	return n, err
}

func (w *idleWriter) WriteHeader(status int) {
	w.arm()
	w.ResponseWriter.WriteHeader(status)
}

// Flush serves handlers that assert http.Flusher; http.ResponseController finds the rest of
// the writer's methods through Unwrap.
func (w *idleWriter) Flush() {
	w.arm()
	w.rc.Flush()
}

func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish gives what net/http writes after the handler (the buffered end of the response) a
// fresh deadline.
func (w *idleWriter) finish() {
	w.armed = time.Time{}
	w.arm()
}

func isTimeout(err error) bool {
	t, ok := err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}
