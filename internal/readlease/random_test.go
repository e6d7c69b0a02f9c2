package readlease

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestRandomHistories runs clients' writes and reads against simulated storage nodes of one
// partition of three replicas, whose first primary answers reads alone under the lease,
// through proxies that follow the protocol's rules (revoke before answering a write or a read
// the first primary may not hold), over a network that delays and loses messages, while nodes
// crash, restart and pause, clocks run at different rates, proxies die mid-write and
// replication passes run. In three seeds of four the ring changes (one of the partition's
// replicas moves to a fourth node), and every node and proxy takes the change at a time of its
// own, so that they disagree on the ring for seconds: a proxy that has the new ring reads and
// writes quorums of both until the change is complete (joint quorums; here, to the end).
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
	fast, changed, completed := 0, 0, 0
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
		if w.changes > 0 {
			changed++
		}
		if w.done {
			completed++
		}
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
	if seeds >= 40 && (changed == 0 || completed == 0) {
		t.Fatalf("%d seeds changed the ring, %d completed the change: the test proves nothing of ring changes", changed, completed)
	}
	t.Logf("%d seeds (%d with ring changes, %d of them completed), %d reads answered alone", seeds, changed, completed, fast)
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
		{noCrossRing: true},
		{noJointQuorums: true},
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
	// Across a ring change: a node that does not revoke its own ring's first primary for a
	// request from a proxy on other rings (CrossRing); a proxy that drops the old ring as
	// soon as it has the new one (the quorum reads' rule; the leases aside).
	noCrossRing, noJointQuorums bool
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

type simRing struct {
	version string
	prims   []string
}

func (r *simRing) Primaries(uint32) []string { return r.prims }
func (r *simRing) Version() string           { return r.version }

// peers are the granters of dev's leases on r.
func (r *simRing) peers(dev string) []string {
	if r.prims[0] == dev {
		return r.prims[1:]
	}
	return nil
}

// The partition's primaries are P, A and B on the first ring; C is the node the ring change
// may move a replica to.
var (
	simRing1 = &simRing{"r1", []string{"P", "A", "B"}}
	// The second ring moves one replica of the first to C (a ring moves at most one replica
	// of a partition at a time: internal/ring's min_part_hours).
	simRings2 = []*simRing{
		{"r2", []string{"C", "A", "B"}},
		{"r2", []string{"P", "C", "B"}},
		{"r2", []string{"P", "A", "C"}},
	}
)

type simNode struct {
	name        string
	store       map[string]int // durable
	up          bool
	pausedUntil time.Duration
	rate        float64 // the node's clock runs at rate × real time
	holder      *Holder
	granter     *Granter
	life        int // counts restarts, so that a pass of an earlier life does not complete
	ring        *simRing
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
	rings     [2]*simRing  // the ring before the change and after it
	changes   int          // ring changes taken, by nodes and proxies
	proxyRing [][]*simRing // each client's proxy's rings: the old, or the old and the new
	names     []string     // the nodes of either ring
	// passes: the replication passes completed, with when (real time) each began; done: the
	// change was declared complete (proxies then drop the old ring).
	passes    []simPass
	done      bool
	end       time.Duration // when the run's clients, nemesis and passes stop
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
	w.rings = [2]*simRing{simRing1, simRing1}
	ringRules := rules.noCrossRing || rules.noJointQuorums
	otherRules := rules != simRules{hostile: rules.hostile} && !ringRules
	// The other rules are searched for without ring changes, which they do not need.
	if (seed/3)%4 > 0 && !otherRules || ringRules {
		w.rings[1] = simRings2[(seed/3)%3]
	}
	w.names = primaries(w.rings[:])
	for _, n := range w.names {
		// Clocks run up to Drift/2 fast or slow, so that two disagree by up to Drift.
		rate := 1 + (w.rnd.Float64()-0.5)*cfg.Drift*0.98
		w.nodes[n] = &simNode{name: n, store: map[string]int{}, rate: rate, ring: w.rings[0]}
		w.start(w.nodes[n])
	}
	return w
}

type simPass struct {
	from, to string
	begun    time.Duration
}

// changeRing has a node or proxy take the ring change at a time of its own.
func (w *world) changeRing(change func()) {
	if w.rings[0] == w.rings[1] {
		return
	}
	w.at(time.Duration(500+w.rnd.IntN(12000))*time.Millisecond, func() {
		w.changes++
		change()
		if w.changes == len(w.names)+len(w.proxyRing) {
			w.logf("every node and proxy has ring %s", w.rings[1].version)
			w.completeChange(w.now)
		}
	})
}

// completeChange declares the change complete, as an operator does (cairn ring change-done,
// or min_part_hours passing), once every node and proxy has had the new ring (since all) for
// longer than a lease, and replication passes begun since then have gone from each primary of
// the old ring to each of the new: every version an old-ring quorum held is then on every new
// primary. The proxies then drop the old ring, each at a time of its own.
func (w *world) completeChange(all time.Duration) {
	moved := func() bool {
		for _, x := range w.rings[0].prims {
			for _, c := range w.rings[1].prims {
				if x != c && !slices.ContainsFunc(w.passes, func(p simPass) bool { return p.from == x && p.to == c && p.begun >= all }) {
					return false
				}
			}
		}
		return true
	}
	if w.now < all+time.Duration(float64(w.cfg.Lease)*(1+w.cfg.Drift)) || !moved() {
		if w.now < w.end {
			w.at(50*time.Millisecond, func() { w.completeChange(all) })
		}
		return
	}
	w.done = true
	w.logf("the change is complete")
	for c := range w.proxyRing {
		w.at(time.Duration(w.rnd.IntN(2000))*time.Millisecond, func() {
			w.proxyRing[c] = w.rings[1:]
			w.logf("c%d's proxy drops ring %s", c, w.rings[0].version)
		})
	}
}

func (w *world) changeNodeRing(n *simNode) {
	n.ring = w.rings[1]
	w.logf("%s takes ring %s %v (up %v)", n.name, n.ring.version, n.ring.prims, n.up)
	if !n.up {
		return // it starts on it
	}
	now := w.clock(n)
	n.holder.Reset(n.ring, n.ring.peers(n.name), now)
	n.granter.Reset(n.ring, now)
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
	n.holder = NewHolder(w.cfg, n.name, n.ring, n.ring.peers(n.name), now)
	n.granter = NewGranter(w.cfg, n.name, n.ring, now)
	for _, peer := range w.names {
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
	w.end = d
	for _, n := range w.names {
		w.changeRing(func() { w.changeNodeRing(w.nodes[n]) })
	}
	// Renewals: every holder asks its granters.
	var renew func()
	renew = func() {
		for _, name := range w.names {
			p := w.nodes[name]
			if !p.up || w.now < p.pausedUntil {
				continue
			}
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
		from := w.nodes[w.names[w.rnd.IntN(len(w.names))]]
		to := w.nodes[w.names[w.rnd.IntN(len(w.names))]]
		if from != to && from.up && w.now >= from.pausedUntil {
			begun, life, begunReal := w.clock(from), from.life, w.now
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
					w.passes = append(w.passes, simPass{from.name, to.name, begunReal})
					from.granter.FullPass(to.name, begun)
					from.holder.Pushed(to.name, begun)
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
		n := w.nodes[w.names[w.rnd.IntN(len(w.names))]]
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
		w.proxyRing = append(w.proxyRing, w.rings[:1])
		w.changeRing(func() {
			w.proxyRing[c] = w.rings[:]
			if w.rules.noJointQuorums {
				w.proxyRing[c] = w.rings[1:]
			}
			w.logf("c%d's proxy takes ring %s", c, w.rings[1].version)
		})
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

// gather sends ask to each node from a proxy on rings from, and calls done with the answers
// that came back by the deadline. A node makes its answer wait as CrossRing says.
func gather[T any](w *world, from []*simRing, to []*simNode, ask func(n *simNode) T, done func(got map[string]T)) {
	got := map[string]T{}
	var versions []string
	for _, r := range from {
		versions = append(versions, r.version)
	}
	for _, n := range to {
		w.send(n, func() {
			var wait time.Duration
			if !w.rules.noCrossRing {
				wait = n.granter.CrossRing(w.clock(n), simPart, versions...)
			}
			v := ask(n)
			life := n.life
			// The node waits on its own clock; a node that crashed meanwhile answers nothing.
			w.at(time.Duration(float64(wait)/n.rate), func() {
				if n.life == life && n.up {
					w.reply(func() { got[n.name] = v })
				}
			})
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

// primaries is the union of the rings' primaries, the newest ring's first.
func primaries(rings []*simRing) []string {
	var out []string
	for i := len(rings) - 1; i >= 0; i-- {
		for _, n := range rings[i].prims {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// quorums reports whether the nodes in have a quorum of each ring's primaries.
func (w *world) quorums(rings []*simRing, in map[string]bool) bool {
	for _, r := range rings {
		n := 0
		for _, p := range r.prims {
			if in[p] {
				n++
			}
		}
		if n < w.cfg.quorum() {
			return false
		}
	}
	return true
}

// revokeThen revokes, for each ring whose first primary is not among holders, that primary's
// lease at the ring's granters among holders, waits what the first answer says, and calls
// then(true); then(false) if for some ring none answered.
func (w *world) revokeThen(rate float64, rings []*simRing, holders map[string]bool, then func(ok bool)) {
	if len(rings) == 0 {
		then(true)
		return
	}
	r := rings[0]
	if holders[r.prims[0]] {
		w.revokeThen(rate, rings[1:], holders, then)
		return
	}
	var granters []*simNode
	for _, n := range r.prims[1:] {
		if holders[n] {
			granters = append(granters, w.nodes[n])
		}
	}
	if len(granters) > 1 && w.rnd.IntN(2) == 0 {
		// One granter's revocation is enough; a proxy may ask only one.
		granters = granters[w.rnd.IntN(len(granters)):][:1]
	}
	w.askRevoke(granters, r.prims[0], func(got map[string]time.Duration) {
		w.logf("revoke %s at %v: %v", r.prims[0], holders, got)
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
		w.at(time.Duration(float64(wait)/rate), func() { w.revokeThen(rate, rings[1:], holders, then) })
	})
}

// askRevoke sends a revocation of holder's lease to each granter and calls done with the
// answers that came back by the deadline.
func (w *world) askRevoke(granters []*simNode, holder string, done func(got map[string]time.Duration)) {
	got := map[string]time.Duration{}
	for _, g := range granters {
		w.send(g, func() {
			wait := g.granter.Revoke(w.clock(g), holder, simPart)
			w.reply(func() { got[g.name] = wait })
		})
	}
	w.at(deadline, func() { done(got) })
}

func ringNames(rings []*simRing) string {
	s := ""
	for _, r := range rings {
		s += r.version
	}
	return s
}

func (w *world) write(client int, rate float64, key string, next func()) {
	w.version++
	v, call := w.version, w.now
	in := simIn{key: key, write: true, v: v}
	rings := w.proxyRing[client]
	to := w.nodeList(primaries(rings)...)
	dies := w.rnd.IntN(12) == 0 || (w.rules.hostile != "" && w.rnd.IntN(4) == 0)
	if dies {
		// A proxy that dies mid-write reaches some of the replicas.
		w.rnd.Shuffle(len(to), func(i, j int) { to[i], to[j] = to[j], to[i] })
		to = to[:w.rnd.IntN(len(to))]
	}
	gather(w, rings, to, func(n *simNode) bool { return w.commit(n, key, v) }, func(got map[string]bool) {
		took := map[string]bool{}
		for n, ok := range got {
			if ok {
				took[n] = true
			}
		}
		w.logf("c%d write %s=%d on %s took %v dies=%v", client, key, v, ringNames(rings), took, dies)
		if dies || !w.quorums(rings, took) {
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
		if w.rules.noWriteRevoke {
			ack(true)
			return
		}
		w.revokeThen(rate, rings, took, ack)
	})
}

type readAnswer struct {
	v     int
	alone bool
}

func (w *world) read(client int, rate float64, key string, next func()) {
	call := w.now
	in := simIn{key: key}
	rings := w.proxyRing[client]
	prims := primaries(rings)
	first := prims[0] // the newest ring's first primary
	answer := func(v int) {
		w.logf("c%d read %s → %d", client, key, v)
		w.op(client, in, call, v, w.now)
		next()
	}
	fail := func() { w.at(time.Millisecond, next) }
	gather(w, rings, w.nodeList(first), func(n *simNode) readAnswer {
		v := n.store[key]
		return readAnswer{v: v, alone: n.holder.CanAnswer(w.clock(n), simPart, key)}
	}, func(firstAnswer map[string]readAnswer) {
		if a, ok := firstAnswer[first]; ok && a.alone {
			w.logf("c%d read %s alone at %s (%s)", client, key, first, ringNames(rings))
			w.fastReads++
			answer(a.v)
			return
		}
		// The quorum check: the other primaries too.
		gather(w, rings, w.nodeList(prims[1:]...), func(n *simNode) readAnswer { return readAnswer{v: n.store[key]} }, func(got map[string]readAnswer) {
			if a, ok := firstAnswer[first]; ok {
				got[first] = a
			}
			answered := map[string]bool{}
			for n := range got {
				answered[n] = true
			}
			if !w.quorums(rings, answered) {
				fail()
				return
			}
			newest := 0
			for _, a := range got {
				newest = max(newest, a.v)
			}
			w.logf("c%d read %s by quorum on %s: %v", client, key, ringNames(rings), got)
			var stale []*simNode
			holders := map[string]bool{}
			for _, n := range prims { // in a fixed order: a seed's history is always the same
				if a, ok := got[n]; ok && a.v == newest {
					holders[n] = true
				} else if ok {
					stale = append(stale, w.nodes[n])
				}
			}
			// Write the newest back to the replicas that answered older.
			gather(w, rings, stale, func(n *simNode) bool { return w.commit(n, key, newest) }, func(back map[string]bool) {
				for n, ok := range back {
					if ok {
						holders[n] = true
					}
				}
				if newest == 0 {
					answer(0)
					return
				}
				// A version answered must be on a quorum first, or a read that misses its
				// holders could answer an older one next (ABD's read phase; the lease aside).
				if !w.quorums(rings, holders) {
					fail()
					return
				}
				if w.rules.noReadRevoke {
					answer(newest)
					return
				}
				w.revokeThen(rate, rings, holders, func(ok bool) {
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
