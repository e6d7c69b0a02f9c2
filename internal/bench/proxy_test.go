package bench_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// faultProxy sits between the bench and a real Cairn server and injects the network and
// overload faults a benchmark must measure honestly: delay, a concurrency limit, and failing
// while a flag file exists (so that an event's shell command can switch it). It fakes no part
// of the store: every request that passes is answered by the real server.
type faultProxy struct {
	delay    time.Duration
	limit    chan struct{} // nil: no limit
	failFile string        // answer 503 while this file exists
	// failEvery > 0 answers every n-th object PUT with 503 SlowDown without passing it on.
	failEvery int64
	puts      atomic.Int64
	requests  atomic.Int64
}

func startFaultProxy(t *testing.T, target string, p *faultProxy) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		if p.limit != nil {
			p.limit <- struct{}{}
			defer func() { <-p.limit }()
		}
		if p.delay > 0 {
			time.Sleep(p.delay)
		}
		fail := false
		if p.failEvery > 0 && r.Method == http.MethodPut && strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1 {
			fail = p.puts.Add(1)%p.failEvery == 0
		}
		if p.failFile != "" {
			if _, err := os.Stat(p.failFile); err == nil {
				fail = true
			}
		}
		{
			if fail {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>injected</Message></Error>`))
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
