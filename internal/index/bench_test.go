package index

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// BenchmarkPutEntry measures building and committing one listing entry with its usage merges,
// on disk without sync (the engine's sync is what a real PUT waits on; this is the index's
// own cost: the read of the old entry, the encodes, the merge operands).
func BenchmarkPutEntry(b *testing.B) {
	ix, db := newDiskIndex(b)
	var seq atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1)
			batch := db.NewBatch()
			if err := ix.PutEntry(batch, "acct", "cont", meta.ListEntry{Name: fmt.Sprintf("photos/2026/%08d.jpg", i), Timestamp: meta.Now(), Size: i, ETag: "0123456789abcdef0123456789abcdef", ContentType: "image/jpeg"}); err != nil {
				b.Fatal(err)
			}
			if err := batch.Commit(pebble.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
	})
}

// BenchmarkList lists a 100k-entry container in pages of 10,000 and reports keys/s; the
// delimiter variant rolls 100k names up into 100 common prefixes (one seek each).
func BenchmarkList(b *testing.B) {
	ix, db := newDiskIndex(b)
	const n = 100_000
	batch := db.NewBatch()
	for i := range n {
		e := meta.ListEntry{Name: fmt.Sprintf("dir%03d/file%06d", i%100, i), Timestamp: 1, Size: int64(i), ETag: "0123456789abcdef0123456789abcdef", ContentType: "application/octet-stream"}
		if err := ix.PutEntry(batch, "acct", "cont", e); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Commit(pebble.NoSync); err != nil {
		b.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		b.Fatal(err)
	}
	b.Run("all", func(b *testing.B) {
		keys := 0
		start := time.Now()
		for b.Loop() {
			o := meta.ListOptions{}
			for {
				l, err := ix.ListObjects(ctx, "acct", "cont", o)
				if err != nil {
					b.Fatal(err)
				}
				keys += len(l.Objects)
				if !l.Truncated {
					break
				}
				o.Marker = l.NextMarker
			}
		}
		b.ReportMetric(float64(keys)/time.Since(start).Seconds(), "keys/s")
	})
	b.Run("delimiter", func(b *testing.B) {
		for b.Loop() {
			l, err := ix.ListObjects(ctx, "acct", "cont", meta.ListOptions{Delimiter: "/"})
			if err != nil || len(l.CommonPrefixes) != 100 {
				b.Fatal(len(l.CommonPrefixes), err)
			}
		}
	})
}
