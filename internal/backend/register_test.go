package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/casreg"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/storage"
)

var registerSecret = []byte("register test secret")

func startRegisterNode(t *testing.T) (*Client, *storage.Node, string) {
	t.Helper()
	n, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: filepath.Join(t.TempDir(), "d0")}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(HandlerConfig{Node: n, Secret: registerSecret})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	d, err := NewDialer(ClientConfig{Secret: registerSecret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(); srv.Close(); n.Close() })
	addr := strings.TrimPrefix(srv.URL, "http://")
	c, err := d.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*Client), n, addr
}

// A register's messages cross the node protocol unchanged: the node's replies over HTTP are
// those it gives in-process, for keys of any bytes.
// rawStatus sends a request of the node protocol by hand (signed with the tests' secret, or
// not) and returns the status it was answered with.
func rawStatus(t *testing.T, method, url string, body []byte, signed bool) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set(hdrTimestamp, FormatTimestamp(meta.Now()))
	if signed {
		sign(req, registerSecret, time.Now())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestRegisterOverHTTP(t *testing.T) {
	ctx := context.Background()
	c, n, _ := startRegisterNode(t)
	key := "o\x00acct\x00box\x00obj/ü"
	b := casreg.Ballot{Counter: 3, Proposer: "proxy-1"}
	v := casreg.Value{Gen: 1, Data: []byte("current version")}
	for _, m := range []casreg.Message{{Kind: casreg.Prepare, Ballot: b}, {Kind: casreg.Accept, Ballot: b, Value: v}, {Kind: casreg.Prepare, Ballot: casreg.Ballot{Counter: 2, Proposer: "z"}}} {
		if _, err := c.Register(ctx, "d0", 5, key, m); err != nil {
			t.Fatalf("%v: %v", m.Kind, err)
		}
	}
	remote, err := c.Register(ctx, "d0", 5, key, casreg.Message{Kind: casreg.Peek})
	if err != nil {
		t.Fatal(err)
	}
	local, err := n.Register(ctx, "d0", 5, key, casreg.Message{Kind: casreg.Peek})
	if err != nil {
		t.Fatal(err)
	}
	if remote.Kind != casreg.Peeked || remote.Accepted != b || !remote.Value.Equal(v) || remote.Seen != local.Seen || !local.Value.Equal(v) {
		t.Errorf("over HTTP %+v, in-process %+v", remote, local)
	}
	if _, err := c.Register(ctx, "nodev", 5, key, casreg.Message{Kind: casreg.Peek}); err == nil {
		t.Error("a register on a device the node lacks answered")
	}
	if _, err := c.Register(ctx, "d0", 5, strings.Repeat("k", nodeclient.MaxRegisterKey+1), casreg.Message{Kind: casreg.Peek}); !errors.Is(err, meta.ErrInvalidName) {
		t.Errorf("an oversized key: %v", err)
	}
}

// Malformed or unsigned REGISTER requests are refused with 400 or 401 and change nothing.
func TestRegisterRefusesBadRequests(t *testing.T) {
	ctx := context.Background()
	c, n, addr := startRegisterNode(t)
	b := casreg.Ballot{Counter: 1, Proposer: "p"}
	if _, err := c.Register(ctx, "d0", 1, "k", casreg.Message{Kind: casreg.Prepare, Ballot: b}); err != nil {
		t.Fatal(err)
	}
	good := encodeRegisterRequest("k", casreg.Message{Kind: casreg.Prepare, Ballot: casreg.Ballot{Counter: 9, Proposer: "x"}})
	cases := []struct {
		name   string
		path   string
		body   []byte
		signed bool
		want   int
	}{
		{"unsigned", "/d0/1", good, false, http.StatusUnauthorized},
		{"empty body", "/d0/1", nil, true, http.StatusBadRequest},
		{"truncated message", "/d0/1", good[:len(good)-2], true, http.StatusBadRequest},
		{"trailing bytes", "/d0/1", append(bytes.Clone(good), 1), true, http.StatusBadRequest},
		{"key length beyond the body", "/d0/1", []byte{0x7f, 'k'}, true, http.StatusBadRequest},
		{"huge key length", "/d0/1", []byte{0xff, 0xff, 0xff, 0x7f}, true, http.StatusBadRequest},
		{"oversized body", "/d0/1", make([]byte, maxRegisterBody+10), true, http.StatusBadRequest},
		{"not a partition path", "/d0/1/acct", good, true, http.StatusBadRequest},
		{"bad partition", "/d0/x", good, true, http.StatusBadRequest},
	}
	for _, tc := range cases {
		if got := rawStatus(t, methodRegister, "http://"+addr+tc.path, tc.body, tc.signed); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	r, err := n.Register(ctx, "d0", 1, "k", casreg.Message{Kind: casreg.Peek})
	if err != nil || r.Seen != b {
		t.Errorf("after bad requests the register knows %v (%v), want %v", r.Seen, err, b)
	}
}

// A proxy over OpenStack Swift's servers, or over Cairn nodes from before registers (in a
// rolling upgrade, proxies first), learns that they keep no registers, at once.
func TestRegisterOnANodeThatHasNone(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"Swift's": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "<html><h1>Method Not Allowed</h1></html>", http.StatusMethodNotAllowed)
		},
		"an older Cairn's": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(hdrNode, "1")
			writeError(w, fmt.Errorf("%w: path %q", ErrBadRequest, r.URL.Path))
		},
	} {
		srv := httptest.NewServer(h)
		d, err := NewDialer(ClientConfig{Secret: registerSecret})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := d.Dial(strings.TrimPrefix(srv.URL, "http://"))
		if _, err := c.(nodeclient.Registers).Register(context.Background(), "d0", 1, "k", casreg.Message{Kind: casreg.Peek}); !errors.Is(err, nodeclient.ErrNoRegisters) {
			t.Errorf("%s node: err %v, want ErrNoRegisters", name, err)
		}
		d.Close()
		srv.Close()
	}
}

// Whatever body arrives, decoding a REGISTER request never panics, and what decodes encodes to
// a request that decodes the same.
func FuzzDecodeRegisterRequest(f *testing.F) {
	f.Add(encodeRegisterRequest("k", casreg.Message{Kind: casreg.Prepare, Ballot: casreg.Ballot{Counter: 1, Proposer: "p"}}))
	f.Add(encodeRegisterRequest("o\x00a", casreg.Message{Kind: casreg.Accept, Ballot: casreg.Ballot{Counter: 2, Proposer: "q"}, Value: casreg.Value{Gen: 1, Data: []byte("v")}}))
	f.Add(encodeRegisterRequest("o1:a1:bc", casreg.Message{Kind: casreg.Accept, Ballot: casreg.Ballot{Counter: 3, Proposer: "q"}, Value: casreg.Value{Gen: 2, Data: []byte("w")},
		Guard: nodeclient.ObjectGuard{Name: meta.ObjectName{Account: "a", Container: "b", Object: "c"}, Seen: 7}.AppendTo(nil)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		key, m, err := decodeRegisterRequest(b)
		if err != nil {
			return
		}
		key2, m2, err := decodeRegisterRequest(encodeRegisterRequest(key, m))
		if err != nil || key2 != key || m2.Kind != m.Kind || m2.Ballot != m.Ballot || !m2.Value.Equal(m.Value) || !bytes.Equal(m2.Guard, m.Guard) || (m2.Guard == nil) != (m.Guard == nil) {
			t.Fatalf("%x: %q %+v re-decoded as %q %+v, %v", b, key, m, key2, m2, err)
		}
	})
}

// registerNodeWithObject starts a node that keeps registers, with the container acct/box in
// partition 3, and returns the name acct/box/o and its register's key.
func registerNodeWithObject(t *testing.T) (*Client, meta.ObjectName, string) {
	t.Helper()
	c, _, _ := startRegisterNode(t)
	if err := c.PutContainer(context.Background(), "d0", 3, "acct", meta.Container{Name: "box", Created: meta.Now()}, nodeclient.ContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	name := meta.ObjectName{Account: "acct", Container: "box", Object: "o"}
	return c, name, nodeclient.ObjectRegisterKey(name)
}

// A PUT's and a POST's decision fence and a tombstone's time cross the node protocol: a write
// decided in an earlier generation than the node's register has accepted is refused (412), and
// a HEAD of a deleted name says when it was deleted.
func TestDecidedPutAndTombstoneOverHTTP(t *testing.T) {
	ctx := context.Background()
	c, name, key := registerNodeWithObject(t)
	b := casreg.Ballot{Counter: 1, Proposer: "p"}
	if _, err := c.Register(ctx, "d0", 3, key, casreg.Message{Kind: casreg.Accept, Ballot: b, Value: casreg.Value{Gen: 5, Data: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	put := func(gen uint64) error {
		_, err := c.PutObject(ctx, "d0", 3, name, meta.Object{Timestamp: meta.Now(), Size: 2}, strings.NewReader("hi"), nodeclient.PutOptions{DecidedGen: gen})
		return err
	}
	if err := put(4); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Errorf("a PUT decided in generation 4 after 5 was accepted: %v", err)
	}
	if err := put(5); err != nil {
		t.Errorf("a PUT decided in the accepted generation: %v", err)
	}
	// A POST's fence likewise (Object Lock's retention changes are decided POSTs).
	post := func(gen uint64) error {
		_, err := c.PostObject(ctx, "d0", 3, name, meta.Object{Timestamp: meta.Now(), UserMeta: map[string]string{"g": "x"}}, nodeclient.PostOptions{DecidedGen: gen})
		return err
	}
	if err := post(4); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Errorf("a POST decided in generation 4 after 5 was accepted: %v", err)
	}
	if err := post(5); err != nil {
		t.Errorf("a POST decided in the accepted generation: %v", err)
	}
	at := meta.Now()
	if _, err := c.DeleteObject(ctx, "d0", 3, name, at, nodeclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.HeadObject(ctx, "d0", 3, name, nodeclient.HeadOptions{Brief: true})
	var gone *meta.DeletedError
	if !errors.As(err, &gone) || gone.At != at || !errors.Is(err, meta.ErrNotFound) {
		t.Errorf("HEAD of the deleted name: %v", err)
	}
	// A write older than the version in place is refused, and says how new that version is
	// (the proxy moves its clock past it).
	ahead := meta.Now() + meta.Timestamp(10*time.Second)
	if _, err := c.PutObject(ctx, "d0", 3, name, meta.Object{Timestamp: ahead, Size: 2}, strings.NewReader("hi"), nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.PutObject(ctx, "d0", 3, name, meta.Object{Timestamp: ahead - 1, Size: 2}, strings.NewReader("ho"), nodeclient.PutOptions{})
	var newer *meta.NewerError
	if !errors.As(err, &newer) || newer.At != ahead || !errors.Is(err, meta.ErrConflict) {
		t.Errorf("PUT older than the version in place: %v, want a NewerError at %d", err, ahead)
	}
	_, err = c.DeleteObject(ctx, "d0", 3, name, ahead-1, nodeclient.DeleteOptions{})
	if !errors.As(err, &newer) || newer.At != ahead {
		t.Errorf("DELETE older than the version in place: %v, want a NewerError at %d", err, ahead)
	}
}

// A plain write's place below a decision, and a decision's guard, cross the node protocol: a
// write the register did not decide (Undecided) stamped below the decided write is refused
// with the decided write's time (not as a conflict with a newer version, which a front end
// reads as "a newer write won"), and a guarded Accept is refused where the node holds a version
// newer than the one its condition tested.
func TestUndecidedWritesAndGuardsOverHTTP(t *testing.T) {
	ctx := context.Background()
	c, name, key := registerNodeWithObject(t)
	decidedAt := meta.Now() + meta.Timestamp(time.Minute)
	if _, err := c.Register(ctx, "d0", 3, key, casreg.Message{Kind: casreg.Accept, Ballot: casreg.Ballot{Counter: 1, Proposer: "p"},
		Value: casreg.Value{Gen: 1, Data: nodeclient.EncodeDecided(decidedAt)}}); err != nil {
		t.Fatal(err)
	}
	below := func(what string, err error) {
		t.Helper()
		var d *meta.DecidedError
		if !errors.As(err, &d) || d.At != decidedAt || errors.Is(err, meta.ErrConflict) {
			t.Errorf("%s beneath the decision: %v, want a DecidedError at %d", what, err, decidedAt)
		}
	}
	_, err := c.PutObject(ctx, "d0", 3, name, meta.Object{Timestamp: meta.Now(), Size: 2}, strings.NewReader("hi"), nodeclient.PutOptions{Undecided: true})
	below("an undecided PUT", err)
	_, err = c.DeleteObject(ctx, "d0", 3, name, meta.Now(), nodeclient.DeleteOptions{Undecided: true})
	below("an undecided DELETE", err)
	_, err = c.PostObject(ctx, "d0", 3, name, meta.Object{Timestamp: meta.Now()}, nodeclient.PostOptions{Undecided: true})
	below("an undecided POST", err)
	if _, err := c.HeadObject(ctx, "d0", 3, name, nodeclient.HeadOptions{Brief: true}); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("a refused write left something: %v", err)
	}
	// Replication's writes are not the register's to order: the same PUT unflagged lands.
	held := meta.Now()
	if _, err := c.PutObject(ctx, "d0", 3, name, meta.Object{Timestamp: held, Size: 2}, strings.NewReader("hi"), nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, "d0", 3, name, meta.Object{Timestamp: decidedAt + 1, Size: 2}, strings.NewReader("ho"), nodeclient.PutOptions{Undecided: true}); err != nil {
		t.Errorf("an undecided PUT above the decision: %v", err)
	}

	// Guards, on another name: refused while a version newer than the one tested is held.
	other := meta.ObjectName{Account: "acct", Container: "box", Object: "g"}
	okey := nodeclient.ObjectRegisterKey(other)
	if _, err := c.PutObject(ctx, "d0", 3, other, meta.Object{Timestamp: held, Size: 1}, strings.NewReader("x"), nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	accept := func(n uint64, seen meta.Timestamp, on meta.ObjectName) (casreg.Reply, error) {
		return c.Register(ctx, "d0", 3, okey, casreg.Message{Kind: casreg.Accept, Ballot: casreg.Ballot{Counter: n, Proposer: "p"},
			Value: casreg.Value{Gen: n, Data: nodeclient.EncodeDecided(meta.Now())}, Guard: nodeclient.ObjectGuard{Name: on, Seen: seen}.AppendTo(nil)})
	}
	if r, err := accept(1, 0, other); err != nil || r.Kind != casreg.Refused {
		t.Errorf("a decision tested on nothing, where a version is held: %+v, %v", r, err)
	}
	if r, err := accept(2, held, other); err != nil || r.Kind != casreg.Took {
		t.Errorf("a decision tested on the version held: %+v, %v", r, err)
	}
	if _, err := accept(3, held, name); !errors.Is(err, meta.ErrInvalidName) {
		t.Errorf("a guard naming another object than the register's: %v", err)
	}
	_, err = c.Register(ctx, "d0", 3, okey, casreg.Message{Kind: casreg.Accept, Ballot: casreg.Ballot{Counter: 4, Proposer: "p"}, Guard: []byte("junk")})
	if !errors.Is(err, meta.ErrInvalidName) {
		t.Errorf("a damaged guard: %v", err)
	}
}
