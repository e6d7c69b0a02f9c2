package multipart

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/cairn-store/cairn/internal/daemon"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3core"
)

// UploadSweeperConfig configures the daemon that removes what multipart uploads leave behind:
// parts of uploads that ended (their cleanup was cut short by a crash, or a part arrived after
// the end), segments of completed objects that were replaced or deleted while a crash cut their
// release short, and (optionally) uploads abandoned for longer than AbandonAfter.
type UploadSweeperConfig struct {
	// Accounts lists the accounts whose buckets are swept.
	Accounts func(ctx context.Context) ([]string, error)
	// Interval is the time between passes (default 1h).
	Interval time.Duration
	// Grace is how old an unreferenced part must be before it is removed (default 1h): the
	// requests that could still reference it (a Complete, an Abort's own cleanup) are long over.
	Grace time.Duration
	// AbandonAfter aborts uploads with no activity (initiation, part, completion attempt) for
	// longer (0: never, as S3 without a lifecycle rule; uploads then live until aborted).
	AbandonAfter time.Duration
	// ObjectsPerSecond bounds how fast a pass visits names (default 500).
	ObjectsPerSecond int
	Logger           *slog.Logger
	// Registry receives the daemon's metrics; nil registers none.
	Registry prometheus.Registerer
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Lease, in a cluster, makes one proxy's sweeper do the work: passes run only while this
	// one holds it (nil: always).
	Lease daemon.Lease
}

// DefaultUploadSweepInterval is the default time between the upload sweeper's passes.
const DefaultUploadSweepInterval = time.Hour

// Validate fills in defaults and checks the rest.
func (c *UploadSweeperConfig) Validate() error {
	if c.Accounts == nil {
		return errors.New("s3: upload sweeper: no account lister")
	}
	if c.Interval == 0 {
		c.Interval = DefaultUploadSweepInterval
	}
	if c.Grace == 0 {
		c.Grace = time.Hour
	}
	if c.ObjectsPerSecond == 0 {
		c.ObjectsPerSecond = 500
	}
	if c.Interval < 0 || c.Grace < 0 || c.AbandonAfter < 0 || c.ObjectsPerSecond < 0 {
		return errors.New("s3: upload sweeper: negative interval, grace, abandon age or rate")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// UploadSweeper is the running daemon.
type UploadSweeper struct {
	cfg                           UploadSweeperConfig
	h                             *Handler
	limit                         *rate.Limiter
	scanned, parts, aborted, errs prometheus.Counter
	passes                        prometheus.Counter
	loop                          *daemon.Loop
}

// NewUploadSweeper returns the handler's upload sweeper; Start runs it.
func (h *Handler) NewUploadSweeper(cfg UploadSweeperConfig) (*UploadSweeper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &UploadSweeper{
		cfg: cfg, h: h,
		limit:   rate.NewLimiter(rate.Limit(cfg.ObjectsPerSecond), max(1, cfg.ObjectsPerSecond/10)),
		scanned: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_s3_upload_sweeper_names_scanned_total", Help: "Upload markers and parts the upload sweeper visited."}),
		parts:   prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_s3_upload_sweeper_parts_removed_total", Help: "Parts of ended uploads, and segments no object uses any more, that the upload sweeper removed."}),
		aborted: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_s3_upload_sweeper_uploads_aborted_total", Help: "Uploads abandoned past the abandon age that the upload sweeper aborted."}),
		errs:    prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_s3_upload_sweeper_errors_total", Help: "Buckets whose sweep stopped on an error (retried next pass)."}),
		passes:  prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_s3_upload_sweeper_passes_total", Help: "Completed passes of the upload sweeper."}),
	}
	if cfg.Registry != nil {
		for _, c := range []prometheus.Collector{s.scanned, s.parts, s.aborted, s.errs, s.passes} {
			if err := cfg.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("s3: upload sweeper metrics: %w", err)
			}
		}
	}
	return s, nil
}

// Start runs a pass every Interval (the first after one Interval) until Stop.
func (s *UploadSweeper) Start() {
	s.loop = daemon.Start(s.cfg.Interval, false, daemon.WhileHeld(s.cfg.Lease, func(ctx context.Context) { s.Pass(ctx) }))
}

// Stop ends the daemon, waiting for a running pass to stop.
func (s *UploadSweeper) Stop() {
	if s.loop != nil {
		s.loop.Stop()
	}
}

// SweepStats counts what one pass did.
type SweepStats struct{ Scanned, PartsRemoved, UploadsAborted int64 }

// Pass sweeps every uploads container of every account once.
func (s *UploadSweeper) Pass(ctx context.Context) SweepStats {
	var st SweepStats
	accounts, err := s.cfg.Accounts(ctx)
	if err != nil {
		s.errs.Inc()
		s.cfg.Logger.Warn("upload sweeper cannot list accounts; retried next pass", "err", err)
		return st
	}
	prefix := s3core.UploadsContainer("")
	for _, account := range accounts {
		var opts meta.ListOptions
		for ctx.Err() == nil {
			l, err := s.h.Proxy.ListReservedContainers(ctx, account, prefix, opts)
			if err != nil {
				if !errors.Is(err, meta.ErrNotFound) {
					s.errs.Inc()
					s.cfg.Logger.Warn("upload sweeper cannot list containers; retried next pass", "account", account, "err", err)
				}
				break
			}
			for _, c := range l.Containers {
				bucket := strings.TrimPrefix(c.Name, prefix)
				if err := s.sweepBucket(ctx, account, bucket, &st); err != nil && ctx.Err() == nil {
					s.errs.Inc()
					s.cfg.Logger.Warn("upload sweeper stopped on a bucket; retried next pass", "account", account, "bucket", bucket, "err", err)
				}
			}
			if !l.Truncated {
				break
			}
			opts.Marker = l.NextMarker
		}
	}
	if ctx.Err() == nil {
		s.passes.Inc()
	}
	if st.PartsRemoved+st.UploadsAborted > 0 {
		s.cfg.Logger.Info("upload sweeper pass", "scanned", st.Scanned, "parts_removed", st.PartsRemoved, "uploads_aborted", st.UploadsAborted)
	}
	return st
}

// sweepBucket walks one uploads container, one upload (a marker and the parts after it, or
// parts alone once the upload ended) at a time.
func (s *UploadSweeper) sweepBucket(ctx context.Context, account, bucket string, st *SweepStats) error {
	container := s3core.UploadsContainer(bucket)
	type group struct {
		key, id string
		marker  *meta.ListEntry
		parts   []meta.ListEntry
	}
	var g *group
	flush := func() error {
		if g == nil {
			return nil
		}
		defer func() { g = nil }()
		return s.sweepUpload(ctx, &s3core.Request{Account: account, Bucket: bucket, Key: g.key}, g.id, g.marker, g.parts, st)
	}
	opts := meta.ListOptions{}
	for {
		l, err := s.h.Proxy.ListObjects(ctx, account, container, opts)
		if errors.Is(err, meta.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range l.Objects {
			if err := s.limit.Wait(ctx); err != nil {
				return err
			}
			s.scanned.Inc()
			st.Scanned++
			key, rest, ok := strings.Cut(e.Name, "\x00")
			if !ok {
				continue // not an upload's name
			}
			id, part, isPart := strings.Cut(rest, "\x00")
			if g == nil || g.key != key || g.id != id {
				if err := flush(); err != nil {
					return err
				}
				g = &group{key: key, id: id}
			}
			if !isPart {
				g.marker = &e
			} else if _, ok := parsePartNumberOf(part); ok {
				g.parts = append(g.parts, e)
			}
		}
		if !l.Truncated {
			return flush()
		}
		opts.Marker = l.NextMarker
	}
}

// sweepUpload handles one upload: an open one past the abandon age is aborted; the parts of an
// ended one go, except those the object under its key uses.
func (s *UploadSweeper) sweepUpload(ctx context.Context, rq *s3core.Request, id string, marker *meta.ListEntry, parts []meta.ListEntry, st *SweepStats) error {
	now := s.cfg.Now()
	if marker != nil {
		// Abandoned: nothing happened to it (no part, no claim) for AbandonAfter, so that an
		// upload that runs for days but keeps sending parts is left alone.
		last := marker.Timestamp
		for _, p := range parts {
			last = max(last, p.Timestamp)
		}
		if s.cfg.AbandonAfter <= 0 || now.Sub(last.Time()) < s.cfg.AbandonAfter {
			return nil // open: its parts are the client's until it completes or aborts
		}
		m, err := s.h.Proxy.HeadObject(ctx, meta.ObjectName{Account: rq.Account, Container: s3core.UploadsContainer(rq.Bucket), Object: uploadMarkerName(rq.Key, id)})
		if errors.Is(err, meta.ErrNotFound) {
			return nil // ended meanwhile; the next pass sees its leftovers
		}
		if err != nil {
			return err
		}
		up := &upload{id: id, marker: m}
		if err := s.h.endUpload(ctx, rq, up); err != nil {
			if errors.Is(err, s3core.ErrNoSuchUpload) {
				return nil // a Complete holds it, or it ended meanwhile
			}
			return err
		}
		s.aborted.Inc()
		st.UploadsAborted++
		s.cfg.Logger.Info("upload sweeper aborted an abandoned upload", "bucket", rq.Bucket, "upload", id, "initiated", marker.Timestamp.Time())
	}
	// The upload has ended: the marker is gone (the object, if a Complete wrote it, was written
	// before), so what is not in the current object is garbage once past the grace.
	inUse, err := s.h.partsInUse(ctx, rq, id)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if inUse[p.Name] || (marker == nil && now.Sub(p.Timestamp.Time()) < s.cfg.Grace) {
			continue
		}
		err := s.h.Proxy.DeleteObject(ctx, meta.ObjectName{Account: rq.Account, Container: s3core.UploadsContainer(rq.Bucket), Object: p.Name})
		if err != nil && !errors.Is(err, meta.ErrNotFound) {
			return fmt.Errorf("remove part of upload %s: %w", id, err)
		}
		s.parts.Inc()
		st.PartsRemoved++
	}
	return nil
}
