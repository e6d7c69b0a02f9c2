package proxy

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

// BenchmarkConditionalPut measures what the register costs a conditional PUT: 4 KiB objects
// to new names on three real storage nodes (synced writes), plain against If-None-Match: *
// and against a version's minted name (PutOptions.Fresh, nodes of other processes: the name's
// register decides it), side by side in one run (docs/benchmarks.md).
func BenchmarkConditionalPut(b *testing.B) {
	ctx := context.Background()
	c := newCluster(b, 3)
	if err := c.proxy.CreateContainer(ctx, "acct", "bench", nil); err != nil {
		b.Fatal(err)
	}
	apart, err := New(Config{Ring: c.proxy.objectRings[0](), Dialer: otherProcesses{c}})
	if err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 4<<10)
	n := 0 // names are never reused: a sub-benchmark's function may run more than once
	for _, bc := range []struct {
		name  string
		cond  meta.Precondition
		fresh bool
	}{{"plain", meta.Precondition{}, false}, {"if-none-match", meta.Precondition{IfNoneMatch: true}, false}, {"minted", meta.Precondition{}, true}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				n++
				name := meta.ObjectName{Account: "acct", Container: "bench", Object: fmt.Sprintf("%s/%09d", bc.name, n)}
				opts := PutOptions{If: bc.cond}
				if bc.fresh {
					opts.Timestamp, opts.Fresh = meta.Now(), true
				}
				if _, err := apart.PutObject(ctx, name, meta.Object{Size: int64(len(data))}, bytes.NewReader(data), opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
