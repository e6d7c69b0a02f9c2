package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Reads that return the newest version (docs/consistency.md). A write of a replicated object
// is acknowledged once a quorum of its primaries holds it (placement.strict), so any quorum of
// the primaries includes one that holds the newest acknowledged version: a read that hears
// from a quorum and answers with the newest it heard of cannot miss an acknowledged write,
// even when the first primary it asks has just come back from being away (killed, paused, or
// cut off) and holds what was there before.
//
// The check costs one brief HEAD beside the read, sent to the second primary at the same time
// as the read goes to the first; only when they disagree, or one cannot answer, are more asked.
// When the newest version is not yet on a quorum (a write still landing, or one that failed
// after reaching some primaries), the read writes it back to the primaries it heard older
// versions from before it answers (the read phase of ABD's atomic register): a version a read
// has returned is never followed by an older one.
//
// When fewer than a quorum of the primaries can answer at all, the read asks the handoffs too
// and answers with the newest version any replica it reached holds: an answer that may miss a
// write acknowledged while the primaries it reached were away, preferred to a 503 for a name
// whose replicas are mostly down (issue 27: "a 503 only when no replica could answer").

// repairInline is the largest object a read copies to a stale primary before it answers;
// a larger one is copied after (a read of gigabytes does not wait for a copy of them).
const repairInline = 16 << 20

var errReplaced = errors.New("replaced since it was heard of")

// holdsOn asks t which version of name it holds: a version, a tombstone (Deleted, with its
// time), or nothing (Timestamp 0). It is brief: no manifest's segment list.
func holdsOn(ctx context.Context, pl *placement, t target, name meta.ObjectName) (meta.Object, error) {
	o, err := t.client.HeadObject(ctx, t.dev.Name, pl.part, name, nodeclient.HeadOptions{Brief: true})
	var gone *meta.DeletedError
	switch {
	case errors.As(err, &gone):
		return meta.Object{Timestamp: gone.At, Deleted: true}, nil
	case errors.Is(err, meta.ErrNotFound):
		return meta.Object{}, nil
	}
	return o, err
}

// holds is holdsOn under the node deadline, counting a failure against the node's health.
func (pl *placement) holds(ctx context.Context, t target, name meta.ObjectName) (meta.Object, error) {
	if t.err != nil {
		return meta.Object{}, t.err
	}
	var o meta.Object
	err := pl.call(ctx, t, true, func(ctx context.Context, t target) error {
		var err error
		o, err = holdsOn(ctx, pl, t, name)
		return err
	})
	return o, err
}

// heard is one replica's version in a fresh read's tally.
type heard struct {
	t target
	o meta.Object
}

// freshRead is read for a GET or HEAD of an object (op), answering with the newest version a
// quorum of the primaries holds; version returns what an answer of op holds, release frees
// one that is not returned.
func freshRead[T any](ctx context.Context, pl *placement, name meta.ObjectName, bounded bool,
	op func(context.Context, target) (T, error), version func(T) meta.Object, release func(T), alone func(T) bool) (T, error) {
	var zero T
	order := pl.readOrder()
	if !pl.strict || len(order) < 2 {
		return read(ctx, pl, bounded, op)
	}
	type vote struct {
		h   heard
		err error
	}
	var check chan vote
	sendCheck := func() {
		check = make(chan vote, 1)
		go func() {
			o, err := pl.holds(ctx, order[1], name)
			check <- vote{heard{order[1], o}, err}
		}()
	}
	// Under a read lease the first primary answers alone (lease.go): the check is sent beside
	// the read only when the node did not answer alone last time.
	leased := alone != nil && pl.leased() && pl.isHolder(order[0])
	rctx := ctx
	if leased {
		rctx = nodeclient.WithLeaseRead(ctx)
	}
	if !leased || !pl.p.expectAlone(order[0].dev.Node) {
		sendCheck()
	}
	v, served, err := readServed(rctx, pl, bounded, op)
	if leased && err == nil && pl.isHolder(served) {
		a := alone(v)
		pl.p.noteAlone(served.dev.Node, a)
		if a {
			return v, nil // a check sent beside it answers into its buffered channel unread
		}
	}
	if check == nil {
		sendCheck()
	}
	first := <-check
	if err != nil {
		// Not found is read's answer only on a quorum of the primaries saying so; anything
		// else is an answer of the node's (a bad range) or no replica could answer.
		return zero, err
	}
	got := version(v)
	primaries := map[int]heard{} // by replica: the quorum counts primaries only
	var handoffs []heard
	if served.handoff {
		handoffs = append(handoffs, heard{served, got})
	} else {
		primaries[served.replica] = heard{served, got}
	}
	if first.err == nil {
		primaries[first.h.t.replica] = first.h
	}
	if !pl.quorate(targetsOf(primaries)) {
		// The read or the check fell on a primary that could not answer: ask the others, at
		// once, and take the first answers that make a quorum.
		var rest []target
		for _, t := range order {
			if _, ok := primaries[t.replica]; !ok {
				rest = append(rest, pl.p.unsuppressed(t))
			}
		}
		votes := make(chan vote, len(rest))
		for _, t := range rest {
			go func() {
				o, err := pl.holds(ctx, t, name)
				votes <- vote{heard{t, o}, err}
			}()
		}
		for range rest {
			if pl.quorate(targetsOf(primaries)) {
				break // the others' answers go to the buffered channel unread
			}
			if a := <-votes; a.err == nil {
				primaries[a.h.t.replica] = a.h
			}
		}
	}
	if !pl.quorate(targetsOf(primaries)) {
		// Too few primaries can answer: the handoffs hold what was written while the others
		// were away; the newest any reachable replica holds is the best answer there is.
		for {
			h, ok := pl.handoff(-1)
			if !ok {
				break
			}
			if o, err := pl.holds(ctx, h, name); err == nil {
				handoffs = append(handoffs, heard{h, o})
			}
		}
	}
	newest := heard{served, got}
	for _, h := range primaries {
		if h.o.Timestamp > newest.o.Timestamp {
			newest = h
		}
	}
	for _, h := range handoffs {
		if h.o.Timestamp > newest.o.Timestamp {
			newest = h
		}
	}
	if newest.o.Timestamp > got.Timestamp {
		release(v)
		if newest.o.Deleted {
			ok, holders := pl.writeBack(ctx, name, newest, primaries)
			if !ok {
				return zero, fmt.Errorf("%q: the deletion %s holds could not be brought to a quorum: %w", name.Object, newest.t.dev.Node, meta.ErrUnavailable)
			}
			if err := pl.unlessHolderHas(ctx, holders); err != nil {
				return zero, err
			}
			return zero, fmt.Errorf("%q: %s holds a deletion newer than %s's version: %w",
				name.Object, newest.t.dev.Node, served.dev.Node, &meta.DeletedError{At: newest.o.Timestamp})
		}
		served = newest.t
		err := pl.call(ctx, served, bounded, func(ctx context.Context, t target) error {
			var err error
			v, err = op(ctx, t)
			return err
		})
		if err == nil && version(v).Timestamp < newest.o.Timestamp {
			release(v)
			err = fmt.Errorf("node %s answered an older version than it holds", served.dev.Node)
		}
		if err != nil {
			return zero, fmt.Errorf("%q: the newest version, on %s: %v: %w", name.Object, served.dev.Node, err, meta.ErrUnavailable)
		}
		newest = heard{served, version(v)}
	}
	ok, holders := pl.writeBack(ctx, name, newest, primaries)
	if !ok {
		release(v)
		return zero, fmt.Errorf("%q: the newest version, on %s, could not be brought to a quorum: %w", name.Object, newest.t.dev.Node, meta.ErrUnavailable)
	}
	if newest.o.Timestamp > 0 {
		if err := pl.unlessHolderHas(ctx, holders); err != nil {
			release(v)
			return zero, err
		}
	}
	return v, nil
}

// writeBack brings the version a read answers with to the primaries it heard older ones from.
// It reports whether the version is then on a quorum of the primaries, which the read needs
// before it answers when it heard from a quorum: otherwise a later read that misses the
// replicas holding it could answer an older version (the read phase of ABD's atomic
// register; found by internal/readlease's random histories, where a write-back to a replica
// that had just crashed left a version a read returned on one replica only). A write-back
// that is only a repair (the version is on a quorum already, or too few primaries answered
// for any quorum) is waited for as before but need not succeed. Nothing is done when the
// primaries agree (the common case).
func (pl *placement) writeBack(ctx context.Context, name meta.ObjectName, newest heard, heardFrom map[int]heard) (bool, []target) {
	var stale, holders []target
	for _, h := range heardFrom {
		if h.o.Timestamp < newest.o.Timestamp {
			stale = append(stale, h.t)
		} else {
			holders = append(holders, h.t)
		}
	}
	if len(stale) == 0 {
		return true, holders
	}
	if pl.quorate(holders) || !pl.quorate(targetsOf(heardFrom)) {
		// A repair (the version is on a quorum already), or too few primaries answered for
		// any quorum (the read answers what it has, above).
		return true, append(holders, pl.repair(ctx, name, newest, stale, false)...)
	}
	holders = append(holders, pl.repair(ctx, name, newest, stale, true)...)
	if !pl.quorate(holders) {
		// The primaries not heard from may take it where those heard from could not.
		var unheard []target
		for _, t := range pl.primaries {
			if _, ok := heardFrom[t.replica]; !ok && t.dev != newest.t.dev {
				unheard = append(unheard, pl.p.unsuppressed(t))
			}
		}
		if len(unheard) > 0 {
			holders = append(holders, pl.repair(ctx, name, newest, unheard, true)...)
		}
	}
	return pl.quorate(holders), holders
}

// targetsOf is the replicas of a tally.
func targetsOf(m map[int]heard) []target {
	out := make([]target, 0, len(m))
	for _, h := range m {
		out = append(out, h.t)
	}
	return out
}

// repair copies the newest version (or its deletion) to the stale primaries and returns those
// that then hold it or a newer one. needed: the read waits on the copy, whatever the
// object's size; otherwise an object larger than repairInline is copied after the read has
// answered. A manifest is the replicator's to copy (its stored form may keep its segment list
// apart): it is not copied here, and counts no copies.
func (pl *placement) repair(ctx context.Context, name meta.ObjectName, newest heard, stale []target, needed bool) []target {
	p := pl.p
	p.log.Debug("read found stale replicas", "object", name.Object, "partition", pl.part, "newest", newest.o.Timestamp, "on", newest.t.dev.Node, "stale", len(stale), "needed", needed)
	type copied struct {
		t  target
		ok bool
	}
	copies := make(chan copied, len(stale))
	count := func() []target {
		var took []target
		for range stale {
			if c := <-copies; c.ok {
				took = append(took, c.t)
			}
		}
		return took
	}
	if newest.o.Deleted {
		for _, t := range stale {
			go func() {
				err := pl.call(ctx, t, true, func(ctx context.Context, t target) error {
					_, err := t.client.DeleteObject(ctx, t.dev.Name, pl.part, name, newest.o.Timestamp, nodeclient.DeleteOptions{})
					return err
				})
				// Not found: the tombstone was written all the same; a conflict: the node
				// holds a newer version.
				ok := err == nil || errors.Is(err, meta.ErrNotFound) || errors.Is(err, meta.ErrConflict)
				if !ok {
					p.log.Debug("write-back of a deletion failed", "object", name.Object, "node", t.dev.Node, "err", err)
				}
				copies <- copied{t, ok}
			}()
		}
		return count()
	}
	if newest.o.IsManifest() {
		return nil
	}
	copyTo := func(ctx context.Context) {
		src := newest.t
		open := func(ctx context.Context) (*nodeclient.ObjectReader, error) {
			var r *nodeclient.ObjectReader
			err := pl.call(ctx, src, false, func(ctx context.Context, t target) error {
				var err error
				r, err = t.client.GetObject(ctx, t.dev.Name, pl.part, name, nil)
				return err
			})
			if err == nil && r.Object.Timestamp != newest.o.Timestamp {
				r.Close()
				err = errReplaced // its writer brings the newer one to a quorum
			}
			return r, err
		}
		var body []byte
		var obj meta.Object
		if newest.o.Size <= repairInline {
			r, err := open(ctx)
			if err == nil {
				body, err = io.ReadAll(r)
				r.Close()
				obj = r.Object
			}
			if err != nil {
				p.log.Debug("write-back: reading the newest version failed", "object", name.Object, "node", src.dev.Node, "err", err)
				for _, t := range stale {
					copies <- copied{t, false}
				}
				return
			}
		}
		for _, t := range stale {
			go func() {
				ok := false
				defer func() { copies <- copied{t, ok} }()
				in, o := io.Reader(bytes.NewReader(body)), obj
				if body == nil {
					// A large object streams from the newest replica anew to each.
					r, err := open(ctx)
					if err != nil {
						return
					}
					defer r.Close()
					in, o = r, r.Object
				}
				err := pl.call(ctx, t, false, func(ctx context.Context, t target) error {
					_, err := t.client.PutObject(ctx, t.dev.Name, pl.part, name, o, in, nodeclient.PutOptions{})
					return err
				})
				ok = err == nil || errors.Is(err, meta.ErrConflict)
				if !ok {
					p.log.Debug("write-back failed", "object", name.Object, "node", t.dev.Node, "err", err)
				}
			}()
		}
	}
	if needed || newest.o.Size <= repairInline {
		copyTo(ctx)
		return count()
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		defer cancel()
		copyTo(ctx)
		count()
	}()
	return nil
}
