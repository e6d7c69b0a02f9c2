package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/workload"
)

// Request lanes: the microstores inside one process (docs/microstores.md, "Lanes"). Where
// small-object and large-object tenants share one node (the embedded default, a sumo node, a
// proxy of no microstore), a backup stream's large requests take the CPU, the disk and the
// network that small requests wait behind. So requests go in two lanes:
//   - large: a body declared at least LaneLargeSize (or a PUT or POST of undeclared length), or
//     a read of a bucket the workload monitor classes as large objects (C or D: a read's size
//     is not known before it is served);
//   - small: every other.
//
// While small requests are being served (or were within laneSmallLinger), at most LaneShare
// large requests are served at once; one over that waits for a large one to end or for the
// small lane to go quiet, up to LaneWait, then gets its protocol's 503 (S3 SlowDown), which
// clients retry. With no small requests the large lane is not bounded: the lanes only share
// a node when both have work (work-conserving), so a backup alone runs as fast as before.
// Small requests never wait for the large lane. Lanes are off unless --lane-share is given,
// until the proof of issue 28 has measured what they do to a mixed load.

// Defaults of the lanes (Config).
const (
	DefaultLaneLargeSize = 1 << 20
	DefaultLaneWait      = 30 * time.Second
)

// laneSmallLinger is how long after its last request the small lane still counts as busy: a
// closed-loop client's gap between two requests does not open the large lane.
const laneSmallLinger = 100 * time.Millisecond

// laneRecheck is how often a waiting large request looks again at whether the small lane has
// gone quiet (the ends of large requests wake it at once).
const laneRecheck = 20 * time.Millisecond

const (
	laneSmall = iota
	laneLarge
)

var laneNames = [...]string{"small", "large"}

type lanes struct {
	share     int           // large requests served at once while the small lane is busy
	largeSize int64         // a body this large goes in the large lane
	wait      time.Duration // how long a large request waits for its turn
	monitor   *workload.Monitor
	domains   []string

	mu        sync.Mutex
	inFlight  [2]int
	smallSeen time.Time     // the end of the small lane's last request
	freed     chan struct{} // closed (and replaced) when a large request ends

	served   *prometheus.CounterVec
	waited   prometheus.Counter
	rejected prometheus.Counter
	now      func() time.Time
}

// newLanes returns the lanes of a front end; nil when cfg.LaneShare is not positive (no lanes).
func newLanes(cfg Config, reg prometheus.Registerer) (*lanes, error) {
	if cfg.LaneShare <= 0 {
		return nil, nil
	}
	l := &lanes{share: cfg.LaneShare, largeSize: cfg.LaneLargeSize, wait: cfg.LaneWait, monitor: cfg.workload, domains: cfg.Domains,
		freed: make(chan struct{}), now: time.Now,
		served: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_lane_requests_total",
			Help: "Requests admitted to each request lane (small and large objects)."}, []string{"lane"}),
		waited: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_lane_large_waits_total",
			Help: "Large-lane requests that waited for their turn because small requests were being served."}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_lane_large_rejected_total",
			Help: "Large-lane requests refused with 503 (S3 SlowDown) after waiting --lane-wait."}),
	}
	if l.largeSize <= 0 {
		l.largeSize = DefaultLaneLargeSize
	}
	if l.wait <= 0 {
		l.wait = DefaultLaneWait
	}
	for _, c := range []prometheus.Collector{l.served, l.waited, l.rejected} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: metrics: %w", err)
		}
	}
	return l, nil
}

// laneOf is the lane of a request. A body's size is the larger of its declared length and,
// for an aws-chunked upload, its decoded length (a client cannot shrink a large upload into
// the small lane by a header); a write whose length is not declared (chunked transfer
// encoding) is taken as large.
func (l *lanes) laneOf(r *http.Request) int {
	size := r.ContentLength
	if strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		if n, err := strconv.ParseInt(r.Header.Get("X-Amz-Decoded-Content-Length"), 10, 64); err == nil {
			size = max(size, n)
		}
	}
	if size >= l.largeSize || (size < 0 && (r.Method == http.MethodPut || r.Method == http.MethodPost)) {
		return laneLarge
	}
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && l.monitor != nil {
		if b := l.bucketOf(r); b != "" && l.monitor.LargeBucket(b) {
			return laneLarge
		}
	}
	return laneSmall
}

// bucketOf is a request's bucket (an S3 bucket, a Swift container), "" when it names none.
func (l *lanes) bucketOf(r *http.Request) string {
	if swiftRequest(r) {
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/v1/"), "/", 3)
		if len(parts) < 2 {
			return ""
		}
		return parts[1]
	}
	return s3core.ParseTarget(r, l.domains).Bucket
}

// admit waits for a request's turn in its lane; it returns the function that ends it, or false
// when the request waited its longest (or its client left).
func (l *lanes) admit(ctx context.Context, lane int) (done func(), ok bool) {
	var deadline <-chan time.Time
	for {
		l.mu.Lock()
		if lane == laneSmall || l.inFlight[laneLarge] < l.share || (l.inFlight[laneSmall] == 0 && l.now().Sub(l.smallSeen) >= laneSmallLinger) {
			l.inFlight[lane]++
			l.mu.Unlock()
			l.served.WithLabelValues(laneNames[lane]).Inc()
			return func() { l.end(lane) }, true
		}
		freed := l.freed
		l.mu.Unlock()
		if deadline == nil {
			l.waited.Inc()
			t := time.NewTimer(l.wait)
			defer t.Stop()
			deadline = t.C
		}
		recheck := time.NewTimer(laneRecheck)
		select {
		case <-freed:
		case <-recheck.C:
		case <-deadline:
			recheck.Stop()
			l.rejected.Inc()
			return nil, false
		case <-ctx.Done():
			recheck.Stop()
			return nil, false
		}
		recheck.Stop()
	}
}

func (l *lanes) end(lane int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight[lane]--
	if lane == laneSmall {
		l.smallSeen = l.now()
		return
	}
	close(l.freed)
	l.freed = make(chan struct{})
}
