package casreg

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRandomHistories runs proposers against acceptors over a network that delivers messages
// in any order, loses and duplicates them, crashes and restarts acceptors and crashes
// proposers mid-change, and checks every history against the register's promise. Each change
// appends its own ID to a log, on a condition: only if the log has the length it last saw
// (If-Match), only if it is empty (If-None-Match: *), or always. Then the history is
// linearizable exactly when (Rystsov's check):
//
//   - the final log holds each ID at most once, and only IDs of changes that were made or
//     whose outcome is unknown (their proposer crashed, or the deadline passed after an accept
//     went out);
//   - every answer (a made change's log, a refusal's or a read's current log) is a prefix of
//     the final log, and a made change's log ends with its own ID;
//   - an answer given before another operation started is no longer than that operation's.
//
// A failure names its seed: TestRandomHistories/seed=N reproduces it.
func TestRandomHistories(t *testing.T) {
	seeds := 400
	if s, err := strconv.Atoi(os.Getenv("CASREG_SEEDS")); err == nil {
		seeds = s
	}
	if testing.Short() {
		seeds = 50
	}
	// Guards must be sent and checked: hosts refuse them a part of the time, so some guarded
	// changes end Refused. None in all the histories would mean a guard never reached a host.
	var refusedByGuards atomic.Int64
	t.Cleanup(func() {
		if seeds >= 50 && refusedByGuards.Load() == 0 && !t.Failed() {
			t.Errorf("no guarded change was refused in %d histories: guards are not sent or not checked", seeds)
		}
	})
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			refusedByGuards.Add(int64(randomHistory(t, uint64(seed))))
		})
	}
}

type op struct {
	id       string
	kind     string // "if-len", "if-empty", "always", "read"
	start    int
	end      int // -1: no outcome (the proposer crashed)
	outcome  Outcome
	answered bool
}

type world struct {
	r         *rand.Rand
	now       time.Time
	names     []string
	acceptors map[string]*Acceptor
	down      map[string]bool
	refusing  map[string]bool // acceptors whose hosts refuse guards (a storage node that holds a newer version)
	flight    []packet
	seq       int
	step      int
	ops       []*op
	running   map[string]*op // by proposer ID
	proposers map[string]*Proposer
	lastLen   map[string]int // the log length each proposer last saw
}

func parseLog(v Value) []string { return parseData(v.Data) }

// sameID is what a "same" change appends to a log of n entries: no operation's own ID.
func sameID(n int) string { return fmt.Sprintf("s%d", n) }

func parseData(d []byte) []string {
	if len(d) == 0 {
		return nil
	}
	return strings.Split(string(d), ",")
}

func appendLog(d []byte, id string) []byte {
	if len(d) == 0 {
		return []byte(id)
	}
	return []byte(string(d) + "," + id)
}

var errCondition = errors.New("condition failed")

// randomHistory runs and checks one history; it returns how many changes ended refused by
// guards.
func randomHistory(t *testing.T, seed uint64) int {
	w := &world{r: rand.New(rand.NewPCG(seed, seed*7919)), now: time.Unix(1_800_000_000, 0), acceptors: map[string]*Acceptor{},
		down: map[string]bool{}, refusing: map[string]bool{}, running: map[string]*op{}, proposers: map[string]*Proposer{}, lastLen: map[string]int{}}
	n := 3
	if seed%3 == 0 {
		n = 5
	}
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("a%d", i)
		w.names = append(w.names, name)
		w.acceptors[name] = &Acceptor{}
	}
	generation := 0
	newProposer := func() string {
		generation++
		id := fmt.Sprintf("p%d", generation)
		p, err := NewProposer(Config{ID: id, Acceptors: w.names, Timeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		w.proposers[id] = p
		return id
	}
	for range 3 {
		newProposer()
	}
	opCount := 0
	for w.step = 0; w.step < 600; w.step++ {
		// Idle proposers start an operation now and then.
		for _, pid := range sortedKeys(w.proposers) {
			if w.running[pid] != nil || w.r.IntN(4) != 0 {
				continue
			}
			opCount++
			o := &op{id: fmt.Sprintf("o%d", opCount), start: w.step, end: -1}
			p := w.proposers[pid]
			// A third of the changes carry a guard, which acceptors' hosts may refuse.
			guarded := w.r.IntN(3) == 0
			propose := func(now time.Time, c Change) []Envelope {
				if guarded {
					return p.ProposeGuarded(now, c, []byte("g"))
				}
				return p.Propose(now, c)
			}
			var envs []Envelope
			switch k := w.r.IntN(10); {
			case k < 2:
				o.kind = "read"
				envs = p.Read(w.now)
			case k < 3:
				o.kind = "if-empty"
				envs = propose(w.now, func(d []byte) ([]byte, error) {
					if len(d) != 0 {
						return nil, errCondition
					}
					return appendLog(d, o.id), nil
				})
			case k < 4:
				o.kind = "always"
				envs = propose(w.now, func(d []byte) ([]byte, error) { return appendLog(d, o.id), nil })
			case k < 5:
				// A change whose value depends on the state only: proposers making it on the
				// same state propose identical values (two proxies that minted one name).
				o.kind = "same"
				envs = propose(w.now, func(d []byte) ([]byte, error) { return appendLog(d, sameID(len(parseData(d)))), nil })
			default:
				o.kind = "if-len"
				want := w.lastLen[pid]
				envs = propose(w.now, func(d []byte) ([]byte, error) {
					if len(parseData(d)) != want {
						return nil, errCondition
					}
					return appendLog(d, o.id), nil
				})
			}
			w.ops = append(w.ops, o)
			w.running[pid] = o
			w.post(pid, envs)
		}
		// The network and the faults.
		switch k := w.r.IntN(100); {
		case k < 70:
			w.deliverRandom()
		case k < 75:
			w.dropRandom()
		case k < 80:
			w.duplicateRandom()
		case k < 84:
			w.down[w.names[w.r.IntN(n)]] = true
		case k < 87:
			clear(w.down)
		case k < 90:
			// A host starts or stops refusing guards.
			a := w.names[w.r.IntN(n)]
			w.refusing[a] = !w.refusing[a]
		case k < 98:
			w.now = w.now.Add(time.Duration(w.r.IntN(60)) * time.Millisecond)
			for _, pid := range sortedKeys(w.proposers) {
				w.post(pid, w.proposers[pid].Tick(w.now))
			}
		default:
			// A proxy dies mid-operation: its operation has no outcome, and its messages are
			// still in flight. A new proxy (a new ID) takes its place.
			pid := sortedKeys(w.proposers)[w.r.IntN(len(w.proposers))]
			delete(w.proposers, pid)
			delete(w.running, pid)
			newProposer()
		}
		w.collect()
	}
	// Heal, let everything in flight arrive, and let the running operations finish.
	clear(w.down)
	for range 10000 {
		if len(w.flight) > 0 {
			w.deliverRandom()
		} else {
			w.now = w.now.Add(20 * time.Millisecond)
			for _, pid := range sortedKeys(w.proposers) {
				w.post(pid, w.proposers[pid].Tick(w.now))
			}
		}
		w.collect()
		if len(w.running) == 0 && len(w.flight) == 0 {
			break
		}
	}
	// The final log, read by a new proposer with everyone up.
	final := newProposer()
	w.post(final, w.proposers[final].Read(w.now))
	for len(w.flight) > 0 {
		w.deliverRandom()
	}
	fo, ok := w.proposers[final].Outcome()
	if !ok || fo.Err != nil {
		t.Fatalf("seed %d: the final read: %+v %v", seed, fo, ok)
	}
	return w.check(t, seed, parseLog(fo.Value))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (w *world) post(from string, envs []Envelope) {
	for _, e := range envs {
		m := e.Msg
		w.seq++
		w.flight = append(w.flight, packet{seq: w.seq, from: from, to: e.To, msg: &m})
	}
}

func (w *world) deliverRandom() {
	if len(w.flight) == 0 {
		return
	}
	i := w.r.IntN(len(w.flight))
	pk := w.flight[i]
	w.flight = slices.Delete(w.flight, i, i+1)
	if w.down[pk.to] || w.down[pk.from] {
		return
	}
	if pk.msg != nil {
		a := w.acceptors[pk.to]
		next, r, _ := a.HandleGuarded(*pk.msg, func([]byte) (bool, error) { return !w.refusing[pk.to], nil })
		*a = next
		w.seq++
		w.flight = append(w.flight, packet{seq: w.seq, from: pk.to, to: pk.from, reply: &r})
		return
	}
	if p, ok := w.proposers[pk.to]; ok {
		w.post(pk.to, p.Step(w.now, pk.from, *pk.reply))
	}
}

// dropRandom loses a message or a reply. Its proposer is told (Lost) most of the time, as a
// proxy learns of a failed request; and sometimes it is told of a loss that did not happen (a
// timeout whose message still arrives), which must be as safe.
func (w *world) dropRandom() {
	if len(w.flight) == 0 {
		return
	}
	i := w.r.IntN(len(w.flight))
	pk := w.flight[i]
	if w.r.IntN(4) != 0 {
		w.flight = slices.Delete(w.flight, i, i+1)
	}
	if w.r.IntN(4) == 0 {
		return // the proposer is not told: it waits for its deadline or a pause
	}
	if pk.msg != nil {
		if p, ok := w.proposers[pk.from]; ok {
			w.post(pk.from, p.Lost(w.now, pk.to, *pk.msg))
		}
		return
	}
	if p, ok := w.proposers[pk.to]; ok {
		m := Message{Ballot: pk.reply.Ballot}
		switch pk.reply.Kind {
		case Promised:
			m.Kind = Prepare
		case Took:
			m.Kind = Accept
		case Peeked:
			m.Kind = Peek
		default:
			return
		}
		w.post(pk.to, p.Lost(w.now, pk.from, m))
	}
}

func (w *world) duplicateRandom() {
	if len(w.flight) > 0 {
		w.flight = append(w.flight, w.flight[w.r.IntN(len(w.flight))])
	}
}

// collect records the outcomes proposers reached.
func (w *world) collect() {
	for pid, o := range w.running {
		out, ok := w.proposers[pid].Outcome()
		if !ok {
			continue
		}
		o.end, o.outcome, o.answered = w.step, out, true
		if out.Err == nil || errors.Is(out.Err, errCondition) {
			w.lastLen[pid] = len(parseLog(out.Value))
		}
		delete(w.running, pid)
	}
}

func (w *world) check(t *testing.T, seed uint64, final []string) (refusedByGuards int) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		var h []string
		for _, o := range w.ops {
			h = append(h, fmt.Sprintf("  %s %s [%d,%d] %s", o.id, o.kind, o.start, o.end, describe(o.outcome)))
		}
		t.Fatalf("seed %d: "+format+"\nfinal log %v\nhistory:\n%s", append(append([]any{seed}, args...), final, strings.Join(h, "\n"))...)
	}
	pos := map[string]int{}
	for i, id := range final {
		if _, twice := pos[id]; twice {
			fail("%s appears twice in the final log", id)
		}
		pos[id] = i
	}
	isPrefix := func(l []string) bool { return len(l) <= len(final) && slices.Equal(l, final[:len(l)]) }
	byID := map[string]*op{}
	made, refused, reads, guarded := 0, 0, 0, 0
	for _, o := range w.ops {
		byID[o.id] = o
		if !o.answered {
			continue // no outcome: it may or may not be in the log
		}
		got := parseLog(o.outcome.Value)
		switch {
		case o.outcome.Err == nil:
			if !isPrefix(got) {
				fail("%s answered %v, not a prefix of the final log", o.id, got)
			}
			if o.kind != "read" {
				made++
				mine := o.id
				if o.kind == "same" {
					mine = sameID(len(got) - 1)
				}
				if len(got) == 0 || got[len(got)-1] != mine {
					fail("%s was made, but its answer %v does not end with %s", o.id, got, mine)
				}
				if o.kind == "same" {
					// Its entry is no other operation's: two made with one entry were both
					// told they appended what one of them did.
					if other := byID[mine]; other != nil {
						fail("%s and %s were both made, appending one entry %s", other.id, o.id, mine)
					}
					byID[mine] = o
				}
			} else {
				reads++
			}
		case errors.Is(o.outcome.Err, errCondition):
			refused++
			if !isPrefix(got) {
				fail("%s was refused on %v, not a prefix of the final log", o.id, got)
			}
			if _, in := pos[o.id]; in {
				fail("%s was refused, yet it is in the final log", o.id)
			}
		case errors.Is(o.outcome.Err, ErrUnavailable):
			if _, in := pos[o.id]; in {
				fail("%s was unavailable (nothing sent), yet it is in the final log", o.id)
			}
		case errors.Is(o.outcome.Err, ErrRefused):
			guarded++ // it may or may not be in the log, as below
		case errors.Is(o.outcome.Err, ErrUnknown):
			// It may or may not be in the log (a refused change may have been taken by a
			// minority, and found there later).
		default:
			fail("%s: unexpected outcome %v", o.id, o.outcome.Err)
		}
	}
	for i, id := range final {
		o := byID[id]
		if o == nil && id == sameID(i) {
			continue // a "same" change's whose outcome is unknown
		}
		if o == nil {
			fail("%s in the final log is no operation's", id)
		}
		if o.answered && o.outcome.Err != nil && !errors.Is(o.outcome.Err, ErrUnknown) && !errors.Is(o.outcome.Err, ErrRefused) {
			fail("%s is in the final log, but was answered %v", id, o.outcome.Err)
		}
	}
	// Real time: an answer given before an operation started is no longer than its answer.
	for _, a := range w.ops {
		if !a.answered || (a.outcome.Err != nil && !errors.Is(a.outcome.Err, errCondition)) {
			continue
		}
		for _, b := range w.ops {
			if !b.answered || (b.outcome.Err != nil && !errors.Is(b.outcome.Err, errCondition)) || a.end >= b.start {
				continue
			}
			if la, lb := len(parseLog(a.outcome.Value)), len(parseLog(b.outcome.Value)); la > lb {
				fail("%s answered a log of %d before %s began, which answered %d", a.id, la, b.id, lb)
			}
		}
	}
	if testing.Verbose() {
		t.Logf("seed %d: %d operations: %d made, %d refused, %d refused by guards, %d reads; final log of %d", seed, len(w.ops), made, refused, guarded, reads, len(final))
	}
	return guarded
}
