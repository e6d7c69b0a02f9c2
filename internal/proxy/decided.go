package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/casreg"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Conditional writes decided by the name's register (issue 27; docs/consistency.md). Every
// proxy asks the same register, the name's primaries being its acceptors, so exactly one of
// any number of racing writers whose condition tests the same version wins, and a writer that
// lost writes no byte anywhere:
//
//  1. The proxy reads what a quorum of replicas holds now (the newest version, a tombstone
//     counting with its time).
//  2. It proposes a change to the register: "if the condition holds on that version, and no
//     decided write is still on its way, the next write is mine, at timestamp T" (T above
//     every version seen, so that it sorts newest). The register holds only T: the version
//     a write decided and has not been seen to land. A refusal answers 412; a decided write
//     still on its way answers 409 (S3's ConditionalRequestConflict: try again).
//  3. The winner streams its body to the primaries at T, each commit fenced by the
//     decision's generation: a node refuses it once its acceptor has taken a later decision.
//
// Plain writes do not go through the register: they are ordered by timestamp as before, and a
// conditional write tests the newest version the replicas hold, so that it sees every plain
// write acknowledged before it began.
//
// A writer that dies between its decision and its commit leaves T in the register without a
// version: others answer 409 until DecidedGrace has passed since T, then presume it dead and
// decide over it. Their decision fences the dead writer out (a writer only paused cannot land
// at a quorum after it), and before they write they look on every primary for T: a version at
// T anywhere may have been acknowledged, so they answer 409 and write nothing.

// ErrConditionalConflict: a conditional write decided for another writer has not landed yet,
// or may have: the client should try again (S3's 409 ConditionalRequestConflict).
var ErrConditionalConflict = meta.ErrConditionalConflict

// errDecidedPending is the change's refusal while a decided write is on its way.
var errDecidedPending = errors.New("a decided write has not landed yet")

// ErrMintedTaken: a PUT of a name minted for it (PutOptions.Fresh) found the name decided for
// another writer, or a version under it: another proxy minted the same name. Nothing was
// written and the body was not read; the caller mints another name.
var ErrMintedTaken = errors.New("proxy: the minted name is another writer's")

// putDecided makes a conditional PUT of a replicated or erasure-coded object through its
// register. It returns ErrNoRegisters when the nodes keep none (the caller decides the old
// way).
func (p *Proxy) putDecided(ctx context.Context, pl *placement, name meta.ObjectName, obj meta.Object, body io.Reader, opts PutOptions, nopts func(target) nodeclient.PutOptions) (nodeclient.PutResult, error) {
	var res nodeclient.PutResult
	err := p.whenDecided(ctx, name, func() error {
		ts, gen, err := p.decideWrite(ctx, pl, name, opts.If, opts.Timestamp, opts.Timestamp != 0, opts.Fresh)
		if err != nil {
			return err
		}
		obj.Timestamp = ts
		// Primaries only: a handoff keeps no acceptor, so it could not fence a writer presumed
		// dead, and such a writer must not reach a quorum there.
		if pl.scheme != nil {
			ecOpts := opts
			ecOpts.If, ecOpts.decidedGen = meta.Precondition{}, gen
			res, err = p.putEC(ctx, pl.withoutHandoffs(), name, obj, body, ecOpts)
		} else {
			fenced := func(t target) nodeclient.PutOptions {
				o2 := nopts(t)
				o2.If, o2.DecidedGen, o2.Undecided = meta.Precondition{}, gen, false
				return o2
			}
			res, err = p.putReplicas(ctx, pl.withoutHandoffs(), name, obj, body, fenced)
		}
		return overtakenIfFenced(name, err)
	})
	return res, err
}

// deleteDecided makes a conditional DELETE (a tombstone at at or later) through the name's
// register, as putDecided a PUT: a DELETE racing a PUT or another DELETE on the same version,
// through any proxies, wins or loses as one (multipart's Abort racing Complete). It returns
// ErrNoRegisters when the nodes keep none.
func (p *Proxy) deleteDecided(ctx context.Context, pl *placement, name meta.ObjectName, at meta.Timestamp, cond meta.Precondition, opts func(target) nodeclient.DeleteOptions) (prev meta.Object, ts meta.Timestamp, err error) {
	err = p.whenDecided(ctx, name, func() error {
		var gen uint64
		var err error
		ts, gen, err = p.decideWrite(ctx, pl, name, cond, at, false, false)
		if err != nil {
			return err
		}
		var mu sync.Mutex
		err = pl.withoutHandoffs().fanOut(ctx, func(ctx context.Context, t target) error {
			o := opts(t)
			o.If, o.DecidedGen = meta.Precondition{}, gen
			was, err := t.client.DeleteObject(ctx, t.dev.Name, pl.part, name, ts, o)
			if err == nil {
				mu.Lock()
				prev = was
				mu.Unlock()
			}
			if errors.Is(err, meta.ErrNotFound) {
				return nil // a tombstone is written where there was nothing: the delete holds
			}
			return err
		})
		return overtakenIfFenced(name, err)
	})
	return prev, ts, err
}

// postDecided makes a conditional POST (a compare-and-swap on the version at seen) through
// the name's register, as putDecided a PUT: of racing changes to an object's metadata that
// read the same version (Object Lock's retention), one wins, and no replica keeps a loser's.
// It returns ErrNoRegisters when the nodes keep none.
func (p *Proxy) postDecided(ctx context.Context, pl *placement, name meta.ObjectName, update meta.Object, seen meta.Timestamp, opts func(target) nodeclient.PostOptions) (out meta.Object, err error) {
	err = p.whenDecided(ctx, name, func() error {
		ts, gen, err := p.decideWrite(ctx, pl, name, meta.Precondition{IfTimestamp: seen}, update.Timestamp, false, false)
		if err != nil {
			return err
		}
		up := update
		up.Timestamp = ts
		var mu sync.Mutex
		err = pl.withoutHandoffs().fanOut(ctx, func(ctx context.Context, t target) error {
			o := opts(t)
			o.DecidedGen = gen
			posted, err := t.client.PostObject(ctx, t.dev.Name, pl.part, name, up, o)
			if err == nil {
				mu.Lock()
				out = posted
				mu.Unlock()
			}
			return err
		})
		return overtakenIfFenced(name, err)
	})
	return out, err
}

// belowDecision turns a plain write's refusal for a later decided write
// (meta.ErrDecidedAbove, from replicas where that decision was taken) into what the client is
// told when it left the write short of a quorum: the write may have landed on other replicas,
// beneath the decided one, so whether it took effect cannot be told (503). The refusal moved
// the proxy's clock past the decision (noteFailure), so the client's retry is ordered after
// it.
func belowDecision(err error) error {
	if errors.Is(err, meta.ErrDecidedAbove) && !errors.Is(err, meta.ErrUnavailable) {
		return fmt.Errorf("%w: %w", err, meta.ErrUnavailable)
	}
	return err
}

// overtakenIfFenced turns a decided write's refusal by the fence into what the client is told:
// another proxy presumed this write dead and decided over it, and replicas that took it before
// may keep it, so whether it took effect cannot be told.
func overtakenIfFenced(name meta.ObjectName, err error) error {
	if errors.Is(err, meta.ErrPreconditionFailed) {
		return fmt.Errorf("%q: overtaken by a later decision: %w", name.Object, meta.ErrUnavailable)
	}
	return err
}

// whenDecided runs one attempt of a decided write (decideWrite, then the write) until it is
// not refused for a write decided for another writer still on its way, which is usually
// landing as this one asks: it waits a little for it, so that this writer can be told 412 (its
// condition tested on the version that landed) rather than 409 ConditionalRequestConflict.
func (p *Proxy) whenDecided(ctx context.Context, name meta.ObjectName, once func() error) error {
	wait := min(2*time.Second, p.decidedGrace/4)
	deadline := time.Now().Add(wait)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 200*time.Millisecond) {
		err := once()
		if !errors.Is(err, errDecidedPending) {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("%q: %w", name.Object, ErrConditionalConflict)
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(pause):
		}
	}
}

// decideWrite has the name's register decide a conditional write: it reads the newest version
// the replicas hold, and proposes "if cond holds on it and no decided write is on its way, the
// next write is this one, at a timestamp above every version seen" (at exactly ts0 when exact,
// which must then sort after them; else at least ts0, or now when ts0 is 0). It returns the
// write's timestamp and the decision's generation, which fences the write's commits;
// errDecidedPending when another writer's decided write has not landed; the condition's
// refusal; ErrNoRegisters when the nodes keep none. A minted name (PutOptions.Fresh) must be
// new: any decision or version under it is another writer's, and the change refuses at once
// (ErrMintedTaken), without waiting for that writer to land.
//
// The decision is guarded (nodeclient.ObjectGuard): a primary takes it only while it holds no
// version newer than the one the condition tested and commits no plain write of the name.
// A plain write that lands between the read and the decision thus keeps the decision from
// its quorum, and one that comes after is refused where the decision was taken (storage's
// admitUndecided): either way the two are ordered alike everywhere. When the guard is refused,
// the condition is tested again on what the replicas hold now; the refused decision, which
// some primary may have taken and a later proposal may find current, is this writer's own
// and was never written, so the next attempt decides over it without waiting.
func (p *Proxy) decideWrite(ctx context.Context, pl *placement, name meta.ObjectName, cond meta.Precondition, ts0 meta.Timestamp, exact, minted bool) (meta.Timestamp, uint64, error) {
	var abandoned []meta.Timestamp // this call's decisions refused by the guard
	pause := 5 * time.Millisecond
	for range maxGuardRefusals {
		ts, gen, err := p.decideOnce(ctx, pl, name, cond, ts0, exact, minted, abandoned)
		var refused *guardRefusedError
		if !errors.As(err, &refused) {
			if err != nil && len(abandoned) > 0 {
				// A refused decision may still be found, and others would wait for it to
				// land (409) until DecidedGrace: it is cleared if it can be.
				p.clearAbandoned(ctx, pl, name, abandoned)
			}
			return ts, gen, err
		}
		abandoned = append(abandoned, refused.made...)
		// What landed in between is usually a plain write still committing on some
		// primary: give it a moment, more each time.
		select {
		case <-ctx.Done():
			p.clearAbandoned(ctx, pl, name, abandoned)
			return 0, 0, context.Cause(ctx)
		case <-time.After(pause):
		}
		pause *= 2
	}
	p.clearAbandoned(ctx, pl, name, abandoned)
	return 0, 0, fmt.Errorf("%q: writes kept landing while the condition was decided: %w", name.Object, ErrConditionalConflict)
}

// maxGuardRefusals bounds how often a conditional write tests its condition again because a
// plain write landed while it was being decided.
const maxGuardRefusals = 8

// guardRefusedError: the primaries refused the decision's guard; made are the timestamps of
// the decisions the attempt proposed (one per application of its change).
type guardRefusedError struct{ made []meta.Timestamp }

func (e *guardRefusedError) Error() string {
	return fmt.Sprintf("the decision of a write at %v was refused: a newer version landed", e.made)
}

// decideOnce is one attempt of decideWrite. A decision in the register whose timestamp is in
// abandoned was this writer's, refused by the guard and never written: it is decided over
// as if nothing were pending, and cleared when the condition now fails.
func (p *Proxy) decideOnce(ctx context.Context, pl *placement, name meta.ObjectName, cond meta.Precondition, ts0 meta.Timestamp, exact, minted bool, abandoned []meta.Timestamp) (meta.Timestamp, uint64, error) {
	key := nodeclient.ObjectRegisterKey(name)
	var cur *meta.Object
	var err error
	// seen is the newest version or tombstone the replicas hold (for an erasure-coded object,
	// the newest version k archives decode, or a newer tombstone): a decided write at or below
	// it has landed (and may have been deleted since), and the next sorts above it. held is
	// the newest anything a replica read holds (an archive of a write not yet on k devices
	// too): the guard lets the primaries hold it, since the condition was tested with it there.
	var seen, held meta.Timestamp
	if pl.scheme != nil {
		cur, seen, held, err = p.newestDecodable(ctx, pl, name)
	} else {
		cur, err = p.newestHeld(ctx, pl, name)
	}
	if err != nil {
		return 0, 0, err
	}
	if cur != nil {
		seen = max(seen, cur.Timestamp)
	}
	held = max(held, seen)
	live := cur
	if live != nil && live.Deleted {
		live = nil
	}
	var ts, overtaken meta.Timestamp
	var made []meta.Timestamp // every decision proposed, should the guard refuse them
	var condErr error         // the condition's refusal, when the change clears an abandoned decision
	change := func(data []byte) ([]byte, error) {
		overtaken, condErr = 0, nil
		decided, ok := nodeclient.DecodeDecided(data)
		mine := ok && slices.Contains(abandoned, decided)
		if minted && (held != 0 || (ok && !mine)) {
			return nil, fmt.Errorf("%q: %w", name.Object, ErrMintedTaken)
		}
		if ok && decided > seen && !mine {
			if p.now().Sub(time.Unix(0, int64(decided))) < p.decidedGrace {
				return nil, errDecidedPending
			}
			overtaken = decided
		}
		if err := cond.Check(live); err != nil {
			if mine {
				condErr = err
				return nodeclient.EncodeDecided(seen), nil // nothing pending
			}
			return nil, err
		}
		if exact {
			// The version's time is given (a version name holds it): it must still sort
			// after every version seen.
			if ts0 <= seen || (!mine && ts0 <= decided) {
				return nil, fmt.Errorf("write at %d, a version at %d: %w", ts0, max(seen, decided), meta.ErrConflict)
			}
			ts = ts0
		} else {
			ts = max(meta.Now(), ts0, seen+1, decided+1)
		}
		made = append(made, ts)
		return nodeclient.EncodeDecided(ts), nil
	}
	guard := nodeclient.ObjectGuard{Name: name, Seen: held}.AppendTo(nil)
	o, err := p.decide(ctx, pl, key, change, guard)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case o.Err == nil:
	case errors.Is(o.Err, errDecidedPending):
		return 0, 0, o.Err
	case errors.Is(o.Err, casreg.ErrRefused):
		return 0, 0, &guardRefusedError{made: made}
	case errors.Is(o.Err, casreg.ErrUnavailable), errors.Is(o.Err, casreg.ErrUnknown):
		return 0, 0, registerUnavailable(key, o.Err)
	default:
		return 0, 0, o.Err // the condition's refusal
	}
	if condErr != nil {
		return 0, 0, condErr
	}
	if overtaken != 0 {
		// The writer presumed dead may have landed before this decision fenced it out.
		if err := p.noneHolds(ctx, pl, name, overtaken); err != nil {
			p.log.Info("a conditional write took over from one presumed dead, which may have landed", "object", name.Object, "err", err)
			return 0, 0, fmt.Errorf("%q: %w", name.Object, ErrConditionalConflict)
		}
	}
	return ts, o.Value.Gen, nil
}

// clearAbandoned makes the register of name hold nothing pending where it holds one of this
// writer's abandoned decisions (best effort, even once the request is gone: a decision left
// there is decided over once DecidedGrace has passed).
func (p *Proxy) clearAbandoned(ctx context.Context, pl *placement, name meta.ObjectName, abandoned []meta.Timestamp) {
	ctx = context.WithoutCancel(ctx)
	change := func(data []byte) ([]byte, error) {
		if decided, ok := nodeclient.DecodeDecided(data); ok && slices.Contains(abandoned, decided) {
			return nodeclient.EncodeDecided(0), nil
		}
		return data, nil
	}
	if o, err := p.decide(ctx, pl, nodeclient.ObjectRegisterKey(name), change, nil); err != nil || o.Err != nil {
		p.log.Debug("register: an abandoned decision was not cleared", "object", name.Object, "err", errors.Join(err, o.Err))
	}
}

// withoutHandoffs returns the placement with no handoffs to draw on, its primaries
// suppressed for their recent errors redialled: with no handoff to take their place, asking
// them is the only way the write can reach them.
func (pl *placement) withoutHandoffs() *placement {
	primaries := make([]target, len(pl.primaries))
	for i, t := range pl.primaries {
		primaries[i] = pl.p.unsuppressed(t)
	}
	return &placement{p: pl.p, ring: pl.ring, part: pl.part, primaries: primaries, scheme: pl.scheme, strict: pl.strict, previous: pl.previous, owned: pl.owned, computed: true}
}

// newestHeld returns the newest version (a tombstone included) that the replicas answering
// for a quorum hold, or nil when none holds one.
func (p *Proxy) newestHeld(ctx context.Context, pl *placement, name meta.ObjectName) (*meta.Object, error) {
	var newest *meta.Object
	var mu sync.Mutex
	keep := func(o meta.Object) {
		mu.Lock()
		defer mu.Unlock()
		if newest == nil || newest.Timestamp < o.Timestamp {
			newest = &o
		}
	}
	err := pl.fanOut(ctx, func(ctx context.Context, t target) error {
		o, err := holdsOn(ctx, pl, t, name)
		if err == nil && o.Timestamp != 0 {
			keep(o)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%q: the versions the replicas hold: %w", name.Object, err)
	}
	return newest, nil
}

// newestDecodable is newestHeld for an erasure-coded object: the newest version k archives
// decode, as a read would serve it (its ETag the object's, not an archive's), or nil when
// there is none; deleted, the newest tombstone's time the survey met (a deletion decodes
// nothing); and held, the newest time of anything it met, an archive of a write not (yet) on
// k devices included.
func (p *Proxy) newestDecodable(ctx context.Context, pl *placement, name meta.ObjectName) (cur *meta.Object, deleted, held meta.Timestamp, err error) {
	v, err := p.survey(ctx, pl, name, nodeclient.HeadOptions{Brief: true})
	if v != nil {
		deleted, held = v.newestHeld()
	}
	if errors.Is(err, meta.ErrNotFound) {
		return nil, deleted, held, nil
	}
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%q: the version the archives decode: %w", name.Object, err)
	}
	o := v.served()
	return &o, deleted, held, nil
}

// noneHolds checks that no primary holds a version at or after ts: every primary must answer.
func (p *Proxy) noneHolds(ctx context.Context, pl *placement, name meta.ObjectName, ts meta.Timestamp) error {
	errs := make(chan error, len(pl.primaries))
	for _, t := range pl.primaries {
		go func() {
			o, err := pl.holds(ctx, p.unsuppressed(t), name) // redialled, it may still be out of reach
			if err == nil && o.Timestamp >= ts {
				err = fmt.Errorf("%s holds a version at %d, the decided write's was %d", t.dev.Node, o.Timestamp, ts)
			}
			errs <- err
		}()
	}
	var first error
	for range pl.primaries {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
