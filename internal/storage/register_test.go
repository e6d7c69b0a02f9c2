package storage

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cairn-store/cairn/internal/casreg"
	"github.com/cairn-store/cairn/internal/meta"
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
