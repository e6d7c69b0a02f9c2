package versions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
)

// apartNodes dials three storage nodes as if each ran in a process of its own, which other
// proxies write too (not nodeclient.Sole); refuseDeletes makes their object DELETEs fail.
type apartNodes struct {
	nodes         map[string]*storage.Node
	refuseDeletes *atomic.Bool
}

type apartNode struct {
	*storage.Node
	refuseDeletes *atomic.Bool
}

func (apartNode) Sole() bool { return false }

func (n apartNode) DeleteObject(ctx context.Context, device string, part uint32, name meta.ObjectName, ts meta.Timestamp, opts nodeclient.DeleteOptions) (meta.Object, error) {
	if n.refuseDeletes.Load() {
		return meta.Object{}, fmt.Errorf("deletes refused by the test: %w", meta.ErrInsufficientStorage)
	}
	return n.Node.DeleteObject(ctx, device, part, name, ts, opts)
}

func (d apartNodes) Dial(node string) (nodeclient.Client, error) {
	return apartNode{d.nodes[node], d.refuseDeletes}, nil
}

// proxiesOverThreeNodes returns n proxies over three real storage nodes, each holding every
// partition: the proxies of a cluster. Setting refuseDeletes makes the nodes refuse DELETEs.
func proxiesOverThreeNodes(t *testing.T, n int) (ps []*proxy.Proxy, refuseDeletes *atomic.Bool) {
	t.Helper()
	nodes := apartNodes{nodes: map[string]*storage.Node{}, refuseDeletes: &atomic.Bool{}}
	r := &ring.Ring{PartPower: 2}
	for i := range 3 {
		name := fmt.Sprintf("node%d", i)
		node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(t.TempDir(), name)}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { node.Close() })
		nodes.nodes[name] = node
		r.Devices = append(r.Devices, ring.Device{ID: i, Zone: i, Node: name, Name: "d0", Weight: 1})
		r.Assignments = append(r.Assignments, make([]int, 1<<r.PartPower))
		for p := range r.Assignments[i] {
			r.Assignments[i][p] = i
		}
	}
	for range n {
		p, err := proxy.New(proxy.Config{Ring: r, Dialer: nodes})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps, nodes.refuseDeletes
}

// mintAlike makes each store's next version stamp one timestamp, the same for all, and those
// after it its own; it returns the one shared.
func mintAlike(stores []*Store) meta.Timestamp {
	same := newTimestamp()
	for _, s := range stores {
		first := true
		s.mint = func() meta.Timestamp {
			if first {
				first = false
				return same
			}
			return newTimestamp()
		}
	}
	return same
}

// versionedKeyOnThreeNodes returns n proxies over three storage nodes (proxiesOverThreeNodes),
// the container "bkt" with versioning on, and the key "key" in it.
func versionedKeyOnThreeNodes(t *testing.T, n int) ([]*proxy.Proxy, *atomic.Bool, State, meta.ObjectName) {
	t.Helper()
	ctx := context.Background()
	ps, refuseDeletes := proxiesOverThreeNodes(t, n)
	if err := ps[0].CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ps[0]).Enable(ctx, "acct", meta.Container{Name: "bkt"}); err != nil {
		t.Fatal(err)
	}
	return ps, refuseDeletes, State{Container: ContainerFor("bkt"), Enabled: true}, meta.ObjectName{Account: "acct", Container: "bkt", Object: "key"}
}

// TestProxiesMintingOneVersionNameBothWrite: two proxies that stamp a version of one key in
// the same 10 µs mint one version name (a Swift timestamp's resolution). Each write must
// still be a version of its own, its bytes under its own ID, and so must each of two delete
// markers: the name's register gives the name to one, and the other mints another.
func TestProxiesMintingOneVersionNameBothWrite(t *testing.T) {
	ctx := context.Background()
	ps, _, st, name := versionedKeyOnThreeNodes(t, 2)
	stores := []*Store{New(ps[0]), New(ps[1])}
	for round := range 5 {
		same := mintAlike(stores)
		ids := make([]string, len(stores))
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Go(func() {
				body := fmt.Sprintf("round %d, store %d", round, i)
				_, id, err := s.Put(ctx, st, name, meta.Object{Size: int64(len(body))}, strings.NewReader(body), proxy.PutOptions{})
				if err != nil {
					t.Errorf("round %d: store %d: put: %v", round, i, err)
				}
				ids[i] = id
			})
		}
		wg.Wait()
		if ids[0] == ids[1] {
			t.Fatalf("round %d: both writes were told version %s", round, ids[0])
		}
		if ids[0] != ID(same) && ids[1] != ID(same) {
			t.Errorf("round %d: versions %v, neither the one both minted first (%s)", round, ids, ID(same))
		}
		for i, id := range ids {
			v, err := stores[0].Resolve(ctx, st, name, id)
			if err != nil {
				t.Fatalf("round %d: version %s: %v", round, id, err)
			}
			r, err := ps[1].GetObject(ctx, v.Name, nil)
			if err != nil {
				t.Fatalf("round %d: version %s: %v", round, id, err)
			}
			got, _ := io.ReadAll(r)
			r.Close()
			if want := fmt.Sprintf("round %d, store %d", round, i); !bytes.Equal(got, []byte(want)) {
				t.Errorf("round %d: version %s holds %q, its writer wrote %q", round, id, got, want)
			}
		}
	}
	// Two deletes at once, one marker name minted by both: two markers.
	mintAlike(stores)
	markers := make([]string, len(stores))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			id, err := s.Delete(ctx, st, name)
			if err != nil {
				t.Errorf("store %d: delete: %v", i, err)
			}
			markers[i] = id
		})
	}
	wg.Wait()
	if markers[0] == markers[1] {
		t.Errorf("both deletes were told marker %s", markers[0])
	}
}

// TestAVersionWhoseLinkWasNotDecidedGoes: a conditional PUT whose link the register does not
// decide for it, because another writer's decided link has not landed (409
// ConditionalRequestConflict), leaves no version behind: the client was told it failed.
func TestAVersionWhoseLinkWasNotDecidedGoes(t *testing.T) {
	ctx := context.Background()
	ps, _, st, name := versionedKeyOnThreeNodes(t, 2)
	s := New(ps[1])
	// Another writer's conditional PUT of the key is decided and still sending its body.
	pr, pw := io.Pipe()
	defer pw.CloseWithError(io.ErrUnexpectedEOF)
	go ps[0].PutObject(ctx, name, meta.Object{Size: 10}, pr, proxy.PutOptions{If: meta.Precondition{IfNoneMatch: true}})
	if _, err := pw.Write([]byte("x")); err != nil { // its decision is made: it reads its body
		t.Fatal(err)
	}
	_, _, err := s.Put(ctx, st, name, meta.Object{Size: 4}, strings.NewReader("mine"), proxy.PutOptions{If: meta.Precondition{IfNoneMatch: true}})
	if !errors.Is(err, meta.ErrConditionalConflict) {
		t.Fatalf("put while another's decided write is on its way: %v, want ErrConditionalConflict", err)
	}
	l, err := s.List(ctx, st, "acct", "bkt", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Versions) != 0 {
		t.Errorf("versions left: %+v", l.Versions)
	}
}

// TestALoserWhoseVersionStaysIsNotTold412: a conditional PUT that lost (its link refused)
// removes the version it wrote before it answers 412; when the version cannot be removed, its
// bytes stay visible as a noncurrent version, so the client is told 503 (outcome unknown),
// never 412.
func TestALoserWhoseVersionStaysIsNotTold412(t *testing.T) {
	ctx := context.Background()
	ps, refuseDeletes, st, name := versionedKeyOnThreeNodes(t, 1)
	s := New(ps[0])
	create := func(body string) error {
		_, _, err := s.Put(ctx, st, name, meta.Object{Size: int64(len(body))}, strings.NewReader(body), proxy.PutOptions{If: meta.Precondition{IfNoneMatch: true}})
		return err
	}
	if err := create("first"); err != nil {
		t.Fatal(err)
	}
	if err := create("second"); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("a create of an existing key: %v, want ErrPreconditionFailed", err)
	}
	refuseDeletes.Store(true)
	err := create("third")
	if !errors.Is(err, meta.ErrUnavailable) || errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("a create that lost and could not remove its version: %v, want ErrUnavailable alone", err)
	}
	refuseDeletes.Store(false)
	l, err := s.List(ctx, st, "acct", "bkt", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Versions) != 2 {
		t.Errorf("%d versions, want the first and the one that could not be removed: %+v", len(l.Versions), l.Versions)
	}
}

// TestAPutAfterAnotherIsCurrentThoughItsClockIsBehind: a proxy whose clock runs behind the one
// that wrote the current version must still make a PUT that begins after it current: it stamps
// its version after the one it replaces, not by its own clock alone (the robustness tier's
// clock fault: a PUT told 200 after another had ended, and GETs answering the other's bytes).
func TestAPutAfterAnotherIsCurrentThoughItsClockIsBehind(t *testing.T) {
	ctx := context.Background()
	ps, _, st, name := versionedKeyOnThreeNodes(t, 2)
	ahead, behind := New(ps[0]), New(ps[1])
	// The first store's clock runs 2 s ahead of the second's (one process's clock stands
	// for both here: the first mints from the future).
	ahead.mint = func() meta.Timestamp { return (meta.Now()/swiftUnit + 200_000) * swiftUnit }
	put := func(s *Store, body string) {
		t.Helper()
		if _, _, err := s.Put(ctx, st, name, meta.Object{Size: int64(len(body))}, strings.NewReader(body), proxy.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		cur, err := ps[1].HeadObject(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		vobj, _, ok := LinkedVersion(&cur)
		if !ok {
			t.Fatalf("the key is not a link: %+v", cur)
		}
		r, err := ps[1].GetObject(ctx, meta.ObjectName{Account: "acct", Container: st.Container, Object: vobj}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b, _ := io.ReadAll(r)
		return string(b)
	}
	put(ahead, "from the future")
	put(behind, "later")
	if got := read(); got != "later" {
		t.Errorf("after a PUT through the proxy behind, the current version holds %q", got)
	}
	if _, err := behind.Delete(ctx, st, name); err != nil {
		t.Fatal(err)
	}
	if _, err := ps[0].HeadObject(ctx, name); !errors.Is(err, meta.ErrNotFound) {
		t.Errorf("after a DELETE through the proxy behind, the key reads %v, want not found", err)
	}
}

// TestACreateOvertakenByADeleteIsNotTold200: a conditional create whose condition is decided
// after a concurrent DELETE's newer tombstone landed (the DELETE began after the create minted
// its version) did not become current, and its condition was tested after the DELETE, not
// before it: it is told 409 and leaves no version, not 200 (the robustness tier found a create
// told 200 that no order of the history explains).
func TestACreateOvertakenByADeleteIsNotTold200(t *testing.T) {
	ctx := context.Background()
	ps, _, st, name := versionedKeyOnThreeNodes(t, 1)
	s := New(ps[0])
	var once sync.Once
	var delErr error
	opts := proxy.PutOptions{If: meta.Precondition{IfNoneMatch: true}, BeforeCommit: func(*meta.Object) error {
		// The version's body has arrived: a DELETE of the key lands now, newer than it.
		once.Do(func() { delErr = ps[0].DeleteObject(ctx, name) })
		return nil
	}}
	_, _, err := s.Put(ctx, st, name, meta.Object{Size: 4}, strings.NewReader("mine"), opts)
	if delErr != nil && !errors.Is(delErr, meta.ErrNotFound) {
		t.Fatal(delErr)
	}
	if !errors.Is(err, meta.ErrConditionalConflict) {
		t.Fatalf("a create overtaken by a newer DELETE: %v, want ErrConditionalConflict", err)
	}
	l, err := s.List(ctx, st, "acct", "bkt", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Versions) != 0 {
		t.Errorf("versions left: %+v", l.Versions)
	}
}

// oneNode dials the one storage node of the embedded default.
type oneNode struct{ n *storage.Node }

func (d oneNode) Dial(string) (nodeclient.Client, error) { return d.n, nil }

// versionedKeyEmbedded is versionedKeyOnThreeNodes for the embedded default: one node, one
// device, one replica, written by this process alone.
func versionedKeyEmbedded(t *testing.T) (*proxy.Proxy, State, meta.ObjectName) {
	t.Helper()
	ctx := context.Background()
	node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(t.TempDir(), "d0")}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	r := &ring.Ring{PartPower: 2, Devices: []ring.Device{{ID: 0, Node: "node0", Name: "d0", Weight: 1}}, Assignments: [][]int{make([]int, 4)}}
	p, err := proxy.New(proxy.Config{Ring: r, Dialer: oneNode{node}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := New(p).Enable(ctx, "acct", meta.Container{Name: "bkt"}); err != nil {
		t.Fatal(err)
	}
	return p, State{Container: ContainerFor("bkt"), Enabled: true}, meta.ObjectName{Account: "acct", Container: "bkt", Object: "key"}
}

// gatedBody is a body whose first Read waits for release; reading is closed at that first
// Read (its PUT has stamped its version by then).
type gatedBody struct {
	r                *strings.Reader
	once             sync.Once
	reading, release chan struct{}
}

func gated(s string) *gatedBody {
	return &gatedBody{r: strings.NewReader(s), reading: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedBody) Read(p []byte) (int, error) {
	g.once.Do(func() { close(g.reading) })
	<-g.release
	return g.r.Read(p)
}

// The robustness tier's seed 1795974788630210716 on the embedded default: a plain versioned
// PUT stamped (its version minted), then a create of the key decided and linked, then the
// plain PUT's link, older, lost to the create's: both told 200, the plain PUT's version not
// current, in an order no history explains. A create waits for the plain writes of its key
// stamped before it (proxy.Flights): told 409 when they are still in flight after a while,
// and 412 once the plain write has landed; the plain write is current.
func TestACreateWaitsForAPlainWriteStampedBeforeIt(t *testing.T) {
	ctx := context.Background()
	p, st, name := versionedKeyEmbedded(t)
	s := New(p)
	plain := gated("plain")
	plainDone := make(chan error, 1)
	var plainID string
	go func() {
		var err error
		_, plainID, err = s.Put(ctx, st, name, meta.Object{Size: 5}, plain, proxy.PutOptions{})
		plainDone <- err
	}()
	<-plain.reading
	create := func() error {
		_, _, err := New(p).Put(ctx, st, name, meta.Object{Size: 6}, strings.NewReader("create"), proxy.PutOptions{If: meta.Precondition{IfNoneMatch: true}})
		return err
	}
	if err := create(); !errors.Is(err, meta.ErrConditionalConflict) {
		t.Fatalf("a create while a plain write stamped before it is in flight: %v, want 409", err)
	}
	createDone := make(chan error, 1)
	go func() { createDone <- create() }()
	close(plain.release) // before or while the create waits: it is told 412 either way
	if err := <-plainDone; err != nil {
		t.Fatal(err)
	}
	if err := <-createDone; !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("a create once the plain write landed: %v, want 412", err)
	}
	l, err := s.List(ctx, st, "acct", "bkt", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Versions) != 1 || l.Versions[0].ID != plainID || !l.Versions[0].Latest {
		t.Fatalf("versions %+v, want the plain write's %s alone, current", l.Versions, plainID)
	}
}
