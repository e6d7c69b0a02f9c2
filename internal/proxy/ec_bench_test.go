package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

// BenchmarkPolicies compares writing and reading objects through the proxy in a replicated
// policy (3 replicas) and an erasure-coded one (4+2, 1 MiB segments), over eight in-process
// storage nodes on the local disk: the same nodes, two containers. Bytes per second are the
// objects' (MB/s is of the client's bytes, not of what reaches the disks: 3× for replicas,
// 1.5× for 4+2); get-degraded reads with the node of the first data fragment down.
//
//	go test -run '^$' -bench BenchmarkPolicies -benchtime 40x ./internal/proxy/
func BenchmarkPolicies(b *testing.B) {
	c := newECClusterWith(b, 1<<20)
	ctx := context.Background()
	for _, size := range []int{4 << 10, 256 << 10, 4 << 20} {
		data := randomBytes(size)
		for _, container := range []string{"rep", "ec"} {
			label := map[string]string{"rep": "replicas=3", "ec": "ec=4+2"}[container]
			b.Run(fmt.Sprintf("put/%s/size=%dKiB", label, size>>10), func(b *testing.B) {
				b.SetBytes(int64(size))
				i := 0
				for b.Loop() {
					name := meta.ObjectName{Account: "acct", Container: container, Object: fmt.Sprintf("put-%d-%d", size, i)}
					i++
					if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(size)}, bytes.NewReader(data), PutOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			name := meta.ObjectName{Account: "acct", Container: container, Object: fmt.Sprintf("get-%d", size)}
			if _, err := c.proxy.PutObject(ctx, name, meta.Object{Size: int64(size)}, bytes.NewReader(data), PutOptions{}); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("get/%s/size=%dKiB", label, size>>10), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					r, err := c.proxy.GetObject(ctx, name, nil)
					if err != nil {
						b.Fatal(err)
					}
					if n, err := io.Copy(io.Discard, r); err != nil || n != int64(size) {
						b.Fatalf("read %d bytes, %v", n, err)
					}
					r.Close()
				}
			})
			if container != "ec" {
				continue
			}
			// A data fragment's node down: the survey first, then decoding with parity.
			prim, _ := c.primaries(name)
			c.set(c.down, prim[0], true)
			b.Run(fmt.Sprintf("get-degraded/%s/size=%dKiB", label, size>>10), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					r, err := c.proxy.GetObject(ctx, name, nil)
					if err != nil {
						b.Fatal(err)
					}
					if n, err := io.Copy(io.Discard, r); err != nil || n != int64(size) {
						b.Fatalf("read %d bytes, %v", n, err)
					}
					r.Close()
				}
			})
			c.set(c.down, prim[0], false)
		}
	}
}
