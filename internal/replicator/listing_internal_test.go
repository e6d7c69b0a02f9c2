package replicator

import (
	"testing"

	"github.com/cairn-store/cairn/internal/nodeclient"
)

func TestBucketBits(t *testing.T) {
	for _, c := range []struct {
		rows int
		bits uint
	}{{0, 0}, {256, 0}, {257, 1}, {512, 1}, {513, 2}, {5000, 5}, {1 << 20, 12}, {1 << 30, nodeclient.ListingBucketBits}} {
		if got := bucketBits(c.rows); got != c.bits {
			t.Errorf("bucketBits(%d) = %d, want %d", c.rows, got, c.bits)
		}
	}
}

// Digests are asked for in batches of at most maxDigestRows rows, each of at least one
// listing however large.
func TestDigestBatch(t *testing.T) {
	mine := []nodeclient.ListingDigest{{Count: maxDigestRows / 2}, {Count: maxDigestRows / 2}, {Count: 1}, {Count: 3 * maxDigestRows}, {Count: 5}}
	var got [][2]int
	for start := 0; start < len(mine); {
		end := digestBatch(mine, start)
		got = append(got, [2]int{start, end})
		start = end
	}
	if want := [][2]int{{0, 2}, {2, 3}, {3, 4}, {4, 5}}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("batches %v, want %v", got, want)
	}
}
