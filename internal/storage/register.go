package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/casreg"
	"github.com/cairn-store/cairn/internal/engine"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// A device keeps the acceptor state of the registers whose names fall in its partitions
// (internal/casreg), in its LSM beside the objects:
//
//	'g' partition(4, big-endian) key → casreg.Acceptor
//
// The partition leads so that the registers of a partition are one range, for replication and
// for a partition's handoff to read and remove together.
const registerPrefix = 'g'

// registerStripes is how many locks a device's registers share: a message's read, decision and
// write must not interleave with another's for the same register, and a lock per stripe keeps
// unrelated registers from waiting on each other without a map that grows with every name.
const registerStripes = 256

var registerSeed = maphash.MakeSeed()

// registerLocks orders the messages to each register of a device, and the checks of the
// writes against it (fenceDecided, admitUndecided).
type registerLocks [registerStripes]registerStripe

type registerStripe struct {
	sync.Mutex
	// committing counts, by register key, the undecided writes (PutOptions.Undecided) admitted
	// and not yet committed or failed: a guarded decision is refused while one is.
	committing map[string]int
}

func (l *registerLocks) of(key []byte) *registerStripe {
	return &l[maphash.Bytes(registerSeed, key)%registerStripes]
}

func registerKey(part uint32, key string) []byte {
	b := make([]byte, 0, 5+len(key))
	b = append(b, registerPrefix)
	b = binary.BigEndian.AppendUint32(b, part)
	return append(b, key...)
}

var _ nodeclient.Registers = (*Node)(nil)

// Register delivers a protocol message to the acceptor of the register key on device: the
// acceptor's state is read, the message applied (casreg.Acceptor.Handle), and a changed state
// written and synced before the reply is returned, so that a promise or an acceptance a
// proposer counts survives a crash of the node.
func (n *Node) Register(ctx context.Context, device string, part uint32, key string, m casreg.Message) (casreg.Reply, error) {
	if err := n.enter(); err != nil {
		return casreg.Reply{}, err
	}
	defer n.leave()
	if key == "" || len(key) > nodeclient.MaxRegisterKey {
		return casreg.Reply{}, fmt.Errorf("register key of %d bytes: %w", len(key), meta.ErrInvalidName)
	}
	if err := ctx.Err(); err != nil {
		return casreg.Reply{}, err
	}
	d, err := n.device(device)
	if err != nil {
		return casreg.Reply{}, err
	}
	k := registerKey(part, key)
	mu := d.registers.of(k)
	mu.Lock()
	defer mu.Unlock()
	was, err := d.readRegister(k)
	if err != nil {
		return casreg.Reply{}, err
	}
	state, err := casreg.DecodeAcceptor(was)
	if was == nil {
		state, err = casreg.Acceptor{}, nil
	}
	if err != nil {
		// A damaged acceptor must not answer: what it promised is lost, and answering as
		// an empty one could let two values be chosen. It stays out of quorums until
		// replication or an operator restores it.
		return casreg.Reply{}, fmt.Errorf("register %q on %s: %w: %w", key, device, err, meta.ErrCorrupt)
	}
	next, reply, err := state.HandleGuarded(m, func(guard []byte) (bool, error) { return d.guardHolds(ctx, mu, k, guard) })
	if err != nil {
		return casreg.Reply{}, fmt.Errorf("register %q on %s: %w", key, device, err)
	}
	if now := next.AppendTo(nil); !bytes.Equal(now, was) && !(was == nil && next.Promised.IsZero() && next.Accepted.IsZero()) {
		if err := d.engine.CheckDeleteSpace(); err != nil {
			return casreg.Reply{}, fmt.Errorf("register %q on %s: %w", key, device, err)
		}
		if err := d.db.Set(k, now, pebble.Sync); err != nil {
			return casreg.Reply{}, fmt.Errorf("register %q on %s: %w", key, device, err)
		}
	}
	return reply, nil
}

// guardHolds checks a decision's guard (nodeclient.ObjectGuard) for the register under k, whose
// stripe st the caller holds locked: it holds while the device keeps no version of the guard's
// object newer than the one the decision's condition tested, and commits no undecided write
// of it. A decision taken now is then above every write this device has let land: a write
// that lands here later and is not above it is refused (admitUndecided).
func (d *device) guardHolds(ctx context.Context, st *registerStripe, k []byte, guard []byte) (bool, error) {
	g, err := nodeclient.DecodeObjectGuard(guard)
	if err != nil {
		return false, fmt.Errorf("%v: %w", err, meta.ErrInvalidName)
	}
	if part := binary.BigEndian.Uint32(k[1:5]); !bytes.Equal(registerKey(part, nodeclient.ObjectRegisterKey(g.Name)), k) {
		return false, fmt.Errorf("a guard on %q for another register: %w", g.Name.Object, meta.ErrInvalidName)
	}
	if st.committing[string(k)] > 0 {
		return false, nil
	}
	o, err := d.engine.StatBrief(ctx, g.Name)
	if errors.Is(err, meta.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("the versions of %q: %w", g.Name.Object, err)
	}
	return o.Timestamp <= g.Seen, nil
}

// admitUndecided admits a write at ts of name that its register did not decide
// (nodeclient.PutOptions.Undecided): it is refused (*meta.DecidedError) when this device's
// acceptor of the name's register has taken a decision for a write at ts or later, which
// would otherwise land above it, though its condition was tested without it. An admitted
// write counts as committing until done is called, after its commit or failure, so that a
// guarded decision is refused meanwhile (guardHolds): of the two, whichever reaches the
// device first holds off the other.
func (d *device) admitUndecided(part uint32, name meta.ObjectName, ts meta.Timestamp) (done func(), err error) {
	k := registerKey(part, nodeclient.ObjectRegisterKey(name))
	st := d.registers.of(k)
	st.Lock()
	defer st.Unlock()
	was, err := d.readRegister(k)
	if err != nil {
		return nil, err
	}
	if was != nil {
		state, err := casreg.DecodeAcceptor(was)
		if err != nil {
			return nil, fmt.Errorf("register of %q: %w: %w", name.Object, err, meta.ErrCorrupt)
		}
		if at, ok := nodeclient.DecodeDecided(state.Value.Data); ok && at >= ts {
			return nil, fmt.Errorf("%q at %d: %w", name.Object, ts, &meta.DecidedError{At: at})
		}
	}
	key := string(k)
	if st.committing == nil {
		st.committing = map[string]int{}
	}
	st.committing[key]++
	return func() {
		st.Lock()
		defer st.Unlock()
		if st.committing[key]--; st.committing[key] <= 0 {
			delete(st.committing, key)
		}
	}, nil
}

// readRegister returns the stored acceptor state (nil when there is none).
func (d *device) readRegister(k []byte) ([]byte, error) {
	v, closer, err := d.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading register: %w", err)
	}
	defer closer.Close()
	return bytes.Clone(v), nil
}

// fenceDecided makes a PUT decided by its name's register (nodeclient.PutOptions.DecidedGen)
// commit only while this device's acceptor of that register has accepted no later generation:
// the check runs once the body has arrived, and the register's lock is held from then until
// the commit is done (the returned function releases it), so that an Accept of a later
// generation is taken either before the check (the PUT is refused) or after the commit.
func (d *device) fenceDecided(part uint32, name meta.ObjectName, gen uint64, eopts *engine.PutOptions) (unlock func()) {
	k := registerKey(part, nodeclient.ObjectRegisterKey(name))
	mu := d.registers.of(k)
	locked := false
	before := eopts.BeforeCommit
	eopts.BeforeCommit = func(o *meta.Object) error {
		if before != nil {
			if err := before(o); err != nil {
				return err
			}
		}
		mu.Lock()
		locked = true
		return d.checkDecided(k, name, gen)
	}
	return func() {
		if locked {
			mu.Unlock()
		}
	}
}

// fenceDecidedNow is fenceDecided for a write without a body (a DELETE, a POST): the lock is
// taken and the check made at once, and held until unlock.
func (d *device) fenceDecidedNow(part uint32, name meta.ObjectName, gen uint64) (unlock func(), err error) {
	k := registerKey(part, nodeclient.ObjectRegisterKey(name))
	mu := d.registers.of(k)
	mu.Lock()
	if err := d.checkDecided(k, name, gen); err != nil {
		mu.Unlock()
		return nil, err
	}
	return mu.Unlock, nil
}

// holdRegister is fenceDecidedNow for a write without a body decided in generation gen, or
// admitUndecided for an undecided one at ts (neither: nothing to hold). committed ends the
// hold; the caller calls it once the engine has committed or refused the write.
func (d *device) holdRegister(part uint32, name meta.ObjectName, ts meta.Timestamp, gen uint64, undecided bool) (committed func(), err error) {
	switch {
	case gen > 0:
		return d.fenceDecidedNow(part, name, gen)
	case undecided:
		return d.admitUndecided(part, name, ts)
	}
	return func() {}, nil
}

// checkDecided refuses a write decided in generation gen once the register under k has
// accepted a later one (meta.ErrPreconditionFailed). The caller holds the register's lock.
func (d *device) checkDecided(k []byte, name meta.ObjectName, gen uint64) error {
	was, err := d.readRegister(k)
	if err != nil || was == nil {
		return err
	}
	state, err := casreg.DecodeAcceptor(was)
	if err != nil {
		return fmt.Errorf("register of %q: %w: %w", name.Object, err, meta.ErrCorrupt)
	}
	if state.Value.Gen > gen {
		return fmt.Errorf("%q: decided in generation %d, the register has accepted generation %d since: %w",
			name.Object, gen, state.Value.Gen, meta.ErrPreconditionFailed)
	}
	return nil
}
