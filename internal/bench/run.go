package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// RunConfig configures Run, a fixed workload of one operation for a duration.
type RunConfig struct {
	Op          string // "put" or "get"
	Bucket      string
	Prefix      string // put writes, and get reads, ObjectKey(Prefix, i)
	Size        int64  // bytes per object
	Concurrency int    // workers; default 16
	Duration    time.Duration
	// Objects is the set GET reads from, uniformly at random: ObjectKey(Prefix, 0..Objects-1).
	// Default 1000. Unused by put.
	Objects int64
	// SkipPrepare leaves out the unmeasured PUT of the GET object set, for when an earlier
	// fill with the same Prefix and Size already wrote it.
	SkipPrepare bool
	// PutStart is the first index put writes (default 0): keys ascend from there, each
	// PUT a new key unless an earlier run wrote it.
	PutStart int64
}

// Validate checks the configuration and fills in defaults.
func (c *RunConfig) Validate() error {
	if c.Op != "put" && c.Op != "get" {
		return fmt.Errorf("bench: run: op %q: want put or get", c.Op)
	}
	if c.Bucket == "" {
		return errors.New("bench: run: no bucket")
	}
	if c.Size < 0 || c.Size > 5<<30 {
		return fmt.Errorf("bench: run: size %d outside 0..5GiB", c.Size)
	}
	if c.Concurrency == 0 {
		c.Concurrency = 16
	}
	if c.Concurrency < 1 {
		return fmt.Errorf("bench: run: concurrency %d < 1", c.Concurrency)
	}
	if c.Duration <= 0 {
		return fmt.Errorf("bench: run: duration %v must be positive", c.Duration)
	}
	if c.Objects == 0 {
		c.Objects = 1000
	}
	if c.Objects < 1 {
		return fmt.Errorf("bench: run: objects %d < 1", c.Objects)
	}
	if c.PutStart < 0 {
		return fmt.Errorf("bench: run: negative put start %d", c.PutStart)
	}
	return nil
}

// Run drives Op with Concurrency closed-loop workers for Duration and reports ops/s, MB/s and
// latency percentiles. Requests in flight when Duration ends are allowed to finish and are
// counted (the elapsed time includes them), because cancelling them would turn the tail of
// every run into spurious errors. For get, the object set is first written (unmeasured, see
// Report.Prepare) unless SkipPrepare; a failed prepare is returned as an error since reading
// missing objects would measure 404s.
func Run(ctx context.Context, c *Client, cfg RunConfig) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var prep *Report
	if cfg.Op == "get" && !cfg.SkipPrepare {
		var err error
		prep, err = Fill(ctx, c, FillConfig{Bucket: cfg.Bucket, Prefix: cfg.Prefix, Objects: cfg.Objects, Size: cfg.Size, Concurrency: cfg.Concurrency, ReportEvery: cfg.Objects})
		if err != nil {
			return nil, fmt.Errorf("bench: run: preparing %d objects: %w", cfg.Objects, err)
		}
		prep.Windows = nil // one window of the whole prepare says nothing the totals do not
		if s := prep.Ops["put"]; prep.Interrupted || s.Errors > 0 {
			return prep, fmt.Errorf("bench: run: preparing %d objects: %d PUTs failed (%v)", cfg.Objects, s.Errors, s.ErrorKinds)
		}
	}
	var body []byte
	if cfg.Op == "put" {
		var err error
		if body, err = payload(cfg.Size); err != nil {
			return nil, err
		}
	}

	rec := newRecorder()
	cpu0 := cpuNow()
	start := time.Now()
	stop := start.Add(cfg.Duration)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), uint64(w)))
			for ctx.Err() == nil && time.Now().Before(stop) {
				var (
					err error
					n   int64
				)
				t0 := time.Now()
				if cfg.Op == "put" {
					key := ObjectKey(cfg.Prefix, cfg.PutStart+next.Add(1)-1)
					err, n = c.PutObject(ctx, cfg.Bucket, key, body), cfg.Size
				} else {
					key := ObjectKey(cfg.Prefix, rng.Int64N(cfg.Objects))
					n, err = c.GetObject(ctx, cfg.Bucket, key)
				}
				d := time.Since(t0)
				switch {
				case err == nil:
					rec.ok(d, n)
				case ctx.Err() != nil:
					return
				default:
					rec.fail(err)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	st := rec.stats(el)
	r := &Report{
		Kind: "run", Endpoint: c.Endpoint(), Bucket: cfg.Bucket, Prefix: cfg.Prefix,
		Concurrency: cfg.Concurrency, ObjectSize: cfg.Size, Start: start, Seconds: round3(el.Seconds()),
		Ops: map[string]*OpStats{cfg.Op: &st}, Prepare: prep, Interrupted: ctx.Err() != nil,
	}
	r.ClientCPU = cpuSince(cpu0, r.totalRequests(), el)
	return r, nil
}
