package index

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// Concurrent writers into one container, with consolidations running among them, must leave
// exactly the usage their entries add up to: a consolidation that overtook a commit would lose
// its delta.
func TestUsageStaysExactAcrossConsolidations(t *testing.T) {
	ix, db := newIndex(t)
	ctx := context.Background()
	if err := ix.CreateContainer(ctx, "a", meta.Container{Name: "c"}, local); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 600
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				release := ix.HoldUsage()
				b := db.NewBatch()
				e := meta.ListEntry{Name: fmt.Sprintf("w%d-%04d", w, i), Timestamp: meta.Now(), Size: int64(i % 7)}
				if err := ix.PutEntry(b, "a", "c", e); err != nil {
					t.Error(err)
				}
				if err := b.Commit(pebble.NoSync); err != nil {
					t.Error(err)
				}
				b.Close()
				release()
			}
		}()
	}
	wg.Wait()
	ix.Close() // wait for a consolidation still running
	if ix.counterState.rounds == 0 {
		t.Fatalf("%d operands and no consolidation", writers*each)
	}
	var wantBytes int64
	for i := range each {
		wantBytes += int64(i % 7)
	}
	wantBytes *= writers
	c, err := ix.GetContainer(ctx, "a", "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.ObjectCount != writers*each || c.BytesUsed != wantBytes {
		t.Fatalf("usage %d objects %d bytes, want %d and %d", c.ObjectCount, c.BytesUsed, writers*each, wantBytes)
	}
	a, err := ix.GetAccount(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if a.ContainerCount != 1 || a.ObjectCount != writers*each || a.BytesUsed != wantBytes {
		t.Fatalf("account usage %+v", a)
	}
}
