package casreg

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"
)

// Config configures a Proposer.
type Config struct {
	// ID names the proposer; it breaks ties between ballots, so two proposers must never share
	// one (a proxy uses its node ID and a process start stamp).
	ID string
	// Acceptors are the register's acceptors (the name's primary replicas). A quorum is a
	// majority of them.
	Acceptors []string
	// Timeout bounds a proposal: without an outcome by then, it ends Unavailable or Unknown.
	// Default 10 s.
	Timeout time.Duration
	// RetryBase is the pause before the second attempt after a rejection; it doubles with
	// each attempt up to RetryMax, and a share of it depends on the proposer's ID and the
	// attempt, so that duelling proposers fall out of step. Defaults 2 ms and 200 ms.
	RetryBase, RetryMax time.Duration
}

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.ID == "" {
		return errors.New("casreg: a proposer needs an ID")
	}
	if len(c.Acceptors) == 0 {
		return errors.New("casreg: no acceptors")
	}
	seen := map[string]bool{}
	for _, a := range c.Acceptors {
		if seen[a] {
			return fmt.Errorf("casreg: acceptor %q named twice", a)
		}
		seen[a] = true
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	if c.RetryBase == 0 {
		c.RetryBase = 2 * time.Millisecond
	}
	if c.RetryMax == 0 {
		c.RetryMax = 200 * time.Millisecond
	}
	if c.Timeout < 0 || c.RetryBase < 0 || c.RetryMax < c.RetryBase {
		return fmt.Errorf("casreg: timeout %v, retry %v..%v", c.Timeout, c.RetryBase, c.RetryMax)
	}
	return nil
}

// Envelope is a message for one acceptor.
type Envelope struct {
	To  string
	Msg Message
}

type ownAccept struct {
	ballot Ballot
	value  Value
}

type phase uint8

const (
	idle phase = iota
	peeking
	preparing
	accepting
	waiting // for the pause before the next attempt
	done
)

// Proposer runs one proposal at a time on one register. It is not safe for concurrent use;
// its owner feeds it replies and the time from one goroutine.
type Proposer struct {
	cfg    Config
	quorum int
	// last is the highest ballot this proposer has seen, its own included; every new attempt
	// starts above it. It outlives proposals: a proxy keeps one Proposer per register it
	// writes, or starts from Observe'd ballots.
	last Ballot

	phase    phase
	change   Change // nil: a read
	guard    []byte // the change's guard, sent with the Accepts of the values it makes
	ballot   Ballot // the current attempt's
	attempts int
	deadline time.Time
	retryAt  time.Time
	replies  map[string]Reply // this attempt's answers, by acceptor
	proposed Value            // the value of this attempt's Accepts
	refusal  error            // the change's error when proposed is a write-back
	// own are the values this proposal's change made and sent in Accepts, with their
	// ballots: a later attempt must recognise them rather than apply the change again.
	own     []ownAccept
	outcome Outcome
	// reads counts the proposer's reads; readTag marks the running one's peeks.
	reads   uint64
	readTag Ballot
}

// NewProposer returns a proposer for one register.
func NewProposer(cfg Config) (*Proposer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Proposer{cfg: cfg, quorum: len(cfg.Acceptors)/2 + 1}, nil
}

// Quorum is how many acceptors make a majority.
func (p *Proposer) Quorum() int { return p.quorum }

// Observe tells the proposer of a ballot seen elsewhere, so that its next attempt starts above.
func (p *Proposer) Observe(b Ballot) { p.last = maxBallot(p.last, b) }

// Propose starts a change; the messages to send are returned. A proposal still running is
// abandoned (its outcome is never reported).
func (p *Proposer) Propose(now time.Time, change Change) []Envelope {
	if change == nil {
		change = func(d []byte) ([]byte, error) { return d, nil }
	}
	p.begin(now, change)
	return p.attempt()
}

// ProposeGuarded is Propose with a guard: the Accepts of the values the change makes carry
// it (Message.Guard), and the acceptors' hosts may refuse them (HandleGuarded). Write-backs of
// the current value carry none: they change nothing the guard protects.
func (p *Proposer) ProposeGuarded(now time.Time, change Change, guard []byte) []Envelope {
	envs := p.Propose(now, change)
	p.guard = guard
	return envs
}

// Read starts a read: a peek first, a full round if the peek does not settle it.
func (p *Proposer) Read(now time.Time) []Envelope {
	p.begin(now, nil)
	p.phase = peeking
	p.replies = map[string]Reply{}
	p.reads++
	p.readTag = Ballot{Counter: p.reads, Proposer: p.cfg.ID}
	return p.broadcast(Message{Kind: Peek, Ballot: p.readTag})
}

func (p *Proposer) begin(now time.Time, change Change) {
	p.change, p.attempts, p.own, p.refusal, p.proposed, p.guard = change, 0, nil, nil, Value{}, nil
	p.deadline = now.Add(p.cfg.Timeout)
	p.outcome = Outcome{}
}

// Outcome is the proposal's outcome, once it has one.
func (p *Proposer) Outcome() (Outcome, bool) {
	if p.phase != done {
		return Outcome{}, false
	}
	return p.outcome, true
}

// Deadline is when the running proposal ends without a quorum; NextTick is the earliest time
// Tick has something to do (zero: nothing pending).
func (p *Proposer) NextTick() time.Time {
	switch p.phase {
	case idle, done:
		return time.Time{}
	case waiting:
		if p.retryAt.Before(p.deadline) {
			return p.retryAt
		}
	}
	return p.deadline
}

// Tick lets time pass: a pause before the next attempt ends, or the deadline passes.
func (p *Proposer) Tick(now time.Time) []Envelope {
	switch p.phase {
	case idle, done:
		return nil
	}
	if !now.Before(p.deadline) {
		err := ErrUnavailable
		if len(p.own) > 0 {
			err = ErrUnknown
		}
		p.finish(Outcome{Err: err, Attempts: p.attempts})
		return nil
	}
	if p.phase == waiting && !now.Before(p.retryAt) {
		return p.attempt()
	}
	return nil
}

// Step takes an acceptor's reply.
func (p *Proposer) Step(now time.Time, from string, r Reply) []Envelope {
	if !slices.Contains(p.cfg.Acceptors, from) {
		return nil
	}
	p.Observe(r.Seen)
	p.Observe(r.Accepted)
	switch p.phase {
	case peeking:
		if r.Kind != Peeked || r.Ballot != p.readTag {
			return nil // not an answer to this read
		}
		p.replies[from] = r
		return p.afterPeek()
	case preparing, accepting:
		if r.Ballot != p.ballot {
			return nil // an answer to an earlier attempt
		}
		if r.Kind == Rejected || (r.Kind == Refused && p.phase == accepting) {
			p.replies[from] = r
			if p.count(Refused) > len(p.cfg.Acceptors)-p.quorum {
				// Every quorum holds a refusal: another attempt would be refused as well.
				p.finish(Outcome{Err: ErrRefused, Attempts: p.attempts})
				return nil
			}
			if p.count(Rejected)+p.count(Refused)+p.count(lostReply) > len(p.cfg.Acceptors)-p.quorum {
				p.pause(now)
			}
			return nil
		}
		if p.phase == preparing && r.Kind == Promised {
			p.replies[from] = r
			if p.count(Promised) >= p.quorum {
				return p.afterPromises()
			}
			return nil
		}
		if p.phase == accepting && r.Kind == Took {
			p.replies[from] = r
			if p.count(Took) >= p.quorum {
				p.finish(Outcome{Value: p.proposed, Err: p.refusal, Ballot: p.ballot, Attempts: p.attempts})
			}
		}
	}
	return nil
}

// Lost tells the proposer that message m, sent to acceptor to, or its answer was lost: the
// acceptor may or may not have acted on it. Counted with the rejections of its attempt, it
// lets the proposer try again (after its pause) as soon as the attempt can no longer reach a
// quorum, instead of waiting out the deadline; a lost peek that leaves too few peeks for a
// quorum makes the read a full round. A message of an earlier attempt, or to an acceptor that
// has answered, changes nothing.
func (p *Proposer) Lost(now time.Time, to string, m Message) []Envelope {
	if !slices.Contains(p.cfg.Acceptors, to) || p.replies == nil {
		return nil
	}
	if _, answered := p.replies[to]; answered {
		return nil
	}
	switch p.phase {
	case peeking:
		if m.Kind != Peek || m.Ballot != p.readTag {
			return nil
		}
		p.replies[to] = Reply{Kind: lostReply}
		if p.count(lostReply) > len(p.cfg.Acceptors)-p.quorum {
			p.change = func(d []byte) ([]byte, error) { return d, nil }
			return p.attempt()
		}
	case preparing, accepting:
		if m.Ballot != p.ballot || (p.phase == preparing) != (m.Kind == Prepare) {
			return nil
		}
		p.replies[to] = Reply{Kind: lostReply}
		if p.count(Rejected)+p.count(Refused)+p.count(lostReply) > len(p.cfg.Acceptors)-p.quorum {
			p.pause(now)
		}
	}
	return nil
}

// lostReply stands in a proposer's replies for an answer that will not come (Lost).
const lostReply ReplyKind = 255

func (p *Proposer) count(k ReplyKind) int {
	n := 0
	for _, r := range p.replies {
		if r.Kind == k {
			n++
		}
	}
	return n
}

// afterPeek settles a read from a quorum of peeks that agree on the accepted ballot, and runs
// a full round otherwise.
func (p *Proposer) afterPeek() []Envelope {
	if p.count(Peeked) < p.quorum {
		return nil
	}
	byBallot := map[Ballot]int{}
	for _, r := range p.replies {
		if r.Kind != Peeked {
			continue
		}
		byBallot[r.Accepted]++
		if byBallot[r.Accepted] >= p.quorum {
			// A quorum accepted this ballot's value: it is chosen, and no later value can
			// have been chosen without one of them having accepted it.
			p.finish(Outcome{Value: r.Value, Ballot: r.Accepted})
			return nil
		}
	}
	// A quorum answered and disagrees (a write in progress, or an acceptor behind): waiting
	// for the rest could settle it, but one of them may be down, so settle it with a round.
	p.change = func(d []byte) ([]byte, error) { return d, nil }
	return p.attempt()
}

// afterPromises applies the change to the value the quorum says is current.
func (p *Proposer) afterPromises() []Envelope {
	var current Reply
	agreed := true
	first := true
	for _, r := range p.replies {
		if r.Kind != Promised {
			continue
		}
		if first {
			current, first = r, false
			continue
		}
		if r.Accepted != current.Accepted {
			agreed = false
		}
		if current.Accepted.Less(r.Accepted) {
			current = r
		}
	}
	// An earlier attempt of this proposal may have sent the change's value. Found current, it
	// is ours (written back unless chosen already). Superseded by a value of a later Gen, it
	// may have been chosen in between, and nobody can tell: the outcome is unknown. Otherwise
	// (another value of its Gen or an earlier one is current) it was not chosen, and once a
	// value is chosen under this attempt's ballot, above its own, it never will be: the change
	// is applied afresh, and this attempt writes even what it could otherwise leave as it is.
	for _, o := range p.own {
		if current.Value.Equal(o.value) {
			if agreed {
				p.finish(Outcome{Value: current.Value, Ballot: current.Accepted, Attempts: p.attempts})
				return nil
			}
			p.proposed, p.refusal = current.Value, nil
			return p.sendAccepts(p.guard)
		}
	}
	for _, o := range p.own {
		if current.Value.Gen > o.value.Gen {
			p.finish(Outcome{Err: ErrUnknown, Attempts: p.attempts})
			return nil
		}
	}
	mustWrite := len(p.own) > 0
	data, err := p.change(current.Value.Data)
	// A refusal, or a change that leaves the data as it is (a read), writes nothing new: the
	// current value is written back under this ballot unless it is chosen already.
	if err != nil || bytes.Equal(data, current.Value.Data) {
		if agreed && !mustWrite {
			// Every promise names the same accepted value: a quorum holds it, so it is
			// chosen and nothing needs writing.
			p.finish(Outcome{Value: current.Value, Err: err, Ballot: current.Accepted, Attempts: p.attempts})
			return nil
		}
		p.proposed, p.refusal = current.Value, err
		return p.sendAccepts(nil)
	}
	p.proposed, p.refusal = Value{Gen: current.Value.Gen + 1, Data: data, Origin: p.ballot}, nil
	p.own = append(p.own, ownAccept{ballot: p.ballot, value: p.proposed})
	return p.sendAccepts(p.guard)
}

func (p *Proposer) sendAccepts(guard []byte) []Envelope {
	p.phase = accepting
	p.replies = map[string]Reply{}
	return p.broadcast(Message{Kind: Accept, Ballot: p.ballot, Value: p.proposed, Guard: guard})
}

func (p *Proposer) attempt() []Envelope {
	p.attempts++
	p.ballot = Ballot{Counter: p.last.Counter + 1, Proposer: p.cfg.ID}
	p.last = p.ballot
	p.phase = preparing
	p.replies = map[string]Reply{}
	return p.broadcast(Message{Kind: Prepare, Ballot: p.ballot})
}

func (p *Proposer) pause(now time.Time) {
	p.phase = waiting
	p.replies = nil
	d := p.cfg.RetryBase << min(p.attempts-1, 20)
	if d > p.cfg.RetryMax || d <= 0 {
		d = p.cfg.RetryMax
	}
	// Half the pause is fixed, half depends on who and which attempt: two proposers that
	// keep rejecting each other's ballots fall out of step.
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", p.cfg.ID, p.attempts)
	d = d/2 + time.Duration(h.Sum32()%uint32(d/2+1))
	p.retryAt = now.Add(d)
}

func (p *Proposer) finish(o Outcome) {
	p.phase = done
	p.outcome = o
	p.replies = nil
}

func (p *Proposer) broadcast(m Message) []Envelope {
	out := make([]Envelope, len(p.cfg.Acceptors))
	for i, a := range p.cfg.Acceptors {
		out[i] = Envelope{To: a, Msg: m}
	}
	return out
}
