package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Companion is a bodiless object PutTogether commits with a PUT's object, in one batch.
type Companion struct {
	Name      meta.ObjectName
	Timestamp meta.Timestamp
	// Build returns the companion's metadata from the PUT's object as stored (as PutObject
	// would return it).
	Build func(stored meta.Object) meta.Object
	// If is checked against the version at Name in the commit: when it fails, neither object
	// is stored (meta.ErrPreconditionFailed).
	If meta.Precondition
	// Over (see nodeclient.Companion.Over): the companion replaces only nothing, a tombstone or
	// a version with this SysMeta key "true".
	Over string
}

// ErrApart: the objects of a PutTogether cannot commit together (they are not on one device,
// or its node does not commit companions). Nothing was written and the body was not read.
var ErrApart = errors.New("proxy: the objects cannot commit together")

// PutTogether stores obj at name, as PutObject does, and the companion c in the same commit:
// both are durable after one sync, or neither is, and each write pays one commit round instead
// of two in turn. That needs both names on the same one device (a ring of one replica: the
// embedded default always places them so), of a node that commits companions (Cairn's, in
// process); otherwise it returns ErrApart before reading body, and the caller writes the two
// one after the other.
//
// compErr says what became of c when the object was stored: nil (committed), meta.ErrConflict
// (a version as new or newer is at its name) or nodeclient.ErrCompanionRefused (c.Over).
func (p *Proxy) PutTogether(ctx context.Context, name meta.ObjectName, obj meta.Object, body io.Reader, opts PutOptions, c Companion) (stored meta.Object, compErr, err error) {
	ctx, pl, err := p.placeObject(ctx, name, true)
	if err != nil {
		return meta.Object{}, nil, fmt.Errorf("put %q: %w", name.Object, err)
	}
	cctx, cpl, err := p.placeObject(ctx, c.Name, true)
	if err != nil {
		return meta.Object{}, nil, fmt.Errorf("put %q: %w", c.Name.Object, err)
	}
	t, ok := together(pl, cpl)
	// A minted name written apart from this process's nodes is its register's to decide
	// (PutOptions.Fresh), which a commit together does not ask.
	if !ok || nodeclient.Policy(ctx) != nodeclient.Policy(cctx) || (opts.Fresh && !sole(pl)) {
		return meta.Object{}, nil, ErrApart
	}
	prepare(&obj, opts)
	listing, compListing := p.listingFor(name, pl), p.listingFor(c.Name, cpl)
	nopts := nodeclient.PutOptions{BeforeCommit: opts.BeforeCommit, If: opts.If, Fresh: opts.Fresh,
		Containers: listing.to(t.replica), Listed: listing.listed,
		Companion: &nodeclient.Companion{Name: c.Name, Timestamp: c.Timestamp, If: c.If, Over: c.Over,
			Containers: compListing.to(t.replica), Listed: compListing.listed,
			Build: func(o meta.Object) (meta.Object, error) { return c.Build(served(o)), nil },
		}}
	res, err := t.client.PutObject(ctx, t.dev.Name, pl.part, name, obj, body, nopts)
	if err != nil {
		return meta.Object{}, nil, fmt.Errorf("put %q: %w", name.Object, err)
	}
	p.releaseSegments(ctx, name, res.Previous, &res.Object)
	if res.Companion.Err == nil {
		p.releaseSegments(ctx, c.Name, res.Companion.Previous, &res.Companion.Object)
	}
	if err := listing.settle(ctx, res.Object.Listed(name.Object), false); err != nil {
		return meta.Object{}, nil, fmt.Errorf("put %q: %w", name.Object, err)
	}
	if res.Companion.Err == nil {
		if err := compListing.settle(ctx, res.Companion.Object.Listed(c.Name.Object), false); err != nil {
			return meta.Object{}, nil, fmt.Errorf("put %q: %w", c.Name.Object, err)
		}
	}
	return served(res.Object), res.Companion.Err, nil
}

// together returns the one target both placements write to, when they share it and its node
// commits companions. Only a ring of one replica qualifies: with more, a write that lost a
// primary would go to each name's own handoff, and those differ.
func together(a, b *placement) (target, bool) {
	if a.scheme != nil || b.scheme != nil || a.ring != b.ring || a.ring.Replicas() != 1 ||
		len(a.primaries) != 1 || len(b.primaries) != 1 {
		return target{}, false
	}
	t, u := a.primaries[0], b.primaries[0]
	if t.err != nil || u.err != nil || t.dev.Node != u.dev.Node || t.dev.Name != u.dev.Name {
		return target{}, false
	}
	cc, ok := t.client.(nodeclient.Companions)
	if !ok || !cc.CommitsCompanions(t.dev.Name) {
		return target{}, false
	}
	return t, true
}
