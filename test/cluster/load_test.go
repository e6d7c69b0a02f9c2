package cluster

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// clients runs n clients until stop closes: each calls step with its index, its own random
// source (seeded from seed and the index, so a run can be repeated) and its step count. The
// returned wait blocks until every client has stopped.
func clients(n int, seed uint64, stop <-chan struct{}, step func(w int, rng *rand.Rand, i int)) (wait func()) {
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), seed))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				step(w, rng, i)
			}
		}()
	}
	return wg.Wait
}

// randomBody returns random bytes of one of the sizes, chosen at random.
func randomBody(rng *rand.Rand, sizes ...int) []byte {
	body := make([]byte, sizes[rng.IntN(len(sizes))])
	for j := range body {
		body[j] = byte(rng.Uint32())
	}
	return body
}

// keepLoad returns once the clients have worked for at least d and completed at least n more
// operations (completed counts those completed so far), whichever comes later: a loaded
// machine completes fewer operations in the same time, and a phase of a test must see its
// share of them all the same. The bound of two minutes only catches clients that hang.
func keepLoad(t *testing.T, d time.Duration, n int, completed func() int) {
	t.Helper()
	from := completed()
	time.Sleep(d)
	for deadline := time.Now().Add(2 * time.Minute); completed() < from+n; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the clients completed %d operations in more than two minutes, want %d", completed()-from, n)
		}
	}
}
