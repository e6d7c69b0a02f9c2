// Package proxy maps account, container and object operations onto the storage nodes that own
// them: it finds the partition of a name with the ring, sends writes to every replica and
// succeeds at quorum, reads from one replica and falls back to the others, and serves manifest
// objects (large objects stored as segments: whole objects, ranges of them, inline bytes or
// nested manifests) as one stream. Front ends call the proxy; the proxy
// never parses a client protocol and never touches a disk.
package proxy

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
)

// Config configures a Proxy.
type Config struct {
	Ring   *ring.Ring
	Dialer nodeclient.Dialer
	Logger *slog.Logger
	// ContainerCacheTTL is how long the proxy trusts that a container it has seen exists
	// (default 5s; negative disables the cache).
	ContainerCacheTTL time.Duration
	// SegmentGrace is how long the segments of a replaced or deleted manifest outlive it, so
	// that downloads already under way can finish (default 5m; negative: delete at once).
	SegmentGrace time.Duration
}

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.Ring == nil {
		return errors.New("proxy: no ring")
	}
	if err := c.Ring.Validate(); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	if c.Dialer == nil {
		return errors.New("proxy: no dialer")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ContainerCacheTTL == 0 {
		c.ContainerCacheTTL = 5 * time.Second
	}
	if c.SegmentGrace == 0 {
		c.SegmentGrace = 5 * time.Minute
	}
	return nil
}

// Proxy routes requests to storage nodes.
type Proxy struct {
	ring   *ring.Ring
	dialer nodeclient.Dialer
	log    *slog.Logger
	known  *containerCache
	grace  time.Duration
	later  *releaser
}

// New returns a Proxy.
func New(cfg Config) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Proxy{
		ring: cfg.Ring, dialer: cfg.Dialer, log: cfg.Logger,
		known: newContainerCache(cfg.ContainerCacheTTL),
		grace: cfg.SegmentGrace, later: &releaser{pending: map[*time.Timer]func(){}},
	}, nil
}

// Close deletes at once the segments still waiting out their grace period (call it once no
// request is being served), so that a clean shutdown leaves no garbage.
func (p *Proxy) Close() {
	p.later.flush()
}

// target is one replica of a partition, with the client that reaches it, or why none does.
type target struct {
	replica int // the replica's index in the ring's assignment
	dev     ring.Device
	client  nodeclient.Client
	err     error
}

// targets returns every replica of a partition, reachable or not: quorum is counted against the
// ring's replicas, so an unreachable one must count as a failure, not vanish.
func (p *Proxy) targets(part uint32) ([]target, error) {
	devs := p.ring.Nodes(part)
	ts := make([]target, 0, len(devs))
	reachable := 0
	for i, d := range devs {
		c, err := p.dialer.Dial(d.Node)
		if err != nil {
			p.log.Warn("cannot reach storage node", "node", d.Node, "err", err)
			err = fmt.Errorf("node %s: %v: %w", d.Node, err, meta.ErrUnavailable)
		} else {
			reachable++
		}
		ts = append(ts, target{replica: i, dev: d, client: c, err: err})
	}
	if reachable == 0 {
		return nil, fmt.Errorf("partition %d: no replica reachable: %w", part, meta.ErrUnavailable)
	}
	return ts, nil
}

func (p *Proxy) quorum() int { return p.ring.Replicas()/2 + 1 }

// listingFor assigns each replica of an object one replica of its container's listing to
// update, round robin as Swift's proxy does, so that with at least as many object replicas
// as listing replicas every listing replica hears of every write.
func (p *Proxy) listingFor(name meta.ObjectName) func(replica int) *nodeclient.ContainerUpdate {
	part := p.ring.Partition(name.Account, name.Container, "")
	devs := p.ring.Nodes(part)
	return func(replica int) *nodeclient.ContainerUpdate {
		d := devs[replica%len(devs)]
		return &nodeclient.ContainerUpdate{Node: d.Node, Device: d.Name, Part: part}
	}
}

// accountFor assigns each replica of a container one replica of its account's listing to
// update, round robin as for listingFor (Swift's proxy does the same with X-Account-Host).
func (p *Proxy) accountFor(account string) func(replica int) *nodeclient.AccountUpdate {
	part := p.ring.Partition(account, "", "")
	devs := p.ring.Nodes(part)
	return func(replica int) *nodeclient.AccountUpdate {
		d := devs[replica%len(devs)]
		return &nodeclient.AccountUpdate{Node: d.Node, Device: d.Name, Part: part}
	}
}

// fanOut runs op against every target and succeeds when a quorum does. Errors that are answers
// (not found, conflict, not empty) rather than failures win over unavailability when they reach
// quorum, so a client sees "not found" rather than "unavailable".
func fanOut(ts []target, quorum int, op func(t target) error) error {
	if len(ts) == 1 && ts[0].err == nil {
		return op(ts[0])
	}
	errs := make(chan error, len(ts))
	for _, t := range ts {
		if t.err != nil {
			errs <- t.err
			continue
		}
		go func() { errs <- op(t) }()
	}
	counts := map[error]int{}
	var firstErr error
	ok := 0
	for range ts {
		err := <-errs
		if err == nil {
			ok++
			continue
		}
		if firstErr == nil {
			firstErr = err
		}
		for _, s := range answerErrors {
			if errors.Is(err, s) {
				counts[s]++
			}
		}
	}
	if ok >= quorum {
		return nil
	}
	for _, s := range answerErrors {
		if counts[s] >= quorum {
			return s
		}
	}
	if firstErr != nil && ok == 0 {
		return firstErr
	}
	return fmt.Errorf("%d of %d replicas succeeded, need %d: %w", ok, len(ts), quorum, meta.ErrUnavailable)
}

// answerErrors are node errors that report a state of the data rather than a failure.
var answerErrors = []error{meta.ErrNotFound, meta.ErrConflict, meta.ErrNotEmpty, meta.ErrExists, meta.ErrInsufficientStorage, meta.ErrPreconditionFailed}

// firstAnswer asks each target in turn until one answers with success or an answer error.
func firstAnswer[T any](ts []target, op func(t target) (T, error)) (T, error) {
	var zero T
	var lastErr error
	for _, t := range ts {
		if t.err != nil {
			lastErr = t.err
			continue
		}
		v, err := op(t)
		if err == nil {
			return v, nil
		}
		lastErr = err
		if errors.Is(err, meta.ErrNotFound) && len(ts) > 1 {
			continue // another replica may have it (handoff, or a write that missed this one)
		}
		if isAnswer(err) {
			return zero, err
		}
	}
	return zero, lastErr
}

func isAnswer(err error) bool {
	for _, s := range answerErrors {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
