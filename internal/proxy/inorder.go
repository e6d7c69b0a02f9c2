package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// PutObjectInOrder stores a small object on its replicas one after another, in ring order, for
// a compare-and-swap between proxies (opts.If on the version a writer read) that must pick
// exactly one winner. PutObject writes replicas in parallel and each decides the condition on
// its own, so that of two writers racing on the same version each may win at some replicas:
// the loser is told it failed while its version stays on a minority, and if that minority
// holds the first replica, which every read asks first, readers see the loser's version and
// not the winner's, and every later compare-and-swap fails at a quorum.
//
// Here the first primary reachable decides: a write it refuses goes no further and leaves
// nothing anywhere. A write it takes is then made on the other primaries (a handoff in the
// place of one that fails, as PutObject's) without the condition, ordered by timestamp only:
// they follow the first replica's decisions, and one of them may not have received the
// previous decided version yet (its writer is still on its way) when the next arrives. A
// replica that already holds a newer version (ErrConflict) counts as written, since in a chain
// of compare-and-swaps that version was decided after this one and built on it. Reads ask the
// primaries in the same order (unless this proxy saw the first fail lately), so they see what
// it decided. Success needs a quorum, as PutObject's. Every write of such an object must go
// through here.
//
// The order holds while proxies agree on which replicas are reachable, and while the first
// replica is not behind the others: a proxy that cannot reach it makes the next one decide
// (and a proxy that can may decide differently at the same time), and a replica that comes
// back after missing writes decides on the old version it holds until replication brings it
// up to date. Proxies' clocks must agree, as for every write: a writer whose clock is behind
// the version it replaces gets ErrConflict from the first replica, and tries again later.
func (p *Proxy) PutObjectInOrder(ctx context.Context, name meta.ObjectName, obj meta.Object, data []byte, opts PutOptions) (meta.Object, error) {
	ctx, pl, err := p.placeObject(ctx, name, true)
	if err != nil {
		return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
	}
	obj.Timestamp = meta.Now()
	obj.Size = int64(len(data))
	obj.SysMeta = meta.WithoutEC(obj.SysMeta)
	if pl.scheme != nil {
		return p.putInOrderEC(ctx, pl, name, obj, data, opts)
	}
	listing := p.listingFor(name, pl)
	if !opts.If.IsZero() && pl.ring.Replicas() > 1 {
		// The name's register decides, where the nodes keep registers (decided.go).
		res, err := p.putDecided(ctx, pl, name, obj, bytes.NewReader(data), opts, func(t target) nodeclient.PutOptions {
			return nodeclient.PutOptions{BeforeCommit: opts.BeforeCommit, Containers: listing.to(t.replica), Listed: listing.listed}
		})
		if !errors.Is(err, ErrNoRegisters) {
			if err != nil {
				return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
			}
			p.releaseSegments(ctx, name, res.Previous, &res.Object)
			if err := listing.settle(ctx, res.Object.Listed(name.Object), false); err != nil {
				return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
			}
			return served(res.Object), nil
		}
	}
	put := func(t target, cond meta.Precondition) (nodeclient.PutResult, error) {
		var res nodeclient.PutResult
		err := pl.call(ctx, t, true, func(ctx context.Context, t target) error {
			var err error
			res, err = t.client.PutObject(ctx, t.dev.Name, pl.part, name, obj, bytes.NewReader(data),
				nodeclient.PutOptions{BeforeCommit: opts.BeforeCommit, If: cond, Containers: listing.to(t.replica), Listed: listing.listed})
			return err
		})
		return res, err
	}

	followers := slices.Clone(pl.primaries)
	var decided nodeclient.PutResult
	var decider target
	var lastErr error
	found := false
	for i, t := range followers {
		if t.err != nil {
			lastErr = t.err
			continue
		}
		res, err := put(t, opts.If)
		if err == nil {
			decided, decider, found = res, t, true
			followers = slices.Delete(followers, i, i+1)
			break
		}
		if isAnswer(err) || ctx.Err() != nil {
			// The deciding replica refused (a failed condition, a newer version, no
			// container): nothing was written, and nothing may be.
			return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
		}
		lastErr = err
		followers[i].err = err // its share goes to a handoff below
	}
	if !found {
		if lastErr == nil {
			lastErr = meta.ErrUnavailable
		}
		return meta.Object{}, fmt.Errorf("put %q: no replica took it: %w", name.Object, lastErr)
	}

	type outcome struct {
		landed target
		err    error
	}
	outs := make(chan outcome, len(followers))
	for _, t := range followers {
		go func() {
			landed, err := pl.withHandoffs(ctx, t, func(t target) error {
				_, err := put(t, meta.Precondition{})
				return err
			})
			outs <- outcome{landed, pl.counted(landed, err)}
		}()
	}
	written := 1
	took := []target{decider}
	for range followers {
		if o := <-outs; o.err == nil || errors.Is(o.err, meta.ErrConflict) {
			written++
			took = append(took, o.landed)
		} else {
			lastErr = o.err
		}
	}
	if !pl.quorate(took) {
		return meta.Object{}, fmt.Errorf("put %q: %d of %d replicas: %w", name.Object, written, len(pl.primaries), lastErr)
	}
	if err := pl.unlessHolderHas(ctx, took); err != nil {
		return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
	}
	p.releaseSegments(ctx, name, decided.Previous, &decided.Object)
	if err := listing.settle(ctx, decided.Object.Listed(name.Object), false); err != nil {
		return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
	}
	out := decided.Object.AsServed()
	out.SysMeta = meta.WithoutEC(out.SysMeta)
	return out, nil
}
