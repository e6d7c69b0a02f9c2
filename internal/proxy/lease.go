package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/readlease"
)

// Read leases, the proxy's side (docs/consistency.md, "Read leases"; internal/readlease). A
// replicated object's first primary P may answer a GET alone while it holds a lease from the
// other primaries. For that to stay true, the proxy never answers what P may not know without
// revoking P's lease first:
//
//   - a write acknowledged without P's success (P down, past its deadline, refusing it, or a
//     handoff in its place);
//   - a read that answers a version P was not seen to hold (P out of reach, or behind, and
//     not brought up to date by the read's write-back).
//
// The proxy asks the primaries that hold the version to revoke P for the partition, and once
// one answers it waits what that one says P's last grant may still run. Only such degraded
// operations wait, and a partition revoked already waits no more.

func leaseConfig(on bool) *readlease.Config {
	if !on {
		return nil
	}
	c := readlease.DefaultConfig(3)
	return &c
}

// leased reports whether the placement's reads may be answered alone by its first primary,
// and its writes must revoke: an object of a replicated policy, on a proxy with ReadLeases.
func (pl *placement) leased() bool {
	return pl.strict && pl.p.leases != nil && len(pl.primaries) > 1
}

// holderName is the first primary's device as leases name it.
func (pl *placement) holderName() string { return pl.holderNameAt(0) }

// holderNameAt is the device of primaries[i] as leases name it.
func (pl *placement) holderNameAt(i int) string {
	h := pl.primaries[i].dev
	return h.Node + "/" + h.Name
}

// isHolder reports whether t is the first primary itself (not a handoff in its place).
func (pl *placement) isHolder(t target) bool { return pl.isHolderAt(t, 0) }

func (pl *placement) isHolderAt(t target, i int) bool {
	return !t.handoff && t.replica == i && t.dev == pl.primaries[i].dev
}

// unlessHolderHas is both rules: before the proxy answers what the primaries in holders hold
// (a write they took; the version a read answers, they held it or took it back), the first
// primary's lease is revoked at them unless it is among them. While the ring changes, the
// first primary of the ring before the change is revoked the same way (a node still on that
// ring may hold a lease on it). It fails with ErrUnavailable (a write stored, its outcome
// unknown to the client; a read not answered) when none of them could revoke.
func (pl *placement) unlessHolderHas(ctx context.Context, holders []target) error {
	if !pl.leased() {
		return nil
	}
	if err := pl.revokeUnlessHas(ctx, 0, holders, func(t target) bool { return t.replica < pl.own() }); err != nil {
		return err
	}
	if pl.previous == nil || pl.previous[0] == 0 {
		return nil
	}
	// Only the previous ring's primaries grant its first primary a lease: only they can
	// revoke it.
	return pl.revokeUnlessHas(ctx, pl.previous[0], holders, func(t target) bool { return slices.Contains(pl.previous, t.replica) })
}

// revokeUnlessHas revokes the lease of primaries[h] at those of holders that grant it (in),
// unless it is among holders itself.
func (pl *placement) revokeUnlessHas(ctx context.Context, h int, holders []target, in func(target) bool) error {
	if slices.ContainsFunc(holders, func(t target) bool { return pl.isHolderAt(t, h) }) {
		return nil
	}
	return pl.revokeHolder(ctx, h, slices.DeleteFunc(slices.Clone(holders), func(t target) bool { return !in(t) }))
}

// revokeHolder revokes the lease of primaries[h] for the partition at the given primaries
// (which hold what is about to be answered), and waits out what the first of them to answer
// says the lease may still run.
func (pl *placement) revokeHolder(ctx context.Context, h int, at []target) error {
	holder := pl.holderNameAt(h)
	type answer struct {
		wait time.Duration
		err  error
	}
	answers := make(chan answer, len(at))
	n := 0
	for _, t := range at {
		if pl.isHolderAt(t, h) || t.err != nil {
			continue
		}
		n++
		go func() {
			var wait time.Duration
			err := pl.call(ctx, t, true, func(ctx context.Context, t target) error {
				l, ok := t.client.(nodeclient.Leases)
				if !ok {
					return nodeclient.ErrNoLeases
				}
				var err error
				wait, err = l.RevokeLease(ctx, t.dev.Name, pl.part, holder)
				return err
			})
			if errors.Is(err, nodeclient.ErrNoLeases) {
				// A granter without leases never granted one: the holder has none to revoke.
				err, wait = nil, 0
			}
			answers <- answer{wait, err}
		}()
	}
	var lastErr error
	for range n {
		a := <-answers // the others' answers go to the buffered channel unread
		if a.err != nil {
			lastErr = a.err
			continue
		}
		wait := pl.p.leases.WaitFor(a.wait)
		if wait > 0 {
			pl.p.log.Debug("waiting out a revoked read lease", "holder", holder, "partition", pl.part, "wait", wait)
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	return fmt.Errorf("revoking the read lease of %s for partition %d: %v: %w", holder, pl.part, lastErr, meta.ErrUnavailable)
}

// expectAlone reports whether node's last lease read was answered alone: a read then goes to
// it without the check beside it, which it makes only if the node does not answer alone.
func (p *Proxy) expectAlone(node string) bool {
	v, ok := p.alone.Load(node)
	return ok && v.(bool)
}

func (p *Proxy) noteAlone(node string, alone bool) {
	if p.expectAlone(node) != alone {
		p.alone.Store(node, alone)
	}
}
