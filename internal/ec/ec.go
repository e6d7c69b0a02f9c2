// Package ec is the erasure coding of storage policies with k data and m parity fragments
// (Swift's EC policies): an object's body is cut into segments, each segment is encoded into
// k+m fragments (klauspost/reedsolomon), and fragment archive i, what the device of fragment
// index i stores, is fragment i of every segment in order. Any k archives give back the body;
// a lost archive is rebuilt from any k others. Pure: bytes in, bytes out, no I/O of its own.
package ec

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/reedsolomon"
)

// DefaultSegmentSize is Swift's ec_object_segment_size: the body is encoded a megabyte at a
// time, so that memory stays bounded and ranges decode only the segments they touch.
const DefaultSegmentSize = 1 << 20

// ErrTooFewFragments: fewer than k archives could be read.
var ErrTooFewFragments = errors.New("ec: fewer fragments than data fragments")

// Scheme is one erasure code: K data and M parity fragments of segments of SegmentSize bytes.
type Scheme struct {
	K, M        int
	SegmentSize int64
	enc         reedsolomon.Encoder
}

// New returns the scheme of k data and m parity fragments (segment: 0 means the default).
func New(k, m int, segment int64) (*Scheme, error) {
	if k < 1 || m < 1 || k+m > 256 {
		return nil, fmt.Errorf("ec: %d data + %d parity fragments: need at least 1 of each, at most 256 in all", k, m)
	}
	if segment == 0 {
		segment = DefaultSegmentSize
	}
	if segment < int64(k) {
		return nil, fmt.Errorf("ec: segment size %d under %d data fragments", segment, k)
	}
	enc, err := reedsolomon.New(k, m)
	if err != nil {
		return nil, fmt.Errorf("ec: %w", err)
	}
	return &Scheme{K: k, M: m, SegmentSize: segment, enc: enc}, nil
}

// Fragments is K+M.
func (s *Scheme) Fragments() int { return s.K + s.M }

// fragLen is the length of each fragment of a segment of n bytes: the segment split k ways,
// the last fragment padded.
func (s *Scheme) fragLen(n int64) int64 { return (n + int64(s.K) - 1) / int64(s.K) }

// ArchiveSize is the length of every fragment archive of a body of size bytes.
func (s *Scheme) ArchiveSize(size int64) int64 {
	full := size / s.SegmentSize
	return full*s.fragLen(s.SegmentSize) + s.fragLen(size%s.SegmentSize)
}

// ArchiveRange is what archives must be read to decode bytes [off, off+n) of a body of size
// bytes: the archives' range [aoff, aoff+alen), which starts at segment first.
func (s *Scheme) ArchiveRange(size, off, n int64) (aoff, alen, first int64) {
	if n <= 0 || off >= size {
		return 0, 0, 0
	}
	first = off / s.SegmentSize
	last := (min(off+n, size) - 1) / s.SegmentSize
	aoff = first * s.fragLen(s.SegmentSize)
	end := s.ArchiveSize(min((last+1)*s.SegmentSize, size))
	return aoff, end - aoff, first
}

// segLen is the length of segment i of a body of size bytes.
func (s *Scheme) segLen(size, i int64) int64 { return min(s.SegmentSize, size-i*s.SegmentSize) }

// Encode reads a body from r and writes its K+M fragment archives to ws, one segment at a
// time; it returns the body's length. A writer's error stops it.
func (s *Scheme) Encode(r io.Reader, ws []io.Writer) (int64, error) {
	if len(ws) != s.Fragments() {
		return 0, fmt.Errorf("ec: %d archive writers for %d fragments", len(ws), s.Fragments())
	}
	// Room for the parity fragments after the segment: Split then uses it rather than
	// allocating them for every segment.
	buf := make([]byte, s.SegmentSize, int64(s.Fragments())*s.fragLen(s.SegmentSize))
	var total int64
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			total += int64(n)
			shards, serr := s.enc.Split(buf[:n])
			if serr != nil {
				return total, fmt.Errorf("ec: split: %w", serr)
			}
			if serr := s.enc.Encode(shards); serr != nil {
				return total, fmt.Errorf("ec: encode: %w", serr)
			}
			fl := s.fragLen(int64(n))
			for i, w := range ws {
				if _, werr := w.Write(shards[i][:fl]); werr != nil {
					return total, fmt.Errorf("ec: fragment %d: %w", i, werr)
				}
			}
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return total, nil
		case err != nil:
			return total, err
		}
	}
}

// readSegment reads segment seg's fragments from the archives (nil: missing; an archive that
// fails is dropped) into shards, and reconstructs what is missing: data only, or every
// fragment when all is set. It returns the fragment length.
func (s *Scheme) readSegment(archives []io.Reader, shards [][]byte, fl int64, all bool) error {
	have := 0
	for i, a := range archives {
		shards[i] = shards[i][:0]
		if a == nil {
			continue
		}
		b := shards[i][:fl]
		if _, err := io.ReadFull(a, b); err != nil {
			archives[i] = nil // a broken archive is as good as a missing one
			continue
		}
		shards[i] = b
		have++
	}
	if have < s.K {
		return fmt.Errorf("%w: %d of %d readable, need %d", ErrTooFewFragments, have, s.Fragments(), s.K)
	}
	for i := range shards {
		if len(shards[i]) == 0 {
			shards[i] = nil
		}
	}
	var err error
	if all {
		err = s.enc.Reconstruct(shards)
	} else {
		err = s.enc.ReconstructData(shards)
	}
	if err != nil {
		return fmt.Errorf("ec: reconstruct: %w", err)
	}
	return nil
}

func (s *Scheme) newShards() [][]byte {
	fl := s.fragLen(s.SegmentSize)
	shards := make([][]byte, s.Fragments())
	for i := range shards {
		shards[i] = make([]byte, fl)
	}
	return shards
}

// Decode writes bytes [off, off+n) of a body of size bytes to w, from archives positioned at
// the start of ArchiveRange(size, off, n) (nil for an archive not read). Any K of them do.
func (s *Scheme) Decode(w io.Writer, archives []io.Reader, size, off, n int64) error {
	if len(archives) != s.Fragments() {
		return fmt.Errorf("ec: %d archives for %d fragments", len(archives), s.Fragments())
	}
	if n <= 0 || off >= size {
		return nil
	}
	end := min(off+n, size)
	archives = append([]io.Reader(nil), archives...)
	shards := s.newShards()
	for seg := off / s.SegmentSize; seg*s.SegmentSize < end; seg++ {
		sl := s.segLen(size, seg)
		fl := s.fragLen(sl)
		for i := range shards {
			shards[i] = shards[i][:cap(shards[i])]
		}
		if err := s.readSegment(archives, shards, fl, false); err != nil {
			return fmt.Errorf("segment %d: %w", seg, err)
		}
		// The segment's bytes are the data fragments in order, cut to its length; of them,
		// the part inside the range.
		lo := max(off-seg*s.SegmentSize, 0)
		hi := min(end-seg*s.SegmentSize, sl)
		pos := int64(0)
		for i := 0; i < s.K && pos < hi; i++ {
			frag := shards[i][:fl]
			a, b := max(lo-pos, 0), min(hi-pos, fl)
			if a < b {
				if _, err := w.Write(frag[a:b]); err != nil {
					return err
				}
			}
			pos += fl
		}
	}
	return nil
}

// Reconstruct writes archive idx of a body of size bytes to w, rebuilt from the others
// (read from their start; nil for one not read). Any K of them do.
func (s *Scheme) Reconstruct(w io.Writer, archives []io.Reader, size int64, idx int) error {
	if len(archives) != s.Fragments() || idx < 0 || idx >= s.Fragments() {
		return fmt.Errorf("ec: reconstruct archive %d from %d archives of %d fragments", idx, len(archives), s.Fragments())
	}
	archives = append([]io.Reader(nil), archives...)
	archives[idx] = nil
	shards := s.newShards()
	for seg := int64(0); seg*s.SegmentSize < size; seg++ {
		fl := s.fragLen(s.segLen(size, seg))
		for i := range shards {
			shards[i] = shards[i][:cap(shards[i])]
		}
		if err := s.readSegment(archives, shards, fl, true); err != nil {
			return fmt.Errorf("segment %d: %w", seg, err)
		}
		if _, err := w.Write(shards[idx][:fl]); err != nil {
			return err
		}
	}
	return nil
}

// FragmentLen is the length of segment seg's fragment in every archive of a body of size
// bytes.
func (s *Scheme) FragmentLen(size, seg int64) int64 { return s.fragLen(s.segLen(size, seg)) }

// ArchiveOffset is where segment seg's fragments start in every archive.
func (s *Scheme) ArchiveOffset(seg int64) int64 { return seg * s.fragLen(s.SegmentSize) }

// DecodeSegment writes bytes [off, off+n) of a body of size bytes, a range within one segment,
// to w from that segment's fragments: frags[i] is fragment i (FragmentLen bytes) or empty when
// it was not read, and any K do. Missing data fragments are rebuilt into frags, reusing their
// capacity. A reader that fetches fragments itself, segment by segment, uses it to change the
// archives it reads from between segments.
func (s *Scheme) DecodeSegment(w io.Writer, frags [][]byte, size, off, n int64) error {
	if len(frags) != s.Fragments() {
		return fmt.Errorf("ec: %d fragments for %d", len(frags), s.Fragments())
	}
	if n <= 0 || off >= size {
		return nil
	}
	seg := off / s.SegmentSize
	end := min(off+n, size)
	if end > (seg+1)*s.SegmentSize {
		return fmt.Errorf("ec: range [%d, %d) crosses the end of segment %d", off, end, seg)
	}
	fl := s.FragmentLen(size, seg)
	have := 0
	for i, f := range frags {
		switch {
		case len(f) == 0: // missing; its capacity, if any, is reused
		case int64(len(f)) != fl:
			return fmt.Errorf("ec: segment %d: fragment %d of %d bytes, want %d", seg, i, len(f), fl)
		default:
			have++
		}
	}
	if have < s.K {
		return fmt.Errorf("%w: segment %d: %d of %d fragments, need %d", ErrTooFewFragments, seg, have, s.Fragments(), s.K)
	}
	if err := s.enc.ReconstructData(frags); err != nil {
		return fmt.Errorf("ec: segment %d: reconstruct: %w", seg, err)
	}
	lo, hi := off-seg*s.SegmentSize, end-seg*s.SegmentSize
	pos := int64(0)
	for i := 0; i < s.K && pos < hi; i++ {
		a, b := max(lo-pos, 0), min(hi-pos, fl)
		if a < b {
			if _, err := w.Write(frags[i][a:b]); err != nil {
				return err
			}
		}
		pos += fl
	}
	return nil
}
