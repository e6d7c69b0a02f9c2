package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// auditEnv is an index with one account ("acct") and containers, and what an audit pass hands
// to the hooks.
type auditEnv struct {
	t           *testing.T
	ix          *Index
	db          *pebble.DB
	quarantined [][2][]byte
	locked      []string
	mu          sync.Mutex
	// rebuild, when set, is AuditOptions.Rebuild.
	rebuild func(account, container, object string) (*meta.ListEntry, error)
	// pace, when set, runs at every pace call.
	pace func(records int64)
}

func newAuditEnv(t *testing.T) *auditEnv {
	ix, db := newIndex(t)
	t.Cleanup(ix.Close) // before the DB closes: a consolidation may run
	return &auditEnv{t: t, ix: ix, db: db}
}

func (v *auditEnv) create(container string, opts ContainerOptions) {
	v.t.Helper()
	if err := v.ix.CreateContainer(ctx, "acct", meta.Container{Name: container}, opts); err != nil {
		v.t.Fatal(err)
	}
}

// put lists an object as a storage node does: with the usage hold, in a batch.
func (v *auditEnv) put(container, name string, size int64) {
	v.t.Helper()
	defer v.ix.HoldUsage()()
	commit(v.t, v.db, func(b *pebble.Batch) error {
		return v.ix.PutEntry(b, "acct", container, meta.ListEntry{Name: name, Timestamp: meta.Now(), Size: size, ETag: "e-" + name, ContentType: "t"})
	})
}

func (v *auditEnv) del(container, name string) {
	v.t.Helper()
	defer v.ix.HoldUsage()()
	commit(v.t, v.db, func(b *pebble.Batch) error { return v.ix.DeleteEntry(b, "acct", container, name, meta.Now()) })
}

// flip flips a bit of the value under key, as the disk might.
func (v *auditEnv) flip(key []byte, at int) {
	v.t.Helper()
	val, closer, err := v.db.Get(key)
	if err != nil {
		v.t.Fatal(err)
	}
	bad := bytes.Clone(val)
	closer.Close()
	bad[at%len(bad)] ^= 0x10
	if err := v.db.Set(key, bad, pebble.Sync); err != nil {
		v.t.Fatal(err)
	}
}

func (v *auditEnv) audit() AuditStats {
	v.t.Helper()
	st, err := v.ix.Audit(ctx, AuditOptions{
		Pace: func(_ context.Context, records, _ int64) error {
			if v.pace != nil {
				v.pace(records)
			}
			return nil
		},
		Lock: func(account, container, object string) func() {
			v.mu.Lock()
			v.locked = append(v.locked, object)
			v.mu.Unlock()
			return func() {}
		},
		Rebuild: v.rebuild,
		Quarantine: func(k, val []byte) {
			v.quarantined = append(v.quarantined, [2][]byte{bytes.Clone(k), bytes.Clone(val)})
		},
	})
	if err != nil {
		v.t.Fatalf("audit: %v", err)
	}
	return st
}

func (v *auditEnv) names(container string, o meta.ListOptions) []string {
	v.t.Helper()
	l, err := v.ix.ListObjects(ctx, "acct", container, o)
	if err != nil {
		v.t.Fatalf("listing: %v", err)
	}
	var out []string
	for _, e := range l.Objects {
		out = append(out, e.Name)
	}
	return append(out, l.CommonPrefixes...)
}

func (v *auditEnv) usage(container string, objects, size int64) {
	v.t.Helper()
	c, err := v.ix.GetContainer(ctx, "acct", container)
	if err != nil || c.ObjectCount != objects || c.BytesUsed != size {
		v.t.Fatalf("%s usage %d objects %d bytes (%v), want %d and %d", container, c.ObjectCount, c.BytesUsed, err, objects, size)
	}
}

// Rows written before rows were sealed still read as they did, and a pass seals them.
func TestUnsealedRowsStillRead(t *testing.T) {
	v := newAuditEnv(t)
	v.create("c", local)
	v.put("c", "sealed", 1)
	v.put("c", "gone", 1)
	v.del("c", "gone")
	commit(t, v.db, func(b *pebble.Batch) error {
		return errors.Join(
			b.Set(entryKey("acct", "c", "old"), entryFields(meta.ListEntry{Name: "old", Timestamp: 5, Size: 3, ETag: "x", ContentType: "y"}), nil),
			b.Set(entryKey("acct", "c", "oldgone"), append(tombstoneFields(7)[:0], tombstoneValue, 7), nil),
			b.Set(rowKey("acct", "other"), rowFields(accountRow{ContainerRow: meta.ContainerRow{Name: "other", PutTimestamp: 9, ObjectCount: 2, BytesUsed: 20}}), nil))
	})
	if got := v.names("c", meta.ListOptions{}); !slices.Equal(got, []string{"old", "sealed"}) {
		t.Fatalf("listing %q", got)
	}
	l, err := v.ix.ListObjects(ctx, "acct", "c", meta.ListOptions{Limit: 1})
	if err != nil || l.Objects[0] != (meta.ListEntry{Name: "old", Timestamp: 5, Size: 3, ETag: "x", ContentType: "y"}) {
		t.Fatalf("unsealed entry: %+v %v", l.Objects, err)
	}
	if _, at, _, err := v.ix.listed("acct", "c", "oldgone"); at != 7 || err != nil {
		t.Fatalf("unsealed tombstone: %d %v", at, err)
	}
	_, _, cl := listNames(t, v.ix, "acct", meta.ListOptions{})
	if len(cl.Containers) != 2 || cl.Containers[1].ObjectCount != 2 {
		t.Fatalf("containers with an unsealed row: %+v", cl.Containers)
	}
	st := v.audit()
	if st.Sealed != 3 || st.Corrupt != 0 || st.Rows != 6 {
		t.Fatalf("stats %+v, want the 3 unsealed rows of 6 sealed", st)
	}
	for _, k := range [][]byte{entryKey("acct", "c", "old"), entryKey("acct", "c", "oldgone"), rowKey("acct", "other")} {
		v2, _ := v.ix.get(k)
		if _, _, sealed, err := openRow(k, v2); !sealed || err != nil {
			t.Fatalf("%q after the pass: sealed %v, %v", k, sealed, err)
		}
	}
	if got := v.names("c", meta.ListOptions{}); !slices.Equal(got, []string{"old", "sealed"}) {
		t.Fatalf("listing after sealing %q", got)
	}
	if st := v.audit(); st.Sealed != 0 {
		t.Fatalf("second pass sealed %d rows again", st.Sealed)
	}
}

// A sealed entry with a flipped bit is never listed (nor does it take a place in the page),
// also under a delimiter; the pass removes it, keeps its bytes, and recounts the usage.
func TestCorruptEntrySkippedAndRemoved(t *testing.T) {
	v := newAuditEnv(t)
	v.create("c", local)
	for i, n := range []string{"a", "b/1", "b/2", "c", "d"} {
		v.put("c", n, int64(10*(i+1)))
	}
	v.usage("c", 5, 150)
	bad := entryKey("acct", "c", "b/2")
	v.flip(bad, 3)
	v.flip(entryKey("acct", "c", "c"), 100) // in the checksum itself
	if got := v.names("c", meta.ListOptions{Limit: 2}); !slices.Equal(got, []string{"a", "b/1"}) {
		t.Fatalf("first page %q", got)
	}
	if got := v.names("c", meta.ListOptions{Marker: "b/1"}); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("after b/1: %q", got)
	}
	if got := v.names("c", meta.ListOptions{Delimiter: "/"}); !slices.Equal(got, []string{"a", "d", "b/"}) {
		t.Fatalf("with a delimiter %q", got)
	}
	if s := v.ix.Stats(); s.UnreadableRowsSkipped < 4 {
		t.Fatalf("stats %+v, want the skipped rows counted", s)
	}
	st := v.audit()
	if st.Corrupt != 2 || st.Rebuilt != 0 || st.Recounted != 1 {
		t.Fatalf("stats %+v, want 2 rows removed and the container recounted", st)
	}
	if len(v.quarantined) != 2 || !bytes.Equal(v.quarantined[0][0], bad) {
		t.Fatalf("quarantined %q", v.quarantined)
	}
	if !slices.Contains(v.locked, "b/2") || !slices.Contains(v.locked, "c") {
		t.Fatalf("names locked %q, want the bad rows' names", v.locked)
	}
	if _, _, _, err := v.ix.listed("acct", "c", "b/2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := v.ix.get(bad); got != nil {
		t.Fatalf("bad row still there: %x", got)
	}
	// What is listed is what is counted, in the container and the account.
	v.usage("c", 3, 10+20+50)
	wantAccount(t, v.ix, "acct", 1, 3, 80)
	// Replication restores the row: counted once.
	v.put("c", "b/2", 30)
	v.usage("c", 4, 110)
	wantAccount(t, v.ix, "acct", 1, 4, 110)
	if st := v.audit(); st.Corrupt != 0 || st.Recounted != 0 {
		t.Fatalf("next pass %+v, want nothing to do", st)
	}
}

// Where the caller knows what a bad entry held (a node alone: its engine's record), the pass
// rebuilds it rather than removing it, and the usage, which counted it all along, stays.
func TestCorruptEntryRebuilt(t *testing.T) {
	v := newAuditEnv(t)
	v.create("c", local)
	v.put("c", "x", 42)
	v.put("c", "y", 8)
	v.flip(entryKey("acct", "c", "x"), 9)
	want := meta.ListEntry{Name: "x", Timestamp: 77, Size: 42, ETag: "e-x", ContentType: "t"}
	v.rebuild = func(account, container, object string) (*meta.ListEntry, error) {
		if object != "x" {
			t.Fatalf("rebuild of %q", object)
		}
		e := want
		e.Name = "" // the index names it
		return &e, nil
	}
	if st := v.audit(); st.Corrupt != 1 || st.Rebuilt != 1 || st.Recounted != 0 {
		t.Fatalf("stats %+v", st)
	}
	l, err := v.ix.ListObjects(ctx, "acct", "c", meta.ListOptions{})
	if err != nil || len(l.Objects) != 2 || l.Objects[0] != want {
		t.Fatalf("listing %+v %v", l.Objects, err)
	}
	v.usage("c", 2, 50)
	// Rebuilt as nothing (the object is gone): removed, and counted out.
	v.flip(entryKey("acct", "c", "y"), 4)
	v.rebuild = func(string, string, string) (*meta.ListEntry, error) { return nil, nil }
	if st := v.audit(); st.Corrupt != 1 || st.Rebuilt != 0 || st.Recounted != 1 {
		t.Fatalf("stats %+v", st)
	}
	v.usage("c", 1, 42)
}

// A bad row replaced between the pass reading it and acting on it is left alone.
func TestAuditLeavesARowChangedMeanwhile(t *testing.T) {
	v := newAuditEnv(t)
	v.create("c", local)
	v.put("c", "a", 1)
	v.put("c", "b", 2)
	v.flip(entryKey("acct", "c", "a"), 2)
	calls := 0
	v.pace = func(records int64) {
		calls++
		if calls == 2 { // "a" was read, "b" is next: a write replaces "a"
			v.put("c", "a", 5)
		}
	}
	st := v.audit()
	if st.Corrupt != 0 || len(v.quarantined) != 0 {
		t.Fatalf("stats %+v, quarantined %q: a replaced row was acted on", st, v.quarantined)
	}
	// The write could not know what the bad row counted; the pass recounted.
	v.usage("c", 2, 7)
	if got := v.names("c", meta.ListOptions{}); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("listing %q", got)
	}
}

// A write over a bad row, or a delete of it, is not blocked by it; the usage it leaves unknown
// is recounted by the next pass.
func TestWritesReplaceABadRow(t *testing.T) {
	v := newAuditEnv(t)
	v.create("c", local)
	v.put("c", "a", 10)
	v.put("c", "b", 20)
	v.flip(entryKey("acct", "c", "a"), 5)
	v.flip(entryKey("acct", "c", "b"), 5)
	v.put("c", "a", 3)
	v.del("c", "b")
	if s := v.ix.Stats(); s.UnreadableRowsReplaced != 2 {
		t.Fatalf("stats %+v", s)
	}
	if got := v.names("c", meta.ListOptions{}); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("listing %q", got)
	}
	st := v.audit()
	if st.Corrupt != 0 || st.Recounted != 1 {
		t.Fatalf("stats %+v, want the container recounted", st)
	}
	v.usage("c", 1, 3)
	wantAccount(t, v.ix, "acct", 1, 1, 3)
	if st := v.audit(); st.Recounted != 0 {
		t.Fatalf("recounted again: %+v", st)
	}
}

// A bad account row is never listed. A row linked to its container here is rebuilt from the
// container's record; one reported from elsewhere is removed; the account totals are the sum of
// what is left.
func TestCorruptAccountRows(t *testing.T) {
	v := newAuditEnv(t)
	v.create("linked", local)
	v.put("linked", "o", 5)
	for i, name := range []string{"far", "near"} {
		if err := v.ix.UpdateAccountRow(ctx, "acct", meta.ContainerRow{Name: name, PutTimestamp: 10, ObjectCount: int64(i + 1), BytesUsed: 100}); err != nil {
			t.Fatal(err)
		}
	}
	wantAccount(t, v.ix, "acct", 3, 4, 205)
	v.flip(rowKey("acct", "linked"), 3)
	v.flip(rowKey("acct", "far"), 2)
	if names, _, _ := listNames(t, v.ix, "acct", meta.ListOptions{}); !slices.Equal(names, []string{"near"}) {
		t.Fatalf("listing %q", names)
	}
	st := v.audit()
	if st.Corrupt != 2 || st.Rebuilt != 1 || st.Recounted != 1 {
		t.Fatalf("stats %+v", st)
	}
	names, _, l := listNames(t, v.ix, "acct", meta.ListOptions{})
	if !slices.Equal(names, []string{"linked", "near"}) || l.Containers[0].ObjectCount != 1 || l.Containers[0].BytesUsed != 5 {
		t.Fatalf("listing %q %+v", names, l.Containers)
	}
	wantAccount(t, v.ix, "acct", 2, 3, 105)
	// The rebuilt row still follows its container.
	v.put("linked", "p", 7)
	wantAccount(t, v.ix, "acct", 2, 4, 112)
	if st := v.audit(); st.Corrupt != 0 || st.Recounted != 0 {
		t.Fatalf("next pass %+v", st)
	}
}

// Pacing sees every row, and its error stops the pass.
func TestIndexAuditPace(t *testing.T) {
	v := newAuditEnv(t)
	v.create("c", local)
	for i := range 2*auditBatch + 3 {
		v.put("c", fmt.Sprintf("%04d", i), 1)
	}
	rows := 0
	progress := 0
	st, err := v.ix.Audit(ctx, AuditOptions{
		Pace:     func(_ context.Context, records, _ int64) error { rows += int(records); return nil },
		Progress: func(int64) { progress++ },
		Lock:     func(string, string, string) func() { return func() {} },
	})
	if err != nil || st.Rows != 2*auditBatch+4 || rows != int(st.Rows) {
		t.Fatalf("stats %+v, paced %d rows, %v", st, rows, err)
	}
	if progress != 4 { // three batches of entries, one of account rows
		t.Fatalf("progress reported %d times", progress)
	}
	stop := errors.New("stop")
	if _, err := v.ix.Audit(ctx, AuditOptions{
		Pace: func(context.Context, int64, int64) error { return stop },
		Lock: func(string, string, string) func() { return func() {} },
	}); !errors.Is(err, stop) {
		t.Fatalf("audit with a failing pace: %v", err)
	}
}
