// Package bench owns load generation and measurement against any S3 endpoint (Cairn or not):
// a lean SigV4 load client, latency histograms, the fill / list / fixed-workload operations
// behind `cairn bench`, and their results as JSON-ready structs and a human table. It measures
// from the outside only: it never imports the server, so the same numbers can be taken against
// any other S3 implementation for comparison.
package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-store/cairn/internal/objclient"
)

// Report is the result of one benchmark command. Ops holds one OpStats per operation kind
// ("put", "get", "list"); later workload kinds add entries, not fields.
type Report struct {
	Kind        string              `json:"kind"`               // fill, list, run (a workload: see Stages)
	Protocol    string              `json:"protocol,omitempty"` // s3 or swift
	Workload    string              `json:"workload,omitempty"` // run: the workload's name
	Endpoint    string              `json:"endpoint"`
	Bucket      string              `json:"bucket"`
	Prefix      string              `json:"prefix,omitempty"`
	Concurrency int                 `json:"concurrency"`
	ObjectSize  int64               `json:"object_size,omitempty"`
	Start       time.Time           `json:"start"`
	Seconds     float64             `json:"seconds"`
	Ops         map[string]*OpStats `json:"ops"`
	Windows     []Window            `json:"windows,omitempty"` // fill: throughput per ReportEvery objects
	List        *ListStats          `json:"list,omitempty"`
	Prepare     *Report             `json:"prepare,omitempty"` // run --op get: the unmeasured fill of its object set
	ClientCPU   CPU                 `json:"client_cpu"`
	// Stages of a workload run, in order. Ops then sums the main and ramp stages (the
	// measured ones; prepare and cleanup are reported but not counted there).
	Stages []*StageReport `json:"stages,omitempty"`
	// Samplers are the workload's samplers' numbers over the run.
	Samplers []SamplerReport `json:"samplers,omitempty"`
	// Interrupted is set when the context ended before the work did; the figures cover what ran.
	Interrupted bool `json:"interrupted,omitempty"`
}

// totalRequests counts every request, successful or not, for the CPU-per-operation figure.
func (r *Report) totalRequests() int64 {
	var n int64
	for _, s := range r.Ops {
		n += s.Operations + s.Errors
	}
	return n
}

// ObjectKey is the key of object i: prefix + "obj-" + i zero-padded to 10 digits, so that
// lexical order (the order of a listing) is numeric order.
func ObjectKey(prefix string, i int64) string {
	s := strconv.FormatInt(i, 10)
	const width = 10
	b := make([]byte, 0, len(prefix)+4+width)
	b = append(b, prefix...)
	b = append(b, "obj-"...)
	for n := len(s); n < width; n++ {
		b = append(b, '0')
	}
	return string(append(b, s...))
}

// payload returns size random bytes, generated once and sent as the body of every PUT:
// incompressible, and free of per-request generation cost.
func payload(size int64) ([]byte, error) {
	p := make([]byte, size)
	if _, err := rand.Read(p); err != nil {
		return nil, fmt.Errorf("bench: generating payload: %w", err)
	}
	return p, nil
}

// FillConfig configures Fill.
type FillConfig struct {
	Bucket      string
	Prefix      string // keys are ObjectKey(Prefix, i)
	First       int64  // index of the first object (default 0)
	Objects     int64  // how many objects to PUT
	Size        int64  // bytes per object; 0 is allowed (empty objects)
	Concurrency int    // workers; default 16
	// ReportEvery closes a throughput window after this many successful PUTs; default 100,000,
	// or a tenth of Objects when that is smaller.
	ReportEvery int64
	// Progress, if set, is called as each window closes (from a worker; keep it quick).
	Progress func(Window)
}

// Validate checks the configuration and fills in defaults.
func (c *FillConfig) Validate() error {
	if c.Bucket == "" {
		return errors.New("bench: fill: no bucket")
	}
	if c.Objects < 1 {
		return fmt.Errorf("bench: fill: objects %d < 1", c.Objects)
	}
	if c.First < 0 {
		return fmt.Errorf("bench: fill: negative first index %d", c.First)
	}
	if c.Size < 0 || c.Size > 5<<30 {
		return fmt.Errorf("bench: fill: size %d outside 0..5GiB (one PUT)", c.Size)
	}
	if c.Concurrency == 0 {
		c.Concurrency = 16
	}
	if c.Concurrency < 1 {
		return fmt.Errorf("bench: fill: concurrency %d < 1", c.Concurrency)
	}
	if c.ReportEvery == 0 {
		c.ReportEvery = min(100_000, max(c.Objects/10, 1))
	}
	if c.ReportEvery < 1 {
		return fmt.Errorf("bench: fill: report-every %d < 1", c.ReportEvery)
	}
	return nil
}

// Fill PUTs Objects objects of Size bytes into Bucket with Concurrency workers and reports the
// throughput per ReportEvery objects and overall. Failed PUTs are counted by kind and not
// retried; Fill returns an error only for a bad configuration. The bucket must exist
// (Client.Check with create does that).
func Fill(ctx context.Context, c objclient.Client, cfg FillConfig) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	body, err := payload(cfg.Size)
	if err != nil {
		return nil, err
	}
	rec := newRecorder()
	cpu0 := cpuNow()
	start := time.Now()
	rec.reportEvery(cfg.ReportEvery, start, cfg.Progress)

	var next atomic.Int64 // next index to PUT, relative to First
	var wg sync.WaitGroup
	for range min(int64(cfg.Concurrency), cfg.Objects) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= cfg.Objects {
					return
				}
				key := ObjectKey(cfg.Prefix, cfg.First+i)
				t0 := time.Now()
				_, err := c.Put(ctx, cfg.Bucket, key, bytes.NewReader(body), cfg.Size, objclient.PutOptions{})
				d := time.Since(t0)
				switch {
				case err == nil:
					rec.ok(d, cfg.Size)
				case ctx.Err() != nil:
					return // interrupted: not a server error
				default:
					rec.fail(err)
				}
			}
		}()
	}
	wg.Wait()
	end := time.Now()
	el := end.Sub(start)
	put := rec.stats(el)
	r := &Report{
		Kind: "fill", Protocol: c.Protocol(), Endpoint: c.Endpoint(), Bucket: cfg.Bucket, Prefix: cfg.Prefix,
		Concurrency: cfg.Concurrency, ObjectSize: cfg.Size, Start: start, Seconds: round3(el.Seconds()),
		Ops:         map[string]*OpStats{"put": &put},
		Windows:     rec.windows(end),
		Interrupted: ctx.Err() != nil,
	}
	r.ClientCPU = cpuSince(cpu0, r.totalRequests(), el)
	return r, nil
}
