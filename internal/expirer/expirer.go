// Package expirer is Cairn's object expirer daemon: it removes objects whose expiry (Swift's
// X-Delete-At) has passed. Writers queue each expiry in the proxy's expiry queue before they
// acknowledge it (proxy.QueueExpiry); each pass of the daemon walks the queue's time buckets
// that are due, deletes each object whose current expiry is still the queued one, and removes
// the entries (and emptied buckets). An entry whose object has changed since (expiry removed or
// moved, object overwritten or deleted) is stale and only removed; a moved expiry has its own
// entry. Errors are logged and counted, and the entry is retried on the next pass.
//
// The check and the delete are one: the delete carries the queued expiry as a precondition
// that the storage engine evaluates in its commit, as Swift's object servers evaluate
// X-If-Delete-At under their lock.
package expirer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/daemon"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
)

// Config configures the daemon.
type Config struct {
	Proxy *proxy.Proxy
	// Interval is the time between passes (default 30 s: Swift's expirer runs every 300 s;
	// Cairn's queue is cheap to scan and users see expired objects leave listings sooner).
	Interval time.Duration
	// PageSize is how many entries one listing page holds (default 1000).
	PageSize int
	Logger   *slog.Logger
	// Registry receives the daemon's metrics; nil registers none.
	Registry prometheus.Registerer
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
	// Lease, in a cluster, makes one proxy's expirer do the work: passes run only while this
	// one holds it (nil: always, as in the embedded default).
	Lease daemon.Lease
}

// DefaultInterval is the default time between passes.
const DefaultInterval = 30 * time.Second

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.Proxy == nil {
		return errors.New("expirer: no proxy")
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Interval < 0 {
		return errors.New("expirer: negative interval")
	}
	if c.PageSize == 0 {
		c.PageSize = 1000
	}
	if c.PageSize < 0 {
		return errors.New("expirer: negative page size")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Daemon is the expirer.
type Daemon struct {
	cfg  Config
	px   *proxy.Proxy
	log  *slog.Logger
	m    metrics
	loop *daemon.Loop
}

type metrics struct {
	expired, stale, errs prometheus.Counter
	pass                 prometheus.Histogram
}

// New returns a daemon; Start runs it.
func New(cfg Config) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := metrics{
		expired: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_expirer_objects_expired_total", Help: "Objects the expirer deleted because their expiry passed."}),
		stale:   prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_expirer_entries_stale_total", Help: "Queue entries dropped because their object had changed (expiry removed or moved, object gone)."}),
		errs:    prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_expirer_errors_total", Help: "Queue entries that failed and are retried on the next pass."}),
		pass:    prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cairn_expirer_pass_seconds", Help: "Duration of expirer passes.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
	}
	if cfg.Registry != nil {
		for _, c := range []prometheus.Collector{m.expired, m.stale, m.errs, m.pass} {
			if err := cfg.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("expirer: metrics: %w", err)
			}
		}
	}
	return &Daemon{cfg: cfg, px: cfg.Proxy, log: cfg.Logger, m: m}, nil
}

// Start runs a pass at once and then every Interval until Stop.
func (d *Daemon) Start() {
	d.loop = daemon.Start(d.cfg.Interval, true, daemon.WhileHeld(d.cfg.Lease, func(ctx context.Context) {
		if _, err := d.Pass(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("expirer pass failed; retrying next pass", "err", err)
		}
	}))
}

// Stop ends the daemon, waiting for a running pass to stop.
func (d *Daemon) Stop() {
	if d.loop != nil {
		d.loop.Stop()
	}
}

// PassResult counts what a pass did.
type PassResult struct {
	Expired, Stale, Errors int
}

// Pass walks every due bucket of the queue once.
func (d *Daemon) Pass(ctx context.Context) (PassResult, error) {
	start := time.Now()
	defer func() { d.m.pass.Observe(time.Since(start).Seconds()) }()
	var res PassResult
	now := d.cfg.Now().Unix()
	opts := meta.ListOptions{Limit: d.cfg.PageSize}
	for {
		page, err := d.px.ListContainers(ctx, proxy.ExpiringAccount, opts)
		if errors.Is(err, meta.ErrNotFound) {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("expirer: list buckets: %w", err)
		}
		for _, c := range page.Containers {
			start, err := strconv.ParseInt(c.Name, 10, 64)
			if err != nil || start > now {
				return res, nil // buckets sort by time: the rest are in the future
			}
			if err := d.bucket(ctx, c.Name, now, &res); err != nil {
				return res, err
			}
		}
		if !page.Truncated || len(page.Containers) == 0 {
			return res, nil
		}
		opts.Marker = page.Containers[len(page.Containers)-1].Name
	}
}

// bucket processes the due entries of one bucket, and removes the bucket once it is empty
// and wholly past.
func (d *Daemon) bucket(ctx context.Context, bucket string, now int64, res *PassResult) error {
	opts := meta.ListOptions{Limit: d.cfg.PageSize}
	left := false
	for {
		page, err := d.px.ListObjects(ctx, proxy.ExpiringAccount, bucket, opts)
		if err != nil {
			return fmt.Errorf("expirer: list bucket %s: %w", bucket, err)
		}
		for _, e := range page.Objects {
			if err := ctx.Err(); err != nil {
				return err
			}
			entry, err := proxy.ParseExpiryEntry(e.Name)
			if err != nil {
				d.log.Warn("expirer: dropping an unreadable queue entry", "bucket", bucket, "entry", e.Name)
				d.removeEntry(ctx, bucket, e.Name)
				continue
			}
			if entry.At > now {
				left = true
				continue
			}
			d.expire(ctx, bucket, e.Name, entry, res)
		}
		if !page.Truncated || len(page.Objects) == 0 {
			break
		}
		opts.Marker = page.Objects[len(page.Objects)-1].Name
	}
	start, _ := strconv.ParseInt(bucket, 10, 64)
	if !left && start+proxy.ExpiryBucketSeconds <= now {
		// A bucket that gets an entry meanwhile (a late writer) keeps it: deleting a
		// non-empty container fails, and the entry is processed next pass.
		if err := d.px.DeleteContainer(ctx, proxy.ExpiringAccount, bucket); err != nil && !errors.Is(err, meta.ErrNotFound) && !errors.Is(err, meta.ErrNotEmpty) {
			d.log.Warn("expirer: cannot remove an emptied bucket", "bucket", bucket, "err", err)
		}
	}
	return nil
}

// expire deletes entry's object if its expiry is still the entry's, then the entry. The
// condition is decided by the storage engine in the delete's commit (Swift's X-If-Delete-At),
// so that an object rewritten after the entry was queued is never deleted by it.
func (d *Daemon) expire(ctx context.Context, bucket, entryName string, entry proxy.ExpiryEntry, res *PassResult) {
	// As of the expiry time, as Swift's expirer deletes: a write stamped after it wins over
	// this delete even if it commits later. An expiry set at or before the object's own write
	// (possible only by setting one in the past) is deleted as of now instead.
	cond := meta.Precondition{IfDeleteAt: entry.At}
	err := d.px.DeleteObjectAt(ctx, entry.Name, meta.Timestamp(entry.At*int64(time.Second)), cond)
	if errors.Is(err, meta.ErrConflict) {
		err = d.px.DeleteObjectIf(ctx, entry.Name, cond)
	}
	switch {
	case err == nil:
		d.m.expired.Inc()
		res.Expired++
	case errors.Is(err, meta.ErrNotFound), errors.Is(err, meta.ErrPreconditionFailed):
		d.m.stale.Inc()
		res.Stale++
	default:
		d.log.Warn("expirer: cannot delete an expired object; retrying next pass", "account", entry.Name.Account, "container", entry.Name.Container, "object", entry.Name.Object, "err", err)
		d.m.errs.Inc()
		res.Errors++
		return
	}
	d.removeEntry(ctx, bucket, entryName)
}

func (d *Daemon) removeEntry(ctx context.Context, bucket, name string) {
	if err := d.px.DeleteObject(ctx, meta.ObjectName{Account: proxy.ExpiringAccount, Container: bucket, Object: name}); err != nil && !errors.Is(err, meta.ErrNotFound) {
		d.log.Warn("expirer: cannot remove a queue entry; it is retried next pass", "bucket", bucket, "entry", name, "err", err)
	}
}
