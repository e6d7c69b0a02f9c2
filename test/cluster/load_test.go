package cluster

import (
	"math/rand/v2"
	"sync"
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
