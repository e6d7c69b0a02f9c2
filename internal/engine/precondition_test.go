package engine

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

// Conditional writes are decided in the commit: of many racing creates (If-None-Match: *) of
// one name, small and large bodies alike, exactly one succeeds and the others fail their
// condition; of racing If-Match writers that all saw one version, exactly one replaces it.
func TestConditionalWritesRace(t *testing.T) {
	v := newEnv(t, nil, "")
	for _, size := range []int{10, 200 << 10} {
		t.Run(fmt.Sprintf("%dB", size), func(t *testing.T) {
			n := name(fmt.Sprintf("race-%d", size))
			const writers = 16
			var wg sync.WaitGroup
			results := make([]error, writers)
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					data := bytes.Repeat([]byte{byte(i)}, size)
					_, results[i] = v.e.Put(ctx, n, meta.Object{Timestamp: meta.Now(), Size: int64(size)}, bytes.NewReader(data),
						PutOptions{If: meta.Precondition{IfNoneMatch: true}})
				}()
			}
			wg.Wait()
			won := -1
			for i, err := range results {
				switch {
				case err == nil && won >= 0:
					t.Fatalf("writers %d and %d both created the object", won, i)
				case err == nil:
					won = i
				case !errors.Is(err, meta.ErrPreconditionFailed):
					t.Fatalf("writer %d: %v, want ErrPreconditionFailed", i, err)
				}
			}
			if won < 0 {
				t.Fatal("no writer created the object")
			}
			if got := v.mustRead(n); !bytes.Equal(got, bytes.Repeat([]byte{byte(won)}, size)) {
				t.Fatal("the object does not hold the winner's bytes")
			}

			seen, err := v.e.Stat(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			results = make([]error, writers)
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					data := bytes.Repeat([]byte{byte(100 + i)}, size)
					_, results[i] = v.e.Put(ctx, n, meta.Object{Timestamp: meta.Now(), Size: int64(size)}, bytes.NewReader(data),
						PutOptions{If: meta.Precondition{IfMatch: []string{seen.ETag}}})
				}()
			}
			wg.Wait()
			wins := 0
			for i, err := range results {
				if err == nil {
					wins++
				} else if !errors.Is(err, meta.ErrPreconditionFailed) {
					t.Fatalf("if-match writer %d: %v", i, err)
				}
			}
			if wins != 1 {
				t.Fatalf("%d if-match writers replaced the version all of them saw, want 1", wins)
			}
		})
	}
}

// A delete conditioned on an expiry deletes only the version that carries it.
func TestConditionalDelete(t *testing.T) {
	v := newEnv(t, nil, "")
	n := name("expiring")
	obj := meta.Object{Timestamp: meta.Now(), Size: 3, SysMeta: map[string]string{meta.SysDeleteAt: "100"}}
	if _, err := v.e.Put(ctx, n, obj, bytes.NewReader([]byte("old")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	v.mustPut(n, []byte("new, without an expiry"))
	err := v.e.Delete(ctx, n, meta.Now(), DeleteOptions{If: meta.Precondition{IfDeleteAt: 100}})
	if !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("delete of a rewritten object: %v, want ErrPreconditionFailed", err)
	}
	if got := v.mustRead(n); string(got) != "new, without an expiry" {
		t.Fatalf("read %q after a refused delete", got)
	}
	obj.Timestamp = meta.Now()
	if _, err := v.e.Put(ctx, n, obj, bytes.NewReader([]byte("old")), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := v.e.Delete(ctx, n, meta.Now(), DeleteOptions{If: meta.Precondition{IfDeleteAt: 100}}); err != nil {
		t.Fatalf("delete of the expiring version: %v", err)
	}
}
