package proxy

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

// BenchmarkConditionalPut measures what the register costs a conditional PUT: 4 KiB objects
// to new names on three real storage nodes (synced writes), plain against If-None-Match: *,
// side by side in one run (docs/benchmarks.md).
func BenchmarkConditionalPut(b *testing.B) {
	ctx := context.Background()
	c := newCluster(b, 3)
	if err := c.proxy.CreateContainer(ctx, "acct", "bench", nil); err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 4<<10)
	n := 0 // names are never reused: a sub-benchmark's function may run more than once
	for _, bc := range []struct {
		name string
		cond meta.Precondition
	}{{"plain", meta.Precondition{}}, {"if-none-match", meta.Precondition{IfNoneMatch: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				n++
				name := meta.ObjectName{Account: "acct", Container: "bench", Object: fmt.Sprintf("%s/%09d", bc.name, n)}
				if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, bytes.NewReader(data), PutOptions{If: bc.cond}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
