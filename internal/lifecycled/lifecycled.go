// Package lifecycled is the S3 lifecycle daemon: once per cluster (under a lease), at a rate
// limit, it walks the buckets that have a lifecycle configuration and applies their rules —
// current versions expire (behind a delete marker in a versioned bucket), noncurrent versions
// and expired delete markers are removed through the version store, incomplete multipart
// uploads are aborted through the S3 front end's upload store. It owns the passes, their
// pacing, metrics and status, and the index of configured buckets; the rules themselves are
// package s3/lifecycle's, the upload format the S3 front end's.
package lifecycled

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/cairn-store/cairn/internal/daemon"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/lifecycle"
	"github.com/cairn-store/cairn/internal/s3/tagging"
	"github.com/cairn-store/cairn/internal/versions"
)

// Uploads is what the daemon needs of the S3 front end's multipart uploads.
type Uploads interface {
	// EachUpload calls fn with every incomplete upload of a bucket: its key, ID and start.
	EachUpload(ctx context.Context, account, bucket string, fn func(key, id string, initiated time.Time) error) error
	// AbortUpload aborts an upload as AbortMultipartUpload does; false when it ended meanwhile
	// (completed, aborted, or held by a completion).
	AbortUpload(ctx context.Context, account, bucket, key, id string) (bool, error)
}

// Config configures the lifecycle daemon.
type Config struct {
	Proxy    *proxy.Proxy
	Versions *versions.Store
	Uploads  Uploads

	// Interval is the time between passes (default 1h: rules count in days, and a pass over
	// a large bucket is long).
	Interval time.Duration
	// ObjectsPerSecond bounds how many versions and uploads a pass examines (default 500).
	ObjectsPerSecond int
	// Day is the length of a lifecycle day (default 24h). Only tests shorten it.
	Day    time.Duration
	Logger *slog.Logger
	// Registry receives the daemon's metrics; nil registers none.
	Registry prometheus.Registerer
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Lease, in a cluster, makes one proxy's daemon do the work (nil: always).
	Lease daemon.Lease
}

// Defaults of the lifecycle daemon.
const (
	DefaultInterval         = time.Hour
	DefaultObjectsPerSecond = 500
)

// The index of buckets with a lifecycle configuration: so that the daemon need not look at
// every bucket of every account, each has an entry, an object named "<account>\x00<bucket>"
// in container IndexContainer of the reserved account IndexAccount. The S3 front end writes
// the entry before the configuration and removes it after, so a bucket with a configuration
// always has one; an entry whose bucket has none (deleted since, or a Put that failed half
// way) is removed by the daemon when it meets it.
const (
	IndexAccount   = "\x00lifecycle"
	IndexContainer = "buckets"
)

// IndexEntry is a bucket's entry in the index.
func IndexEntry(account, bucket string) meta.ObjectName {
	return meta.ObjectName{Account: IndexAccount, Container: IndexContainer, Object: account + "\x00" + bucket}
}

// Validate fills in defaults and checks the rest.
func (c *Config) Validate() error {
	if c.Proxy == nil || c.Versions == nil || c.Uploads == nil {
		return errors.New("lifecycled: a proxy, a version store and the uploads are needed")
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.ObjectsPerSecond == 0 {
		c.ObjectsPerSecond = DefaultObjectsPerSecond
	}
	if c.Day == 0 {
		c.Day = 24 * time.Hour
	}
	if c.Interval < 0 || c.ObjectsPerSecond < 0 || c.Day < 0 {
		return errors.New("lifecycled: negative interval, rate or day")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Daemon is the lifecycle daemon.
type Daemon struct {
	cfg   Config
	limit *rate.Limiter
	m     lifecycleMetrics
	loop  *daemon.Loop

	mu     sync.Mutex
	status nodeclient.DaemonStatus
}

type lifecycleMetrics struct {
	examined, expired, versions, markers, aborted, locked, errs, passes prometheus.Counter
	lastPass                                                            prometheus.Gauge
}

// Stats counts what one pass did.
type Stats struct {
	Buckets, Examined, Expired, VersionsRemoved, MarkersRemoved, UploadsAborted, LockedSkipped, Errors int64
}

func (s *Stats) counters() map[string]int64 {
	return map[string]int64{"buckets": s.Buckets, "examined": s.Examined, "expired": s.Expired, "versions_removed": s.VersionsRemoved,
		"markers_removed": s.MarkersRemoved, "uploads_aborted": s.UploadsAborted, "locked_skipped": s.LockedSkipped, "errors": s.Errors}
}

// New returns a lifecycle daemon; Start runs it.
func New(cfg Config) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_lifecycle_" + name, Help: help})
	}
	m := lifecycleMetrics{
		examined: counter("objects_examined_total", "Object versions and multipart uploads the lifecycle daemon examined."),
		expired:  counter("objects_expired_total", "Current versions the lifecycle daemon expired (deleted, or hidden behind a delete marker in a versioned bucket)."),
		versions: counter("versions_removed_total", "Noncurrent versions the lifecycle daemon removed."),
		markers:  counter("delete_markers_removed_total", "Expired object delete markers the lifecycle daemon removed."),
		aborted:  counter("uploads_aborted_total", "Incomplete multipart uploads the lifecycle daemon aborted."),
		locked:   counter("locked_skipped_total", "Versions due for removal that Object Lock kept."),
		errs:     counter("errors_total", "Buckets or versions whose processing failed (retried next pass)."),
		passes:   counter("passes_total", "Completed passes of the lifecycle daemon."),
		lastPass: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_lifecycle_last_pass_seconds", Help: "Duration of the last completed lifecycle pass."}),
	}
	if cfg.Registry != nil {
		for _, c := range []prometheus.Collector{m.examined, m.expired, m.versions, m.markers, m.aborted, m.locked, m.errs, m.passes, m.lastPass} {
			if err := cfg.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("lifecycled: metrics: %w", err)
			}
		}
	}
	return &Daemon{cfg: cfg, m: m,
		limit: rate.NewLimiter(rate.Limit(cfg.ObjectsPerSecond), max(1, cfg.ObjectsPerSecond/10))}, nil
}

// Start runs a pass every Interval (the first after one Interval) until Stop.
func (l *Daemon) Start() {
	l.loop = daemon.Start(l.cfg.Interval, false, daemon.WhileHeld(l.cfg.Lease, func(ctx context.Context) { l.Pass(ctx) }))
}

// Stop ends the daemon, waiting for a running pass to stop.
func (l *Daemon) Stop() {
	if l.loop != nil {
		l.loop.Stop()
	}
}

// DaemonStatus is the daemon's progress as `cairn admin status` shows it: passes, and what the
// last one did. On a proxy that does not hold the cluster's lease, passes stay at 0.
func (l *Daemon) DaemonStatus() nodeclient.DaemonStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.status
	st.Counters = maps.Clone(st.Counters)
	return st
}

// Pass applies the rules of every bucket in the index once.
func (l *Daemon) Pass(ctx context.Context) Stats {
	start := time.Now()
	l.mu.Lock()
	l.status.Running = true
	l.mu.Unlock()
	var st Stats
	defer func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.status.Running = false
		if ctx.Err() == nil {
			secs := time.Since(start).Seconds()
			l.status.Passes++
			l.status.Progress = 1
			l.status.LastPassEnd, l.status.LastPassSeconds = time.Now(), secs
			l.status.Counters = st.counters()
			l.m.passes.Inc()
			l.m.lastPass.Set(secs)
		}
	}()
	opts := meta.ListOptions{}
	for ctx.Err() == nil {
		page, err := l.cfg.Proxy.ListObjects(ctx, IndexAccount, IndexContainer, opts)
		if errors.Is(err, meta.ErrNotFound) {
			break
		}
		if err != nil {
			l.fail(&st, "lifecycle: cannot list the index; retried next pass", "err", err)
			break
		}
		for _, e := range page.Objects {
			account, bucket, ok := strings.Cut(e.Name, "\x00")
			if !ok {
				continue
			}
			if err := l.bucket(ctx, account, bucket, e.Timestamp, &st); err != nil && ctx.Err() == nil {
				l.fail(&st, "lifecycle: stopped on a bucket; retried next pass", "account", account, "bucket", bucket, "err", err)
			}
		}
		if !page.Truncated || len(page.Objects) == 0 {
			break
		}
		opts.Marker = page.Objects[len(page.Objects)-1].Name
	}
	if st.Expired+st.VersionsRemoved+st.MarkersRemoved+st.UploadsAborted > 0 {
		l.cfg.Logger.Info("lifecycle pass", "buckets", st.Buckets, "examined", st.Examined, "expired", st.Expired, "versions_removed", st.VersionsRemoved,
			"markers_removed", st.MarkersRemoved, "uploads_aborted", st.UploadsAborted, "locked_skipped", st.LockedSkipped)
	}
	return st
}

func (l *Daemon) fail(st *Stats, msg string, args ...any) {
	st.Errors++
	l.m.errs.Inc()
	l.cfg.Logger.Warn(msg, args...)
}

// bucket applies one bucket's rules. A bucket gone, or without a configuration any more,
// leaves the index.
func (l *Daemon) bucket(ctx context.Context, account, bucket string, entry meta.Timestamp, st *Stats) error {
	c, err := l.cfg.Proxy.HeadContainer(ctx, account, bucket)
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return err
	}
	var cfg *lifecycle.Config
	if err == nil {
		if cfg, err = lifecycle.Decode(c.Meta[lifecycle.MetaKey]); err != nil {
			return err
		}
	}
	if cfg == nil {
		// Unless a Put wrote the entry meanwhile and sets its configuration right after: the
		// entry goes only if it is still the one read (a new Put writes a newer one).
		err := l.cfg.Proxy.DeleteObjectIf(ctx, IndexEntry(account, bucket), meta.Precondition{IfTimestamp: entry})
		if err != nil && !errors.Is(err, meta.ErrNotFound) && !errors.Is(err, meta.ErrPreconditionFailed) {
			return err
		}
		return nil
	}
	st.Buckets++
	now := l.cfg.Now()
	if cfg.ActsOnVersions() {
		if err := l.versions(ctx, account, bucket, versions.StateOf(c), cfg, now, st); err != nil {
			return err
		}
	}
	if cfg.ActsOnUploads() {
		return l.uploads(ctx, account, bucket, cfg, now, st)
	}
	return nil
}

// versions walks a bucket's versions, one key (all its versions, newest first) at a time.
func (l *Daemon) versions(ctx context.Context, account, bucket string, vst versions.State, cfg *lifecycle.Config, now time.Time, st *Stats) error {
	var group []versions.Listed
	opts := versions.ListOptions{}
	for {
		page, err := l.cfg.Versions.List(ctx, vst, account, bucket, opts)
		if err != nil {
			return err
		}
		for _, v := range page.Versions {
			if len(group) > 0 && group[0].Key != v.Key {
				if err := l.key(ctx, account, bucket, vst, cfg, now, group, st); err != nil {
					return err
				}
				group = group[:0]
			}
			group = append(group, v)
		}
		if !page.Truncated {
			break
		}
		opts.KeyMarker, opts.VersionMarker = page.NextKeyMarker, page.NextVersionMarker
	}
	if len(group) > 0 {
		return l.key(ctx, account, bucket, vst, cfg, now, group, st)
	}
	return nil
}

// key applies the rules to the versions of one key, newest first: noncurrent versions first,
// so that a delete marker they leave alone is removed in the same pass.
func (l *Daemon) key(ctx context.Context, account, bucket string, vst versions.State, cfg *lifecycle.Config, now time.Time, group []versions.Listed, st *Stats) error {
	name := meta.ObjectName{Account: account, Container: bucket, Object: group[0].Key}
	cur := -1
	for i := range group {
		if group[i].Latest {
			cur = i
			break
		}
	}
	left := len(group)
	newerNoncurrent := 0
	for i := range group {
		if i == cur {
			continue
		}
		if err := l.limit.Wait(ctx); err != nil {
			return err
		}
		l.examined(st)
		g := &group[i]
		v := lifecycle.Version{Key: g.Key, Size: g.Entry.Size, Modified: g.Entry.Timestamp.Time(), DeleteMarker: g.DeleteMarker, NewerNoncurrent: newerNoncurrent}
		if i > 0 {
			// A version becomes noncurrent when the next newer one is written.
			v.NoncurrentSince = group[i-1].Entry.Timestamp.Time()
		} else {
			v.NoncurrentSince = v.Modified // newest, yet not current (its link is gone)
		}
		newerNoncurrent++
		if err := l.tags(ctx, vst, name, g, cfg, &v); err != nil {
			return err
		}
		if cfg.Decide(v, now, l.cfg.Day) != lifecycle.RemoveVersion {
			continue
		}
		_, err := l.cfg.Versions.DeleteVersion(ctx, vst, name, g.ID, versions.DeleteOptions{})
		switch {
		case errors.Is(err, versions.ErrLocked):
			st.LockedSkipped++
			l.m.locked.Inc()
		case err != nil:
			l.fail(st, "lifecycle: cannot remove a noncurrent version; retried next pass", "bucket", bucket, "key", g.Key, "version", g.ID, "err", err)
		default:
			left--
			st.VersionsRemoved++
			l.m.versions.Inc()
		}
	}
	if cur < 0 {
		return nil
	}
	if err := l.limit.Wait(ctx); err != nil {
		return err
	}
	l.examined(st)
	g := &group[cur]
	v := lifecycle.Version{Key: g.Key, Size: g.Entry.Size, Modified: g.Entry.Timestamp.Time(), Current: true, DeleteMarker: g.DeleteMarker, OthersLeft: left - 1}
	if err := l.tags(ctx, vst, name, g, cfg, &v); err != nil {
		return err
	}
	switch cfg.Decide(v, now, l.cfg.Day) {
	case lifecycle.RemoveVersion: // an expired delete marker
		if _, err := l.cfg.Versions.DeleteVersion(ctx, vst, name, g.ID, versions.DeleteOptions{}); err != nil {
			l.fail(st, "lifecycle: cannot remove an expired delete marker; retried next pass", "bucket", bucket, "key", g.Key, "err", err)
			return nil
		}
		st.MarkersRemoved++
		l.m.markers.Inc()
	case lifecycle.Expire:
		var err error
		if vst.Enabled {
			// Versioned: the object is hidden behind a delete marker; its version stays a
			// noncurrent one (which NoncurrentVersionExpiration may then remove). A version
			// written since the listing is left alone (this narrows the race to the
			// delete's own time; a version hidden so is not lost, only noncurrent).
			if _, ok := l.currentAt(ctx, name, g.ID); !ok {
				return nil
			}
			_, err = l.cfg.Versions.Delete(ctx, vst, name)
		} else {
			// The object read, and only it: one written since the listing stays. In a
			// suspended bucket the current version may be a version written while versioning
			// was on: the object is then its link, with a timestamp of its own (the version
			// stays, noncurrent, as a suspended DELETE leaves it).
			at := g.Entry.Timestamp
			if g.ID != versions.Null {
				var ok bool
				if at, ok = l.currentAt(ctx, name, g.ID); !ok {
					return nil
				}
			}
			err = l.cfg.Proxy.DeleteObjectIf(ctx, name, meta.Precondition{IfTimestamp: at})
			if errors.Is(err, meta.ErrPreconditionFailed) || errors.Is(err, meta.ErrNotFound) {
				return nil
			}
		}
		if err != nil {
			l.fail(st, "lifecycle: cannot expire an object; retried next pass", "bucket", bucket, "key", g.Key, "err", err)
			return nil
		}
		st.Expired++
		l.m.expired.Inc()
	}
	return nil
}

func (l *Daemon) examined(st *Stats) {
	st.Examined++
	l.m.examined.Inc()
}

// tags reads a version's tags when a rule needs them (listings do not carry them).
func (l *Daemon) tags(ctx context.Context, vst versions.State, name meta.ObjectName, g *versions.Listed, cfg *lifecycle.Config, v *lifecycle.Version) error {
	if g.DeleteMarker || !cfg.NeedsTags() {
		return nil
	}
	var obj meta.Object
	var err error
	if g.ID == versions.Null || !vst.Versioned() {
		obj, err = l.cfg.Proxy.HeadObject(ctx, name)
	} else {
		var rv versions.Version
		rv, err = l.cfg.Versions.Resolve(ctx, vst, name, g.ID)
		obj = rv.Object
	}
	if errors.Is(err, meta.ErrNotFound) || errors.Is(err, versions.ErrNoSuchVersion) {
		return nil // gone meanwhile: no tags, and nothing a rule removes matters
	}
	if err != nil {
		return err
	}
	set, err := tagging.Decode(obj.SysMeta[tagging.ObjectSysMetaKey])
	if err != nil {
		return fmt.Errorf("tags of %q: %w", g.Key, err)
	}
	v.Tags = make(map[string]string, len(set))
	for _, t := range set {
		v.Tags[t.Key] = t.Value
	}
	return nil
}

// uploads aborts the bucket's incomplete multipart uploads that a rule says are due.
func (l *Daemon) uploads(ctx context.Context, account, bucket string, cfg *lifecycle.Config, now time.Time, st *Stats) error {
	return l.cfg.Uploads.EachUpload(ctx, account, bucket, func(key, id string, initiated time.Time) error {
		if err := l.limit.Wait(ctx); err != nil {
			return err
		}
		l.examined(st)
		if !cfg.AbortUpload(key, initiated, now, l.cfg.Day) {
			return nil
		}
		aborted, err := l.cfg.Uploads.AbortUpload(ctx, account, bucket, key, id)
		switch {
		case err != nil:
			l.fail(st, "lifecycle: cannot abort an upload; retried next pass", "bucket", bucket, "upload", id, "err", err)
		case aborted:
			st.UploadsAborted++
			l.m.aborted.Inc()
		}
		return nil
	})
}

// currentAt reports whether the version id (as listed) is still the current one of name in a
// versioned bucket (the one its link names, or the null version in place), and the timestamp
// of the object at name then.
func (l *Daemon) currentAt(ctx context.Context, name meta.ObjectName, id string) (meta.Timestamp, bool) {
	cur, err := l.cfg.Proxy.HeadObjectBrief(ctx, name)
	if err != nil || cur.Deleted {
		return 0, false
	}
	if _, linked, ok := versions.LinkedVersion(&cur); ok {
		return cur.Timestamp, linked == id
	}
	return cur.Timestamp, id == versions.Null
}
