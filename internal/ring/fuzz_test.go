package ring

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"slices"
	"testing"
	"time"
)

// FuzzLoad feeds the ring file parser arbitrary bytes, gzipped or not: it must return a ring
// or an error, never panic, and a ring it returns must be valid and survive a round trip.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"testdata/swift-mixed.ring.gz", "testdata/swift-frac.ring.gz"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			f.Fatal(err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, testRing()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	// A ring that carries its last change (the previous rows after the replica rows).
	changed := testRing()
	changed.Change = &Change{Previous: [][]int{}, Until: time.Unix(2e9, 0)}
	for _, row := range changed.Assignments {
		prev := slices.Clone(row)
		prev[0] = 3
		changed.Change.Previous = append(changed.Change.Previous, prev)
	}
	buf.Reset()
	if err := Encode(&buf, changed); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		var r *Ring
		var err error
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			// Bound what a small gzip stream may inflate to.
			r, _, err = decodeRaw(io.LimitReader(gzipOrEmpty(data), 1<<20))
		} else {
			r, _, err = decodeRaw(bytes.NewReader(data))
		}
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded an invalid ring: %v", err)
		}
		r.Stats()
		for range r.Handoffs(0) {
		}
		var out bytes.Buffer
		if err := Encode(&out, r); err != nil {
			return // e.g. a node name Swift's format cannot hold
		}
		back, err := Decode(&out)
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if !sameRing(r, back) {
			t.Fatal("round trip changed the ring")
		}
	})
}

func gzipOrEmpty(data []byte) io.Reader {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return bytes.NewReader(nil)
	}
	return zr
}
