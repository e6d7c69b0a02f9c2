package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
)

// Where requests go. A request to a partition goes to its primaries (the ring's devices for
// it); a primary that cannot be reached, fails, or has failed often lately (health) is replaced
// by the partition's next handoff, as Swift's proxy does, so that a write still reaches as many
// devices as the ring has replicas and a read still finds a copy. Handoffs are computed only
// when one is needed: the common request never walks the ring for them.

// target is one device a request goes to, with the client that reaches it, or why none does.
type target struct {
	replica int // the primary's index in the ring's assignment (a handoff keeps the one it replaces)
	dev     ring.Device
	client  nodeclient.Client
	err     error
	// suppressed: err is only that the node failed often lately (health); a read that finds
	// nothing elsewhere still asks it (placement.unsuppressed) before it gives up.
	suppressed bool
	handoff    bool // standing in for the primary of replica
}

// placement is the devices of one partition for one request.
type placement struct {
	p         *Proxy
	ring      *ring.Ring
	part      uint32
	primaries []target
	// scheme is the erasure code of an erasure-coded policy's placement (nil: replicas):
	// primary i holds fragment archive i.
	scheme *ec.Scheme
	// strict: a quorum counts primaries only (an object of a replicated policy). A handoff
	// still takes what a failed primary cannot, so the write is as durable, but it is not
	// where reads look first: a write acknowledged on handoffs could be missed by a read
	// whose quorum of primaries includes one that was away (fresh.go).
	strict bool
	// previous: while the ring's last change may be under way, the indexes in primaries of
	// the partition's primaries before it (those that are not primaries now follow the ring's
	// own in primaries): a strict quorum is then a quorum of each (joint quorums, see
	// joinPrevious). nil otherwise.
	previous []int
	owned    int // with previous: how many of primaries are the ring's own

	mu       sync.Mutex // guards the handoffs, which concurrent replicas draw from
	handoffs []target
	computed bool
	next     int
}

// partition is the partition of r that holds an account, container or object: the one of its
// names in the cluster, which are Swift's (meta.SwiftAccount, meta.SwiftObject), so that Cairn
// places data where Swift's proxy looks for it and finds a Swift cluster's data where Swift put
// it.
func partition(r *ring.Ring, account, container, object string) uint32 {
	if object != "" {
		return r.Partition(meta.ObjectName{Account: account, Container: container, Object: object}.Placed())
	}
	return r.Partition(meta.SwiftAccount(account), container, "")
}

// place returns where a request for part of r goes.
func (p *Proxy) place(r *ring.Ring, part uint32) *placement {
	devs := r.Nodes(part)
	pl := &placement{p: p, ring: r, part: part, primaries: make([]target, len(devs))}
	for i, d := range devs {
		pl.primaries[i] = p.target(i, d)
	}
	return pl
}

// target returns the target of device d, with an error when the node is out of reach: it
// cannot be dialled, or it is suppressed for its recent errors.
func (p *Proxy) target(replica int, d ring.Device) target {
	if p.health.limited(d.Node) {
		if p.health.probeDue(d.Node) {
			go p.probe(d)
		}
		return target{replica: replica, dev: d, suppressed: true,
			err: fmt.Errorf("node %s: suppressed after repeated errors: %w", d.Node, meta.ErrUnavailable)}
	}
	return p.dialTarget(replica, d)
}

// dialTarget is target without the health check: the device as its node can be reached now.
func (p *Proxy) dialTarget(replica int, d ring.Device) target {
	c, err := p.dialer.Dial(d.Node)
	if err != nil {
		p.log.Warn("cannot reach storage node", "node", d.Node, "err", err)
		p.health.failed(d.Node)
		return target{replica: replica, dev: d, err: fmt.Errorf("node %s: %v: %w", d.Node, err, meta.ErrUnavailable)}
	}
	return target{replica: replica, dev: d, client: c}
}

// quorum is how many devices must succeed for a write without a body to: a majority of the
// ring's replicas. An erasure-coded DELETE also needs more than m, so that fewer than k
// archives of what it deleted can remain (its POSTs likewise, so that the newest metadata is
// on more archives than a PUT may miss); its PUTs need k+1 (putEC).
func (pl *placement) quorum() int {
	q := pl.ring.Replicas()/2 + 1
	if pl.scheme != nil {
		q = max(q, pl.scheme.M+1)
	}
	return q
}

// joinPrevious makes the placement of a strict quorum joint while the ring's last change may
// be under way at now (docs/consistency.md, "Ring changes"): the partition's primaries before
// the change join the ring's own, and a write or a read needs a quorum of each. A proxy still
// on the old ring and one on the new then cannot miss each other's writes: any quorum of
// each meets any quorum of either.
func (pl *placement) joinPrevious(now time.Time) {
	prev := pl.ring.PreviousNodes(pl.part, now)
	if prev == nil {
		return
	}
	pl.owned = len(pl.primaries)
	for _, d := range prev {
		i := slices.IndexFunc(pl.primaries, func(t target) bool { return t.dev.ID == d.ID })
		if i < 0 {
			i = len(pl.primaries)
			pl.primaries = append(pl.primaries, pl.p.target(i, d))
		}
		pl.previous = append(pl.previous, i)
	}
}

// own is the number of the ring's own primaries, the first of primaries.
func (pl *placement) own() int {
	if pl.previous == nil {
		return len(pl.primaries)
	}
	return pl.owned
}

// quorate reports whether the replicas in ts make a quorum for a write or a read: under a
// strict quorum, a majority of the ring's primaries that took part themselves (not handoffs in
// their place), and a majority of the previous primaries too while the ring changes;
// otherwise as many replicas as quorum.
func (pl *placement) quorate(ts []target) bool { return pl.quorateOr(ts, pl.quorum()) }

// quorateOr is quorate, with n replicas making a quorum that is not strict.
func (pl *placement) quorateOr(ts []target, n int) bool {
	if !pl.strict {
		return len(ts) >= n
	}
	seen := map[int]bool{}
	own, prev := 0, 0
	for _, t := range ts {
		if t.handoff || seen[t.replica] {
			continue
		}
		seen[t.replica] = true
		if t.replica < pl.own() {
			own++
		}
		if slices.Contains(pl.previous, t.replica) {
			prev++
		}
	}
	// A majority of the ring's replicas, as a quorum has always counted them (a partition
	// past the end of a short last row has one primary fewer, not a smaller quorum).
	return own >= pl.ring.Replicas()/2+1 && (pl.previous == nil || prev >= len(pl.previous)/2+1)
}

// handoff returns the next handoff device that can be reached, for the replica it replaces.
// There are at most as many handoffs as primaries (Swift's request_node_count of 2 × replicas).
func (pl *placement) handoff(replica int) (target, bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if !pl.computed {
		pl.computed = true
		for d := range pl.ring.Handoffs(pl.part) {
			if len(pl.handoffs) == pl.own() {
				break
			}
			if slices.ContainsFunc(pl.primaries, func(t target) bool { return t.dev.ID == d.ID }) {
				continue // a previous primary, asked already
			}
			pl.handoffs = append(pl.handoffs, pl.p.target(-1, d))
		}
	}
	for pl.next < len(pl.handoffs) {
		t := pl.handoffs[pl.next]
		pl.next++
		if t.err == nil {
			t.replica, t.handoff = replica, true
			return t, true
		}
	}
	return target{}, false
}

// call runs op against t under the node deadline (when bounded), and counts a failure of the
// node against its health.
func (pl *placement) call(ctx context.Context, t target, bounded bool, op func(context.Context, target) error) error {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if bounded {
		cctx, cancel = context.WithTimeout(ctx, pl.p.nodeTimeout)
	}
	err := op(cctx, t)
	cancel()
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("node %s: no answer within %v: %w", t.dev.Node, pl.p.nodeTimeout, meta.ErrUnavailable)
	}
	pl.p.noteFailure(ctx, t, err)
	return err
}

// noteFailure counts err against t's node when it says the node failed (it could not be
// reached, timed out, or answered 5xx), not when the request was refused or the caller left.
// A refusal because a newer version is in place moves this proxy's clock past it: a proxy
// whose clock is behind the cluster's would otherwise have every write of that name refused
// until its clock caught up.
func (p *Proxy) noteFailure(ctx context.Context, t target, err error) {
	if newer := (*meta.NewerError)(nil); errors.As(err, &newer) {
		meta.AdvanceClock(newer.At)
	}
	if decided := (*meta.DecidedError)(nil); errors.As(err, &decided) {
		meta.AdvanceClock(decided.At) // a later write was decided: this one's retry goes after it
	}
	if err != nil && ctx.Err() == nil && errors.Is(err, meta.ErrUnavailable) {
		p.log.Debug("storage node failed", "node", t.dev.Node, "device", t.dev.Name, "err", err)
		p.health.failed(t.dev.Node)
	}
}

// fanOut runs op against every primary, a handoff taking the place of each that fails, and
// succeeds when a quorum does. Errors that are answers (not found, conflict, not empty) rather
// than failures win over unavailability when they reach quorum, so a client sees "not found"
// rather than "unavailable". op must tolerate running on a handoff after failing on a primary
// (it carries no body: object PUTs stream theirs in putReplicas).
func (pl *placement) fanOut(ctx context.Context, op func(context.Context, target) error) error {
	return pl.fanOutCommitting(ctx, op, nil)
}

// fanOutCommitting is fanOut for a write that a replica may commit while answering with
// committed (a DELETE's not found: the replica had nothing to delete, and holds the tombstone
// all the same). When neither success nor that answer reaches a quorum on its own but the two
// together do, the write holds on a quorum and succeeds: a replica that missed the object's PUT
// (down then, a handoff in its place) must not leave a delete that every other primary made
// short of a quorum.
func (pl *placement) fanOutCommitting(ctx context.Context, op func(context.Context, target) error, committed error) error {
	ts := pl.primaries
	if len(ts) == 1 && ts[0].err == nil && pl.ring.Replicas() == 1 {
		return op(ctx, ts[0])
	}
	outs := make(chan outcome, len(ts))
	for _, t := range ts {
		go func() {
			landed, err := pl.withHandoffs(ctx, t, func(t target) error { return pl.call(ctx, t, true, op) })
			outs <- outcome{landed, pl.counted(landed, err)}
		}()
	}
	all := make([]outcome, 0, len(ts))
	var took []target
	for range ts {
		o := <-outs
		if o.err == nil {
			took = append(took, o.landed)
		}
		all = append(all, o)
	}
	if err := pl.tally(all); err != nil {
		if committed == nil || !errors.Is(err, errTooFew) {
			return err
		}
		// took holds the successes; the replicas that answered committed join them. A
		// handoff's answer under a strict quorum counts for nothing (counted hid the answer).
		for _, o := range all {
			if o.err != nil && errors.Is(o.err, committed) {
				took = append(took, o.landed)
			}
		}
		if !pl.quorate(took) {
			return err
		}
	}
	return pl.unlessHolderHas(ctx, took)
}

// outcome is one replica's part in a fan-out: the device that took it or refused it last,
// and what it counts as (counted).
type outcome struct {
	landed target
	err    error
}

// errHandoffOnly is a replica's success that does not count towards a strict quorum: a
// handoff took it in the place of a primary.
var errHandoffOnly = fmt.Errorf("only a handoff took it: %w", meta.ErrUnavailable)

// counted is what one replica's outcome counts as towards the quorum: under a strict quorum,
// a handoff's outcome, success or answer, counts for nothing.
func (pl *placement) counted(landed target, err error) error {
	if pl.strict && landed.handoff && (err == nil || isAnswer(err)) {
		if err == nil {
			return fmt.Errorf("%s, for %s: %w", landed.dev.Node, pl.primaries[landed.replica].dev.Node, errHandoffOnly)
		}
		return fmt.Errorf("%s, for %s: %v: %w", landed.dev.Node, pl.primaries[landed.replica].dev.Node, err, errHandoffOnly)
	}
	return err
}

// withHandoffs runs op on t, and on handoffs in its place while it fails with something other
// than an answer, or with a full device (Swift's proxy moves on from a 507 too): a write that
// a full disk refuses lands on a handoff, which replication later moves home.
// It returns the device that took it, or the last one tried.
func (pl *placement) withHandoffs(ctx context.Context, t target, op func(target) error) (target, error) {
	for {
		err := t.err
		if err == nil {
			if err = op(t); err == nil || isFinal(err) || ctx.Err() != nil || errors.As(err, new(errNoHandoff)) {
				return t, err
			}
		}
		h, ok := pl.handoff(t.replica)
		if !ok {
			return t, err
		}
		t = h
	}
}

// tally decides a fan-out by quorum (quorate): success, or an answer (not found, a conflict)
// that a quorum gave.
func (pl *placement) tally(outs []outcome) error {
	answered := map[error][]target{}
	var firstErr error
	var ok []target
	for _, o := range outs {
		if o.err == nil {
			ok = append(ok, o.landed)
			continue
		}
		if firstErr == nil {
			firstErr = o.err
		}
		for _, s := range answerErrors {
			if errors.Is(o.err, s) {
				answered[s] = append(answered[s], o.landed)
			}
		}
	}
	if pl.quorate(ok) {
		return nil
	}
	for _, s := range answerErrors {
		if pl.quorate(answered[s]) {
			return s
		}
	}
	if firstErr != nil && len(ok) == 0 {
		return firstErr
	}
	return fmt.Errorf("%d of %d replicas succeeded: %w", len(ok), len(outs), errTooFew)
}

// errTooFew is tally's failure when neither success nor any answer reached a quorum.
var errTooFew = fmt.Errorf("too few for a quorum: %w", meta.ErrUnavailable)

// readOrder is the order reads try the primaries in: the ring's, except that nodes with recent
// errors go last, since a node that was away may hold stale versions until replication
// catches it up.
func (pl *placement) readOrder() []target {
	ts := pl.primaries
	if !pl.p.health.anyErrors() {
		return ts
	}
	ts = slices.Clone(ts)
	slices.SortStableFunc(ts, func(a, b target) int {
		return cmp.Compare(pl.p.health.rank(a.dev.Node), pl.p.health.rank(b.dev.Node))
	})
	return ts
}

// read asks the primaries in turn until one answers with success or an answer error other than
// not found (another replica may have what one lacks); when a primary could not answer, the
// handoffs are asked too, since writes made while it was away went to them, and so are the
// primaries passed over for their recent errors (a node that has just come back is one). Not
// found is answered only on evidence: a quorum of the primaries said so. Otherwise the answer
// is that no replica could answer (unavailable): a slow or failed answer is forgiven, a false
// "not found" is not. bounded puts each request under the node deadline (not for reads that
// return a stream, which the node client's idle timeout bounds).
func read[T any](ctx context.Context, pl *placement, bounded bool, op func(context.Context, target) (T, error)) (T, error) {
	v, _, err := readServed(ctx, pl, bounded, op)
	return v, err
}

// readServed is read, which also returns the device that answered.
func readServed[T any](ctx context.Context, pl *placement, bounded bool, op func(context.Context, target) (T, error)) (T, target, error) {
	var zero, v T
	var served target
	var notFound, lastErr error
	var absent []target // primaries that answered not found
	failed := false
	var passedOver []target
	try := func(t target, primary bool) (done bool, err error) {
		if t.err != nil {
			failed, lastErr = true, t.err
			return false, nil
		}
		served = t
		err = pl.call(ctx, t, bounded, func(ctx context.Context, t target) error {
			var err error
			v, err = op(ctx, t)
			return err
		})
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, meta.ErrNotFound):
			notFound = err
			if primary {
				absent = append(absent, t)
			}
			return false, nil
		case isAnswer(err) || ctx.Err() != nil:
			return true, err
		}
		failed, lastErr = true, err
		return false, nil
	}
	for _, t := range pl.readOrder() {
		if t.suppressed {
			passedOver = append(passedOver, t)
		}
		if done, err := try(t, true); done {
			return v, served, err
		}
	}
	for failed {
		h, ok := pl.handoff(-1)
		if !ok {
			break
		}
		if done, err := try(h, false); done {
			return v, served, err
		}
	}
	if notFound != nil && pl.quorateOr(absent, pl.ring.Replicas()/2+1) {
		// Evidence enough: a primary passed over for its recent errors may have been away
		// while the name was deleted, and would answer with what the others deleted.
		return zero, target{}, notFound
	}
	for _, t := range passedOver {
		if done, err := try(pl.p.dialTarget(t.replica, t.dev), true); done {
			return v, served, err
		}
	}
	if notFound != nil && pl.quorateOr(absent, pl.ring.Replicas()/2+1) {
		return zero, target{}, notFound
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("partition %d: no replica: %w", pl.part, meta.ErrUnavailable)
	}
	if notFound != nil {
		lastErr = fmt.Errorf("partition %d: %d of %d primaries say not found, too few to know, and the others cannot answer: %w",
			pl.part, len(absent), len(pl.primaries), lastErr)
	}
	return zero, target{}, lastErr
}

// probeName is what a probe asks a suppressed node for: a name no client can write (object
// names are the clients' own, accounts beginning with a dot are Cairn's), so that the answer
// is "not found" from a node that is back.
var probeName = meta.ObjectName{Account: ".cairn-probe", Container: "probe", Object: "probe"}

// probe asks a suppressed node whether it is back, outside any client's request, and lifts
// its suppression if it answers. Swift's error limiting waits out the whole interval; a
// strict quorum cannot: a primary that came back must count again at once, or a second
// fault in the same minute leaves its partitions short of a quorum of primaries.
func (p *Proxy) probe(d ring.Device) {
	c, err := p.dialer.Dial(d.Node)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.nodeTimeout)
	defer cancel()
	_, err = c.HeadObject(ctx, d.Name, 0, probeName, nodeclient.HeadOptions{Brief: true})
	if err == nil || isAnswer(err) {
		p.log.Debug("suppressed storage node answers again", "node", d.Node)
		p.health.recovered(d.Node)
	}
}

// health remembers the nodes that failed lately (Swift's error limiting): a node with
// ErrorLimit failures within ErrorInterval is skipped for ErrorInterval, its requests going to
// handoffs, so that a dead or hanging node costs each request nothing once it is known.
type health struct {
	limit    int
	interval time.Duration
	now      func() time.Time
	errored  atomic.Int64 // failures ever counted: lets the healthy path skip the lock

	mu    sync.Mutex
	nodes map[string]*nodeErrors
}

type nodeErrors struct {
	count        int       // failures since first
	first, last  time.Time // of the current count
	limitedUntil time.Time
	probed       time.Time // when a probe last asked it, while it is suppressed
}

// probeEvery is how often a suppressed node is probed.
const probeEvery = time.Second

func newHealth(limit int, interval time.Duration, now func() time.Time) *health {
	return &health{limit: limit, interval: interval, now: now, nodes: map[string]*nodeErrors{}}
}

func (h *health) anyErrors() bool { return h.errored.Load() != 0 }

// failed counts a failure of node.
func (h *health) failed(node string) {
	h.errored.Add(1)
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.nodes[node]
	if e == nil {
		e = &nodeErrors{}
		h.nodes[node] = e
	}
	if now.Sub(e.first) > h.interval {
		e.count, e.first = 0, now
	}
	e.count++
	e.last = now
	if h.limit > 0 && e.count >= h.limit {
		e.limitedUntil = now.Add(h.interval)
		e.count, e.first = 0, now
	}
}

// limited reports whether node is suppressed now.
func (h *health) limited(node string) bool {
	if !h.anyErrors() {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.nodes[node]
	return e != nil && h.now().Before(e.limitedUntil)
}

// probeDue reports whether a suppressed node is due a probe, and if so counts it as probed.
func (h *health) probeDue(node string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.nodes[node]
	now := h.now()
	if e == nil || now.Sub(e.probed) < probeEvery {
		return false
	}
	e.probed = now
	return true
}

// recovered lifts node's suppression: it answered a probe. It is still read last for a
// while (rank): it may have missed writes while it was away.
func (h *health) recovered(node string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.nodes[node]; e != nil {
		e.limitedUntil, e.count = time.Time{}, 0
	}
}

// staleFor is how long after its last failure a node is read last.
const staleFor = 10 * time.Minute

// rank orders nodes for reads: 0 for a node without failures within staleFor, 1 otherwise,
// 2 while it is suppressed.
func (h *health) rank(node string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.nodes[node]
	now := h.now()
	switch {
	case e == nil || now.Sub(e.last) > staleFor:
		return 0
	case now.Before(e.limitedUntil):
		return 2
	}
	return 1
}
