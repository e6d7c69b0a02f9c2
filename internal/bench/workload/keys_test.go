package workload

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func TestUniformKeys(t *testing.T) {
	p := KeyDist{Kind: KeysUniform}.Picker(100, 1)
	r := rand.New(rand.NewPCG(7, 8))
	seen := make([]int, 100)
	for range 100_000 {
		k := p.Pick(r)
		if k < 0 || k >= 100 {
			t.Fatalf("Pick() = %d, outside [0, 100)", k)
		}
		seen[k]++
	}
	if lo, hi := slices.Min(seen), slices.Max(seen); lo < 800 || hi > 1200 {
		t.Errorf("uniform counts range over [%d, %d], want about 1000 each", lo, hi)
	}
}

func TestSequentialKeysCycle(t *testing.T) {
	const n = 7
	p := KeyDist{Kind: KeysSequential}.Picker(n, 99)
	for i := range 3 * n {
		if got := p.Pick(nil); got != int64(i%n) {
			t.Fatalf("pick %d = %d, want %d", i, got, i%n)
		}
	}
	// Shared by goroutines, every key is handed out exactly as often as the others.
	p = KeyDist{Kind: KeysSequential}.Picker(1000, 0)
	var mu sync.Mutex
	counts := make([]int, 1000)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			local := make([]int, 1000)
			for range 1000 {
				local[p.Pick(nil)]++
			}
			mu.Lock()
			for i, c := range local {
				counts[i] += c
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	for i, c := range counts {
		if c != 8 {
			t.Fatalf("key %d handed out %d times, want 8", i, c)
		}
	}
}

func TestZipfSkew(t *testing.T) {
	const n = 10_000
	p := KeyDist{Kind: KeysZipf, S: 1.1}.Picker(n, 42)
	r := rand.New(rand.NewPCG(9, 10))
	counts := make([]int, n)
	for range 200_000 {
		k := p.Pick(r)
		if k < 0 || k >= n {
			t.Fatalf("Pick() = %d, outside [0, %d)", k, n)
		}
		counts[k]++
	}
	sorted := slices.Clone(counts)
	slices.SortFunc(sorted, func(a, b int) int { return b - a })
	top, median := sorted[0], sorted[n/2]
	// With s = 1.1 the top key gets about 1/ζ-ish of all requests (≈ 9% here); the median key
	// a few hits at most.
	if top < 100*max(median, 1) || top < 10_000 {
		t.Errorf("most popular key has %d hits, median %d: not skewed", top, median)
	}
	// The hot keys are spread over the key space, not 0, 1, 2, ….
	hottest := slices.Index(counts, top)
	if hottest < 10 {
		t.Errorf("hottest key is %d: ranks are not permuted", hottest)
	}
	second := slices.Index(counts, sorted[1])
	if d := hottest - second; d > -100 && d < 100 {
		t.Errorf("the two hottest keys %d and %d are neighbours", hottest, second)
	}
	// Another seed makes other keys hot.
	q := KeyDist{Kind: KeysZipf, S: 1.1}.Picker(n, 43).(*zipfPicker)
	if q.add == p.(*zipfPicker).add {
		t.Error("seeds 42 and 43 give the same hot keys")
	}
}

func TestZipfPermutation(t *testing.T) {
	// The rank-to-key map is a bijection for every n, so no key is unreachable.
	for _, n := range []uint64{1, 2, 3, 4, 10, 12, 97, 100, 1024, 1000} {
		z := newZipfPicker(n, 1.5, n)
		seen := make([]bool, n)
		for rank := range n {
			k := z.key(rank)
			if k < 0 || uint64(k) >= n || seen[k] {
				t.Fatalf("n=%d: rank %d gives key %d, out of range or reached twice", n, rank, k)
			}
			seen[k] = true
		}
	}
	// And with n so large that rank*mul overflows 64 bits.
	z := newZipfPicker(1<<62+1, 1.5, 0)
	if k := z.key(1 << 61); k < 0 || k > 1<<62 {
		t.Errorf("key(2^61) = %d, out of range", k)
	}
}

func TestZipfSmallSpaces(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int64{0, 1, 2, 3} {
		p := KeyDist{Kind: KeysZipf, S: 2}.Picker(n, 5)
		for range 1000 {
			if k := p.Pick(r); k < 0 || k >= max(n, 1) {
				t.Fatalf("n=%d: Pick() = %d", n, k)
			}
		}
	}
}
