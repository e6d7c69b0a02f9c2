package casreg

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// The scripts in testdata/ drive acceptors and proposers through a simulated network whose
// every message is delivered, dropped or held by the script. Commands:
//
//	acceptors a1 a2 a3          the register's acceptors (durable state, empty)
//	proposer p1 [timeout=ms]    a proposer over all acceptors
//	propose p1 set=V | create=V | cas=OLD>NEW [guard=G]   start a change; prints what it sends
//	refuse a1 | admit a1        an acceptor's host refuses every guard from now on, or holds them
//	read p1                     start a read
//	deliver [from=X] [to=Y] [kind=K] [n=N]        deliver matching messages in the order sent
//	                            (and what they cause), at most N of them; prints each
//	drop [from=X] [to=Y] [kind=K]                 lose matching messages in flight
//	dup [from=X] [to=Y] [kind=K]                  send matching messages in flight twice
//	crash a1 | restart a1       an acceptor stops answering (its state is kept: it is durable)
//	crash p1                    a proposer is gone, with what it would have sent
//	tick ms=N                   time passes; proposers retry or give up
//	state                       every acceptor's state
//
// A proposer's outcome is printed when it has one.

type packet struct {
	seq      int
	from, to string
	msg      *Message
	reply    *Reply
}

func (pk packet) kind() string {
	if pk.msg != nil {
		return pk.msg.Kind.String()
	}
	return pk.reply.Kind.String()
}

func (pk packet) String() string {
	if pk.msg != nil {
		s := fmt.Sprintf("%s→%s %s", pk.from, pk.to, pk.msg.Kind)
		if pk.msg.Kind != Peek {
			s += " " + pk.msg.Ballot.String()
		}
		if pk.msg.Kind == Accept {
			s += " " + show(pk.msg.Value)
			if pk.msg.Guard != nil {
				s += " guard=" + string(pk.msg.Guard)
			}
		}
		return s
	}
	r := pk.reply
	s := fmt.Sprintf("%s→%s %s", pk.from, pk.to, r.Kind)
	switch r.Kind {
	case Promised:
		s += fmt.Sprintf(" %s (accepted %s %s)", r.Ballot, r.Accepted, show(r.Value))
	case Took:
		s += " " + r.Ballot.String()
	case Rejected, Refused:
		s += fmt.Sprintf(" %s (seen %s)", r.Ballot, r.Seen)
	case Peeked:
		s += fmt.Sprintf(" (accepted %s %s, seen %s)", r.Accepted, show(r.Value), r.Seen)
	}
	return s
}

func show(v Value) string {
	if v.Data == nil {
		return "∅"
	}
	return fmt.Sprintf("%s#%d", v.Data, v.Gen)
}

type sim struct {
	now       time.Time
	names     []string // acceptors, in order
	acceptors map[string]*Acceptor
	down      map[string]bool
	refusing  map[string]bool // acceptors whose hosts refuse every guard
	proposers map[string]*Proposer
	reported  map[string]bool
	flight    []packet
	seq       int
}

func newSim() *sim {
	return &sim{now: time.Unix(1_800_000_000, 0), acceptors: map[string]*Acceptor{}, down: map[string]bool{}, refusing: map[string]bool{},
		proposers: map[string]*Proposer{}, reported: map[string]bool{}}
}

func (s *sim) send(from string, envs []Envelope, out *[]string) {
	for _, e := range envs {
		m := e.Msg
		s.seq++
		pk := packet{seq: s.seq, from: from, to: e.To, msg: &m}
		s.flight = append(s.flight, pk)
		*out = append(*out, "  sent "+pk.String())
	}
}

// outcomes prints the outcomes proposers reached since the last call.
func (s *sim) outcomes(out *[]string) {
	var ids []string
	for id := range s.proposers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if o, ok := s.proposers[id].Outcome(); ok && !s.reported[id] {
			s.reported[id] = true
			*out = append(*out, fmt.Sprintf("  %s done: %s", id, describe(o)))
		}
	}
}

func describe(o Outcome) string {
	res := "ok"
	if o.Err != nil {
		res = o.Err.Error()
	}
	return fmt.Sprintf("%s, value %s at %s after %d attempts", res, show(o.Value), o.Ballot, o.Attempts)
}

// deliverOne hands a packet to its recipient.
func (s *sim) deliverOne(pk packet, out *[]string) {
	if s.down[pk.to] || s.down[pk.from] {
		*out = append(*out, pk.String()+": lost (down)")
		return
	}
	if pk.msg != nil {
		a, ok := s.acceptors[pk.to]
		if !ok {
			*out = append(*out, pk.String()+": lost (no such acceptor)")
			return
		}
		next, r, err := a.HandleGuarded(*pk.msg, func([]byte) (bool, error) { return !s.refusing[pk.to], nil })
		if err != nil {
			panic(err) // the simulated host always tells
		}
		*a = next
		*out = append(*out, pk.String())
		s.seq++
		s.flight = append(s.flight, packet{seq: s.seq, from: pk.to, to: pk.from, reply: &r})
		return
	}
	p, ok := s.proposers[pk.to]
	if !ok {
		*out = append(*out, pk.String()+": lost (proposer gone)")
		return
	}
	*out = append(*out, pk.String())
	s.send(pk.to, p.Step(s.now, pk.from, *pk.reply), out)
	s.outcomes(out)
}

type filter struct{ from, to, kind string }

func (f filter) match(pk packet) bool {
	return (f.from == "" || f.from == pk.from) && (f.to == "" || f.to == pk.to) && (f.kind == "" || f.kind == pk.kind())
}

func scanFilter(d *datadriven.TestData) filter {
	var f filter
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "from":
			f.from = a.Vals[0]
		case "to":
			f.to = a.Vals[0]
		case "kind":
			f.kind = a.Vals[0]
		}
	}
	return f
}

// changeOf parses set=V, create=V or cas=OLD>NEW.
func changeOf(d *datadriven.TestData) (Change, error) {
	for _, a := range d.CmdArgs {
		v := strings.Join(a.Vals, ",")
		switch a.Key {
		case "set":
			return func([]byte) ([]byte, error) { return []byte(v), nil }, nil
		case "create":
			return func(cur []byte) ([]byte, error) {
				if cur != nil {
					return nil, fmt.Errorf("exists (%s)", cur)
				}
				return []byte(v), nil
			}, nil
		case "cas":
			old, new, ok := strings.Cut(v, ">")
			if !ok {
				return nil, errors.New("cas=OLD>NEW")
			}
			return func(cur []byte) ([]byte, error) {
				if string(cur) != old {
					return nil, fmt.Errorf("mismatch (%s)", cur)
				}
				return []byte(new), nil
			}, nil
		}
	}
	return nil, errors.New("no change: set=, create= or cas=")
}

func (s *sim) run(t *testing.T, d *datadriven.TestData) string {
	var out []string
	first := ""
	if len(d.CmdArgs) > 0 {
		first = d.CmdArgs[0].Key
	}
	switch d.Cmd {
	case "acceptors":
		for _, a := range d.CmdArgs {
			s.names = append(s.names, a.Key)
			s.acceptors[a.Key] = &Acceptor{}
		}
	case "proposer":
		cfg := Config{ID: first, Acceptors: slices.Clone(s.names)}
		if d.HasArg("timeout") {
			var ms int
			d.ScanArgs(t, "timeout", &ms)
			cfg.Timeout = time.Duration(ms) * time.Millisecond
		}
		p, err := NewProposer(cfg)
		if err != nil {
			return err.Error()
		}
		s.proposers[first] = p
	case "propose":
		ch, err := changeOf(d)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		delete(s.reported, first)
		if d.HasArg("guard") {
			var g string
			d.ScanArgs(t, "guard", &g)
			s.send(first, s.proposers[first].ProposeGuarded(s.now, ch, []byte(g)), &out)
		} else {
			s.send(first, s.proposers[first].Propose(s.now, ch), &out)
		}
	case "read":
		delete(s.reported, first)
		s.send(first, s.proposers[first].Read(s.now), &out)
	case "deliver":
		f := scanFilter(d)
		limit := -1
		if d.HasArg("n") {
			d.ScanArgs(t, "n", &limit)
		}
		for limit != 0 {
			i := slices.IndexFunc(s.flight, f.match)
			if i < 0 {
				break
			}
			pk := s.flight[i]
			s.flight = slices.Delete(s.flight, i, i+1)
			s.deliverOne(pk, &out)
			limit--
		}
	case "drop", "dup":
		f := scanFilter(d)
		var kept []packet
		for _, pk := range s.flight {
			if !f.match(pk) {
				kept = append(kept, pk)
				continue
			}
			if d.Cmd == "drop" {
				out = append(out, "dropped "+pk.String())
				continue
			}
			kept = append(kept, pk)
			s.seq++
			cp := pk
			cp.seq = s.seq
			kept = append(kept, cp)
			out = append(out, "duplicated "+pk.String())
		}
		s.flight = kept
	case "crash":
		if _, ok := s.acceptors[first]; ok {
			s.down[first] = true
		} else if _, ok := s.proposers[first]; ok {
			delete(s.proposers, first)
		} else {
			t.Fatalf("%s: no %s to crash", d.Pos, first)
		}
	case "restart":
		delete(s.down, first)
	case "refuse":
		s.refusing[first] = true
	case "admit":
		delete(s.refusing, first)
	case "tick":
		var ms int
		d.ScanArgs(t, "ms", &ms)
		s.now = s.now.Add(time.Duration(ms) * time.Millisecond)
		var ids []string
		for id := range s.proposers {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			s.send(id, s.proposers[id].Tick(s.now), &out)
		}
		s.outcomes(&out)
	case "state":
		for _, n := range s.names {
			a := s.acceptors[n]
			line := fmt.Sprintf("%s: promised %s, accepted %s %s", n, a.Promised, a.Accepted, show(a.Value))
			if s.down[n] {
				line += " (down)"
			}
			if s.refusing[n] {
				line += " (refusing guards)"
			}
			out = append(out, line)
		}
		if len(s.flight) > 0 {
			out = append(out, fmt.Sprintf("in flight: %d", len(s.flight)))
		}
	default:
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/scripts", func(t *testing.T, path string) {
		s := newSim()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string { return s.run(t, d) })
	})
}
