package server

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/workload"
)

func testLanes(t *testing.T, share int, wait time.Duration, m *workload.Monitor) *lanes {
	t.Helper()
	l, err := newLanes(Config{LaneShare: share, LaneWait: wait, workload: m}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// admitted runs an admission in the background and reports its end on the channel it returns.
func admitted(l *lanes, lane int) <-chan func() {
	ch := make(chan func(), 1)
	go func() {
		done, ok := l.admit(context.Background(), lane)
		if !ok {
			done = nil
		}
		ch <- done
	}()
	return ch
}

func mustAdmit(t *testing.T, l *lanes, lane int) func() {
	t.Helper()
	done, ok := l.admit(context.Background(), lane)
	if !ok {
		t.Fatalf("lane %s refused", laneNames[lane])
	}
	return done
}

// While small requests are served, the large lane has its share and the next large request
// waits for one to end; small requests never wait.
func TestLargeLaneWaitsWhileSmallAreServed(t *testing.T) {
	l := testLanes(t, 1, time.Minute, nil)
	small := mustAdmit(t, l, laneSmall)
	large := mustAdmit(t, l, laneLarge)
	next := admitted(l, laneLarge)
	for range 5 {
		mustAdmit(t, l, laneSmall)() // small ones pass at once
	}
	select {
	case <-next:
		t.Fatal("a second large request was served beside a small one, over a share of 1")
	case <-time.After(200 * time.Millisecond): // a wrong admission would have come by now
	}
	large()
	done := <-next
	if done == nil {
		t.Fatal("the waiting large request was refused when the first ended")
	}
	// The small lane goes quiet: large requests are no longer bounded.
	small()
	third := admitted(l, laneLarge)
	if d := <-third; d == nil {
		t.Fatal("a large request was refused with the small lane quiet")
	} else {
		d()
	}
	done()
}

// With no small request, the large lane is not bounded (a backup alone is not slowed).
func TestLargeLaneAloneIsNotBounded(t *testing.T) {
	l := testLanes(t, 1, time.Minute, nil)
	var ends []func()
	for range 4 {
		ends = append(ends, mustAdmit(t, l, laneLarge))
	}
	for _, e := range ends {
		e()
	}
}

// A large request that waited its longest is refused (the front end answers 503).
func TestLargeLaneWaitIsBounded(t *testing.T) {
	l := testLanes(t, 1, 50*time.Millisecond, nil)
	defer mustAdmit(t, l, laneSmall)()
	defer mustAdmit(t, l, laneLarge)()
	if d := <-admitted(l, laneLarge); d != nil {
		t.Fatal("a large request over the share was served")
	}
}

// A body of the large size, declared or aws-chunked, goes in the large lane; so does a read of
// a bucket the monitor classes as large objects; the rest are small.
func TestLaneOf(t *testing.T) {
	m, err := workload.New(workload.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		m.Observe(workload.Observation{Account: "a", Bucket: "backups", Kind: workload.Write, Size: 8 << 20})
	}
	l := testLanes(t, 1, time.Minute, m)
	req := func(method, target string, length int64, hdr ...string) int {
		r := httptest.NewRequest(method, target, nil)
		r.ContentLength = length
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		return l.laneOf(r)
	}
	const streaming = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	for _, c := range []struct {
		name string
		lane int
	}{
		{"PUT 2 MiB", req("PUT", "/site/a", 2<<20)},
		{"PUT aws-chunked 2 MiB", req("PUT", "/site/a", 100, "X-Amz-Content-Sha256", streaming, "X-Amz-Decoded-Content-Length", "2097152")},
		{"PUT 2 MiB claiming a decoded length of 1", req("PUT", "/site/a", 2<<20, "X-Amz-Content-Sha256", streaming, "X-Amz-Decoded-Content-Length", "1")},
		{"PUT 2 MiB with a decoded length but not aws-chunked", req("PUT", "/site/a", 2<<20, "X-Amz-Decoded-Content-Length", "1")},
		{"PUT of undeclared length", req("PUT", "/v1/AUTH_a/site/a", -1)},
		{"GET of a large bucket", req("GET", "/backups/day1", 0)},
		{"Swift GET of a large container", req("GET", "/v1/AUTH_a/backups/day1", 0)},
	} {
		if c.lane != laneLarge {
			t.Errorf("%s: lane %s, want large", c.name, laneNames[c.lane])
		}
	}
	for _, c := range []struct {
		name string
		lane int
	}{
		{"PUT 8 KiB", req("PUT", "/site/a", 8<<10)},
		{"PUT 8 KiB declaring a decoded length of 2 MiB, not aws-chunked", req("PUT", "/site/a", 8<<10, "X-Amz-Decoded-Content-Length", "2097152")},
		{"GET of a small bucket", req("GET", "/site/a", 0)},
		{"DELETE in a large bucket", req("DELETE", "/backups/day1", 0)},
		{"list buckets", req("GET", "/", 0)},
	} {
		if c.lane != laneSmall {
			t.Errorf("%s: lane %s, want small", c.name, laneNames[c.lane])
		}
	}
}
