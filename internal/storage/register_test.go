package storage

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cairn-store/cairn/internal/casreg"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

func ballot(n uint64, p string) casreg.Ballot { return casreg.Ballot{Counter: n, Proposer: p} }

// A node answers a register's messages as casreg's acceptor does, keeps the state of each
// register apart (by partition and key), and refuses keys it cannot hold.
func TestRegisterAnswersAsTheAcceptor(t *testing.T) {
	ctx := context.Background()
	n, _ := openNode(t)
	send := func(part uint32, key string, m casreg.Message) casreg.Reply {
		t.Helper()
		r, err := n.Register(ctx, "d0", part, key, m)
		if err != nil {
			t.Fatalf("%s %v: %v", key, m.Kind, err)
		}
		return r
	}
	if r := send(1, "k", casreg.Message{Kind: casreg.Peek}); r.Kind != casreg.Peeked || !r.Accepted.IsZero() || r.Value.Data != nil {
		t.Fatalf("peek of an empty register: %+v", r)
	}
	if r := send(1, "k", casreg.Message{Kind: casreg.Prepare, Ballot: ballot(2, "a")}); r.Kind != casreg.Promised {
		t.Fatalf("prepare: %+v", r)
	}
	if r := send(1, "k", casreg.Message{Kind: casreg.Prepare, Ballot: ballot(1, "b")}); r.Kind != casreg.Rejected || r.Seen != ballot(2, "a") {
		t.Fatalf("a lower prepare: %+v", r)
	}
	v := casreg.Value{Gen: 1, Data: []byte("version 1")}
	if r := send(1, "k", casreg.Message{Kind: casreg.Accept, Ballot: ballot(2, "a"), Value: v}); r.Kind != casreg.Took {
		t.Fatalf("accept: %+v", r)
	}
	if r := send(1, "k", casreg.Message{Kind: casreg.Peek}); r.Accepted != ballot(2, "a") || !r.Value.Equal(v) {
		t.Fatalf("peek after accept: %+v", r)
	}
	// The same key in another partition, and another key, are other registers.
	for _, other := range []struct {
		part uint32
		key  string
	}{{2, "k"}, {1, "k2"}, {1, "k\x00"}} {
		if r := send(other.part, other.key, casreg.Message{Kind: casreg.Peek}); !r.Accepted.IsZero() {
			t.Errorf("register %d/%q sees another's state: %+v", other.part, other.key, r)
		}
	}
	for _, key := range []string{"", strings.Repeat("x", 8<<10+1)} {
		if _, err := n.Register(ctx, "d0", 1, key, casreg.Message{Kind: casreg.Peek}); !errors.Is(err, meta.ErrInvalidName) {
			t.Errorf("key of %d bytes: err %v, want ErrInvalidName", len(key), err)
		}
	}
	if _, err := n.Register(ctx, "nosuch", 1, "k", casreg.Message{Kind: casreg.Peek}); !errors.Is(err, ErrNoDevice) {
		t.Errorf("unknown device: err %v", err)
	}
}

// What an acceptor promised or accepted before it answered survives a crash of the node that
// loses every unsynced write: otherwise a restarted acceptor could promise a lower ballot again
// or forget a value a quorum chose, and two values could be chosen.
func TestRegisterStateSurvivesACrash(t *testing.T) {
	ctx := context.Background()
	fs := pebblevfs.NewCrashableMem()
	open := func(fs pebblevfs.FS) *Node {
		t.Helper()
		n, err := Open(Config{Devices: []DeviceConfig{{Name: "d0", Dir: "/d0"}}, FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := open(fs)
	r := rand.New(rand.NewPCG(1, 2))
	type answered struct {
		key   string
		reply casreg.Reply
		value casreg.Value
	}
	var acked []answered
	for i := range 200 {
		key := []string{"a", "b", "c", "d"}[r.IntN(4)]
		b := ballot(uint64(i+1), "p")
		m := casreg.Message{Kind: casreg.Prepare, Ballot: b}
		if r.IntN(2) == 0 {
			m = casreg.Message{Kind: casreg.Accept, Ballot: b, Value: casreg.Value{Gen: uint64(i), Data: []byte{byte(i)}}}
		}
		rep, err := n.Register(ctx, "d0", 7, key, m)
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, answered{key: key, reply: rep, value: m.Value})
	}
	img := fs.CrashClone(pebblevfs.CrashCloneCfg{UnsyncedDataPercent: 0, RNG: rand.New(rand.NewPCG(3, 4))})
	n.Close()

	after := open(img)
	defer after.Close()
	// Each register must show at least the newest ballot it answered for, and the value of
	// the newest accept it took.
	newest := map[string]casreg.Ballot{}
	took := map[string]answered{}
	for _, a := range acked {
		if a.reply.Kind == casreg.Promised || a.reply.Kind == casreg.Took {
			newest[a.key] = a.reply.Ballot
		}
		if a.reply.Kind == casreg.Took {
			took[a.key] = a
		}
	}
	for key, b := range newest {
		rep, err := after.Register(ctx, "d0", 7, key, casreg.Message{Kind: casreg.Peek})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Seen != b {
			t.Errorf("register %s: after the crash it knows ballot %v, it had answered for %v", key, rep.Seen, b)
		}
		if a, ok := took[key]; ok && (rep.Accepted != a.reply.Ballot || !rep.Value.Equal(a.value)) {
			t.Errorf("register %s: after the crash it holds %v %+v, it had taken %v %+v", key, rep.Accepted, rep.Value, a.reply.Ballot, a.value)
		}
	}
	if len(newest) == 0 {
		t.Fatal("the test answered nothing")
	}
}

// A plain write being committed holds off a guarded decision, and a decision taken holds off a
// plain write stamped beneath it: of the two, whichever reaches the device first orders the
// other after it.
func TestUndecidedWritesAndGuardedDecisionsHoldEachOtherOff(t *testing.T) {
	ctx := context.Background()
	n, _ := openNode(t)
	d, err := n.device("d0")
	if err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "lock"}
	key := nodeclient.ObjectRegisterKey(name)
	decidedAt := meta.Now() + meta.Timestamp(time.Minute)
	accept := func(b uint64) casreg.Reply {
		t.Helper()
		r, err := n.Register(ctx, "d0", 5, key, casreg.Message{Kind: casreg.Accept, Ballot: ballot(b, "p"),
			Value: casreg.Value{Gen: b, Data: nodeclient.EncodeDecided(decidedAt)}, Guard: nodeclient.ObjectGuard{Name: name}.AppendTo(nil)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	done, err := d.admitUndecided(5, name, meta.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r := accept(1); r.Kind != casreg.Refused {
		t.Fatalf("a guarded decision while a plain write commits: %v", r.Kind)
	}
	done()
	if r := accept(2); r.Kind != casreg.Took {
		t.Fatalf("a guarded decision once the plain write is done (and nothing landed): %v", r.Kind)
	}
	var below *meta.DecidedError
	if _, err := d.admitUndecided(5, name, decidedAt-1); !errors.As(err, &below) || below.At != decidedAt {
		t.Fatalf("a plain write beneath the decision: %v", err)
	}
	// The node's own PUT path: refused after its body arrived, nothing stored.
	_, err = n.PutObject(ctx, "d0", 5, name, meta.Object{Timestamp: decidedAt - 1, Size: 1}, strings.NewReader("x"), nodeclient.PutOptions{Undecided: true})
	if !errors.As(err, &below) {
		t.Fatalf("an undecided PUT beneath the decision: %v", err)
	}
	if _, err := n.HeadObject(ctx, "d0", 5, name, nodeclient.HeadOptions{}); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("the refused PUT left a version: %v", err)
	}
	done, err = d.admitUndecided(5, name, decidedAt+1)
	if err != nil {
		t.Fatalf("a plain write above the decision: %v", err)
	}
	done()
	if len(d.registers.of(registerKey(5, key)).committing) != 0 {
		t.Error("a finished write is still counted as committing")
	}
}
