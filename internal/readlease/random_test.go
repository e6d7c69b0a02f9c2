package readlease

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestRandomHistories runs clients' writes and reads against three simulated storage nodes of
// one partition, whose first primary answers reads alone under the lease, through proxies that
// follow the protocol's rules (revoke before answering a write or a read the first primary may
// not hold), over a network that delays and loses messages, while nodes crash, restart and
// pause, clocks run at different rates, proxies die mid-write and replication passes run.
// Every key's history must be linearizable as a register whose writes keep the newest
// version (the store's newest-timestamp-wins). CAIRN_READLEASE_SEEDS=N runs N seeds.
func TestRandomHistories(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 40
	}
	if s := os.Getenv("CAIRN_READLEASE_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		seeds = n
	}
	fast := 0
	first := uint64(0)
	if s := os.Getenv("CAIRN_READLEASE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		first, seeds = n, 1
	}
	for seed := first; seed < first+uint64(seeds); seed++ {
		// A third of the seeds each strike the holder or a granter more often.
		w := newWorld(seed, simRules{hostile: []string{"", simHolder, "A"}[seed%3]})
		w.run(20 * time.Second)
		if res, info := w.check(); res != porcupine.Ok {
			path := fmt.Sprintf("%s/readlease-seed-%d.html", t.TempDir(), seed)
			if f, err := os.Create(path); err == nil {
				_ = porcupine.Visualize(w.model(), info, f)
				f.Close()
			}
			t.Fatalf("seed %d: history not linearizable (%v) for keys %v; %d operations; visualised in %s\n%s", seed, res, w.illegalKeys(), len(w.ops), path, w.trace())
		}
		fast += w.fastReads
	}
	// The lease must be used, or the test proves nothing about it.
	if fast == 0 {
		t.Fatal("no read was answered alone under a lease")
	}
	t.Logf("%d seeds, %d reads answered alone", seeds, fast)
}

// TestRandomHistoriesFindBrokenRules checks that the random histories can fail: with each of
// the protocol's rules left out, some seed's history is not linearizable.
func TestRandomHistoriesFindBrokenRules(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of searches; the full suite runs it")
	}
	for _, broken := range []simRules{
		{noWriteRevoke: true},
		{noReadRevoke: true},
		{noSettle: true},
		{noWait: true},
		{grantAtStart: true, hostile: "A"},
		{answerAtStart: true, hostile: simHolder},
	} {
		t.Run(fmt.Sprintf("%+v", broken), func(t *testing.T) {
			for seed := range uint64(seedsToFind) {
				w := newWorld(seed, broken)
				w.run(20 * time.Second)
				if res, _ := w.check(); res == porcupine.Illegal {
					t.Logf("seed %d found it", seed)
					return
				}
			}
			t.Fatal("no seed found the broken rule")
		})
	}
}

// seedsToFind is how many seeds TestRandomHistoriesFindBrokenRules tries per rule.
var seedsToFind = 3000

// simRules leaves out rules of the protocol, to show the test finds each.
type simRules struct {
	noWriteRevoke, noReadRevoke, noSettle, noWait bool
	// A restarted node that grants, or answers alone, before replication has run.
	grantAtStart, answerAtStart bool
	// hostile: the nemesis strikes that node more often, and more proxies die mid-write,
	// which the rarer rules need to be found in few seeds.
	hostile string
}

const (
	simHolder = "P"
	simPart   = uint32(0)
	netDelay  = 20 * time.Millisecond
	deadline  = 150 * time.Millisecond
)

var simNodes = []string{"P", "A", "B"}

type simRing struct{ version string }

func (r simRing) Primaries(uint32) []string { return simNodes }
func (r simRing) Version() string           { return r.version }

type simNode struct {
	name        string
	store       map[string]int // durable
	up          bool
	pausedUntil time.Duration
	rate        float64 // the node's clock runs at rate × real time
	holder      *Holder
	granter     *Granter
	life        int // counts restarts, so that a pass of an earlier life does not complete
}

type event struct {
	at  time.Duration
	seq int
	fn  func()
}

type events []*event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if e[i].at != e[j].at {
		return e[i].at < e[j].at
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(*event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

type simIn struct {
	key   string
	write bool
	v     int
}

type world struct {
	rnd       *rand.Rand
	cfg       Config
	rules     simRules
	now       time.Duration
	seq       int
	queue     events
	nodes     map[string]*simNode
	version   int
	ops       []porcupine.Operation
	log       []string
	fastReads int
}

var simEpoch = time.Unix(1_700_000_000, 0)

func newWorld(seed uint64, rules simRules) *world {
	cfg := DefaultConfig(3)
	cfg.Lease = 600 * time.Millisecond
	cfg.Renew = 200 * time.Millisecond
	cfg.MaxUnsettled = 8
	w := &world{rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), cfg: cfg, rules: rules, nodes: map[string]*simNode{}}
	for _, n := range simNodes {
		// Clocks run up to Drift/2 fast or slow, so that two disagree by up to Drift.
		rate := 1 + (w.rnd.Float64()-0.5)*cfg.Drift*0.98
		w.nodes[n] = &simNode{name: n, store: map[string]int{}, rate: rate}
		w.start(w.nodes[n])
	}
	return w
}

// clock is node n's monotonic clock now.
func (w *world) clock(n *simNode) time.Time {
	return simEpoch.Add(time.Duration(float64(w.now) * n.rate))
}

func (w *world) at(d time.Duration, fn func()) {
	w.seq++
	heap.Push(&w.queue, &event{at: w.now + d, seq: w.seq, fn: fn})
}

func (w *world) logf(format string, args ...any) {
	w.log = append(w.log, fmt.Sprintf("%8.3fs ", w.now.Seconds())+fmt.Sprintf(format, args...))
}

func (w *world) start(n *simNode) {
	n.up = true
	n.life++
	now := w.clock(n)
	n.holder = NewHolder(w.cfg, n.name, simRing{"r1"}, simNodes, now)
	n.granter = NewGranter(w.cfg, n.name, "r1", now)
	for _, peer := range simNodes {
		if w.rules.grantAtStart {
			n.granter.FullPass(peer, now)
		}
		if w.rules.answerAtStart {
			n.holder.Pushed(peer, now)
		}
	}
}

// send delivers fn at node to after a network delay, unless the message is lost or the node
// is down then; a paused node takes it when it resumes.
func (w *world) send(to *simNode, fn func()) {
	if w.rnd.IntN(100) < 3 {
		return
	}
	w.at(time.Duration(1+w.rnd.IntN(int(netDelay/time.Millisecond)))*time.Millisecond, func() { w.deliver(to, fn) })
}

func (w *world) deliver(to *simNode, fn func()) {
	if !to.up {
		return
	}
	if w.now < to.pausedUntil {
		w.at(to.pausedUntil-w.now, func() { w.deliver(to, fn) })
		return
	}
	fn()
}

// reply delivers fn back at a proxy after a delay, unless lost.
func (w *world) reply(fn func()) {
	if w.rnd.IntN(100) < 3 {
		return
	}
	w.at(time.Duration(1+w.rnd.IntN(int(netDelay/time.Millisecond)))*time.Millisecond, fn)
}

// commit stores version v of key at n, as a node does: a holder marks the name first.
func (w *world) commit(n *simNode, key string, v int) bool {
	if v <= n.store[key] {
		return v == n.store[key]
	}
	if !w.rules.noSettle {
		n.holder.Wrote(simPart, key, strconv.Itoa(v), w.clock(n))
	}
	n.store[key] = v
	return true
}

func (w *world) run(d time.Duration) {
	// Renewals: every holder asks its granters.
	var renew func()
	renew = func() {
		p := w.nodes[simHolder]
		if p.up && w.now >= p.pausedUntil {
			for _, r := range p.holder.Renewals(w.clock(p)) {
				g := w.nodes[r.Granter]
				life := p.life
				w.send(g, func() {
					grant := g.granter.Grant(w.clock(g), r, func(v Version) bool { return strconv.Itoa(g.store[v.Name]) == v.Version })
					w.send(p, func() {
						if p.life == life {
							p.holder.Granted(w.clock(p), grant)
						}
					})
				})
			}
		}
		if w.now < d {
			w.at(50*time.Millisecond, renew)
		}
	}
	w.at(0, renew)
	// Replication passes: a node pushes what it held when the pass began to a peer.
	var replicate func()
	replicate = func() {
		from := w.nodes[simNodes[w.rnd.IntN(3)]]
		to := w.nodes[simNodes[w.rnd.IntN(3)]]
		if from != to && from.up && w.now >= from.pausedUntil {
			begun, life := w.clock(from), from.life
			snap := map[string]int{}
			for k, v := range from.store {
				snap[k] = v
			}
			w.send(to, func() {
				for k, v := range snap {
					w.commit(to, k, v)
				}
				w.send(from, func() {
					if from.life != life {
						return
					}
					w.logf("pass %s→%s begun %v done", from.name, to.name, begun.Sub(simEpoch))
					if to.name == simHolder {
						from.granter.FullPass(to.name, begun)
					}
					if from.name == simHolder {
						from.holder.Pushed(to.name, begun)
					}
				})
			})
		}
		if w.now < d {
			w.at(time.Duration(20+w.rnd.IntN(200))*time.Millisecond, replicate)
		}
	}
	w.at(0, replicate)
	// The nemesis: crashes, restarts and pauses.
	var nemesis func()
	nemesis = func() {
		n := w.nodes[simNodes[w.rnd.IntN(3)]]
		if w.rules.hostile != "" && w.rnd.IntN(2) == 0 {
			n = w.nodes[w.rules.hostile]
		}
		switch w.rnd.IntN(4) {
		case 0:
			if n.up {
				n.up = false
				w.logf("crash %s", n.name)
				w.at(time.Duration(100+w.rnd.IntN(1500))*time.Millisecond, func() { w.start(n); w.logf("restart %s", n.name) })
			}
		case 1:
			if n.up {
				p := time.Duration(100+w.rnd.IntN(2000)) * time.Millisecond
				n.pausedUntil = max(n.pausedUntil, w.now+p)
				w.logf("pause %s for %v", n.name, p)
			}
		}
		if w.now < d {
			next := time.Duration(500+w.rnd.IntN(3500)) * time.Millisecond
			if w.rules.hostile != "" {
				next /= 3
			}
			w.at(next, nemesis)
		}
	}
	w.at(500*time.Millisecond, nemesis)
	// Clients, each with its proxy (whose clock runs at its own rate).
	for c := range 4 {
		rate := 1 + (w.rnd.Float64()-0.5)*w.cfg.Drift*0.98
		var next func()
		next = func() {
			if w.now >= d {
				return
			}
			key := fmt.Sprintf("k%d", w.rnd.IntN(5))
			if w.rnd.IntN(10) < 3 {
				w.write(c, rate, key, next)
			} else {
				w.read(c, rate, key, next)
			}
		}
		w.at(time.Duration(w.rnd.IntN(50))*time.Millisecond, next)
	}
	for w.queue.Len() > 0 {
		e := heap.Pop(&w.queue).(*event)
		w.now = e.at
		e.fn()
	}
}

// op records an operation; ret < 0: it never returned (its effect is unknown).
func (w *world) op(client int, in simIn, call time.Duration, out int, ret time.Duration) {
	r := int64(ret)
	if ret < 0 {
		r = 1 << 62
	}
	w.ops = append(w.ops, porcupine.Operation{ClientId: client, Input: in, Call: int64(call), Output: out, Return: r})
}

// gather sends fn's request to each node and calls done with the answers that came back by
// the deadline.
func gather[T any](w *world, to []*simNode, ask func(n *simNode) T, done func(got map[string]T)) {
	got := map[string]T{}
	for _, n := range to {
		w.send(n, func() {
			v := ask(n)
			w.reply(func() { got[n.name] = v })
		})
	}
	w.at(deadline, func() { done(got) })
}

func (w *world) nodeList(names ...string) []*simNode {
	var out []*simNode
	for _, n := range names {
		out = append(out, w.nodes[n])
	}
	return out
}

// revokeThen asks the granters among holders to revoke the holder's lease, waits what the
// first answer says, and calls then(true); then(false) if none answered.
func (w *world) revokeThen(rate float64, holders map[string]bool, then func(ok bool)) {
	var granters []*simNode
	for _, n := range simNodes[1:] {
		if holders[n] {
			granters = append(granters, w.nodes[n])
		}
	}
	if len(granters) > 1 && w.rnd.IntN(2) == 0 {
		// One granter's revocation is enough; a proxy may ask only one.
		granters = granters[w.rnd.IntN(len(granters)):][:1]
	}
	gather(w, granters, func(g *simNode) time.Duration {
		return g.granter.Revoke(w.clock(g), simHolder, simPart)
	}, func(got map[string]time.Duration) {
		w.logf("revoke at %v: %v", holders, got)
		if len(got) == 0 {
			then(false)
			return
		}
		var waits []time.Duration
		for _, d := range got {
			waits = append(waits, d)
		}
		wait := w.cfg.WaitFor(waits...)
		if w.rules.noWait {
			wait = 0
		}
		// The proxy waits on its own clock.
		w.at(time.Duration(float64(wait)/rate), func() { then(true) })
	})
}

func (w *world) write(client int, rate float64, key string, next func()) {
	w.version++
	v, call := w.version, w.now
	in := simIn{key: key, write: true, v: v}
	to := w.nodeList(simNodes...)
	dies := w.rnd.IntN(12) == 0 || (w.rules.hostile != "" && w.rnd.IntN(4) == 0)
	if dies {
		// A proxy that dies mid-write reaches some of the replicas.
		w.rnd.Shuffle(len(to), func(i, j int) { to[i], to[j] = to[j], to[i] })
		to = to[:w.rnd.IntN(len(to))]
	}
	gather(w, to, func(n *simNode) bool { return w.commit(n, key, v) }, func(got map[string]bool) {
		took := map[string]bool{}
		for n, ok := range got {
			if ok {
				took[n] = true
			}
		}
		w.logf("c%d write %s=%d took %v dies=%v", client, key, v, took, dies)
		if dies || len(took) < w.cfg.quorum() {
			w.op(client, in, call, 0, -1)
			w.at(time.Millisecond, next)
			return
		}
		ack := func(ok bool) {
			w.logf("c%d write %s=%d answered ok=%v", client, key, v, ok)
			if ok {
				w.op(client, in, call, 0, w.now)
			} else {
				w.op(client, in, call, 0, -1)
			}
			next()
		}
		if took[simHolder] || w.rules.noWriteRevoke {
			ack(true)
			return
		}
		w.revokeThen(rate, took, ack)
	})
}

type readAnswer struct {
	v     int
	alone bool
}

func (w *world) read(client int, rate float64, key string, next func()) {
	call := w.now
	in := simIn{key: key}
	answer := func(v int) {
		w.logf("c%d read %s → %d", client, key, v)
		w.op(client, in, call, v, w.now)
		next()
	}
	fail := func() { w.at(time.Millisecond, next) }
	p := w.nodes[simHolder]
	gather(w, []*simNode{p}, func(n *simNode) readAnswer {
		v := n.store[key]
		return readAnswer{v: v, alone: n.holder.CanAnswer(w.clock(n), simPart, key)}
	}, func(first map[string]readAnswer) {
		if a, ok := first[simHolder]; ok && a.alone {
			w.logf("c%d read %s alone at P", client, key)
			w.fastReads++
			answer(a.v)
			return
		}
		// The quorum check: the other primaries too.
		gather(w, w.nodeList(simNodes[1:]...), func(n *simNode) readAnswer { return readAnswer{v: n.store[key]} }, func(got map[string]readAnswer) {
			if a, ok := first[simHolder]; ok {
				got[simHolder] = a
			}
			if len(got) < w.cfg.quorum() {
				fail()
				return
			}
			newest := 0
			for _, a := range got {
				newest = max(newest, a.v)
			}
			w.logf("c%d read %s by quorum: %v", client, key, got)
			var stale []*simNode
			holders := map[string]bool{}
			for _, n := range simNodes { // in a fixed order: a seed's history is always the same
				if a, ok := got[n]; ok && a.v == newest {
					holders[n] = true
				} else if ok {
					stale = append(stale, w.nodes[n])
				}
			}
			// Write the newest back to the replicas that answered older.
			gather(w, stale, func(n *simNode) bool { return w.commit(n, key, newest) }, func(back map[string]bool) {
				for n, ok := range back {
					if ok {
						holders[n] = true
					}
				}
				// A version answered must be on a quorum first, or a read that misses its
				// holders could answer an older one next (ABD's read phase; the lease aside).
				if newest != 0 && len(holders) < w.cfg.quorum() {
					fail()
					return
				}
				if holders[simHolder] || newest == 0 || w.rules.noReadRevoke {
					answer(newest)
					return
				}
				w.revokeThen(rate, holders, func(ok bool) {
					if ok {
						answer(newest)
					} else {
						fail()
					}
				})
			})
		})
	})
}

func (w *world) model() porcupine.Model {
	return porcupine.Model{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			by := map[string][]porcupine.Operation{}
			var keys []string
			for _, o := range h {
				k := o.Input.(simIn).key
				if by[k] == nil {
					keys = append(keys, k)
				}
				by[k] = append(by[k], o)
			}
			var out [][]porcupine.Operation
			for _, k := range keys {
				out = append(out, by[k])
			}
			return out
		},
		Init: func() any { return 0 },
		Step: func(state, input, output any) (bool, any) {
			s, in := state.(int), input.(simIn)
			if in.write {
				return true, max(s, in.v)
			}
			return output.(int) == s, s
		},
		DescribeOperation: func(input, output any) string {
			in := input.(simIn)
			if in.write {
				return fmt.Sprintf("write %s=%d", in.key, in.v)
			}
			return fmt.Sprintf("read %s → %d", in.key, output.(int))
		},
	}
}

func (w *world) check() (porcupine.CheckResult, porcupine.LinearizationInfo) {
	return porcupine.CheckOperationsVerbose(w.model(), w.ops, time.Minute)
}

func (w *world) illegalKeys() []string {
	var bad []string
	for _, part := range w.model().Partition(w.ops) {
		if porcupine.CheckOperations(w.model(), part) != true {
			bad = append(bad, part[0].Input.(simIn).key)
		}
	}
	return bad
}

func (w *world) trace() string {
	last := 40
	if os.Getenv("CAIRN_READLEASE_SEED") != "" {
		last = len(w.log)
	}
	s := ""
	for _, l := range w.log[max(0, len(w.log)-last):] {
		s += l + "\n"
	}
	return s
}
