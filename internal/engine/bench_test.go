package engine

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

// The benchmarks use real files under b.TempDir(), so every PUT pays a real fsync (shared by
// concurrent PUTs through Pebble's group commit for inline objects).

func benchPut(b *testing.B, size int, parallel bool) {
	v := newEnv(b, nil, "")
	data := randBytes(rand.New(rand.NewPCG(1, 1)), size)
	var seq atomic.Int64
	put := func() {
		n := name(fmt.Sprintf("obj-%d", seq.Add(1)))
		if _, err := v.e.Put(ctx, n, meta.Object{Timestamp: meta.Now(), Size: int64(size)}, bytes.NewReader(data), PutOptions{}); err != nil {
			b.Error(err)
		}
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				put()
			}
		})
	} else {
		for b.Loop() {
			put()
		}
	}
}

// BenchmarkPut4KiB runs with 16 writers per GOMAXPROCS: small PUTs wait on fsync, not CPU, so
// the interesting number is how many share one WAL sync.
func BenchmarkPut4KiB(b *testing.B) {
	b.SetParallelism(16)
	benchPut(b, 4<<10, true)
}

func BenchmarkPut4KiBSerial(b *testing.B) { benchPut(b, 4<<10, false) }

func BenchmarkPut1MiB(b *testing.B) { benchPut(b, 1<<20, false) }

func BenchmarkPut1MiBParallel(b *testing.B) {
	b.SetParallelism(4)
	benchPut(b, 1<<20, true)
}

func benchGet(b *testing.B, size int) {
	v := newEnv(b, nil, "")
	data := randBytes(rand.New(rand.NewPCG(1, 1)), size)
	const objects = 1000
	for i := range objects {
		if _, err := v.put(name(fmt.Sprintf("obj-%d", i)), meta.Now(), data); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 0))
		for pb.Next() {
			rd, err := v.e.Get(ctx, name(fmt.Sprintf("obj-%d", r.IntN(objects))), nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, rd); err != nil {
				b.Fatal(err)
			}
			rd.Close()
		}
	})
}

func BenchmarkGet4KiB(b *testing.B) { benchGet(b, 4<<10) }

func BenchmarkGet1MiB(b *testing.B) { benchGet(b, 1<<20) }
