package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"

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
// Here the first replica reachable decides: a write it refuses goes no further and leaves
// nothing anywhere. A write it takes is then made on the other replicas without the condition,
// ordered by timestamp only: they follow the first replica's decisions, and one of them may
// not have received the previous decided version yet (its writer is still on its way) when
// the next arrives. A replica that already holds a newer version (ErrConflict) counts as
// written, since in a chain of compare-and-swaps that version was decided after this one and
// built on it. Reads ask replicas in the same order, so they see what the first decided.
// Success needs a quorum, as PutObject's. Every write of such an object must go through here.
//
// The order holds while proxies agree on which replicas are reachable, and while the first
// replica is not behind the others: a proxy that cannot reach it makes the next one decide
// (and a proxy that can may decide differently at the same time), and a replica that comes
// back after missing writes decides on the old version it holds until it is brought up to
// date. Proxies' clocks must agree, as for every write: a writer whose clock is behind the
// version it replaces gets ErrConflict from the first replica, and tries again later.
func (p *Proxy) PutObjectInOrder(ctx context.Context, name meta.ObjectName, obj meta.Object, data []byte, opts PutOptions) (meta.Object, error) {
	if err := p.requireContainer(ctx, name.Account, name.Container); err != nil {
		return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
	}
	obj.Timestamp = meta.Now()
	obj.Size = int64(len(data))
	part := p.ring.Partition(name.Account, name.Container, name.Object)
	ts, err := p.targets(part)
	if err != nil {
		return meta.Object{}, err
	}
	listing := p.listingFor(name)
	var (
		decided *nodeclient.PutResult // the first replica's answer, once one took the write
		written int
		lastErr error
	)
	for _, t := range ts {
		err := t.err
		if err == nil {
			popts := nodeclient.PutOptions{BeforeCommit: opts.BeforeCommit, If: opts.If, Container: listing(t.replica)}
			if decided != nil {
				popts.If = meta.Precondition{}
			}
			var res nodeclient.PutResult
			res, err = t.client.PutObject(ctx, t.dev.Name, part, name, obj, bytes.NewReader(data), popts)
			if err == nil && decided == nil {
				decided = &res
			}
			if err == nil || decided != nil && errors.Is(err, meta.ErrConflict) {
				written++
				continue
			}
		}
		lastErr = err
		if decided == nil && isAnswer(err) {
			// The deciding replica refused (a failed condition, a newer version, no
			// container): nothing was written, and nothing may be.
			return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
		}
	}
	if written < p.quorum() {
		if lastErr == nil {
			lastErr = meta.ErrUnavailable
		}
		return meta.Object{}, fmt.Errorf("put %q: %d of %d replicas: %w", name.Object, written, len(ts), lastErr)
	}
	p.releaseSegments(ctx, name, decided.Previous, &decided.Object)
	return decided.Object.AsServed(), nil
}
