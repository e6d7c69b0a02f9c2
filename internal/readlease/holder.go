package readlease

import (
	"maps"
	"slices"
	"time"
)

// Holder is one device's side as the first primary of its partitions: the grants it holds
// from each granter, and the names it has not yet seen settled. Its state is not durable: a
// restarted node makes a new Holder.
type Holder struct {
	cfg  Config
	self string
	ring Ring
	// since: when the holder started or last forgot what it had unsettled (a start, a ring
	// change, too many names); a push pass must have begun after it.
	since     time.Time
	seq       uint64
	from      map[string]*grantsFrom
	unsettled map[nameKey]*mark
}

type nameKey struct {
	part uint32
	name string
}

type grantsFrom struct {
	until    time.Time            // the grants from this granter end here (exclusive)
	revoked  map[uint32]bool      // partitions it refuses, as of its newest grant
	newest   uint64               // the newest grant taken (an older one arriving late is stale)
	pending  map[uint64]time.Time // renewals sent and not answered: when each was sent
	lastSent time.Time
	pushed   bool // a full push pass to this granter, begun at or after since, has completed
}

type mark struct {
	version string
	held    map[string]bool // granters seen holding version
}

// NewHolder is the holder state of device self, started at now, whose granters are peers
// (every device that shares a partition with it as a later primary of a partition it is the
// first primary of).
func NewHolder(cfg Config, self string, ring Ring, peers []string, now time.Time) *Holder {
	h := &Holder{cfg: cfg, self: self, unsettled: map[nameKey]*mark{}}
	h.Reset(ring, peers, now)
	return h
}

// Reset is a ring change: the holder starts over with the new ring's granters. What it marked
// unsettled stays so.
func (h *Holder) Reset(ring Ring, peers []string, now time.Time) {
	h.ring = ring
	h.since = now
	h.from = map[string]*grantsFrom{}
	for _, p := range peers {
		if p != h.self {
			h.from[p] = &grantsFrom{pending: map[uint64]time.Time{}}
		}
	}
}

// Renewals returns the renewals due at now, at most one per granter every Renew, each asking
// about the unsettled names of the partitions that granter is a primary of.
func (h *Holder) Renewals(now time.Time) []Renewal {
	var out []Renewal
	for _, peer := range slices.Sorted(maps.Keys(h.from)) {
		g := h.from[peer]
		if !g.lastSent.IsZero() && now.Sub(g.lastSent) < h.cfg.Renew {
			continue
		}
		// A request older than a lease can extend nothing.
		for seq, sent := range g.pending {
			if now.Sub(sent) >= h.cfg.Lease {
				delete(g.pending, seq)
			}
		}
		h.seq++
		g.pending[h.seq] = now
		g.lastSent = now
		out = append(out, Renewal{Holder: h.self, Granter: peer, Seq: h.seq, Ring: h.ring.Version(), Settle: h.settleFor(peer)})
	}
	return out
}

func (h *Holder) settleFor(peer string) []Version {
	var out []Version
	for k, m := range h.unsettled {
		if len(out) == h.cfg.MaxSettlePerRenewal {
			break
		}
		if !m.held[peer] && slices.Contains(h.ring.Primaries(k.part), peer) {
			out = append(out, Version{Part: k.part, Name: k.name, Version: m.version})
		}
	}
	slices.SortFunc(out, func(a, b Version) int {
		if a.Part != b.Part {
			return int(a.Part) - int(b.Part)
		}
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// Granted takes a granter's answer to a renewal, at now.
func (h *Holder) Granted(now time.Time, g Grant) {
	from := h.from[g.Granter]
	if from == nil || g.Holder != h.self {
		return
	}
	sent, ok := from.pending[g.Seq]
	if !ok {
		return // unknown, answered already, or from before a reset
	}
	delete(from.pending, g.Seq)
	// What a granter held, it holds (or newer): a late answer still settles.
	for _, v := range g.Held {
		h.held(g.Granter, v)
	}
	if g.Seq <= from.newest {
		return // an older grant than one taken: its revocations are stale
	}
	from.newest = g.Seq
	if !g.Granted {
		from.until = time.Time{}
		from.revoked = nil
		return
	}
	from.revoked = map[uint32]bool{}
	for _, p := range g.Revoked {
		from.revoked[p] = true
	}
	if end := sent.Add(h.cfg.holderLease()); end.After(from.until) {
		from.until = end
	}
}

func (h *Holder) held(granter string, v Version) {
	k := nameKey{v.Part, v.Name}
	m := h.unsettled[k]
	if m == nil || m.version != v.Version || !slices.Contains(h.ring.Primaries(v.Part), granter) {
		return
	}
	m.held[granter] = true
	if 1+len(m.held) >= h.cfg.quorum() {
		delete(h.unsettled, k)
	}
}

// Wrote marks a name unsettled at a new version; the edge calls it before the version becomes
// visible to reads (and leaves the mark if the write then fails: a mark only makes reads
// slower).
func (h *Holder) Wrote(part uint32, name, version string, now time.Time) {
	if prim := h.ring.Primaries(part); len(prim) == 0 || prim[0] != h.self {
		// Only a first primary answers alone; a ring change that makes this device one
		// starts over (Reset), and the push pass it then waits for settles what it holds.
		return
	}
	k := nameKey{part, name}
	if _, ok := h.unsettled[k]; !ok && len(h.unsettled) >= h.cfg.MaxUnsettled {
		// Too many to track: forget them, and answer alone again only after a push pass to
		// every granter has put all this device holds on them.
		h.unsettled = map[nameKey]*mark{}
		h.since = now
		for _, g := range h.from {
			g.pushed = false
		}
	}
	h.unsettled[k] = &mark{version: version, held: map[string]bool{}}
}

// Pushed records that a full replication pass from this device to granter peer, begun at
// begun, has completed: everything this device held when it began is on peer.
func (h *Holder) Pushed(peer string, begun time.Time) {
	if g := h.from[peer]; g != nil && !begun.Before(h.since) {
		g.pushed = true
	}
}

// CanAnswer reports whether the device may answer a read of name in part alone at now: it is
// the partition's first primary, holds a grant for it from every other primary, and the
// name's version is settled. Ask after reading the version.
func (h *Holder) CanAnswer(now time.Time, part uint32, name string) bool {
	return h.Refusal(now, part, name) == Answers
}

// Why a holder cannot answer alone (Refusal).
const (
	Answers   = ""
	NotFirst  = "not the first primary"
	NoGrant   = "no grant"
	Expired   = "grant expired"
	Revoked   = "revoked"
	NotPushed = "not replicated to its granters since it started"
	Unsettled = "version not yet settled"
)

// Refusal is why the device may not answer a read of name in part alone at now (Answers: it
// may), for metrics and tests.
func (h *Holder) Refusal(now time.Time, part uint32, name string) string {
	prim := h.ring.Primaries(part)
	if len(prim) < 2 || prim[0] != h.self {
		return NotFirst
	}
	for _, peer := range prim[1:] {
		g := h.from[peer]
		switch {
		case g == nil || g.until.IsZero():
			return NoGrant
		case !g.pushed:
			return NotPushed
		case !now.Before(g.until):
			return Expired
		case g.revoked[part]:
			return Revoked
		}
	}
	if _, unsettled := h.unsettled[nameKey{part, name}]; unsettled {
		return Unsettled
	}
	return Answers
}

// Unsettled is the number of names waiting to be settled.
func (h *Holder) Unsettled() int { return len(h.unsettled) }
