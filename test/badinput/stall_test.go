package badinput

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/server"
)

// Stalled uploads: a client that sends headers and part of a body, then nothing. The server
// answers it RequestTimeout (S3) or 408 (Swift) once the body idle timeout passes, drops what
// was received (no temp file, no object, the old version intact) and closes the connection;
// hundreds of them at once do not keep well-behaved clients from being served.

// stallIdle is the body idle timeout of the stalled-upload tests. It need not be long: their
// stalled clients never send again, so it always runs out, and their well-behaved clients send
// each body without a pause, so a second is a thousand times what they need even when slow.
const stallIdle = time.Second

// readerIdle is the idle timeout of TestStalledReaderIsCutOff. There the test works while its
// client stalls (two reads of /metrics and a ranged GET beside the stalled download, a few
// milliseconds), and its slow but steady reader pauses 100 ms between reads: the timeout
// dominates both by a wide margin, however slow the machine.
const readerIdle = 5 * time.Second

// swiftLogin returns a Swift token and storage URL of the root user.
func (s *testServer) swiftLogin() (token, storageURL string) {
	s.t.Helper()
	req := newRequest(s.t, http.MethodGet, s.endpoint+"/auth/v1.0", nil)
	req.Header.Set("X-Auth-User", "root:root")
	req.Header.Set("X-Auth-Key", secretKey)
	r := s.send(req)
	if r.Status != http.StatusOK {
		s.t.Fatalf("Swift auth: %s", r)
	}
	return r.Header.Get("X-Auth-Token"), r.Header.Get("X-Storage-Url")
}

// stalledS3Put is the head of a signed S3 PUT of bucket/key declaring size bytes (unsigned
// payload), and the part of the body it sends before stalling.
func (s *testServer) stalledS3Put(t testing.TB, bucket, key string, size, sent int) (head, partial []byte) {
	req := newRequest(t, http.MethodPut, s.url(bucket, key, ""), nil)
	req.ContentLength = int64(size)
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	sign(t, req, rootCred, time.Now(), nil)
	return rawHead(req, int64(size)), randomBytes(sent)
}

// stalledSwiftPut is the head of a Swift PUT of container/object declaring size bytes
// (negative: Transfer-Encoding: chunked, sent as one chunk), and what it sends before stalling.
func stalledSwiftPut(host, token, storageURL, container, object string, size, sent int) (head, partial []byte) {
	path := strings.TrimPrefix(storageURL, "http://"+host) + "/" + container + "/" + object
	framing := "Content-Length: " + strconv.Itoa(size)
	partial = randomBytes(sent)
	if size < 0 {
		framing = "Transfer-Encoding: chunked"
		partial = append(fmt.Appendf(nil, "%x\r\n", sent), append(partial, "\r\n"...)...)
	}
	return fmt.Appendf(nil, "PUT %s HTTP/1.1\r\nHost: %s\r\nX-Auth-Token: %s\r\n%s\r\n\r\n", path, host, token, framing), partial
}

// stall sends head and partial on a new connection and leaves it open.
func (s *testServer) stall(t testing.TB, head, partial []byte) (net.Conn, error) {
	c, err := net.Dial("tcp", s.host)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(append(append([]byte{}, head...), partial...)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// answerOf reads the answer to a stalled request, and whether the server then closed the
// connection. The deadline is a safety net, not a threshold.
func answerOf(t testing.TB, c net.Conn) (r response, closed bool, err error) {
	c.SetReadDeadline(time.Now().Add(time.Minute))
	if r, err = readRawResponse(t, c, nil); err != nil {
		return r, false, err
	}
	var one [1]byte
	_, rerr := c.Read(one[:])
	var ne net.Error
	closed = rerr != nil && !(errors.As(rerr, &ne) && ne.Timeout()) // EOF or a reset
	return r, closed, nil
}

// TestStalledUploadTimesOut stalls one upload of each kind after 10 KiB: the answer is S3's
// RequestTimeout or Swift's 408, the connection is closed, and nothing of it stays.
func TestStalledUploadTimesOut(t *testing.T) {
	s := startTuned(t, "", func(c *server.Config) { c.BodyIdleTimeout = stallIdle })
	const bucket = "stall"
	s.createBucket(bucket)
	token, storageURL := s.swiftLogin()

	chunkedHead := func(t *testing.T, key string, unknownLength bool) ([]byte, []byte) {
		const size, chunk = 1 * MiB, 10 * KiB
		req := newRequest(t, http.MethodPut, s.url(bucket, key, ""), nil)
		req.ContentLength = int64(chunkedLength(size, chunk))
		if unknownLength {
			req.ContentLength = -1
		}
		cs := newChunkSigner(t, req, size, time.Now())
		first := cs.chunk(randomBytes(chunk))
		if unknownLength { // aws-chunked inside HTTP's chunked framing, as SDKs stream
			head := rawHead(req, -1)
			head = append(head[:len(head)-2], "Transfer-Encoding: chunked\r\n\r\n"...)
			return head, append(fmt.Appendf(nil, "%x\r\n", len(first)), append(first, "\r\n"...)...)
		}
		return rawHead(req, req.ContentLength), first
	}
	for _, v := range []struct {
		name    string
		request func(t *testing.T, key string) (head, partial []byte)
		swift   bool
	}{
		{"S3 PUT", func(t *testing.T, key string) ([]byte, []byte) {
			return s.stalledS3Put(t, bucket, key, 1*MiB, 10*KiB)
		}, false},
		{"S3 PUT small", func(t *testing.T, key string) ([]byte, []byte) { // under the inline threshold
			return s.stalledS3Put(t, bucket, key, 20*KiB, 10*KiB)
		}, false},
		{"S3 PUT aws-chunked", func(t *testing.T, key string) ([]byte, []byte) { return chunkedHead(t, key, false) }, false},
		{"S3 PUT aws-chunked of unknown length", func(t *testing.T, key string) ([]byte, []byte) { return chunkedHead(t, key, true) }, false},
		{"Swift PUT", func(t *testing.T, key string) ([]byte, []byte) {
			return stalledSwiftPut(s.host, token, storageURL, bucket, key, 1*MiB, 10*KiB)
		}, true},
		{"Swift PUT chunked", func(t *testing.T, key string) ([]byte, []byte) {
			return stalledSwiftPut(s.host, token, storageURL, bucket, key, -1, 10*KiB)
		}, true},
	} {
		t.Run(v.name, func(t *testing.T) {
			key := strings.ReplaceAll(v.name, " ", "-")
			old := randomBytes(100 * KiB)
			s.put(bucket, key, old)
			files := s.objectFiles()

			head, partial := v.request(t, key)
			c, err := s.stall(t, head, partial)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			r, closed, err := answerOf(t, c)
			switch {
			case err != nil:
				t.Fatalf("no answer to the stalled upload: %v", err)
			case v.swift:
				if r.Status != http.StatusRequestTimeout || !strings.Contains(string(r.Body), "Request Timeout") {
					t.Errorf("stalled Swift upload: got %s, want 408 Request Timeout", r)
				}
			default:
				expectError(t, "stalled S3 upload", r, http.StatusBadRequest, "RequestTimeout")
			}
			if !closed {
				t.Error("the connection stays open after the timeout (the rest of the body would be read as a request)")
			}
			s.expectObject("after the stalled upload", bucket, key, old)
			if tmp := s.tmpFiles(); len(tmp) != 0 {
				t.Errorf("temp files left after the stalled upload: %v", tmp)
			}
			if got := s.objectFiles(); !equalStrings(got, files) {
				t.Errorf("data files changed after the stalled upload:\nbefore %v\nafter  %v", files, got)
			}
		})
	}
	if n := s.metric("cairn_http_body_timeouts_total"); n != 6 {
		t.Errorf("cairn_http_body_timeouts_total %v, want 6", n)
	}
}

func equalStrings(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// metric returns an unlabelled metric of the server.
func (s *testServer) metric(name string) float64 {
	s.t.Helper()
	v, err := s.metricErr(name)
	if err != nil {
		s.t.Fatal(err)
	}
	return v
}

func (s *testServer) metricErr(name string) (float64, error) {
	resp, err := s.client.Get(s.endpoint + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no metric %s", name)
}

// openFDs counts this process's open file descriptors (client and server side both).
func openFDs(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count file descriptors: %v", err)
	}
	return len(ents)
}

// TestStalledUploadsLeaveOthersServed holds 300 stalled uploads (S3 and Swift) open at once
// while a well-behaved client writes and reads objects, retrying on 503 SlowDown as SDKs do.
// With a limit under the stall count, requests over it wait briefly and get SlowDown until the
// stalled ones time out and free their slots; with the default limit, the well-behaved client
// is never refused. Either way every stalled upload gets RequestTimeout (or SlowDown), every
// well-behaved request succeeds, no request stays in flight, no temp file stays, and the open
// file descriptors come back to where they were.
func TestStalledUploadsLeaveOthersServed(t *testing.T) {
	const stalled = 300
	for _, tc := range []struct {
		name  string
		limit int
		wait  time.Duration
	}{
		{"limit 64", 64, 200 * time.Millisecond},
		{"default limit", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTuned(t, "", func(c *server.Config) {
				c.BodyIdleTimeout, c.MaxConcurrentRequests, c.AdmissionWait = stallIdle, tc.limit, tc.wait
			})
			const bucket = "crowd"
			s.createBucket(bucket)
			token, storageURL := s.swiftLogin()
			limit := s.metric("cairn_http_requests_in_flight_limit")
			s.client.CloseIdleConnections()
			baseline := openFDs(t)

			// Watch the in-flight gauge while the crowd is there.
			stopWatch := make(chan struct{})
			watched := make(chan float64)
			go func() {
				most := 0.0
				for {
					select {
					case <-stopWatch:
						watched <- most
						return
					case <-time.After(20 * time.Millisecond):
					}
					if v, err := s.metricErr("cairn_http_requests_in_flight"); err == nil {
						most = max(most, v)
					}
				}
			}()

			// The crowd: every other one S3, the others Swift.
			type answer struct {
				swift bool
				r     response
				err   error
			}
			answers := make(chan answer, stalled)
			for i := range stalled {
				key := fmt.Sprintf("stalled-%03d", i)
				swift := i%2 == 1
				var head, partial []byte
				if swift {
					head, partial = stalledSwiftPut(s.host, token, storageURL, bucket, key, 1*MiB, 10*KiB)
				} else {
					head, partial = s.stalledS3Put(t, bucket, key, 1*MiB, 10*KiB)
				}
				c, err := s.stall(t, head, partial)
				if err != nil {
					t.Fatalf("stalled upload %d: %v", i, err)
				}
				go func() {
					defer c.Close()
					r, _, err := answerOf(t, c)
					answers <- answer{swift, r, err}
				}()
			}

			// The well-behaved client, meanwhile.
			var wg sync.WaitGroup
			var mu sync.Mutex
			slowDowns := 0
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 8 {
						key := fmt.Sprintf("good-%d-%d", w, i)
						data := randomBytes(4 * KiB)
						if i == 0 {
							data = randomBytes(1 * MiB)
						}
						r, n, err := s.retrySlowDown(http.MethodPut, bucket, key, data)
						mu.Lock()
						slowDowns += n
						mu.Unlock()
						if err != nil || r.Status != http.StatusOK {
							t.Errorf("PUT %s: %s %v", key, r, err)
							continue
						}
						r, n, err = s.retrySlowDown(http.MethodGet, bucket, key, nil)
						mu.Lock()
						slowDowns += n
						mu.Unlock()
						if err != nil || r.Status != http.StatusOK || !bytes.Equal(r.Body, data) {
							t.Errorf("GET %s: %s %v", key, r, err)
						}
					}
				}()
			}
			wg.Wait()

			timeouts, refused := 0, 0
			for range stalled {
				a := <-answers
				switch {
				case a.err != nil:
					t.Errorf("no answer to a stalled upload: %v", a.err)
				case a.swift && a.r.Status == http.StatusRequestTimeout, !a.swift && a.r.Status == http.StatusBadRequest && a.r.Code == "RequestTimeout":
					timeouts++
				case a.swift && a.r.Status == http.StatusServiceUnavailable, !a.swift && a.r.Status == http.StatusServiceUnavailable && a.r.Code == "SlowDown":
					refused++
				default:
					t.Errorf("stalled upload (Swift %v): got %s, want a timeout or SlowDown", a.swift, a.r)
				}
			}
			close(stopWatch)
			most := <-watched
			t.Logf("limit %v: %d stalled uploads timed out, %d refused; the well-behaved client met SlowDown %d times; at most %v requests in flight",
				limit, timeouts, refused, slowDowns, most)

			if timeouts == 0 {
				t.Error("no stalled upload timed out")
			}
			if n := s.metric("cairn_http_body_timeouts_total"); n != float64(timeouts) {
				t.Errorf("cairn_http_body_timeouts_total %v, the clients saw %d timeouts", n, timeouts)
			}
			if most > limit {
				t.Errorf("%v requests in flight, over the limit of %v", most, limit)
			}
			if limit >= stalled+4 && (refused > 0 || slowDowns > 0) {
				t.Errorf("under the limit, %d stalled uploads and %d well-behaved requests were refused", refused, slowDowns)
			}
			// Nothing stays: no request in flight, no temp file, no stalled object, no connection.
			waitFor(t, "no request in flight", func() bool { return s.metric("cairn_http_requests_in_flight") == 0 })
			if tmp := s.tmpFiles(); len(tmp) != 0 {
				t.Errorf("temp files left: %d", len(tmp))
			}
			for k := range s.listKeys(bucket) {
				if strings.HasPrefix(k, "stalled-") {
					t.Errorf("stalled upload %s was stored", k)
				}
			}
			s.client.CloseIdleConnections()
			waitFor(t, "open file descriptors back near the baseline", func() bool { return openFDs(t) <= baseline+10 })
			t.Logf("open file descriptors: %d before the crowd, %d after", baseline, openFDs(t))
		})
	}
}

// retrySlowDown sends a signed request, again after a short pause while the answer is 503
// SlowDown (as SDKs retry), within a safety bound. n is how many SlowDowns it met.
func (s *testServer) retrySlowDown(method, bucket, key string, body []byte) (r response, n int, err error) {
	for deadline := time.Now().Add(time.Minute); ; n++ {
		req := newRequest(s.t, method, s.url(bucket, key, ""), body)
		sign(s.t, req, rootCred, time.Now(), body)
		if len(body) > 64*KiB {
			req.Header.Set("Expect", "100-continue")
		}
		resp, err := s.client.Do(req)
		if err != nil {
			return r, n, err
		}
		if r, err = parseResponse(resp); err != nil {
			return r, n, err
		}
		if r.Status != http.StatusServiceUnavailable || r.Code != "SlowDown" || time.Now().After(deadline) {
			return r, n, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFor waits until cond holds; the bound is a safety net, not a threshold.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within a minute: %s", what)
		}
	}
}

// A client that stops reading a download: the server's write to it fails once it has taken no
// byte for the idle timeout, the request ends (its slot and the open object are freed) and the
// connection is closed, while other clients are served; a slow reader that keeps reading is
// not cut off.
func TestStalledReaderIsCutOff(t *testing.T) {
	s := startTuned(t, "", func(c *server.Config) { c.BodyIdleTimeout = readerIdle })
	const bucket = "slowread"
	s.createBucket(bucket)
	data := randomBytes(48 * MiB) // far more than the socket buffers of both ends hold
	s.put(bucket, "big", data)

	req := newRequest(t, http.MethodGet, s.url(bucket, "big", ""), nil)
	sign(t, req, rootCred, time.Now(), nil)
	// A small receive buffer set before connecting, so that the window never grows.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10) })
	}}
	c, err := d.Dial("tcp", s.host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(rawHead(req, -1)); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 4096)
	if _, err := io.ReadFull(c, head); err != nil || !bytes.HasPrefix(head, []byte("HTTP/1.1 200")) {
		t.Fatalf("start of the download: %q, %v", head[:min(len(head), 40)], err)
	}
	// Now the client reads nothing. The download is still being served (its write waits for
	// the client), and others are served meanwhile: a GET of part of the same object answers
	// while the stalled download still holds its slot, not once it has been cut off.
	if n := s.metricSum("cairn_http_requests_in_flight "); n != 1 {
		t.Fatalf("requests in flight while the client stalls: %v, want the stalled download", n)
	}
	const from, to = 20 * MiB, 21*MiB - 1
	r := s.call(http.MethodGet, bucket, "big", "", nil, "Range", fmt.Sprintf("bytes=%d-%d", from, to))
	if r.Status != http.StatusPartialContent || !bytes.Equal(r.Body, data[from:to+1]) {
		t.Fatalf("a ranged GET beside the stalled one: %s, %d bytes", r, len(r.Body))
	}
	if n, cut := s.metricSum("cairn_http_requests_in_flight "), s.metricSum("cairn_http_response_timeouts_total "); n != 1 || cut != 0 {
		t.Fatalf("after the GET beside it, %v requests in flight and %v responses cut off: want the stalled download still held (did the GET wait for it?)", n, cut)
	}
	deadline := time.Now().Add(2 * time.Minute) // a safety net, not a timing assertion
	for s.metricSum("cairn_http_response_timeouts_total ") < 1 || s.metricSum("cairn_http_requests_in_flight ") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the stalled download still holds the server after 2 minutes (timeouts %v, in flight %v)",
				s.metricSum("cairn_http_response_timeouts_total "), s.metricSum("cairn_http_requests_in_flight "))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The connection was closed: what is buffered drains, then EOF (or a reset), well short
	// of the whole object.
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, _ := io.Copy(io.Discard, c)
	if n+int64(len(head)) >= int64(len(data)) {
		t.Fatalf("the stalled client got %d bytes of %d: the response was not cut off", n+int64(len(head)), len(data))
	}

	// A slow reader that keeps taking bytes (here 4 MiB every 100 ms, a fiftieth of the idle
	// timeout) gets the whole object.
	c2 := s.dial()
	defer c2.Close()
	req2 := newRequest(t, http.MethodGet, s.url(bucket, "big", ""), nil)
	sign(t, req2, rootCred, time.Now(), nil)
	if _, err := c2.Write(rawHead(req2, -1)); err != nil {
		t.Fatal(err)
	}
	rd := &pacedReader{r: c2, every: 100 * time.Millisecond, chunk: 4 * MiB}
	resp, err := http.ReadResponse(bufio.NewReader(rd), req2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("slow but steady reader: %d bytes of %d, %v", len(got), len(data), err)
	}
}

// pacedReader lets through at most chunk bytes every interval.
type pacedReader struct {
	r           io.Reader
	every       time.Duration
	chunk, left int
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if p.left == 0 {
		time.Sleep(p.every)
		p.left = p.chunk
	}
	n, err := p.r.Read(b[:min(len(b), p.left)])
	p.left -= n
	return n, err
}
