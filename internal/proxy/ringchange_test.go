package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/ring"
)

// movedRing is c's ring with replica 0 of part moved to device to, carrying the change
// (until until) when it is not zero: a rebalance's ring as the builder writes it.
func movedRing(c *wideCluster, part uint32, to ring.Device, until time.Time) *ring.Ring {
	r := &ring.Ring{PartPower: c.ring.PartPower, Devices: c.ring.Devices, HashPrefix: c.ring.HashPrefix, HashSuffix: c.ring.HashSuffix}
	prev := make([][]int, len(c.ring.Assignments))
	for i, row := range c.ring.Assignments {
		prev[i] = slices.Clone(row)
		r.Assignments = append(r.Assignments, slices.Clone(row))
	}
	r.Assignments[0][part] = slices.IndexFunc(r.Devices, func(d ring.Device) bool { return d.ID == to.ID })
	if !until.IsZero() {
		r.Change = &ring.Change{Previous: prev, Until: until}
	}
	return r
}

// TestJointQuorumsAcrossARingChange: a rebalance moves the first replica of an object's
// partition from P to C, and the new ring reaches one proxy before the other. A write
// acknowledged through the proxy on the old ring and a read through the one on the new ring
// (and the other way round) must not miss each other, whichever primaries are away: the new
// ring's proxy keeps a quorum of both rings (docs/consistency.md, "Ring changes"). A proxy
// that used the new ring alone would miss them (checked too, so that the test shows the case
// is the one joint quorums are for).
func TestJointQuorumsAcrossARingChange(t *testing.T) {
	ctx := context.Background()
	c := newWideCluster(t, Config{ContainerCacheTTL: -1})
	old := c.proxy
	if err := old.CreateContainer(ctx, "acct", "bkt", nil); err != nil {
		t.Fatal(err)
	}
	put := func(p *Proxy, name meta.ObjectName, data string) {
		t.Helper()
		if _, err := p.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, bytes.NewReader([]byte(data)), PutOptions{}); err != nil {
			t.Fatalf("put %s: %v", data, err)
		}
	}
	containerPart := partition(c.ring, "acct", "bkt", "")
	for _, tc := range []struct {
		what string
		// write: through which proxy the second version is written while prim[away] is away;
		// then it is read through the other while prim[readAway] is away.
		oldWrites bool
	}{
		{"written on the old ring, read on the new", true},
		{"written on the new ring, read on the old", false},
	} {
		t.Run(tc.what, func(t *testing.T) {
			for _, joint := range []bool{true, false} {
				name := meta.ObjectName{Account: "acct", Container: "bkt", Object: tc.what}
				if !joint {
					name.Object += " (new ring alone)"
				}
				part := partition(c.ring, name.Account, name.Container, name.Object)
				if part == containerPart {
					t.Fatalf("%q shares the container's partition: pick another name", name.Object)
				}
				prim := c.ring.Nodes(part) // P, A, B
				var hand []ring.Device
				for d := range c.ring.Handoffs(part) {
					hand = append(hand, d)
				}
				// C is the second handoff: the first takes what a primary that is away misses,
				// and C must not hold the new version by that road.
				until := time.Now().Add(time.Hour)
				if !joint {
					until = time.Time{}
				}
				newer, err := New(Config{Ring: movedRing(c, part, hand[1], until), Dialer: c, ContainerCacheTTL: -1})
				if err != nil {
					t.Fatal(err)
				}
				a, b := prim[1].Node, prim[2].Node
				put(old, name, "version one") // on P, A and B

				writer, reader := old, newer
				if !tc.oldWrites {
					writer, reader = newer, old
				}
				c.set(c.down, a, true)
				put(writer, name, "version two")
				c.set(c.down, a, false)
				c.set(c.down, b, true)
				got := string(readAll(t, reader, name, nil))
				c.set(c.down, b, false)
				switch {
				case joint && got != "version two":
					t.Fatalf("read %q, want the acknowledged %q", got, "version two")
				case !joint && got != "version one":
					t.Fatalf("without joint quorums the read got %q: the case does not show what they are for", got)
				}
			}
		})
	}

	// Once the change is complete, the new ring's primaries alone make the quorums.
	name := meta.ObjectName{Account: "acct", Container: "bkt", Object: "after the change"}
	part := partition(c.ring, name.Account, name.Container, name.Object)
	var hand []ring.Device
	for d := range c.ring.Handoffs(part) {
		hand = append(hand, d)
	}
	for _, until := range []time.Time{time.Now().Add(time.Hour), time.Now().Add(-time.Second)} {
		p, err := New(Config{Ring: movedRing(c, part, hand[1], until), Dialer: c, ContainerCacheTTL: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, pl, err := p.placeObject(ctx, name, false)
		if err != nil {
			t.Fatal(err)
		}
		want := 4
		if until.Before(time.Now()) {
			want = 3
		}
		if len(pl.primaries) != want {
			t.Fatalf("change until %v: %d primaries, want %d", until, len(pl.primaries), want)
		}
	}
}

// Conditional creates racing through a proxy on the old ring and one on the new, while the
// change is under way, still have exactly one winner, and no replica of either ring holds a
// loser's bytes: the name's register then has the primaries of both rings as acceptors (three
// of the four make a quorum of each ring).
func TestConditionalCreatesRacingAcrossARingChange(t *testing.T) {
	ctx := context.Background()
	c := newWideCluster(t, Config{ContainerCacheTTL: -1})
	if err := c.proxy.CreateContainer(ctx, "acct", "box", nil); err != nil {
		t.Fatal(err)
	}
	containerPart := partition(c.ring, "acct", "box", "")
	const rounds, writers = 10, 8
	for round := range rounds {
		name := meta.ObjectName{Account: "acct", Container: "box", Object: fmt.Sprintf("commit-%05d.json", round)}
		part := partition(c.ring, name.Account, name.Container, name.Object)
		if part == containerPart {
			continue
		}
		var hand []ring.Device
		for d := range c.ring.Handoffs(part) {
			hand = append(hand, d)
		}
		joint, err := New(Config{Ring: movedRing(c, part, hand[1], time.Now().Add(time.Hour)), Dialer: c, ContainerCacheTTL: -1})
		if err != nil {
			t.Fatal(err)
		}
		won, unknown := raceCreates(t, []*Proxy{c.proxy, joint}, name, writers, fmt.Sprintf("of round %d", round))
		if len(won) != 1 || unknown != 0 {
			t.Fatalf("round %d: %d writers told they won: %q (%d told 503)", round, len(won), won, unknown)
		}
		held := 0
		for node, n := range c.nodes {
			r, err := n.GetObject(ctx, "d0", part, name, nil)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(r)
			r.Close()
			held++
			if string(b) != won[0] {
				t.Errorf("round %d: %s holds %q, the winner wrote %q", round, node, b, won[0])
			}
		}
		if held < 3 {
			t.Errorf("round %d: the winner's bytes are on %d nodes", round, held)
		}
	}
}
