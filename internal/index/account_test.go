package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

func listNames(t *testing.T, ix *Index, account string, o meta.ListOptions) (names, prefixes []string, l meta.ContainerListing) {
	t.Helper()
	l, err := ix.ListContainers(ctx, account, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range l.Containers {
		names = append(names, c.Name)
	}
	return names, l.CommonPrefixes, l
}

func wantAccount(t *testing.T, ix *Index, account string, containers, objects, bytes int64) {
	t.Helper()
	a, err := ix.GetAccount(ctx, account)
	if err != nil || a.ContainerCount != containers || a.ObjectCount != objects || a.BytesUsed != bytes {
		t.Fatalf("account %+v (%v), want %d containers %d objects %d bytes", a, err, containers, objects, bytes)
	}
}

// Rows reported by container replicas elsewhere: newest timestamps win, a deleted row lists
// and counts nothing, a report about an earlier container of the name does not change usage.
func TestAccountRowsNewestWins(t *testing.T) {
	ix, _ := newIndex(t)
	report := func(r meta.ContainerRow) {
		t.Helper()
		if err := ix.UpdateAccountRow(ctx, "a", r); err != nil {
			t.Fatal(err)
		}
	}
	const t0, t1, t2, t3 = 50, 100, 200, 300
	report(meta.ContainerRow{Name: "c", PutTimestamp: t1, ObjectCount: 3, BytesUsed: 30})
	report(meta.ContainerRow{Name: "d", PutTimestamp: t1})
	wantAccount(t, ix, "a", 2, 3, 30)
	report(meta.ContainerRow{Name: "c", PutTimestamp: t1, ObjectCount: 5, BytesUsed: 50}) // the stats pass
	wantAccount(t, ix, "a", 2, 5, 50)
	report(meta.ContainerRow{Name: "c", PutTimestamp: t0, ObjectCount: 9, BytesUsed: 99}) // an earlier container
	wantAccount(t, ix, "a", 2, 5, 50)
	names, _, l := listNames(t, ix, "a", meta.ListOptions{})
	if !slices.Equal(names, []string{"c", "d"}) || l.Containers[0].ObjectCount != 5 || l.Containers[0].BytesUsed != 50 || l.Containers[0].Created != t1 {
		t.Fatalf("listing %+v", l)
	}
	report(meta.ContainerRow{Name: "c", PutTimestamp: t1, DeleteTimestamp: t2})
	wantAccount(t, ix, "a", 1, 0, 0)
	// A late report of the container before its deletion does not bring it back.
	report(meta.ContainerRow{Name: "c", PutTimestamp: t1, ObjectCount: 5, BytesUsed: 50})
	wantAccount(t, ix, "a", 1, 0, 0)
	if names, _, _ := listNames(t, ix, "a", meta.ListOptions{}); !slices.Equal(names, []string{"d"}) {
		t.Fatalf("after the delete: %q", names)
	}
	// Created again, later: listed again, and reports of the first container change nothing.
	report(meta.ContainerRow{Name: "c", PutTimestamp: t3, ObjectCount: 1, BytesUsed: 2})
	report(meta.ContainerRow{Name: "c", PutTimestamp: t1, ObjectCount: 5, BytesUsed: 50})
	wantAccount(t, ix, "a", 2, 1, 2)
	// A delete older than the put changes nothing.
	report(meta.ContainerRow{Name: "d", PutTimestamp: t0, DeleteTimestamp: t0 + 1})
	wantAccount(t, ix, "a", 2, 1, 2)
	if err := ix.UpdateAccountRow(ctx, "a", meta.ContainerRow{PutTimestamp: 1}); err == nil {
		t.Fatal("a row without a name was accepted")
	}
}

// A container created with its account row on its own device: the row follows every object
// write at once; a deletion reported by another replica unlinks it.
func TestLinkedAccountRow(t *testing.T) {
	ix, db := newIndex(t)
	if err := ix.CreateContainer(ctx, "a", meta.Container{Name: "c", Created: 100}, local); err != nil {
		t.Fatal(err)
	}
	put := func(name string, size int64) {
		t.Helper()
		commit(t, db, func(b *pebble.Batch) error {
			defer ix.HoldUsage()()
			return ix.PutEntry(b, "a", "c", meta.ListEntry{Name: name, Timestamp: meta.Now(), Size: size})
		})
	}
	put("x", 10)
	put("y", 5)
	wantAccount(t, ix, "a", 1, 2, 15)
	_, _, l := listNames(t, ix, "a", meta.ListOptions{})
	if len(l.Containers) != 1 || l.Containers[0].ObjectCount != 2 || l.Containers[0].BytesUsed != 15 {
		t.Fatalf("listing %+v", l)
	}
	// Another replica's report of the same container: its usage is not this row's.
	if err := ix.UpdateAccountRow(ctx, "a", meta.ContainerRow{Name: "c", PutTimestamp: 100, ObjectCount: 1, BytesUsed: 1}); err != nil {
		t.Fatal(err)
	}
	wantAccount(t, ix, "a", 1, 2, 15)
	if _, ok, _ := ix.Report("a", "c"); ok {
		t.Fatal("a linked container has a report to send")
	}
	if changed, all := ix.TakeChanged(); len(changed) != 0 || all {
		t.Fatalf("a linked container noted for the stats pass: %v %v", changed, all)
	}
	// Deleted elsewhere: the row is deleted, and the container (a stale replica here) no longer
	// feeds the account.
	if err := ix.UpdateAccountRow(ctx, "a", meta.ContainerRow{Name: "c", PutTimestamp: 100, DeleteTimestamp: 200}); err != nil {
		t.Fatal(err)
	}
	wantAccount(t, ix, "a", 0, 0, 0)
	put("z", 1)
	wantAccount(t, ix, "a", 0, 0, 0)
	if c, err := ix.GetContainer(ctx, "a", "c"); err != nil || c.ObjectCount != 3 {
		t.Fatalf("the container's own usage: %+v, %v", c, err)
	}
}

func TestLinkedRowCreateAndDelete(t *testing.T) {
	ix, db := newIndex(t)
	if err := ix.CreateContainer(ctx, "a", meta.Container{Name: "c", Created: 100}, local); err != nil {
		t.Fatal(err)
	}
	if err := ix.DeleteContainer(ctx, "a", "c", 100, ContainerOptions{}); err == nil {
		t.Fatal("a delete as old as the container succeeded")
	}
	var sent []meta.ContainerRow
	capture := ContainerOptions{InBatch: func(_ *pebble.Batch, r meta.ContainerRow) error { sent = append(sent, r); return nil }}
	if err := ix.DeleteContainer(ctx, "a", "c", 200, capture); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || sent[0] != (meta.ContainerRow{Name: "c", PutTimestamp: 100, DeleteTimestamp: 200}) {
		t.Fatalf("row handed to InBatch: %+v", sent)
	}
	wantAccount(t, ix, "a", 0, 0, 0)
	// Created again at 150, before the delete at 200 that the row keeps: the row stays deleted
	// and is not linked, so the container's writes do not reach the account.
	if err := ix.CreateContainer(ctx, "a", meta.Container{Name: "c", Created: 150}, local); err != nil {
		t.Fatal(err)
	}
	commit(t, db, func(b *pebble.Batch) error {
		defer ix.HoldUsage()()
		return ix.PutEntry(b, "a", "c", meta.ListEntry{Name: "x", Timestamp: 1, Size: 3})
	})
	wantAccount(t, ix, "a", 0, 0, 0)
	if names, _, _ := listNames(t, ix, "a", meta.ListOptions{}); len(names) != 0 {
		t.Fatalf("listed %q", names)
	}
}

// A container whose account row is elsewhere: the stats pass sees what changed.
func TestContainerReports(t *testing.T) {
	ix, db := newIndex(t)
	target := []byte("node1/d2/7")
	var created []meta.ContainerRow
	opts := ContainerOptions{Target: target, InBatch: func(_ *pebble.Batch, r meta.ContainerRow) error { created = append(created, r); return nil }}
	if err := ix.CreateContainer(ctx, "a", meta.Container{Name: "c", Created: 100}, opts); err != nil {
		t.Fatal(err)
	}
	if len(created) != 1 || created[0] != (meta.ContainerRow{Name: "c", PutTimestamp: 100}) {
		t.Fatalf("row handed to InBatch: %+v", created)
	}
	if names, _, _ := listNames(t, ix, "a", meta.ListOptions{}); len(names) != 0 {
		t.Fatalf("a container whose row is elsewhere listed here: %q", names)
	}
	commit(t, db, func(b *pebble.Batch) error {
		defer ix.HoldUsage()()
		return ix.PutEntry(b, "a", "c", meta.ListEntry{Name: "x", Timestamp: 1, Size: 3})
	})
	wantAccount(t, ix, "a", 0, 0, 0)
	changed, all := ix.TakeChanged()
	if all || !slices.Equal(changed, [][2]string{{"a", "c"}}) {
		t.Fatalf("changed %v %v", changed, all)
	}
	if changed, _ := ix.TakeChanged(); len(changed) != 0 {
		t.Fatalf("changed twice: %v", changed)
	}
	r, ok, err := ix.Report("a", "c")
	if err != nil || !ok || !r.Changed() || string(r.Target) != string(target) || r.Row != (meta.ContainerRow{Name: "c", PutTimestamp: 100, ObjectCount: 1, BytesUsed: 3}) {
		t.Fatalf("report %+v %v %v", r, ok, err)
	}
	if err := ix.SetReported("a", "c", 100, 1, 3); err != nil {
		t.Fatal(err)
	}
	var seen []ContainerReport
	if err := ix.ReportAll(ctx, func(r ContainerReport) error { seen = append(seen, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].Changed() {
		t.Fatalf("after SetReported: %+v", seen)
	}
	// A report for another incarnation is not recorded.
	if err := ix.SetReported("a", "c", 99, 5, 5); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := ix.Report("a", "c"); r.Reported != [2]int64{1, 3} {
		t.Fatalf("reported %v", r.Reported)
	}
}

// Delimiter listings of an account ignore deleted rows.
func TestListContainersSkipsDeletedRows(t *testing.T) {
	ix, _ := newIndex(t)
	for _, r := range []meta.ContainerRow{
		{Name: "a/1", PutTimestamp: 1, DeleteTimestamp: 2},
		{Name: "b/1", PutTimestamp: 1},
		{Name: "b/2", PutTimestamp: 1, DeleteTimestamp: 2},
		{Name: "c", PutTimestamp: 1, DeleteTimestamp: 2},
		{Name: "d", PutTimestamp: 1},
	} {
		if err := ix.UpdateAccountRow(ctx, "acct", r); err != nil {
			t.Fatal(err)
		}
	}
	names, prefixes, _ := listNames(t, ix, "acct", meta.ListOptions{Delimiter: "/"})
	if !slices.Equal(names, []string{"d"}) || !slices.Equal(prefixes, []string{"b/"}) {
		t.Fatalf("listed %q %q", names, prefixes)
	}
	names, _, l := listNames(t, ix, "acct", meta.ListOptions{Limit: 1})
	if !slices.Equal(names, []string{"b/1"}) || !l.Truncated {
		t.Fatalf("first page %q %+v", names, l)
	}
	names, _, l = listNames(t, ix, "acct", meta.ListOptions{Limit: 1, Marker: "b/1"})
	if !slices.Equal(names, []string{"d"}) || l.Truncated {
		t.Fatalf("second page %q truncated %v", names, l.Truncated)
	}
}

// An index of the first layout (container records only) gets linked rows once.
func TestUpgradeFromContainerRecords(t *testing.T) {
	ix, db := newIndex(t)
	// What version 1 wrote for a container with one object of 4 bytes.
	v1 := append([]byte{valueVersion}, 0x64, 0) // created 100, no metadata
	commit(t, db, func(b *pebble.Batch) error {
		return errors.Join(
			b.Set(containerKey("a", "old"), v1, nil),
			b.Merge(astatsKey("a"), encodeCounters(1, 1, 4), nil),
			b.Merge(cstatsKey("a", "old"), encodeCounters(1, 4), nil),
			b.Set(entryKey("a", "old", "x"), entryFields(meta.ListEntry{Name: "x", Timestamp: 1, Size: 4}), nil))
	})
	for range 2 { // the second is a no-op
		if err := ix.Upgrade(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, _, l := listNames(t, ix, "a", meta.ListOptions{})
	if len(l.Containers) != 1 || l.Containers[0].Name != "old" || l.Containers[0].Created != 100 || l.Containers[0].ObjectCount != 1 || l.Containers[0].BytesUsed != 4 {
		t.Fatalf("listing after upgrade: %+v", l)
	}
	wantAccount(t, ix, "a", 1, 1, 4)
	commit(t, db, func(b *pebble.Batch) error {
		defer ix.HoldUsage()()
		return ix.PutEntry(b, "a", "old", meta.ListEntry{Name: "y", Timestamp: 2, Size: 6})
	})
	wantAccount(t, ix, "a", 1, 2, 10)
	if err := ix.DeleteContainer(ctx, "a", "old", meta.Now(), ContainerOptions{}); err == nil {
		t.Fatal("deleted a container that holds objects")
	}
}

// The account totals stay the sum of the live rows while object writes, consolidations, rows
// reported from elsewhere and an unlinking race each other.
func TestAccountTotalsStayExactUnderConcurrency(t *testing.T) {
	ix, db := newIndex(t)
	for i := range 4 {
		if err := ix.CreateContainer(ctx, "a", meta.Container{Name: fmt.Sprintf("c%d", i), Created: 100}, local); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range 700 {
				release := ix.HoldUsage()
				b := db.NewBatch()
				c := fmt.Sprintf("c%d", r.IntN(4))
				name := fmt.Sprintf("o%d", r.IntN(50))
				var err error
				if r.IntN(3) == 0 {
					err = ix.DeleteEntry(b, "a", c, name, meta.Now())
				} else {
					err = ix.PutEntry(b, "a", c, meta.ListEntry{Name: name, Timestamp: meta.Now(), Size: int64(i % 13)})
				}
				if err == nil {
					err = b.Commit(pebble.NoSync)
				}
				if err != nil {
					t.Error(err)
				}
				b.Close()
				release()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(77, 7))
		for i := range 300 {
			row := meta.ContainerRow{Name: fmt.Sprintf("r%d", r.IntN(10)), PutTimestamp: meta.Timestamp(1 + r.IntN(5)), ObjectCount: int64(r.IntN(9)), BytesUsed: int64(r.IntN(99))}
			if r.IntN(4) == 0 {
				row.DeleteTimestamp = meta.Timestamp(1 + r.IntN(5))
			}
			if i == 150 { // c3 deleted elsewhere: unlinked while objects are written into it
				row = meta.ContainerRow{Name: "c3", PutTimestamp: 100, DeleteTimestamp: 200}
			}
			if err := ix.UpdateAccountRow(ctx, "a", row); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	ix.Close()
	var want [3]int64
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: rowBase("a"), UpperBound: successor(rowBase("a"))})
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		name := string(it.Key()[len(rowBase("a")):])
		r, err := decodeRow(it.Key(), name, it.Value())
		if err != nil {
			t.Fatal(err)
		}
		c, err := ix.contribution("a", &r)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			want[i] += c[i]
		}
	}
	it.Close()
	a, err := ix.GetAccount(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := [3]int64{a.ContainerCount, a.ObjectCount, a.BytesUsed}; got != want {
		t.Fatalf("account totals %v, sum of the live rows %v", got, want)
	}
	if ix.counterState.rounds == 0 {
		t.Fatal("no consolidation ran among the writes")
	}
}
