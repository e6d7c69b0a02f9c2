package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/casreg"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/storage"
)

// proxiesApart returns n proxies over the cluster's nodes dialled as nodes of other
// processes (otherProcesses): the proxies of a cluster.
func proxiesApart(t *testing.T, c *cluster, n int) []*Proxy {
	t.Helper()
	ps := make([]*Proxy, n)
	for i := range ps {
		p, err := New(Config{Ring: c.proxy.objectRings[0](), Dialer: otherProcesses{c}})
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	return ps
}

// proxiesOver returns n proxies over the cluster's nodes, as separate proxy processes would be.
func proxiesOver(t *testing.T, c *cluster, n int, cfg Config) []*Proxy {
	t.Helper()
	ps := make([]*Proxy, n)
	for i := range ps {
		cfg.Ring, cfg.Dialer = c.proxy.objectRings[0](), c
		p, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	return ps
}

// clusterWithBox returns a cluster of three nodes with the container acct/box.
func clusterWithBox(t *testing.T) *cluster {
	t.Helper()
	c := newCluster(t, 3)
	if err := c.proxy.CreateContainer(context.Background(), "acct", "box", nil); err != nil {
		t.Fatal(err)
	}
	return c
}

// heldOn returns the bytes each node holds for name ("" when none).
func heldOn(t *testing.T, c *cluster, name meta.ObjectName) map[string]string {
	t.Helper()
	part := partition(c.proxy.objectRings[0](), name.Account, name.Container, name.Object)
	out := map[string]string{}
	for node, n := range c.nodes {
		r, err := n.GetObject(context.Background(), "d0", part, name, nil)
		if errors.Is(err, meta.ErrNotFound) {
			out[node] = ""
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(r)
		r.Close()
		out[node] = b.String()
	}
	return out
}

// Issue 27's first experiment, in-process: rounds of writers racing to create one new name
// with If-None-Match: *, through several proxies. In every round exactly one is told 200, the
// others 412 or 409, and every replica holds the winner's bytes: no loser's byte is stored.
func TestConditionalCreatesRacingThroughProxies(t *testing.T) {
	c := clusterWithBox(t)
	ps := proxiesOver(t, c, 3, Config{})
	const rounds, writers = 20, 8
	for round := range rounds {
		name := meta.ObjectName{Account: "acct", Container: "box", Object: fmt.Sprintf("commit-%05d.json", round)}
		won, unknown := raceCreates(t, ps, name, writers, fmt.Sprintf("of round %d", round))
		if len(won) != 1 || unknown != 0 {
			t.Fatalf("round %d: %d writers told they won: %q (%d told 503)", round, len(won), won, unknown)
		}
		for node, got := range heldOn(t, c, name) {
			if got != won[0] {
				t.Errorf("round %d: %s holds %q, the winner wrote %q", round, node, got, won[0])
			}
		}
	}
}

// A conditional write tests the newest version the replicas hold, a tombstone counting with
// its time: a name deleted at a quorum can be created again with If-None-Match even while one
// replica still holds the deleted version, and If-Match tests the newest version.
func TestConditionalWritesTestTheNewestVersion(t *testing.T) {
	ctx := context.Background()
	c := clusterWithBox(t)
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "lock"}
	put := func(data string, cond meta.Precondition) (meta.Object, error) {
		return c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, bytes.NewReader([]byte(data)), PutOptions{If: cond})
	}
	v1, err := put("held by a", meta.Precondition{IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put("held by b", meta.Precondition{IfNoneMatch: true}); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("a second create: %v", err)
	}
	// The lock is released (deleted) while node2 is away: it keeps the old version.
	c.down["node2"] = true
	if err := c.proxy.DeleteObject(ctx, name); err != nil {
		t.Fatal(err)
	}
	c.down["node2"] = false
	if held := heldOn(t, c, name); held["node2"] != "held by a" || held["node0"] != "" {
		t.Fatalf("the replicas hold %q", held)
	}
	if _, err := put("held by c", meta.Precondition{IfNoneMatch: true}); err != nil {
		t.Fatalf("a create after the delete: %v", err)
	}
	if _, err := put("stale", meta.Precondition{IfMatch: []string{v1.ETag}}); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("If-Match on the deleted version: %v", err)
	}
	everyNodeHolds(t, c, name, "held by c")
}

// A writer that dies after its decision and before its bytes land keeps others at 409 until
// the grace has passed, then is decided over; its late bytes, should it only have been paused,
// are refused at a quorum.
func TestADeadWriterIsDecidedOver(t *testing.T) {
	ctx := context.Background()
	c := clusterWithBox(t)
	// The grace is aged by a clock the test moves, so that no step depends on how fast the
	// machine runs.
	const grace = time.Minute
	ps := proxiesOver(t, c, 2, Config{DecidedGrace: grace})
	dead, next := ps[0], ps[1]
	var clock time.Time
	next.now = func() time.Time { return clock }
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "state"}
	r := dead.objectRings[0]()
	pl := dead.place(r, partition(r, name.Account, name.Container, name.Object))
	// The dead writer's decision, without its write.
	deadTs := meta.Now()
	clock = time.Unix(0, int64(deadTs)).Add(time.Second)
	o, err := dead.decide(ctx, pl, nodeclient.ObjectRegisterKey(name), func([]byte) ([]byte, error) { return nodeclient.EncodeDecided(deadTs), nil }, nil)
	if err != nil || o.Err != nil {
		t.Fatal(err, o.Err)
	}
	put := func(data string) error {
		_, err := next.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, bytes.NewReader([]byte(data)), PutOptions{If: meta.Precondition{IfNoneMatch: true}})
		return err
	}
	if err := put("too soon"); !errors.Is(err, ErrConditionalConflict) {
		t.Fatalf("within the grace: %v, want ErrConditionalConflict", err)
	}
	// Past the grace another proxy decides over the dead writer (what putDecided does before
	// it writes); the writer, only paused, wakes up and sends its bytes, fenced by its
	// decision's generation: no replica takes them.
	clock = clock.Add(grace)
	over, err := next.decide(ctx, pl, nodeclient.ObjectRegisterKey(name), func([]byte) ([]byte, error) { return nodeclient.EncodeDecided(meta.Now()), nil }, nil)
	if err != nil || over.Err != nil || over.Value.Gen <= o.Value.Gen {
		t.Fatal(err, over)
	}
	late := []byte("the paused writer")
	took := 0
	for node, n := range c.nodes {
		_, err := n.PutObject(ctx, "d0", pl.part, name, meta.Object{Timestamp: deadTs, Size: int64(len(late))}, bytes.NewReader(late),
			nodeclient.PutOptions{DecidedGen: o.Value.Gen})
		if err == nil {
			// Its acceptor had not taken the decision over the writer: that decision's
			// quorum answered without it (on a busy machine), and the messages still in
			// flight were cancelled. A minority may take the late bytes; a quorum may not.
			took++
			continue
		}
		if !errors.Is(err, meta.ErrPreconditionFailed) {
			t.Errorf("%s: the fenced writer's PUT: %v, want ErrPreconditionFailed", node, err)
		}
	}
	if took > len(c.nodes)/2 {
		t.Fatalf("the fenced writer landed on %d of %d replicas, a quorum", took, len(c.nodes))
	}
	// That decision's own write never came either: past another grace, a writer succeeds.
	clock = time.Now().Add(2 * grace)
	err = put("after the grace")
	if took > 0 {
		// The late bytes are then the newest version on a replica: as any write whose client
		// was not answered, it may have taken effect, and a create that hears of it fails.
		if err != nil && !errors.Is(err, meta.ErrPreconditionFailed) {
			t.Fatalf("after the grace, with the late bytes on %d replica: %v, want success or ErrPreconditionFailed", took, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("after the grace: %v", err)
	}
	for node, got := range heldOn(t, c, name) {
		if got != "after the grace" {
			t.Errorf("%s holds %q", node, got)
		}
	}
}

// raceCreates has writers create name at once with If-None-Match: *, through the proxies in
// turn, and returns the bytes of those told they won and how many were told 503. Any other
// answer than 200, 412, 409 or 503 fails the test.
func raceCreates(t *testing.T, ps []*Proxy, name meta.ObjectName, writers int, tag string) (won []string, unknown int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			data := fmt.Sprintf("writer %d %s", w, tag)
			_, err := ps[w%len(ps)].PutObject(context.Background(), name, meta.Object{Size: int64(len(data))}, bytes.NewReader([]byte(data)),
				PutOptions{If: meta.Precondition{IfNoneMatch: true}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, data)
			case errors.Is(err, meta.ErrPreconditionFailed), errors.Is(err, ErrConditionalConflict):
			case errors.Is(err, meta.ErrUnavailable):
				unknown++
			default:
				t.Errorf("%s writer %d: %v", name.Object, w, err)
			}
		})
	}
	wg.Wait()
	return won, unknown
}

// blindDialer is a proxy's view of the nodes in which one node cannot be reached, while other
// proxies reach it: proxies that disagree on which replicas are up.
type blindDialer struct {
	c      *ecCluster
	mu     sync.Mutex
	hidden string
}

func (d *blindDialer) hide(node string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hidden = node
}

func (d *blindDialer) Dial(node string) (nodeclient.Client, error) {
	d.mu.Lock()
	hidden := d.hidden
	d.mu.Unlock()
	if node == hidden {
		return nil, fmt.Errorf("node %s cannot be reached from here", node)
	}
	return d.c.Dial(node)
}

// The same race on an erasure-coded policy, through proxies that disagree on whether the
// first primary is up (which made two archives decide at once before the register): the
// name's register decides, and the archives the nodes hold are all the winner's.
func TestConditionalCreatesRacingOnAnErasureCode(t *testing.T) {
	ctx := context.Background()
	c := newECCluster(t)
	ps := make([]*Proxy, 2)
	blind := &blindDialer{c: c}
	for i := range ps {
		cfg := c.cfg
		if i == 1 {
			cfg.Dialer = blind
		}
		p, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	const rounds, writers = 8, 6
	for round := range rounds {
		name := meta.ObjectName{Account: "acct", Container: "ec", Object: fmt.Sprintf("commit-%05d.json", round)}
		prim, _ := c.primaries(name)
		blind.hide(prim[0])
		// The blind proxy may find another writer's archives on four devices and cannot tell
		// whether the fifth, out of its reach, makes them a version: it cannot test the
		// condition, and says so (503).
		won, unknown := raceCreates(t, ps, name, writers, fmt.Sprintf("of round %d, with some bytes to spread over the fragments", round))
		if len(won) > 1 || len(won) == 0 && unknown == 0 {
			t.Fatalf("round %d: %d writers told they won: %q", round, len(won), won)
		}
		if len(won) == 0 {
			continue // the one decided for may be among those told 503: whether it took effect is unknown
		}
		archives := c.archives(t, name)
		if len(archives) < c.scheme.K+1 {
			t.Fatalf("round %d: the winner's version is on %d archives", round, len(archives))
		}
		for node, a := range archives {
			if got := a.AsServed().ETag; got != md5hex([]byte(won[0])) {
				t.Errorf("round %d: %s holds an archive of ETag %s, the winner's is %s", round, node, got, md5hex([]byte(won[0])))
			}
		}
		r, err := c.proxy.GetObject(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(r)
		r.Close()
		if b.String() != won[0] {
			t.Fatalf("round %d: read %q, the winner wrote %q", round, b.String(), won[0])
		}
	}
}

// A conditional DELETE racing a conditional PUT on the same version, through two proxies
// (multipart's Abort racing Complete, which both change the upload's marker as it was read):
// exactly one wins, and what the name holds afterwards is the winner's doing.
func TestConditionalDeleteRacingAPut(t *testing.T) {
	ctx := context.Background()
	c := clusterWithBox(t)
	ps := proxiesOver(t, c, 2, Config{})
	for round := range 20 {
		name := meta.ObjectName{Account: "acct", Container: "box", Object: fmt.Sprintf("marker-%03d", round)}
		v0, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 4}, bytes.NewReader([]byte("open")), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cond := meta.Precondition{IfTimestamp: v0.Timestamp}
		var putErr, delErr error
		var wg sync.WaitGroup
		wg.Go(func() {
			_, putErr = ps[0].PutObject(ctx, name, meta.Object{Size: 7}, bytes.NewReader([]byte("claimed")), PutOptions{If: cond})
		})
		wg.Go(func() { delErr = ps[1].DeleteObjectIf(ctx, name, cond) })
		wg.Wait()
		lost := func(err error) bool {
			return errors.Is(err, meta.ErrPreconditionFailed) || errors.Is(err, ErrConditionalConflict)
		}
		switch {
		case putErr == nil && delErr == nil:
			t.Fatalf("round %d: both the PUT and the DELETE of version %d were told they succeeded", round, v0.Timestamp)
		case putErr == nil && lost(delErr):
			if b := readAll(t, c.proxy, name, nil); string(b) != "claimed" {
				t.Errorf("round %d: the PUT won, a read gives %q", round, b)
			}
		case delErr == nil && lost(putErr):
			if _, err := c.proxy.HeadObject(ctx, name); !isNotFound(err) {
				t.Errorf("round %d: the DELETE won, a HEAD gives %v", round, err)
			}
		default:
			t.Fatalf("round %d: put %v, delete %v", round, putErr, delErr)
		}
	}
}

// Object Lock's retention changes are compare-and-swaps on the version read (PostObjectIf):
// of writers racing to change the metadata of one version, through several proxies, exactly
// one is told it succeeded, and every replica ends with the winner's metadata, never a
// loser's (which a newer timestamp would otherwise spread).
func TestConditionalPostsRacingThroughProxies(t *testing.T) {
	ctx := context.Background()
	c := clusterWithBox(t)
	ps := proxiesOver(t, c, 3, Config{})
	const rounds, writers = 10, 6
	for round := range rounds {
		name := meta.ObjectName{Account: "acct", Container: "box", Object: fmt.Sprintf("locked-%03d", round)}
		o, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 1}, bytes.NewReader([]byte("x")), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var won []string
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				who := fmt.Sprintf("writer %d", w)
				_, err := ps[w%len(ps)].PostObjectIf(ctx, name, meta.Object{UserMeta: map[string]string{"retain": who}}, o.Timestamp)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, who)
				case errors.Is(err, meta.ErrPreconditionFailed), errors.Is(err, ErrConditionalConflict):
				default:
					t.Errorf("round %d, %s: %v", round, who, err)
				}
			})
		}
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d: %d writers told they won: %q", round, len(won), won)
		}
		part := partition(c.proxy.objectRings[0](), name.Account, name.Container, name.Object)
		for node, n := range c.nodes {
			got, err := n.HeadObject(ctx, "d0", part, name, nodeclient.HeadOptions{})
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, node, err)
			}
			if got.UserMeta["retain"] != won[0] {
				t.Errorf("round %d: %s holds %q, the winner was %q", round, node, got.UserMeta["retain"], won[0])
			}
		}
	}
}

// otherProcesses dials the cluster's nodes as if they ran in processes of their own, which
// other proxies write too (not nodeclient.Sole).
type otherProcesses struct{ c *cluster }

type remoteNode struct{ *storage.Node }

func (remoteNode) Sole() bool { return false }

func (d otherProcesses) Dial(node string) (nodeclient.Client, error) {
	if d.c.down[node] {
		return nil, fmt.Errorf("node %s is down", node)
	}
	return remoteNode{d.c.nodes[node]}, nil
}

// TestMintedNamesAreDecided: two proxies that minted the same version name (the same 10 µs)
// must not both write under it, or the replicas would keep one's bytes or the other's in
// whatever order the writes reached them. The name's register gives it to one; the other is
// told ErrMintedTaken before its body is read, every time, and every replica holds the
// winner's bytes.
func TestMintedNamesAreDecided(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 3)
	if err := c.proxy.CreateContainer(ctx, "acct", "versions", nil); err != nil {
		t.Fatal(err)
	}
	ps := proxiesApart(t, c, 2)
	for round := range 20 {
		name := meta.ObjectName{Account: "acct", Container: "versions", Object: fmt.Sprintf("obj-%02d", round)}
		ts := meta.Now()
		type result struct {
			body string
			read bool
			err  error
		}
		results := make([]result, len(ps))
		var wg sync.WaitGroup
		for i, p := range ps {
			wg.Go(func() {
				body := fmt.Sprintf("writer %d of round %d", i, round)
				r := &watchedReader{r: bytes.NewReader([]byte(body))}
				_, err := p.PutObject(ctx, name, meta.Object{Size: int64(len(body))}, r, PutOptions{Timestamp: ts, Fresh: true})
				results[i] = result{body, r.read, err}
			})
		}
		wg.Wait()
		var won []string
		for i, r := range results {
			switch {
			case r.err == nil:
				won = append(won, r.body)
			case errors.Is(r.err, ErrMintedTaken):
				if r.read {
					t.Errorf("round %d: proxy %d was told the name is taken after reading its body", round, i)
				}
			default:
				t.Errorf("round %d: proxy %d: %v", round, i, r.err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d writers stored under one name: %q", round, len(won), won)
		}
		for node, held := range heldOn(t, c, name) {
			if held != won[0] {
				t.Errorf("round %d: %s holds %q, the name's writer wrote %q", round, node, held, won[0])
			}
		}
	}
}

// TestMintedNamesOnNodesOfThisProcessAloneSkipTheRegister: where every primary is a node of
// this process alone (nodeclient.Sole: the embedded default), names this process mints cannot
// meet another's, and a minted name's PUT leaves the register untouched, where over nodes of
// other processes it decides it.
func TestMintedNamesOnNodesOfThisProcessAloneSkipTheRegister(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 3)
	if err := c.proxy.CreateContainer(ctx, "acct", "versions", nil); err != nil {
		t.Fatal(err)
	}
	apart, err := New(Config{Ring: c.proxy.objectRings[0](), Dialer: otherProcesses{c}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p       *Proxy
		decided bool
	}{{c.proxy, false}, {apart, true}} {
		name := meta.ObjectName{Account: "acct", Container: "versions", Object: fmt.Sprintf("obj-decided-%v", tc.decided)}
		if _, err := tc.p.PutObject(ctx, name, meta.Object{Size: 1}, bytes.NewReader([]byte("x")), PutOptions{Timestamp: meta.Now(), Fresh: true}); err != nil {
			t.Fatal(err)
		}
		part := partition(c.proxy.objectRings[0](), name.Account, name.Container, name.Object)
		accepted := 0 // a decision reaches a quorum; the last acceptor's accept may be cancelled
		for _, n := range c.nodes {
			r, err := n.Register(ctx, "d0", part, nodeclient.ObjectRegisterKey(name), casreg.Message{Kind: casreg.Peek})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Accepted.IsZero() {
				accepted++
			}
		}
		if decided := accepted >= 2; decided != tc.decided || !tc.decided && accepted != 0 {
			t.Errorf("decided %v: %d of 3 acceptors accepted a value for the name", tc.decided, accepted)
		}
	}
}

// watchedReader records whether anything read it.
type watchedReader struct {
	r    io.Reader
	read bool
}

func (w *watchedReader) Read(p []byte) (int, error) {
	w.read = true
	return w.r.Read(p)
}

// gatedReader is a body whose first Read waits until release is closed; reading is closed
// when something first tries to read it (the writer has stamped its write by then).
type gatedReader struct {
	r       io.Reader
	once    sync.Once
	reading chan struct{}
	release chan struct{}
}

func gated(body string) *gatedReader {
	return &gatedReader{r: bytes.NewReader([]byte(body)), reading: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	g.once.Do(func() { close(g.reading) })
	<-g.release
	return g.r.Read(p)
}

// holdingAccepts dials the nodes as otherProcesses does, and holds every Accept of a register
// until release is closed; accepting is closed when the first one is sent.
type holdingAccepts struct {
	otherProcesses
	once      sync.Once
	accepting chan struct{}
	release   chan struct{}
}

type acceptHolder struct {
	remoteNode
	d *holdingAccepts
}

func (d *holdingAccepts) Dial(node string) (nodeclient.Client, error) {
	cl, err := d.otherProcesses.Dial(node)
	if err != nil {
		return nil, err
	}
	return acceptHolder{cl.(remoteNode), d}, nil
}

func (a acceptHolder) Register(ctx context.Context, device string, part uint32, key string, m casreg.Message) (casreg.Reply, error) {
	if m.Kind == casreg.Accept {
		a.d.once.Do(func() { close(a.d.accepting) })
		select {
		case <-a.d.release:
		case <-ctx.Done():
			return casreg.Reply{}, ctx.Err()
		}
	}
	return a.remoteNode.Register(ctx, device, part, key, m)
}

// A plain PUT racing a conditional create of the same key (the robustness tier's seed
// 1795974788630210716): the plain write is stamped, then the create is decided on the empty
// key, then the plain write lands, then the create's. Stamped earlier, the plain write would
// lie beneath the create, which overwrites it: both told 200, and no order of the two explains
// that (the create's condition was tested without the plain write, which came before it). The
// nodes that took the create's decision refuse the plain write (storage's admitUndecided): it
// is told 503 (it may have landed where the decision was not taken, beneath it), and the
// create wins. The plain write's retry is ordered after the create, and wins.
func TestAPlainWriteLandingBeneathADecisionIsRefused(t *testing.T) {
	ctx := context.Background()
	c := clusterWithBox(t)
	ps := proxiesApart(t, c, 2)
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "table/_delta_log/00000.json"}
	put := func(p *Proxy, body io.Reader, size int, cond meta.Precondition) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := p.PutObject(ctx, name, meta.Object{Size: int64(size)}, body, PutOptions{If: cond})
			done <- err
		}()
		return done
	}
	plain := gated("plain")
	plainDone := put(ps[0], plain, len("plain"), meta.Precondition{})
	<-plain.reading
	create := gated("create")
	createDone := put(ps[1], create, len("create"), meta.Precondition{IfNoneMatch: true})
	<-create.reading // decided: the body is read only after the decision
	close(plain.release)
	plainErr := <-plainDone
	close(create.release)
	if err := <-createDone; err != nil {
		t.Fatalf("the create: %v", err)
	}
	if !errors.Is(plainErr, meta.ErrUnavailable) || !errors.Is(plainErr, meta.ErrDecidedAbove) {
		t.Fatalf("the plain write landing beneath the create's decision was told %v, want a 503 for the decision above it", plainErr)
	}
	everyNodeHolds(t, c, name, "create")
	if _, err := ps[0].PutObject(ctx, name, meta.Object{Size: 5}, bytes.NewReader([]byte("again")), PutOptions{}); err != nil {
		t.Fatalf("the plain write again: %v", err)
	}
	everyNodeHolds(t, c, name, "again")
}

// everyNodeHolds checks that every node holds want for name.
func everyNodeHolds(t *testing.T, c *cluster, name meta.ObjectName, want string) {
	t.Helper()
	for node, held := range heldOn(t, c, name) {
		if held != want {
			t.Errorf("%s holds %q, want %q", node, held, want)
		}
	}
}

// The other order of the same race: the create's condition is tested on the empty key, then
// the plain write (stamped before) lands, then the create's decision reaches the nodes. They
// hold a version newer than the one the condition tested, and refuse the decision (its
// guard); the create tests its condition again, on the plain write, and is told 412. Without
// the guard the create would be decided and overwrite an acknowledged write.
func TestADecisionIsRefusedWhereAPlainWriteLandedAfterItsTest(t *testing.T) {
	ctx := context.Background()
	c := clusterWithBox(t)
	plainProxy, err := New(Config{Ring: c.proxy.objectRings[0](), Dialer: otherProcesses{c}})
	if err != nil {
		t.Fatal(err)
	}
	holding := &holdingAccepts{otherProcesses: otherProcesses{c}, accepting: make(chan struct{}), release: make(chan struct{})}
	condProxy, err := New(Config{Ring: c.proxy.objectRings[0](), Dialer: holding})
	if err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "terraform.tflock"}
	plain := gated("plain")
	plainDone := make(chan error, 1)
	go func() {
		_, err := plainProxy.PutObject(ctx, name, meta.Object{Size: 5}, plain, PutOptions{})
		plainDone <- err
	}()
	<-plain.reading
	createDone := make(chan error, 1)
	go func() {
		_, err := condProxy.PutObject(ctx, name, meta.Object{Size: 6}, bytes.NewReader([]byte("create")), PutOptions{If: meta.Precondition{IfNoneMatch: true}})
		createDone <- err
	}()
	<-holding.accepting // the create's condition was tested, on nothing
	close(plain.release)
	if err := <-plainDone; err != nil {
		t.Fatalf("the plain write: %v", err)
	}
	close(holding.release)
	if err := <-createDone; !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("the create whose decision came after a plain write landed was told %v, want 412", err)
	}
	everyNodeHolds(t, c, name, "plain")
	// The register holds nothing pending: the next create is told 412 at once, not 409.
	if _, err := condProxy.PutObject(ctx, name, meta.Object{Size: 4}, bytes.NewReader([]byte("next")), PutOptions{If: meta.Precondition{IfNoneMatch: true}}); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("the next create: %v", err)
	}
}

// A name deleted on an erasure-coded policy is created again with If-None-Match: the archives'
// tombstones decode nothing, but the decision's guard must allow them (they were there when
// the condition was tested), or every primary would refuse it and the create could never be
// decided (the review of the guard found it). A create while the object exists is refused.
func TestAnErasureCodedNameIsCreatedAgainAfterItsDelete(t *testing.T) {
	ctx := context.Background()
	c := newECCluster(t)
	name := meta.ObjectName{Account: "acct", Container: "ec", Object: "lock"}
	create := func(body string) error {
		_, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(body))}, strings.NewReader(body), PutOptions{If: meta.Precondition{IfNoneMatch: true}})
		return err
	}
	for round := range 3 {
		if err := create(fmt.Sprintf("holder %d", round)); err != nil {
			t.Fatalf("round %d: the create: %v", round, err)
		}
		if err := create("another"); !errors.Is(err, meta.ErrPreconditionFailed) {
			t.Fatalf("round %d: a create of a held name: %v", round, err)
		}
		if err := c.proxy.DeleteObject(ctx, name); err != nil {
			t.Fatalf("round %d: the delete: %v", round, err)
		}
	}
}
