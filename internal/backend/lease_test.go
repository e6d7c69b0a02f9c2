package backend

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/nodelease"
	"github.com/cairn-store/cairn/internal/readlease"
)

// leaseRing: two replicas, every partition's first primary is a remote holder and its second
// the test node's device ("/d0": the node has no address of its own here).
type leaseRing struct{}

func (leaseRing) Devices() []string         { return []string{"holder:1/d0", "/d0"} }
func (leaseRing) Replicas() int             { return 2 }
func (leaseRing) Partitions() int           { return 4 }
func (leaseRing) Primaries(uint32) []string { return []string{"holder:1/d0", "/d0"} }
func (leaseRing) Version() string           { return "r1" }

func TestLeaseOverHTTP(t *testing.T) {
	ctx := context.Background()
	c, n, addr := startRegisterNode(t)
	r := readlease.Renewal{Holder: "holder:1/d0", Granter: "/d0", Seq: 1, Ring: "r1"}
	if _, err := c.RenewLease(ctx, "d0", r); !errors.Is(err, nodeclient.ErrNoLeases) {
		t.Fatalf("renewal before the node has leases: %v", err)
	}
	svc, err := nodelease.New(nodelease.Config{Lease: readlease.DefaultConfig(2), Local: []string{"/d0"}, Rings: map[int]nodelease.Ring{0: leaseRing{}},
		Peers: nil, Holds: n.HoldsVersion})
	if err == nil {
		t.Fatal("a service without peers was made")
	}
	svc, err = nodelease.New(nodelease.Config{Lease: readlease.DefaultConfig(2), Local: []string{"/d0"}, Rings: map[int]nodelease.Ring{0: leaseRing{}},
		Peers: noPeers{}, Holds: n.HoldsVersion})
	if err != nil {
		t.Fatal(err)
	}
	n.SetLeases(svc)
	g, err := c.RenewLease(ctx, "d0", r)
	if err != nil || g.Granted || g.Seq != 1 {
		t.Fatalf("renewal before any pass to the holder: %+v, %v", g, err)
	}
	svc.FullPass("/d0", "holder:1/d0", time.Now())
	r.Seq = 2
	r.Settle = []readlease.Version{{Part: 1, Name: "a/c/o", Version: "123"}}
	if g, err = c.RenewLease(ctx, "d0", r); err != nil || !g.Granted || len(g.Held) != 0 {
		t.Fatalf("renewal after a pass: %+v, %v", g, err)
	}
	wait, err := c.RevokeLease(ctx, "d0", 1, "holder:1/d0")
	if err != nil || wait <= 0 || wait > 3*time.Second {
		t.Fatalf("revocation: %v, %v", wait, err)
	}
	r.Seq = 3
	if g, err = c.RenewLease(ctx, "d0", r); err != nil || !g.Granted || len(g.Revoked) != 1 || g.Revoked[0] != 1 {
		t.Fatalf("renewal after the revocation: %+v, %v", g, err)
	}
	// Bad requests are refused, and change nothing.
	good := r.AppendTo(nil)
	for _, tc := range []struct {
		name, query string
		body        []byte
		want        int
	}{
		{"no op", "", good, http.StatusBadRequest},
		{"unknown op", "op=steal", good, http.StatusBadRequest},
		{"truncated renewal", "op=renew", good[:len(good)-1], http.StatusBadRequest},
		{"a revocation's body for a renewal", "op=renew", readlease.Revocation{Holder: "h", Part: 1}.AppendTo(nil), http.StatusBadRequest},
		{"hostile count", "op=renew", []byte{1, 1, 'h', 1, 'g', 1, 1, 'r', 0xff, 0xff, 0xff, 0xff, 0x0f}, http.StatusBadRequest},
		{"oversized", "op=revoke", make([]byte, maxLeaseBody+1), http.StatusBadRequest},
		{"renewal for another device", "op=renew", readlease.Renewal{Holder: "h", Granter: "x/d0"}.AppendTo(nil), http.StatusNotFound},
	} {
		if got := rawStatus(t, methodLease, "http://"+addr+"/d0/0?"+tc.query, tc.body, true); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	// A node from before leases, or Swift's, says so.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}))
	defer srv.Close()
	d, err := NewDialer(ClientConfig{Secret: registerSecret})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sc, _ := d.Dial(strings.TrimPrefix(srv.URL, "http://"))
	if _, err := sc.(nodeclient.Leases).RevokeLease(ctx, "d0", 1, "h"); !errors.Is(err, nodeclient.ErrNoLeases) {
		t.Fatalf("Swift's server: %v", err)
	}
}

type noPeers struct{}

func (noPeers) Renew(context.Context, string, readlease.Renewal) (readlease.Grant, error) {
	return readlease.Grant{}, errors.New("no peers here")
}

// answering is a node's lease state that always lets it answer alone, and records the rings
// that object requests named (CrossRing), if rings is set.
type answering struct {
	noPeers
	rings *[]string
}

func (a answering) CrossRing(_ string, _ uint32, rings []string) time.Duration {
	if a.rings != nil {
		*a.rings = append(*a.rings, strings.Join(rings, "+"))
	}
	return 0
}

func (answering) Wrote(string, uint32, string, string) {}
func (answering) Renew(context.Context, readlease.Renewal) (readlease.Grant, error) {
	return readlease.Grant{}, nil
}
func (answering) Revoke(string, string, uint32) (time.Duration, error) { return 0, nil }
func (answering) Refusal(string, uint32, string) string                { return readlease.Answers }

// A GET over the node protocol carries the question and the answer of the lease.
func TestAloneOverHTTP(t *testing.T) {
	ctx := context.Background()
	c, n, _ := startRegisterNode(t)
	name := meta.ObjectName{Account: "a", Container: "c", Object: "o"}
	if _, err := c.PutObject(ctx, "d0", 1, name, meta.Object{Timestamp: meta.Now(), Size: 1}, bytes.NewReader([]byte("x")), nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	n.SetLeases(answering{})
	for _, ask := range []bool{false, true} {
		gctx := ctx
		if ask {
			gctx = nodeclient.WithLeaseRead(ctx)
		}
		r, err := c.GetObject(gctx, "d0", 1, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if string(b) != "x" || r.Alone != ask {
			t.Fatalf("asked %v: body %q, alone %v", ask, b, r.Alone)
		}
	}
}

// An object request carries the rings of the proxy that sent it (nodeclient.WithRings) to the
// node's CrossRing rule; one without them carries none.
func TestRingsOverHTTP(t *testing.T) {
	ctx := context.Background()
	c, n, _ := startRegisterNode(t)
	var rings []string
	n.SetLeases(answering{rings: &rings})
	name := meta.ObjectName{Account: "a", Container: "c", Object: "o"}
	put := func(ctx context.Context) {
		t.Helper()
		if _, err := c.PutObject(ctx, "d0", 1, name, meta.Object{Timestamp: meta.Now(), Size: 1}, bytes.NewReader([]byte("x")), nodeclient.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(ctx)
	if len(rings) != 0 {
		t.Fatalf("a request naming no rings reached CrossRing: %v", rings)
	}
	put(nodeclient.WithRings(ctx, "pnew", "pold"))
	if _, err := c.HeadObject(nodeclient.WithRings(ctx, "pnew"), "d0", 1, name, nodeclient.HeadOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"pnew+pold", "pnew"}; !slices.Equal(rings, want) {
		t.Fatalf("CrossRing heard %v, want %v", rings, want)
	}
}
