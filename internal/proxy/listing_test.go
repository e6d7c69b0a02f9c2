package proxy

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

func entries(names ...string) []meta.ListEntry {
	out := make([]meta.ListEntry, len(names))
	for i, n := range names {
		out[i] = meta.ListEntry{Name: n, Timestamp: 1}
	}
	return out
}

func names(l meta.ObjectListing) []string {
	var out []string
	for _, e := range l.Objects {
		out = append(out, e.Name)
	}
	return out
}

func TestMergeListings(t *testing.T) {
	page := func(truncated bool, objs ...string) meta.ObjectListing {
		l := meta.ObjectListing{Objects: entries(objs...), Truncated: truncated}
		if truncated {
			l.NextMarker = objs[len(objs)-1]
		}
		return l
	}
	cases := []struct {
		name      string
		pages     []meta.ObjectListing
		opts      meta.ListOptions
		want      []string
		disputed  []string
		truncated bool
		next      string
	}{
		{"agree", []meta.ObjectListing{page(false, "a", "b"), page(false, "a", "b")}, meta.ListOptions{}, []string{"a", "b"}, nil, false, ""},
		{"one misses a name", []meta.ObjectListing{page(false, "a", "c"), page(false, "a", "b", "c")}, meta.ListOptions{}, []string{"a", "b", "c"}, []string{"b"}, false, ""},
		{"a truncated page bounds the merge", []meta.ObjectListing{page(true, "a", "b"), page(false, "a", "b", "c", "d")}, meta.ListOptions{Limit: 2},
			[]string{"a", "b"}, nil, true, "b"},
		{"the union over the limit", []meta.ObjectListing{page(true, "a", "c"), page(true, "b", "c")}, meta.ListOptions{Limit: 2}, []string{"a", "b"}, []string{"a", "b"}, true, "b"},
		{"reverse", []meta.ObjectListing{page(true, "d", "c"), page(false, "d", "b")}, meta.ListOptions{Reverse: true, Limit: 2}, []string{"d", "c"}, []string{"c"}, true, "c"},
		{"nothing past the cut", []meta.ObjectListing{page(true, "a"), page(true, "b")}, meta.ListOptions{Limit: 1}, []string{"a"}, []string{"a"}, true, "a"},
	}
	for _, c := range cases {
		got, disputed := mergeListings(c.pages, c.opts)
		if !slices.Equal(names(got), c.want) || !slices.Equal(disputed, c.disputed) || got.Truncated != c.truncated || got.NextMarker != c.next {
			t.Errorf("%s: %v disputed %v truncated %v next %q; want %v %v %v %q", c.name, names(got), disputed, got.Truncated, got.NextMarker,
				c.want, c.disputed, c.truncated, c.next)
		}
	}
	// The newest entry of a name wins, and common prefixes are merged into the order.
	a := meta.ObjectListing{Objects: []meta.ListEntry{{Name: "x", Timestamp: 1, Size: 1}}, CommonPrefixes: []string{"p/"}}
	b := meta.ObjectListing{Objects: []meta.ListEntry{{Name: "x", Timestamp: 2, Size: 2}}}
	got, disputed := mergeListings([]meta.ObjectListing{a, b}, meta.ListOptions{Delimiter: "/"})
	if len(got.Objects) != 1 || got.Objects[0].Size != 2 || !slices.Equal(got.CommonPrefixes, []string{"p/"}) || disputed != nil {
		t.Errorf("newest entry and prefixes: %+v, disputed %v", got, disputed)
	}
}

// A container replica that was down while names were written (or deleted) lists without
// those changes until replication brings them; a LIST must still show every acknowledged
// write and no deleted name, whichever replicas it reaches (the robustness tier's LISTs found
// writes missing: docs/consistency.md). Each write here is made with another node down, so
// that every replica misses one, and every LIST through every proxy must list exactly what
// was written.
func TestListingsShowEveryAcknowledgedWrite(t *testing.T) {
	ctx := context.Background()
	c := clusterWithBox(t)
	ps := append(proxiesOver(t, c, 2, Config{}), c.proxy)
	nodes := []string{"node0", "node1", "node2"}
	for i, down := range nodes {
		name := meta.ObjectName{Account: "acct", Container: "box", Object: fmt.Sprintf("k%d", i)}
		c.down[down] = true
		if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: 1}, bytes.NewReader([]byte("x")), PutOptions{}); err != nil {
			t.Fatal(err)
		}
		c.down[down] = false
	}
	// "gone" is written everywhere, then deleted while node1 is down: node1 still lists it.
	gone := meta.ObjectName{Account: "acct", Container: "box", Object: "gone"}
	if _, err := c.proxy.PutObject(ctx, gone, meta.Object{Size: 1}, bytes.NewReader([]byte("x")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	c.down["node1"] = true
	if err := c.proxy.DeleteObject(ctx, gone); err != nil {
		t.Fatal(err)
	}
	c.down["node1"] = false
	// Listed with each node down in turn too, so that the quorum read includes each stale
	// replica.
	for _, away := range []string{"", "node0", "node1", "node2"} {
		c.down[away] = true
		for i, p := range ps {
			for _, opts := range []meta.ListOptions{{}, {Limit: 1}, {Reverse: true}} {
				var got []string
				for {
					l, err := p.ListObjects(ctx, "acct", "box", opts)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, names(l)...)
					if !l.Truncated {
						break
					}
					opts.Marker = l.NextMarker
				}
				slices.Sort(got)
				if !slices.Equal(got, []string{"k0", "k1", "k2"}) {
					t.Errorf("%s down, proxy %d, %+v: listed %v, want [k0 k1 k2]", away, i, opts, got)
				}
			}
		}
		c.down[away] = false
	}
}
