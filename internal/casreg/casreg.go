// Package casreg is the protocol by which a cluster decides, once and for every proxy, what
// the current version of one name is: a replicated compare-and-swap register, CASPaxos
// (Rystsov, 2018), whose acceptors are the name's primary replicas (storage nodes) and whose
// proposers are the proxies. A change is a function of the current value (a conditional PUT:
// "if there is none, this version"; If-Match: "if it is that one, this one"); exactly one of
// any number of racing changes that test the same value wins, and a change that lost never
// becomes visible.
//
// Like etcd's raft, the package is a pure state machine: no I/O, no goroutines, no clock of its
// own. An acceptor's state goes in with a message and comes out changed with a reply (the
// storage node makes the new state durable before it sends the reply); a proposer takes
// replies and the time, and says which messages to send next and, in the end, the outcome. The
// proxy and the storage node are its edges. Tests drive it with scripts (testdata/) and with a
// simulated network that loses, delays, reorders and duplicates messages and crashes proposers.
//
// The protocol, for one register:
//
//   - A ballot orders attempts: a counter, then the proposer's ID. A proposer starts above every
//     ballot it has seen.
//   - Prepare(b): an acceptor that has promised and accepted only lower ballots promises b and
//     answers with what it accepted last (ballot and value); otherwise it rejects, naming the
//     higher ballot it knows.
//   - Once a quorum (a majority of the acceptors) has promised, the current value is the one
//     accepted under the highest ballot among the answers (none: the register is empty). The
//     change is applied to it. If the change refuses (a failed condition), the current value is
//     written back instead, so that what the refusal was based on is chosen for good; the
//     write-back is skipped when every answer of the quorum names the same accepted ballot,
//     since that value is chosen already.
//   - Accept(b, v): an acceptor that has promised nothing above b accepts v under b; otherwise
//     it rejects.
//   - Once a quorum has accepted, v is chosen: the change is done (or refused, with the value
//     it was refused on).
//   - A rejection makes the proposer start again with a higher ballot, after a pause that grows
//     with each attempt (so that duelling proposers let one of them finish); without a quorum
//     by the deadline the outcome is Unavailable before any Accept was sent (nothing changed),
//     or Unknown after (the change may or may not take effect: a client must be told so, never
//     that it failed).
//   - A change may carry a guard (ProposeGuarded): bytes the protocol does not read, which
//     the acceptor's host checks against its own state before it takes the change's Accept
//     (HandleGuarded). A storage node refuses a conditional write's decision once it holds a
//     version newer than the one the condition tested, so that a plain write that landed in
//     between is not overwritten by a write whose condition never saw it. A refused Accept
//     changes nothing; when refusals leave too few acceptors for a quorum, the outcome is
//     Refused: the proposer's caller tests its condition again.
//   - A read (Peek) asks every acceptor for what it accepted without promising anything; when
//     a quorum names the same accepted ballot and none has promised a higher one, that value is
//     chosen and current, in one round trip and with no write. Otherwise the read runs as a
//     change that changes nothing.
package casreg

import (
	"bytes"
	"errors"
	"fmt"
)

// Ballot orders the attempts of all proposers on one register: by Counter, then by Proposer.
type Ballot struct {
	Counter  uint64
	Proposer string
}

// Less reports whether b orders before o.
func (b Ballot) Less(o Ballot) bool {
	if b.Counter != o.Counter {
		return b.Counter < o.Counter
	}
	return b.Proposer < o.Proposer
}

// IsZero reports whether b is the zero ballot, below every ballot a proposer uses.
func (b Ballot) IsZero() bool { return b.Counter == 0 && b.Proposer == "" }

func (b Ballot) String() string {
	if b.IsZero() {
		return "0"
	}
	return fmt.Sprintf("%d.%s", b.Counter, b.Proposer)
}

func maxBallot(a, b Ballot) Ballot {
	if a.Less(b) {
		return b
	}
	return a
}

// Value is the register's content: Data, opaque to the protocol (the proxy keeps an encoded
// version record in it; nil in the empty register), and Gen, the number of changes that made
// it. Each change chosen adds one to Gen, so that exactly one value is ever chosen with each
// Gen: a proposer that finds another value with the Gen of one it proposed knows its own was
// not chosen. Origin is the ballot of the attempt whose change made the value (a value
// written back under a later ballot keeps it): two proposers whose changes make the same Data
// at the same Gen still make different values, so that neither takes the other's, chosen,
// for its own (two proxies that minted the same version name both "create" it).
type Value struct {
	Gen    uint64
	Data   []byte
	Origin Ballot
}

// Acceptor is the state one acceptor keeps for one register. The storage node keeps it
// durably: a new state must be on disk before its reply is sent.
type Acceptor struct {
	Promised Ballot
	Accepted Ballot
	Value    Value
}

// ReplyKind says what an acceptor answered.
type ReplyKind uint8

// The answers.
const (
	_ ReplyKind = iota
	// Promised: a Prepare was promised; Accepted and Value are the acceptor's last accepted.
	Promised
	// Took: an Accept was taken.
	Took
	// Rejected: a higher ballot was promised or accepted; Seen is it.
	Rejected
	// Peeked: the answer to a Peek: Accepted, Value and Seen (the highest ballot promised).
	Peeked
	// Refused: the host's guard refused an Accept (HandleGuarded): nothing changed.
	Refused
)

func (k ReplyKind) String() string {
	switch k {
	case Promised:
		return "promised"
	case Took:
		return "took"
	case Rejected:
		return "rejected"
	case Peeked:
		return "peeked"
	case Refused:
		return "refused"
	}
	return fmt.Sprintf("ReplyKind(%d)", k)
}

// Message is what a proposer sends an acceptor.
type Message struct {
	Kind MessageKind
	// Ballot: the attempt's (Prepare, Accept); for a Peek, a tag that tells the read's
	// answers from those of its proposer's earlier reads, which may arrive late. A peek
	// promises nothing, and its tag is no ballot an acceptor remembers.
	Ballot Ballot
	Value  Value // Accept
	// Guard (Accept; nil: none) is checked by the acceptor's host before it takes the value
	// (HandleGuarded); the protocol carries it and does not read it.
	Guard []byte
}

// MessageKind is the kind of a Message.
type MessageKind uint8

// The messages.
const (
	_ MessageKind = iota
	Prepare
	Accept
	Peek
)

func (k MessageKind) String() string {
	switch k {
	case Prepare:
		return "prepare"
	case Accept:
		return "accept"
	case Peek:
		return "peek"
	}
	return fmt.Sprintf("MessageKind(%d)", k)
}

// Reply is an acceptor's answer to a Message.
type Reply struct {
	Kind ReplyKind
	// Ballot is the ballot of the message answered (for a Peek, the read's tag).
	Ballot Ballot
	// Accepted: the acceptor's last accepted ballot (Promised, Peeked, Rejected); Value: its
	// value (Promised, Peeked). A rejected Accept whose Accepted is below its ballot was never
	// taken by this acceptor, and never will be: its promise is above it now.
	Accepted Ballot
	Value    Value
	// Seen: the highest ballot the acceptor knows (Rejected, Peeked).
	Seen Ballot
}

// Handle applies a message to the acceptor's state: the new state (to be made durable when it
// differs from a) and the reply. Replies to Peek never change the state.
func (a Acceptor) Handle(m Message) (Acceptor, Reply) {
	switch m.Kind {
	case Prepare:
		if a.Promised.Less(m.Ballot) && a.Accepted.Less(m.Ballot) {
			a.Promised = m.Ballot
			return a, Reply{Kind: Promised, Ballot: m.Ballot, Accepted: a.Accepted, Value: a.Value}
		}
		return a, Reply{Kind: Rejected, Ballot: m.Ballot, Accepted: a.Accepted, Seen: maxBallot(a.Promised, a.Accepted)}
	case Accept:
		if a.Accepted == m.Ballot {
			// The same accept again (a ballot carries one value): taken already.
			return a, Reply{Kind: Took, Ballot: m.Ballot}
		}
		if !m.Ballot.Less(a.Promised) && a.Accepted.Less(m.Ballot) {
			a.Promised, a.Accepted, a.Value = m.Ballot, m.Ballot, m.Value
			return a, Reply{Kind: Took, Ballot: m.Ballot}
		}
		return a, Reply{Kind: Rejected, Ballot: m.Ballot, Accepted: a.Accepted, Seen: maxBallot(a.Promised, a.Accepted)}
	case Peek:
		return a, Reply{Kind: Peeked, Ballot: m.Ballot, Accepted: a.Accepted, Value: a.Value, Seen: maxBallot(a.Promised, a.Accepted)}
	}
	return a, Reply{Kind: Rejected, Ballot: m.Ballot, Seen: maxBallot(a.Promised, a.Accepted)}
}

// HandleGuarded is Handle for a host that checks an Accept's guard: an Accept that the
// acceptor would take anew (not one it took already, nor one it rejects) is first shown to
// holds, and refused, changing nothing, when the guard does not hold. An error of holds is
// returned with the acceptor unchanged and no reply: the host could not tell.
func (a Acceptor) HandleGuarded(m Message, holds func(guard []byte) (bool, error)) (Acceptor, Reply, error) {
	if m.Kind == Accept && m.Guard != nil && a.Accepted != m.Ballot && !m.Ballot.Less(a.Promised) && a.Accepted.Less(m.Ballot) {
		ok, err := holds(m.Guard)
		if err != nil {
			return a, Reply{}, err
		}
		if !ok {
			return a, Reply{Kind: Refused, Ballot: m.Ballot, Accepted: a.Accepted, Seen: maxBallot(a.Promised, a.Accepted)}, nil
		}
	}
	next, r := a.Handle(m)
	return next, r, nil
}

// Change computes the register's next data from its current data (nil: empty). An error
// refuses the change (a failed condition): the register keeps its value and the outcome
// carries the error. Returning the current data unchanged changes nothing (a read). A change
// may be applied more than once, to different current data, when attempts are retried; only
// one application's result is ever chosen.
type Change func(current []byte) ([]byte, error)

// Errors of outcomes.
var (
	// ErrUnavailable: no quorum answered in time, and no Accept was sent: nothing changed.
	ErrUnavailable = errors.New("casreg: no quorum of acceptors answered")
	// ErrUnknown: no quorum answered in time after Accepts were sent: the change may or may
	// not take effect.
	ErrUnknown = errors.New("casreg: the outcome is unknown")
	// ErrRefused: the acceptors' hosts refused the change's guard (Message.Guard) where it
	// left too few of them for a quorum. Fewer than a quorum may have taken the value, so a
	// later proposal may still find it current, as after ErrUnknown: the caller must treat
	// the change as perhaps made, and make another that supersedes it.
	ErrRefused = errors.New("casreg: the change's guard was refused")
)

// Outcome is how a proposal ended.
type Outcome struct {
	// Value is the register's value after the proposal: the new one when the change was
	// made, the current one when it was refused or it was a read.
	Value Value
	// Err: nil when the change was made (or the read answered); the change's own error when it
	// refused; ErrUnavailable or ErrUnknown when the acceptors did not answer in time.
	Err error
	// Ballot is the ballot under which Value is chosen (zero: the empty register, read).
	Ballot Ballot
	// Attempts is how many ballots the proposal used (0 for a read answered by peeking).
	Attempts int
}

// Equal reports whether two values are the same: the same Gen and bytes (nil and empty
// alike).
func (v Value) Equal(o Value) bool {
	return v.Gen == o.Gen && v.Origin == o.Origin && bytes.Equal(v.Data, o.Data)
}
