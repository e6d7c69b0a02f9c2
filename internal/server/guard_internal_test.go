package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/httpwire"
)

// guardServer serves next behind a guard that watches bodies with idle (no request limit).
func guardServer(t *testing.T, idle time.Duration, next http.HandlerFunc) string {
	t.Helper()
	g, err := newGuard(Config{BodyIdleTimeout: idle, MaxConcurrentRequests: -1}, next,
		func(w http.ResponseWriter, r *http.Request) { t.Error("request refused without a limit") }, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(ts.Close)
	return strings.TrimPrefix(ts.URL, "http://")
}

// rawPut opens a connection and sends a PUT head declaring length (negative: chunked) and body.
func rawPut(t *testing.T, addr string, length int, body string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	framing := "Transfer-Encoding: chunked"
	if length >= 0 {
		framing = "Content-Length: " + strconv.Itoa(length)
	}
	if _, err := io.WriteString(c, "PUT /x HTTP/1.1\r\nHost: test\r\n"+framing+"\r\n\r\n"+body); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a safety net, not a threshold
	return c, bufio.NewReader(c)
}

// expectClosed asserts that the server closes the connection after its answer.
func expectClosed(t *testing.T, br *bufio.Reader) {
	t.Helper()
	if b, err := br.ReadByte(); err != io.EOF {
		t.Errorf("connection still open after the answer (read %q, %v)", b, err)
	}
}

// TestIdleBodyTimesOut: a body that stops arriving fails its read with httpwire.ErrBodyTimeout,
// with a declared length and chunked, and the connection is closed after the answer.
func TestIdleBodyTimesOut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		length int
		sent   string
	}{
		{"content-length", 100 << 10, strings.Repeat("x", 10<<10)},
		{"chunked", -1, "a\r\n0123456789\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errc := make(chan error, 1)
			addr := guardServer(t, 300*time.Millisecond, func(w http.ResponseWriter, r *http.Request) {
				_, err := io.Copy(io.Discard, r.Body)
				errc <- err
				w.WriteHeader(http.StatusRequestTimeout)
			})
			_, br := rawPut(t, addr, tc.length, tc.sent)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			resp.Body.Close()
			if err := <-errc; !errors.Is(err, httpwire.ErrBodyTimeout) {
				t.Errorf("body read ended with %v, want ErrBodyTimeout", err)
			}
			expectClosed(t, br)
		})
	}
}

// TestIdleBodyKeepsSlowBodies: the timeout is between bytes, not for the whole body. The body
// takes longer than the timeout in all (its pauses add up to 1.5 s on any machine), each pause
// a twentieth of it. A machine loaded enough to hold the sender back for the whole timeout
// would make a pause that long all the same: the sender measures its pauses, and a timeout
// after such a one proves nothing, so the body is sent again.
func TestIdleBodyKeepsSlowBodies(t *testing.T) {
	const idle, pause, n = time.Second, 50 * time.Millisecond, 30
	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	addr := guardServer(t, idle, func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		got <- result{string(b), err}
	})
	for deadline := time.Now().Add(time.Minute); ; {
		// The longest the server can have waited for a byte: from the start of one write to
		// the end of the next.
		var longest time.Duration
		began := time.Now()
		c, br := rawPut(t, addr, n, "")
		for range n {
			time.Sleep(pause)
			next := time.Now()
			c.Write([]byte("y")) // fails once the server has given up: the result says why
			longest, began = max(longest, time.Since(began)), next
		}
		r := <-got
		if r.err == nil {
			if r.body != strings.Repeat("y", n) {
				t.Errorf("body %q", r.body)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return
		}
		if longest < idle {
			t.Fatalf("a body that paused %v at most (a byte every %v) failed after %v in all: %v", longest, pause, time.Duration(n)*pause, r.err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("for a minute the machine held the sender back longer than the timeout (%v, a pause of %v): %v", idle, longest, r.err)
		}
		t.Logf("the sender paused %v, past the timeout: sending again", longest)
	}
}

// TestIdleBodyAfterTheEnd: once a body has ended nothing times out, however long the handler
// takes (net/http's background read of the connection must not meet a deadline, which would
// cancel the request), and the connection serves the next request.
func TestIdleBodyAfterTheEnd(t *testing.T) {
	const idle = 100 * time.Millisecond
	addr := guardServer(t, idle, func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			t.Errorf("body: %v", err)
		}
		if n, err := r.Body.Read(make([]byte, 1)); n != 0 || err != io.EOF { // as readers that check the end do
			t.Errorf("read after the end: %d, %v", n, err)
		}
		time.Sleep(5 * idle)
		if err := r.Context().Err(); err != nil {
			t.Errorf("request cancelled after its body ended: %v", err)
		}
		io.WriteString(w, "done")
	})
	c, br := rawPut(t, addr, 4, "abcd")
	for i := range 2 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "done" {
			t.Errorf("request %d: %s %q", i, resp.Status, b)
		}
		if i == 0 {
			io.WriteString(c, "PUT /x HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nef")
		}
	}
}

// TestIdleBodyUnreadBody: a handler that answers without reading the body leaves net/http to
// discard it before reusing the connection; a client that stalls there must not hold the
// connection (nor the answer) forever.
func TestIdleBodyUnreadBody(t *testing.T) {
	addr := guardServer(t, 200*time.Millisecond, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "refused")
	})
	_, br := rawPut(t, addr, 100, "0123456789")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "refused" {
		t.Errorf("answer %q", b)
	}
	expectClosed(t, br)
}

// TestGuardAdmission: a request over the limit waits for a slot, gets one when a request ends,
// and is refused when none comes free in time.
func TestGuardAdmission(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	refused := make(chan struct{}, 4)
	g, err := newGuard(Config{BodyIdleTimeout: -1, MaxConcurrentRequests: 1, AdmissionWait: 200 * time.Millisecond},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			if r.URL.Path == "/hold" {
				<-release
			}
		}),
		func(w http.ResponseWriter, r *http.Request) {
			refused <- struct{}{}
			w.WriteHeader(http.StatusServiceUnavailable)
		}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	serve := func(path string) int {
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code
	}
	held := make(chan int)
	go func() { held <- serve("/hold") }()
	<-entered
	if code := serve("/other"); code != http.StatusServiceUnavailable {
		t.Errorf("over the limit: %d, want 503", code)
	}
	if g.inFlight.Load() != 1 {
		t.Errorf("in flight %d, want 1", g.inFlight.Load())
	}
	// A waiting request gets the slot that the held one frees: it may wait as long as that
	// takes (no request waits now, so the wait can change). The pause before the release only
	// makes it likely that it is waiting by then rather than arriving after; either way it is
	// served.
	g.wait = time.Hour
	waited := make(chan int)
	go func() { waited <- serve("/other") }()
	time.Sleep(20 * time.Millisecond)
	close(release)
	if code := <-held; code != 200 {
		t.Errorf("held request: %d", code)
	}
	if code := <-waited; code != 200 {
		t.Errorf("waiting request: %d", code)
	}
	if code := serve("/other"); code != 200 {
		t.Errorf("after the slot came free: %d", code)
	}
	if g.inFlight.Load() != 0 || len(g.slots) != 0 {
		t.Errorf("in flight %d, slots taken %d after all requests ended", g.inFlight.Load(), len(g.slots))
	}
}
