package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/cairn-store/cairn/internal/daemon"
	"github.com/cairn-store/cairn/internal/meta"
)

// SweeperConfig configures the node's sweeper, the daemon that reclaims what the engine and the
// index keep only for a while: tombstones, listing tombstones and container tombstones older
// than the reclaim age, and data files left behind when a corrupt record was replaced.
type SweeperConfig struct {
	// ReclaimAge is how long a tombstone is kept (Swift's reclaim_age, default a week): long
	// enough for every replica that missed the delete to have learnt it.
	ReclaimAge time.Duration
	// Interval is the time between passes (default 1h).
	Interval time.Duration
	// RecordsPerSecond bounds how fast a pass visits records (default 2000), so that it
	// never competes with clients for the disk.
	RecordsPerSecond int
	Logger           *slog.Logger
	// Registry receives the sweeper's metrics; nil registers none.
	Registry prometheus.Registerer
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Validate fills in defaults and checks the rest.
func (c *SweeperConfig) Validate() error {
	if c.ReclaimAge == 0 {
		c.ReclaimAge = 7 * 24 * time.Hour
	}
	if c.Interval == 0 {
		c.Interval = time.Hour
	}
	if c.RecordsPerSecond == 0 {
		c.RecordsPerSecond = 2000
	}
	if c.ReclaimAge < 0 || c.Interval < 0 || c.RecordsPerSecond < 0 {
		return errors.New("storage: sweeper: negative reclaim age, interval or rate")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Sweeper is the running daemon.
type Sweeper struct {
	cfg                      SweeperConfig
	n                        *Node
	limit                    *rate.Limiter
	scanned, reclaimed, errs prometheus.Counter
	listingReclaimed         prometheus.Counter
	containersReclaimed      prometheus.Counter
	leakedFiles              prometheus.Counter
	passes                   prometheus.Counter
	loop                     *daemon.Loop
}

// NewSweeper returns the node's sweeper; Start runs it.
func (n *Node) NewSweeper(cfg SweeperConfig) (*Sweeper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sweeper{
		cfg: cfg, n: n,
		limit:     rate.NewLimiter(rate.Limit(cfg.RecordsPerSecond), max(1, cfg.RecordsPerSecond/10)),
		scanned:   prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_sweeper_records_scanned_total", Help: "Object records the sweeper visited."}),
		reclaimed: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_sweeper_tombstones_reclaimed_total", Help: "Tombstones older than the reclaim age that the sweeper removed."}),
		listingReclaimed: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_sweeper_listing_tombstones_reclaimed_total",
			Help: "Listing tombstones (deleted rows of container listings) older than the reclaim age that the sweeper removed."}),
		containersReclaimed: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_sweeper_container_tombstones_reclaimed_total",
			Help: "Container tombstones (kept for replication to spread a container's deletion) older than the reclaim age that the sweeper removed."}),
		leakedFiles: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_sweeper_data_files_removed_total",
			Help: "Data files no record pointed at any more (left when a corrupt record was replaced) that the sweeper removed."}),
		errs:   prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_sweeper_errors_total", Help: "Sweeper passes over a device that stopped on an error."}),
		passes: prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_sweeper_passes_total", Help: "Completed sweeper passes over all devices."}),
	}
	if cfg.Registry != nil {
		for _, c := range []prometheus.Collector{s.scanned, s.reclaimed, s.listingReclaimed, s.containersReclaimed, s.leakedFiles, s.errs, s.passes} {
			if err := cfg.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("storage: sweeper metrics: %w", err)
			}
		}
	}
	return s, nil
}

// Start runs a pass every Interval (the first after one Interval) until Stop.
func (s *Sweeper) Start() {
	s.loop = daemon.Start(s.cfg.Interval, false, func(ctx context.Context) { s.Pass(ctx) })
}

// Stop ends the daemon, waiting for a running pass to stop.
func (s *Sweeper) Stop() {
	if s.loop != nil {
		s.loop.Stop()
	}
}

// Pass sweeps every device once (tombstones, listing tombstones, then leaked data files) and
// returns the tombstones reclaimed (of objects; listing tombstones are counted apart).
func (s *Sweeper) Pass(ctx context.Context) int64 {
	before := meta.Timestamp(s.cfg.Now().Add(-s.cfg.ReclaimAge).UnixNano())
	var total int64
	for name, d := range s.n.devs() {
		st, err := d.engine.SweepTombstones(ctx, before, func(ctx context.Context) error {
			s.scanned.Inc()
			return s.limit.Wait(ctx)
		})
		s.reclaimed.Add(float64(st.Reclaimed))
		total += st.Reclaimed
		if err != nil {
			if ctx.Err() != nil {
				return total
			}
			s.errs.Inc()
			s.cfg.Logger.Warn("sweeper pass stopped; retried next pass", "device", name, "err", err)
			continue
		}
		if st.Reclaimed > 0 {
			s.cfg.Logger.Info("sweeper reclaimed tombstones", "device", name, "tombstones", st.Reclaimed, "scanned", st.Scanned)
		}
		lock := func(account, container, object string) func() {
			return d.engine.LockName(meta.ObjectName{Account: account, Container: container, Object: object})
		}
		listed, err := d.index.SweepTombstones(ctx, before, s.limit.Wait, lock)
		s.listingReclaimed.Add(float64(listed))
		if err != nil {
			if ctx.Err() != nil {
				return total
			}
			s.errs.Inc()
			s.cfg.Logger.Warn("sweeper pass over listing tombstones stopped; retried next pass", "device", name, "err", err)
		}
		gone, err := d.index.SweepContainerStates(ctx, before)
		s.containersReclaimed.Add(float64(gone))
		if err != nil {
			if ctx.Err() != nil {
				return total
			}
			s.errs.Inc()
			s.cfg.Logger.Warn("sweeper pass over container tombstones stopped; retried next pass", "device", name, "err", err)
		}
		files, err := d.engine.SweepDataFiles(ctx, s.limit.Wait)
		s.leakedFiles.Add(float64(files))
		if err != nil {
			if ctx.Err() != nil {
				return total
			}
			s.errs.Inc()
			s.cfg.Logger.Warn("sweeper pass over data files stopped; retried next pass", "device", name, "err", err)
		}
	}
	s.passes.Inc()
	return total
}
