package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-store/cairn/internal/objclient"
)

// ListConfig configures List.
type ListConfig struct {
	Bucket  string
	Prefix  string
	MaxKeys int // keys per page; default 1000, S3's maximum
	// Expected, when > 0, is the number of keys the listing must return.
	Expected int64
	// Retries is how often a failed page is retried before List gives up (a listing cannot
	// skip a page); default 3.
	Retries int
}

// Validate checks the configuration and fills in defaults.
func (c *ListConfig) Validate() error {
	if c.Bucket == "" {
		return errors.New("bench: list: no bucket")
	}
	if c.MaxKeys == 0 {
		c.MaxKeys = 1000
	}
	if c.MaxKeys < 1 || c.MaxKeys > 1000 {
		return fmt.Errorf("bench: list: max-keys %d outside 1..1000", c.MaxKeys)
	}
	if c.Expected < 0 {
		return fmt.Errorf("bench: list: negative expected count %d", c.Expected)
	}
	if c.Retries == 0 {
		c.Retries = 3
	}
	if c.Retries < 0 {
		c.Retries = 0
	}
	return nil
}

// ListStats is the listing-specific part of a list Report. The "list" entry of Report.Ops
// counts pages (one request each) and their latency.
type ListStats struct {
	Keys       int64   `json:"keys"`
	Pages      int64   `json:"pages"`
	KeysPerSec float64 `json:"keys_per_sec"`
	Expected   int64   `json:"expected,omitempty"`
	// CountOK is whether Keys == Expected; absent when no count was expected.
	CountOK *bool `json:"count_ok,omitempty"`
	// Ordered is whether every key was strictly greater than the one before, as S3 promises
	// (no duplicates, no reordering across continuation tokens).
	Ordered bool `json:"ordered"`
}

// ErrCountMismatch is returned (with the full report) when a listing's key count differs from
// ListConfig.Expected, or its keys are out of order.
var ErrCountMismatch = errors.New("bench: listing does not match")

// List walks the whole bucket (or Prefix) page by page (S3 ListObjectsV2 or a Swift container
// listing with markers), one page
// at a time as a client must, and reports keys/s. It returns the report together with an
// error when the listing could not finish or did not match Expected.
func List(ctx context.Context, c objclient.Client, cfg ListConfig) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rec := newRecorder()
	ls := &ListStats{Expected: cfg.Expected, Ordered: true}
	cpu0 := cpuNow()
	start := time.Now()
	var (
		token, last string
		runErr      error
	)
	for {
		var page objclient.ListPage
		var err error
		for attempt := 0; ; attempt++ {
			t0 := time.Now()
			page, err = c.List(ctx, cfg.Bucket, objclient.ListOptions{Prefix: cfg.Prefix, Marker: token, Limit: cfg.MaxKeys})
			if err == nil {
				rec.ok(time.Since(t0), 0)
				break
			}
			if ctx.Err() != nil || attempt >= cfg.Retries {
				break
			}
			rec.fail(err)
			// A short pause: a page that failed because the server is overloaded should not be
			// hammered, and a listing is sequential anyway.
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(attempt+1) * 100 * time.Millisecond):
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				rec.fail(err)
				runErr = fmt.Errorf("bench: list: page %d after %d keys: %w", ls.Pages+1, ls.Keys, err)
			}
			break
		}
		ls.Pages++
		for _, o := range page.Objects {
			k := o.Key
			if ls.Keys > 0 && k <= last {
				ls.Ordered = false
			}
			last = k
			ls.Keys++
		}
		if !page.Truncated {
			break
		}
		token = page.Next
	}
	el := time.Since(start)
	if s := el.Seconds(); s > 0 {
		ls.KeysPerSec = round3(float64(ls.Keys) / s)
	}
	pages := rec.stats(el)
	r := &Report{
		Kind: "list", Protocol: c.Protocol(), Endpoint: c.Endpoint(), Bucket: cfg.Bucket, Prefix: cfg.Prefix, Concurrency: 1,
		Start: start, Seconds: round3(el.Seconds()), Ops: map[string]*OpStats{"list": &pages}, List: ls,
		Interrupted: ctx.Err() != nil,
	}
	r.ClientCPU = cpuSince(cpu0, r.totalRequests(), el)
	if runErr == nil && r.Interrupted {
		runErr = fmt.Errorf("bench: list: interrupted after %d keys: %w", ls.Keys, ctx.Err())
	}
	if runErr != nil {
		return r, runErr
	}
	if cfg.Expected > 0 {
		ok := ls.Keys == cfg.Expected
		ls.CountOK = &ok
		if !ok {
			return r, fmt.Errorf("%w: %d keys listed, %d expected", ErrCountMismatch, ls.Keys, cfg.Expected)
		}
	}
	if !ls.Ordered {
		return r, fmt.Errorf("%w: keys out of order or repeated", ErrCountMismatch)
	}
	return r, nil
}
