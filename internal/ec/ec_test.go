package ec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

func encode(t *testing.T, s *Scheme, body []byte) [][]byte {
	t.Helper()
	bufs := make([]*bytes.Buffer, s.Fragments())
	ws := make([]io.Writer, s.Fragments())
	for i := range bufs {
		bufs[i] = &bytes.Buffer{}
		ws[i] = bufs[i]
	}
	n, err := s.Encode(bytes.NewReader(body), ws)
	if err != nil || n != int64(len(body)) {
		t.Fatalf("encode %d bytes: %d, %v", len(body), n, err)
	}
	out := make([][]byte, len(bufs))
	for i, b := range bufs {
		out[i] = b.Bytes()
		if int64(len(out[i])) != s.ArchiveSize(int64(len(body))) {
			t.Fatalf("archive %d: %d bytes, ArchiveSize says %d", i, len(out[i]), s.ArchiveSize(int64(len(body))))
		}
	}
	return out
}

// readers returns readers of the archives from aoff, leaving out the indexes in lost.
func readers(archives [][]byte, aoff int64, lost ...int) []io.Reader {
	rs := make([]io.Reader, len(archives))
	for i, a := range archives {
		rs[i] = bytes.NewReader(a[aoff:])
	}
	for _, i := range lost {
		rs[i] = nil
	}
	return rs
}

func TestRoundTripWithLostFragments(t *testing.T) {
	s, err := New(4, 2, 1000)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 3, 999, 1000, 1001, 3500, 4000} {
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		archives := encode(t, s, body)
		for _, lost := range [][]int{nil, {0}, {5}, {0, 1}, {2, 5}, {4, 5}} {
			var out bytes.Buffer
			if err := s.Decode(&out, readers(archives, 0, lost...), int64(size), 0, int64(size)); err != nil {
				t.Fatalf("size %d, lost %v: %v", size, lost, err)
			}
			if !bytes.Equal(out.Bytes(), body) {
				t.Fatalf("size %d, lost %v: decoded %d bytes differ", size, lost, out.Len())
			}
		}
		// Every archive is rebuilt exactly from the others, two of them lost too.
		for idx := range archives {
			var out bytes.Buffer
			lost := []int{(idx + 1) % 6}
			if err := s.Reconstruct(&out, readers(archives, 0, lost...), int64(size), idx); err != nil {
				t.Fatalf("size %d: reconstruct %d: %v", size, idx, err)
			}
			if !bytes.Equal(out.Bytes(), archives[idx]) {
				t.Fatalf("size %d: archive %d rebuilt differently", size, idx)
			}
		}
		if size > 0 {
			var out bytes.Buffer
			err := s.Decode(&out, readers(archives, 0, 0, 1, 2), int64(size), 0, int64(size))
			if !errors.Is(err, ErrTooFewFragments) {
				t.Fatalf("size %d with three of six lost: %v", size, err)
			}
		}
	}
}

func TestDecodeRanges(t *testing.T) {
	s, err := New(3, 2, 700)
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 2500)
	for i := range body {
		body[i] = byte(i * 7)
	}
	archives := encode(t, s, body)
	for _, r := range [][2]int64{{0, 1}, {699, 2}, {700, 700}, {1000, 1500}, {2499, 1}, {5, 2400}, {2400, 500}} {
		off, n := r[0], r[1]
		aoff, alen, _ := s.ArchiveRange(int64(len(body)), off, n)
		if aoff+alen > int64(len(archives[0])) {
			t.Fatalf("range %v: archive range [%d, +%d) past the archive (%d)", r, aoff, alen, len(archives[0]))
		}
		var out bytes.Buffer
		if err := s.Decode(&out, readers(archives, aoff, 1, 3), int64(len(body)), off, n); err != nil {
			t.Fatalf("range %v: %v", r, err)
		}
		want := body[off:min(off+n, int64(len(body)))]
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("range %v: got %d bytes, want %d", r, out.Len(), len(want))
		}
	}
}

func TestNewRefusesBadSchemes(t *testing.T) {
	for _, c := range [][3]int64{{0, 2, 0}, {4, 0, 0}, {200, 100, 0}, {8, 2, 4}} {
		if _, err := New(int(c[0]), int(c[1]), c[2]); err == nil {
			t.Errorf("New%v accepted", c)
		}
	}
}

func BenchmarkEncode4Plus2(b *testing.B) {
	s, _ := New(4, 2, 0)
	body := make([]byte, 8<<20)
	ws := make([]io.Writer, 6)
	for i := range ws {
		ws[i] = io.Discard
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := s.Encode(bytes.NewReader(body), ws); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleScheme_ArchiveSize() {
	s, _ := New(4, 2, 0)
	fmt.Println(s.ArchiveSize(10 << 20))
	// Output: 2621440
}

// TestDecodeSegment decodes every segment of a body on its own from fragments cut out of the
// archives, with fragments missing, as a reader that switches archives between segments does.
func TestDecodeSegment(t *testing.T) {
	s, err := New(4, 2, 1000)
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 3333)
	for i := range body {
		body[i] = byte(i*13 + i>>8)
	}
	size := int64(len(body))
	archives := encode(t, s, body)
	for _, lost := range [][]int{nil, {0}, {1, 3}, {4, 5}, {0, 5}} {
		var out bytes.Buffer
		for seg := int64(0); seg*s.SegmentSize < size; seg++ {
			fl := s.FragmentLen(size, seg)
			frags := make([][]byte, s.Fragments())
			for i := range frags {
				at := s.ArchiveOffset(seg)
				frags[i] = bytes.Clone(archives[i][at : at+fl])
			}
			for _, i := range lost {
				frags[i] = make([]byte, 0, fl) // missing, its room reused
			}
			off := seg * s.SegmentSize
			if err := s.DecodeSegment(&out, frags, size, off, min(s.SegmentSize, size-off)); err != nil {
				t.Fatalf("lost %v, segment %d: %v", lost, seg, err)
			}
		}
		if !bytes.Equal(out.Bytes(), body) {
			t.Fatalf("lost %v: decoded differently", lost)
		}
	}
	// A range inside a segment, and one that crosses its end.
	frags := make([][]byte, s.Fragments())
	for i := range frags {
		frags[i] = archives[i][s.ArchiveOffset(1) : s.ArchiveOffset(1)+s.FragmentLen(size, 1)]
	}
	var out bytes.Buffer
	if err := s.DecodeSegment(&out, frags, size, 1100, 50); err != nil || !bytes.Equal(out.Bytes(), body[1100:1150]) {
		t.Fatalf("range in segment 1: %v", err)
	}
	if err := s.DecodeSegment(&out, frags, size, 1900, 200); err == nil {
		t.Fatal("a range across a segment's end decoded")
	}
	frags[0], frags[1], frags[2] = nil, nil, nil
	if err := s.DecodeSegment(&out, frags, size, 1000, 10); !errors.Is(err, ErrTooFewFragments) {
		t.Fatalf("three of six fragments: %v", err)
	}
}
