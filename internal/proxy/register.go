package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/casreg"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// The proxy as a proposer of the cluster's registers (internal/casreg): it drives a Proposer,
// which decides, with the replies of the partition's primaries (the acceptors), whose storage
// nodes keep their state (nodeclient.Registers). The proposer is pure; here are its edges: the
// messages sent to the nodes in parallel, the replies fed back from one goroutine, the clock,
// and the deadline.

// ErrNoRegisters: the partition's nodes keep no registers (OpenStack Swift's servers), so a
// decision must be made the way it was before registers.
var ErrNoRegisters = nodeclient.ErrNoRegisters

// registers is what the proxy keeps between proposals: its proposer ID, and the highest
// ballot it has seen on each register lately, so that its next attempt on a register starts
// above it instead of learning it from a rejection.
type registers struct {
	id string
	// turns lets one decision at a time per register (by stripe) run from this proxy: its
	// proposals would only duel with each other, each retry costing the others a round.
	turns [256]chan struct{}
	mu    sync.Mutex
	// seen is bounded: when it is full it starts again empty, which costs at most one
	// rejected attempt per register afterwards.
	seen map[string]casreg.Ballot
}

const maxSeenBallots = 1 << 16

func newRegisters() *registers {
	// A ballot's proposer ID breaks ties between proxies, so no two may share one, not even a
	// proxy and the same proxy restarted (which forgets its ballots): host, process and a
	// random part.
	host, _ := os.Hostname()
	var b [6]byte
	rand.Read(b[:])
	r := &registers{id: host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:]), seen: map[string]casreg.Ballot{}}
	for i := range r.turns {
		r.turns[i] = make(chan struct{}, 1)
	}
	return r
}

// turn waits for key's turn in this proxy; the returned function ends it.
func (r *registers) turn(ctx context.Context, key string) (func(), error) {
	c := r.turns[maphash.String(turnSeed, key)%uint64(len(r.turns))]
	select {
	case c <- struct{}{}:
		return func() { <-c }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

var turnSeed = maphash.MakeSeed()

func (r *registers) last(key string) casreg.Ballot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[key]
}

func (r *registers) observe(key string, b casreg.Ballot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen) >= maxSeenBallots {
		clear(r.seen)
	}
	if r.seen[key].Less(b) {
		r.seen[key] = b
	}
}

// decide runs change on the register key, whose acceptors are pl's primaries (never handoffs:
// a register's acceptors are fixed, or two quorums need not meet), and returns the outcome.
// A nil change reads. A guard (nil: none) goes with the Accepts of the values change makes
// (casreg.Message.Guard), for the nodes to check. The outcome's Err is change's own refusal,
// casreg.ErrUnavailable (no quorum answered; nothing changed), casreg.ErrUnknown (the change
// may take effect or not) or casreg.ErrRefused (the guard was refused where no quorum is
// left; the change may still take effect); the error returned is ErrNoRegisters when the nodes keep none, or the context's.
func (p *Proxy) decide(ctx context.Context, pl *placement, key string, change casreg.Change, guard []byte) (casreg.Outcome, error) {
	done, err := p.regs.turn(ctx, key)
	if err != nil {
		return casreg.Outcome{}, fmt.Errorf("register %q: %w", key, err)
	}
	defer done()
	names := make([]string, len(pl.primaries))
	byName := make(map[string]target, len(pl.primaries))
	for i, t := range pl.primaries {
		// A suppressed node is still an acceptor worth asking: a register needs a majority,
		// and the node's recent errors may be over.
		t = p.unsuppressed(t)
		names[i] = t.dev.Node + "/" + t.dev.Name
		byName[names[i]] = t
	}
	timeout := p.registerTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if timeout <= 0 {
		return casreg.Outcome{}, fmt.Errorf("register %q: %w", key, context.DeadlineExceeded)
	}
	// Duelling proxies fall out of step by pausing longer after each rejection; on a loaded
	// machine a round trip can take hundreds of milliseconds, so the pauses may grow to a
	// second (casreg's default stops at 200 ms, which two proxies' rounds can keep colliding
	// within).
	prop, err := casreg.NewProposer(casreg.Config{ID: p.regs.id, Acceptors: names, Timeout: timeout,
		RetryBase: 5 * time.Millisecond, RetryMax: time.Second})
	if err != nil {
		return casreg.Outcome{}, fmt.Errorf("register %q: %w", key, err)
	}
	prop.Observe(p.regs.last(key))

	type answer struct {
		to    string
		msg   casreg.Message
		reply casreg.Reply
		err   error
	}
	answers := make(chan answer, len(names))
	ctx, cancel := context.WithCancel(ctx)
	// The messages still in flight when the outcome is known are cancelled and waited for:
	// a decision leaves nothing running behind it (a node closed after it is not written to).
	var inflight sync.WaitGroup
	defer func() { cancel(); inflight.Wait() }()
	send := func(envs []casreg.Envelope) {
		for _, e := range envs {
			t := byName[e.To]
			inflight.Go(func() {
				a := answer{to: e.To, msg: e.Msg, err: t.err}
				if a.err == nil {
					regs, ok := t.client.(nodeclient.Registers)
					if !ok {
						a.err = ErrNoRegisters
					} else {
						a.err = pl.call(ctx, t, true, func(ctx context.Context, t target) error {
							var err error
							a.reply, err = regs.Register(ctx, t.dev.Name, pl.part, key, e.Msg)
							return err
						})
					}
				}
				select {
				case answers <- a:
				case <-ctx.Done():
				}
			})
		}
	}
	// Acceptors that cannot be reached at all during this decision (no connection to their
	// node): once a quorum is out of reach, retrying until the deadline would change nothing.
	unreachable := 0
	for _, t := range byName {
		if t.err != nil {
			unreachable++
		}
	}
	if unreachable > len(names)-prop.Quorum() {
		return casreg.Outcome{Err: casreg.ErrUnavailable}, nil
	}
	now := time.Now()
	switch {
	case change == nil:
		send(prop.Read(now))
	case guard != nil:
		send(prop.ProposeGuarded(now, change, guard))
	default:
		send(prop.Propose(now, change))
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if o, ok := prop.Outcome(); ok {
			p.regs.observe(key, o.Ballot)
			return o, nil
		}
		timer.Reset(max(time.Until(prop.NextTick()), 0))
		select {
		case <-ctx.Done():
			return casreg.Outcome{}, fmt.Errorf("register %q: %w", key, context.Cause(ctx))
		case <-timer.C:
			send(prop.Tick(time.Now()))
		case a := <-answers:
			if a.err == nil {
				if !a.reply.Seen.IsZero() {
					p.regs.observe(key, a.reply.Seen)
				}
				send(prop.Step(time.Now(), a.to, a.reply))
				continue
			}
			if errors.Is(a.err, ErrNoRegisters) {
				return casreg.Outcome{}, fmt.Errorf("register %q on %s: %w", key, a.to, a.err)
			}
			// The message or its answer is lost (the node may have acted on it): the
			// proposer tries again once its attempt cannot reach a quorum.
			p.log.Debug("register: a message failed", "key", key, "node", a.to, "err", a.err)
			send(prop.Lost(time.Now(), a.to, a.msg))
		}
	}
}

// unsuppressed returns t dialled anew when it was passed over only for its node's recent
// errors (health), for the requests that must ask every primary they can reach.
func (p *Proxy) unsuppressed(t target) target {
	if t.suppressed {
		return p.dialTarget(t.replica, t.dev)
	}
	return t
}

// registerUnavailable turns an outcome's protocol error into the proxy's: the client is told
// to try again (503) when nothing was decided or nobody can tell what was.
func registerUnavailable(key string, err error) error {
	return fmt.Errorf("register %q: %v: %w", key, err, meta.ErrUnavailable)
}
