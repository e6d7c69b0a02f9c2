package readlease

import (
	"maps"
	"slices"
	"time"
)

// Granter is one device's side as a later primary of partitions: when it last granted each
// holder, which partitions it revoked from whom, and to which holders it has replicated since
// it started. Its state is not durable: a restarted node makes a new Granter, which grants
// nothing until it has replicated to the holder again and makes revocations wait out a lease
// from its start.
type Granter struct {
	cfg  Config
	self string
	ring Ring
	// started: the process's start (no grant of this granter's from before it can outlive
	// started+Lease); since: the start or the last ring change.
	started, since time.Time
	to             map[string]*grantsTo
}

type grantsTo struct {
	lastGrant time.Time
	ready     bool // a full pass to the holder, begun at or after since, has completed
	revoked   map[uint32]revocation
}

// revocation: when a partition was revoked, and the last grant that covered it then (later
// grants name it revoked), which a repeated revocation waits out instead of the newest grant.
type revocation struct {
	at, covered time.Time
}

// NewGranter is the granter state of device self, started at now on ring.
func NewGranter(cfg Config, self string, ring Ring, now time.Time) *Granter {
	return &Granter{cfg: cfg, self: self, ring: ring, started: now, since: now, to: map[string]*grantsTo{}}
}

// Reset is a ring change: no holder is granted again until a full pass to it, begun after
// now, has completed. Revocations and the time of the last grants stay.
func (g *Granter) Reset(ring Ring, now time.Time) {
	g.ring = ring
	g.since = now
	for _, t := range g.to {
		t.ready = false
	}
}

// Ring is the version of the ring the granter grants on now.
func (g *Granter) Ring() string { return g.ring.Version() }

// CrossRing is the rule for a request about part (a write, a read, or a read's write-back)
// from a proxy that uses the rings of versions from (one; two while a ring change is under
// way, when it needs a quorum of each). A proxy revokes the first primaries of its own rings
// only; if this device's ring is not among them, it revokes its own ring's first primary for
// part (when it is one of the later primaries) and returns how long the answer must wait, on
// this device's clock, for the grant that covered it to run out.
//
// The grants of a ring this device left (or a previous life granted on) need no such rule:
// every proxy keeps a ring it replaced, and revokes its first primaries, until every node has
// had the new ring for longer than a lease (docs/consistency.md, "Ring changes").
func (g *Granter) CrossRing(now time.Time, part uint32, from ...string) time.Duration {
	if slices.Contains(from, g.ring.Version()) {
		return 0
	}
	prim := g.ring.Primaries(part)
	if len(prim) < 2 || prim[0] == g.self || !slices.Contains(prim[1:], g.self) {
		return 0
	}
	return g.Revoke(now, prim[0], part)
}

func (g *Granter) holder(name string) *grantsTo {
	t := g.to[name]
	if t == nil {
		t = &grantsTo{revoked: map[uint32]revocation{}}
		g.to[name] = t
	}
	return t
}

// Grant answers a renewal at now; holds reports whether this device holds a version the
// holder asks about.
func (g *Granter) Grant(now time.Time, r Renewal, holds func(Version) bool) Grant {
	out := Grant{Holder: r.Holder, Granter: g.self, Seq: r.Seq}
	for _, v := range r.Settle {
		if holds(v) {
			out.Held = append(out.Held, v)
		}
	}
	t := g.holder(r.Holder)
	if r.Granter != g.self || r.Ring != g.ring.Version() || !t.ready {
		return out
	}
	t.lastGrant = now
	out.Granted = true
	out.Revoked = slices.Sorted(maps.Keys(t.revoked))
	return out
}

// Revoke revokes holder's lease for part at now, and returns how long the holder's last grant
// from this device that covered part may still run (see Config.WaitFor). A partition revoked
// already waits out the grant that covered it then, which has usually run out: only the first
// degraded operation after a grant waits.
func (g *Granter) Revoke(now time.Time, holder string, part uint32) time.Duration {
	t := g.holder(holder)
	r, ok := t.revoked[part]
	if !ok {
		r.covered = t.lastGrant
	}
	// The newest revocation counts: only a pass begun after it clears the partition.
	r.at = now
	t.revoked[part] = r
	covered := r.covered
	if covered.Before(g.started) {
		// Grants of an earlier life of this device ran out by its start plus a lease.
		covered = g.started
	}
	return max(0, covered.Add(g.cfg.Lease).Sub(now))
}

// Replicated records that a replication pass of part to holder, begun at begun, has
// completed: a revocation of part from before it is cleared.
func (g *Granter) Replicated(holder string, part uint32, begun time.Time) {
	t := g.to[holder]
	if t == nil {
		return
	}
	if r, ok := t.revoked[part]; ok && r.at.Before(begun) {
		delete(t.revoked, part)
	}
}

// FullPass records that a full replication pass to holder, begun at begun, has completed for
// every partition they share: the holder may be granted again, and revocations from before it
// are cleared.
func (g *Granter) FullPass(holder string, begun time.Time) {
	t := g.holder(holder)
	if !begun.Before(g.since) {
		t.ready = true
	}
	for part, r := range t.revoked {
		if r.at.Before(begun) {
			delete(t.revoked, part)
		}
	}
}
