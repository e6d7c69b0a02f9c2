package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cairn-store/cairn/internal/meta"
)

var ctx = context.Background()

// local creates containers with their account row on the same device, as the embedded
// default does.
var local = ContainerOptions{LocalRow: true}

type quiet struct{}

func (quiet) Infof(string, ...any)      {}
func (quiet) Errorf(string, ...any)     {}
func (quiet) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

func newIndex(t testing.TB) (*Index, *pebble.DB) {
	t.Helper()
	db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem(), Merger: Merger, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return New(db, nil), db
}

func newDiskIndex(t testing.TB) (*Index, *pebble.DB) {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), &pebble.Options{Merger: Merger, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return New(db, nil), db
}

func commit(t testing.TB, db *pebble.DB, f func(b *pebble.Batch) error) {
	t.Helper()
	b := db.NewBatch()
	defer b.Close()
	if err := f(b); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
}

// refList is the reference: the listing semantics of scan, spelled out naively over a sorted
// slice of all names.
func refList(names []string, o meta.ListOptions) (objs, prefixes []string, truncated bool, next string) {
	limit := o.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	if o.Reverse {
		slices.Reverse(sorted)
	}
	var items []string
	isPrefix := map[string]bool{}
	for _, n := range sorted {
		if !strings.HasPrefix(n, o.Prefix) {
			continue
		}
		if o.Reverse {
			if (o.Marker != "" && n >= o.Marker) || (o.EndMarker != "" && n <= o.EndMarker) {
				continue
			}
		} else if n <= o.Marker || (o.EndMarker != "" && n >= o.EndMarker) {
			continue
		}
		item := n
		if o.Delimiter != "" {
			if i := strings.Index(n[len(o.Prefix):], o.Delimiter); i >= 0 {
				item = n[:len(o.Prefix)+i+len(o.Delimiter)]
				if item == o.Marker {
					continue
				}
				if len(items) > 0 && items[len(items)-1] == item {
					continue
				}
				isPrefix[item] = true
			}
		}
		items = append(items, item)
	}
	if len(items) > limit {
		items, truncated = items[:limit], true
	}
	for _, it := range items {
		if isPrefix[it] {
			prefixes = append(prefixes, it)
		} else {
			objs = append(objs, it)
		}
	}
	if truncated {
		next = items[len(items)-1]
	}
	return objs, prefixes, truncated, next
}

// randomNames builds names over a tiny alphabet so that prefixes, delimiters and markers hit
// often; it includes \x00 and \xff, which the key encoding must handle.
func randomNames(r *rand.Rand, n int) []string {
	alphabet := []string{"a", "b", "/", "-", "\x00", "\xff", "ab/"}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var sb strings.Builder
		for range 1 + r.IntN(6) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		if s := sb.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func randomOptions(r *rand.Rand, names []string) meta.ListOptions {
	pick := func() string {
		switch r.IntN(4) {
		case 0:
			return ""
		case 1:
			return names[r.IntN(len(names))]
		default:
			n := names[r.IntN(len(names))]
			return n[:r.IntN(len(n)+1)]
		}
	}
	o := meta.ListOptions{Prefix: pick(), Marker: pick(), EndMarker: pick(), Reverse: r.IntN(2) == 0, Limit: r.IntN(8)}
	if r.IntN(3) > 0 {
		o.Delimiter = []string{"/", "-", "b", "ab", "\x00"}[r.IntN(5)]
	}
	if r.IntN(3) == 0 {
		o.Prefix = ""
	}
	return o
}

func TestListObjectsMatchesReference(t *testing.T) {
	ix, db := newIndex(t)
	r := rand.New(rand.NewPCG(1, 1))
	names := randomNames(r, 300)
	commit(t, db, func(b *pebble.Batch) error {
		for i, n := range names {
			if err := ix.PutEntry(b, "acct", "cont", meta.ListEntry{Name: n, Timestamp: meta.Timestamp(i + 1), Size: int64(i), ETag: "e"}); err != nil {
				return err
			}
		}
		return nil
	})
	// Entries of neighbouring containers and accounts must never leak in.
	commit(t, db, func(b *pebble.Batch) error {
		for _, c := range [][2]string{{"acct", "con"}, {"acct", "cont\x00"}, {"acct", "conu"}, {"acc", "tcont"}} {
			if err := ix.PutEntry(b, c[0], c[1], meta.ListEntry{Name: "zz", Timestamp: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	for i := range 3000 {
		o := randomOptions(r, names)
		wantObjs, wantPrefixes, wantTrunc, wantNext := refList(names, o)
		got, err := ix.ListObjects(ctx, "acct", "cont", o)
		if err != nil {
			t.Fatal(err)
		}
		var gotObjs []string
		for _, e := range got.Objects {
			gotObjs = append(gotObjs, e.Name)
		}
		if !slices.Equal(gotObjs, wantObjs) || !slices.Equal(got.CommonPrefixes, wantPrefixes) || got.Truncated != wantTrunc || got.NextMarker != wantNext {
			t.Fatalf("case %d, options %#v:\n got %q %q %v %q\nwant %q %q %v %q", i, o,
				gotObjs, got.CommonPrefixes, got.Truncated, got.NextMarker, wantObjs, wantPrefixes, wantTrunc, wantNext)
		}
	}
}

// TestPaging checks that following NextMarker page by page yields exactly the unpaged listing.
func TestPaging(t *testing.T) {
	ix, db := newIndex(t)
	r := rand.New(rand.NewPCG(2, 2))
	names := randomNames(r, 400)
	commit(t, db, func(b *pebble.Batch) error {
		for _, n := range names {
			if err := ix.PutEntry(b, "a", "c", meta.ListEntry{Name: n, Timestamp: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	for range 300 {
		o := randomOptions(r, names)
		o.Marker, o.Limit = "", 0
		whole, err := ix.ListObjects(ctx, "a", "c", o)
		if err != nil {
			t.Fatal(err)
		}
		o.Limit = 1 + r.IntN(5)
		var objs, prefixes []string
		for pages := 0; ; pages++ {
			if pages > len(names)+1 {
				t.Fatalf("paging does not end: %#v", o)
			}
			p, err := ix.ListObjects(ctx, "a", "c", o)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Objects {
				objs = append(objs, e.Name)
			}
			prefixes = append(prefixes, p.CommonPrefixes...)
			if !p.Truncated {
				break
			}
			o.Marker = p.NextMarker
		}
		var wholeObjs []string
		for _, e := range whole.Objects {
			wholeObjs = append(wholeObjs, e.Name)
		}
		if !slices.Equal(objs, wholeObjs) || !slices.Equal(prefixes, whole.CommonPrefixes) {
			t.Fatalf("%#v: paged %q %q, whole %q %q", o, objs, prefixes, wholeObjs, whole.CommonPrefixes)
		}
	}
}

func TestUsageAndEntries(t *testing.T) {
	ix, db := newIndex(t)
	if err := ix.CreateContainer(ctx, "acct", meta.Container{Name: "c1", Meta: map[string]string{"quota": "1"}}, local); err != nil {
		t.Fatal(err)
	}
	if err := ix.CreateContainer(ctx, "acct", meta.Container{Name: "c1"}, local); !errors.Is(err, meta.ErrExists) {
		t.Fatalf("double create: %v", err)
	}
	if err := ix.CreateContainer(ctx, "acct", meta.Container{Name: "c2"}, local); err != nil {
		t.Fatal(err)
	}
	put := func(c, name string, ts meta.Timestamp, size int64) {
		commit(t, db, func(b *pebble.Batch) error {
			return ix.PutEntry(b, "acct", c, meta.ListEntry{Name: name, Timestamp: ts, Size: size, ETag: fmt.Sprint(ts), ContentType: "t"})
		})
	}
	del := func(c, name string, ts meta.Timestamp) {
		commit(t, db, func(b *pebble.Batch) error { return ix.DeleteEntry(b, "acct", c, name, ts) })
	}
	check := func(c string, objects, size int64) {
		t.Helper()
		got, err := ix.GetContainer(ctx, "acct", c)
		if err != nil || got.ObjectCount != objects || got.BytesUsed != size {
			t.Fatalf("%s usage: %d objects %d bytes (%v), want %d %d", c, got.ObjectCount, got.BytesUsed, err, objects, size)
		}
	}
	put("c1", "a", 10, 100)
	put("c1", "b", 10, 50)
	put("c2", "a", 10, 7)
	check("c1", 2, 150)
	put("c1", "a", 20, 30) // overwrite
	check("c1", 2, 80)
	put("c1", "a", 15, 999) // older: ignored
	check("c1", 2, 80)
	l, _ := ix.ListObjects(ctx, "acct", "c1", meta.ListOptions{})
	if len(l.Objects) != 2 || l.Objects[0] != (meta.ListEntry{Name: "a", Timestamp: 20, Size: 30, ETag: "20", ContentType: "t"}) {
		t.Fatalf("listing %+v", l)
	}
	// An S3 metadata change: a newer timestamp, the Last-Modified kept (and listed).
	commit(t, db, func(b *pebble.Batch) error {
		return ix.PutEntry(b, "acct", "c1", meta.ListEntry{Name: "a", Timestamp: 25, Size: 30, ETag: "20", ContentType: "t", Modified: 20})
	})
	l, _ = ix.ListObjects(ctx, "acct", "c1", meta.ListOptions{})
	if len(l.Objects) != 2 || l.Objects[0] != (meta.ListEntry{Name: "a", Timestamp: 25, Size: 30, ETag: "20", ContentType: "t", Modified: 20}) ||
		l.Objects[1].Modified != 0 {
		t.Fatalf("listing after a metadata change %+v", l)
	}
	check("c1", 2, 80)
	del("c1", "b", 5) // older than the entry: ignored
	check("c1", 2, 80)
	del("c1", "b", 11)
	check("c1", 1, 30)
	del("c1", "nothing", 11)
	check("c1", 1, 30)
	acct, err := ix.GetAccount(ctx, "acct")
	if err != nil || acct.ContainerCount != 2 || acct.ObjectCount != 2 || acct.BytesUsed != 37 {
		t.Fatalf("account %+v %v", acct, err)
	}
	if err := ix.DeleteContainer(ctx, "acct", "c1", meta.Now(), ContainerOptions{}); !errors.Is(err, meta.ErrNotEmpty) {
		t.Fatalf("delete non-empty: %v", err)
	}
	del("c1", "a", 30)
	if err := ix.DeleteContainer(ctx, "acct", "c1", meta.Now(), ContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.GetContainer(ctx, "acct", "c1"); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
	if err := ix.DeleteContainer(ctx, "acct", "c1", meta.Now(), ContainerOptions{}); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	acct, _ = ix.GetAccount(ctx, "acct")
	if acct.ContainerCount != 1 || acct.ObjectCount != 1 || acct.BytesUsed != 7 {
		t.Fatalf("account after delete %+v", acct)
	}
	// Recreated, it starts empty.
	if err := ix.CreateContainer(ctx, "acct", meta.Container{Name: "c1"}, local); err != nil {
		t.Fatal(err)
	}
	check("c1", 0, 0)
	c, err := ix.UpdateContainerMeta(ctx, "acct", "c2", func(m map[string]string) error { m["read"] = ".r:*"; return nil })
	if err != nil || c.Meta["read"] != ".r:*" || c.ObjectCount != 1 {
		t.Fatalf("update meta: %+v %v", c, err)
	}
	if _, err := ix.UpdateContainerMeta(ctx, "acct", "none", func(map[string]string) error { return nil }); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("update missing: %v", err)
	}
	if a, _ := ix.GetAccount(ctx, "nobody"); a.ContainerCount != 0 || a.Name != "nobody" {
		t.Fatalf("empty account %+v", a)
	}
}

func TestListContainers(t *testing.T) {
	ix, db := newIndex(t)
	r := rand.New(rand.NewPCG(3, 3))
	names := append(randomNames(r, 60), meta.ReservedPrefix+"segments")
	for i, n := range names {
		if err := ix.CreateContainer(ctx, "acct", meta.Container{Name: n, Created: meta.Timestamp(i + 1)}, local); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, db, func(b *pebble.Batch) error {
		return ix.PutEntry(b, "acct", names[0], meta.ListEntry{Name: "x", Timestamp: 1, Size: 5})
	})
	if err := ix.CreateContainer(ctx, "other", meta.Container{Name: "zzz"}, local); err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		o := randomOptions(r, names)
		wantObjs, wantPrefixes, wantTrunc, wantNext := refList(names, o)
		got, err := ix.ListContainers(ctx, "acct", o)
		if err != nil {
			t.Fatal(err)
		}
		var gotNames []string
		for _, c := range got.Containers {
			gotNames = append(gotNames, c.Name)
			if c.Name == names[0] && (c.ObjectCount != 1 || c.BytesUsed != 5) {
				t.Fatalf("usage of %q: %+v", c.Name, c)
			}
		}
		if !slices.Equal(gotNames, wantObjs) || !slices.Equal(got.CommonPrefixes, wantPrefixes) || got.Truncated != wantTrunc || got.NextMarker != wantNext {
			t.Fatalf("%#v:\n got %q %q %v\nwant %q %q %v", o, gotNames, got.CommonPrefixes, got.Truncated, wantObjs, wantPrefixes, wantTrunc)
		}
	}
	// The index is neutral: reserved names are listed.
	all, _ := ix.ListContainers(ctx, "acct", meta.ListOptions{})
	if len(all.Containers) != len(names) || !slices.ContainsFunc(all.Containers, func(c meta.Container) bool { return c.Name == meta.ReservedPrefix+"segments" }) {
		t.Fatalf("reserved container hidden: %d of %d", len(all.Containers), len(names))
	}
}

func TestMerger(t *testing.T) {
	// Operands may be partial sums (compactions) merged in any grouping.
	vals := [][]byte{encodeCounters(1, 2, 3), encodeCounters(-1, 5), encodeCounters(0, 0, -10)}
	m, err := Merger.Merge(nil, vals[1])
	if err != nil {
		t.Fatal(err)
	}
	m.MergeOlder(vals[0])
	m.MergeNewer(vals[2])
	out, _, _ := m.Finish(true)
	got := make([]int64, 3)
	if err := decodeCounters(out, got); err != nil || !slices.Equal(got, []int64{0, 7, -7}) {
		t.Fatalf("merged %v %v", got, err)
	}
	if _, err := Merger.Merge(nil, []byte{0x80}); err == nil {
		t.Fatal("malformed operand accepted")
	}
}

// FuzzListObjects compares the index with the reference on fuzzed names and options.
func FuzzListObjects(f *testing.F) {
	f.Add("a/b\na/c\nb\nab/\x00", "a", "/", "", "", uint8(2), false)
	f.Add("x-1\nx-2\ny", "", "-", "x-1", "y", uint8(0), true)
	f.Fuzz(func(t *testing.T, list, prefix, delim, marker, endMarker string, limit uint8, reverse bool) {
		names := strings.Split(list, "\n")
		slices.Sort(names)
		names = slices.Compact(names)
		if len(names) > 0 && names[0] == "" {
			names = names[1:]
		}
		if len(names) > 200 {
			return
		}
		ix, db := newIndex(t)
		commit(t, db, func(b *pebble.Batch) error {
			for _, n := range names {
				if err := ix.PutEntry(b, "a", "c", meta.ListEntry{Name: n, Timestamp: 1}); err != nil {
					return err
				}
			}
			return nil
		})
		o := meta.ListOptions{Prefix: prefix, Delimiter: delim, Marker: marker, EndMarker: endMarker, Limit: int(limit), Reverse: reverse}
		wantObjs, wantPrefixes, wantTrunc, wantNext := refList(names, o)
		got, err := ix.ListObjects(ctx, "a", "c", o)
		if err != nil {
			t.Fatal(err)
		}
		var gotObjs []string
		for _, e := range got.Objects {
			gotObjs = append(gotObjs, e.Name)
		}
		if !slices.Equal(gotObjs, wantObjs) || !slices.Equal(got.CommonPrefixes, wantPrefixes) || got.Truncated != wantTrunc || got.NextMarker != wantNext {
			t.Fatalf("%#v:\n got %q %q %v %q\nwant %q %q %v %q", o, gotObjs, got.CommonPrefixes, got.Truncated, got.NextMarker, wantObjs, wantPrefixes, wantTrunc, wantNext)
		}
	})
}
