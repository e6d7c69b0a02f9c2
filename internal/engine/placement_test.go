package engine

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

// scanAll returns what the placement index holds, in hash order.
func scanAll(t *testing.T, e *Engine) []Version {
	t.Helper()
	var out []Version
	if err := e.ScanPlacement(ctx, 0, ^uint64(0), func(v Version) error { out = append(out, v); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPlacementIndexFollowsEveryWrite(t *testing.T) {
	v := newEnv(t, nil, "")
	names := []string{"a", "b", "c", "large", "gone"}
	for _, n := range names[:3] {
		v.mustPut(name(n), []byte(n))
	}
	v.mustPut(name("large"), make([]byte, 200<<10))
	v.mustPut(name("gone"), []byte("x"))
	delTS := meta.Now()
	if err := v.e.Delete(ctx, name("gone"), delTS, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := scanAll(t, v.e)
	if len(got) != len(names) {
		t.Fatalf("%d placement entries, want %d: %+v", len(got), len(names), got)
	}
	if !slices.IsSortedFunc(got, func(a, b Version) int { return compareUint(a.Hash, b.Hash) }) {
		t.Fatal("not in hash order")
	}
	for _, pv := range got {
		o, err := v.e.Stat(ctx, pv.Name)
		if err != nil {
			t.Fatalf("%q: %v", pv.Name.Object, err)
		}
		if pv.Hash != DefaultNameHash(pv.Name) || pv.Timestamp != o.Timestamp || pv.Deleted != o.Deleted {
			t.Fatalf("%q: placement %+v, record ts %d deleted %v", pv.Name.Object, pv, o.Timestamp, o.Deleted)
		}
	}

	// A range holds exactly the names whose hash is in it.
	mid := got[2].Hash
	var low []Version
	if err := v.e.ScanPlacement(ctx, 0, mid, func(pv Version) error { low = append(low, pv); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(low) != 3 {
		t.Fatalf("range [0, %x]: %d entries, want 3", mid, len(low))
	}
	if h, ok, err := v.e.NextPlacement(mid + 1); err != nil || !ok || h != got[3].Hash {
		t.Fatalf("NextPlacement(%x) = %x, %v, %v; want %x", mid+1, h, ok, err, got[3].Hash)
	}
	if _, ok, _ := v.e.NextPlacement(got[len(got)-1].Hash + 1); ok && got[len(got)-1].Hash != ^uint64(0) {
		t.Fatal("NextPlacement past the last entry found one")
	}

	// Evict removes the version, its file and its placement key; a stale timestamp removes nothing.
	large, _ := v.e.Stat(ctx, name("large"))
	if gone, err := v.e.Evict(ctx, name("large"), large.Timestamp-1); err != nil || gone {
		t.Fatalf("evict at a stale timestamp: %v, %v", gone, err)
	}
	if gone, err := v.e.Evict(ctx, name("large"), large.Timestamp); err != nil || !gone {
		t.Fatalf("evict: %v, %v", gone, err)
	}
	if n := len(dataFiles(t, v.fs, v.dir)); n != 0 {
		t.Fatalf("%d data files after evicting the only large object", n)
	}
	// The sweeper's reclaim of a tombstone removes its placement key too.
	if _, err := v.e.SweepTombstones(ctx, delTS+1, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	left := scanAll(t, v.e)
	if len(left) != 3 {
		t.Fatalf("after evict and reclaim: %+v", left)
	}

	// A device opened with another hash rebuilds the index in that hash's order; the same hash
	// keeps it.
	v.close()
	v.db = openDB(t, v.fs, v.dir)
	other := func(n meta.ObjectName) uint64 { return ^DefaultNameHash(n) }
	e, err := Open(Config{Dir: v.dir, FS: v.fs, DB: v.db, ReserveBytes: -1, NameHash: other, NameHashID: "other"})
	if err != nil {
		t.Fatal(err)
	}
	v.e = e
	rebuilt := scanAll(t, e)
	if len(rebuilt) != 3 {
		t.Fatalf("rebuilt: %+v", rebuilt)
	}
	for _, pv := range rebuilt {
		if pv.Hash != other(pv.Name) {
			t.Fatalf("%q placed at %x, want %x", pv.Name.Object, pv.Hash, other(pv.Name))
		}
	}
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// A version flagged corrupt takes a good copy of itself, same timestamp (replication's repair),
// which a version that is not flagged refuses as not newer.
func TestRepairOfAFlaggedVersion(t *testing.T) {
	v := newEnv(t, nil, "")
	large := bytes.Repeat([]byte("L"), 3*BlockSize)
	n := name("large")
	o := v.mustPut(n, large)
	if _, err := v.put(n, o.Timestamp, large); !errors.Is(err, meta.ErrConflict) {
		t.Fatalf("same-timestamp write over a good version: %v, want ErrConflict", err)
	}
	if err := v.fs.Remove(dataFiles(t, v.fs, v.dir)[0]); err != nil {
		t.Fatal(err)
	}
	v.expectCorrupt(n)
	if _, err := v.put(n, o.Timestamp, large); err != nil {
		t.Fatalf("repair of the flagged version: %v", err)
	}
	if !bytes.Equal(v.mustRead(n), large) || v.e.Stats().CorruptObjects != 0 {
		t.Fatalf("after the repair: stats %+v", v.e.Stats())
	}
}
