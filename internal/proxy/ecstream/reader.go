package ecstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
)

// Archives is where a Reader reads: the devices holding each archive of the bytes it decodes.
type Archives interface {
	// Holders is how many devices hold archive i.
	Holders(i int) int
	// Open opens archive i on its holder h over archive bytes [start, stop] (inclusive),
	// checking that it is still an archive of the bytes being decoded.
	Open(ctx context.Context, i, h int, start, stop int64) (io.ReadCloser, error)
	// Broke says that archive i, opened on holder h, broke off in the middle (cause).
	Broke(i, h int, cause error)
}

// Reader decodes a range of an erasure-coded object from its archives, one segment at a time:
// each segment's fragments are read from the k archives open (data fragments first, which
// decode without arithmetic), all at once, and when one fails (a node dies, a checksum fails
// on its disk) the segment is read from another archive opened at the segment's start. So
// the reader fails only when fewer than k archives can be read, and returns no byte that did
// not come from archives their nodes verified.
type Reader struct {
	ctx      context.Context
	scheme   *ec.Scheme
	src      Archives
	size     int64
	pos, end int64 // the next byte of the body to return, and the end of the range (exclusive)
	seg      int64 // the next segment to decode
	last     int64 // the range's last segment
	open     []*stream
	tried    map[[2]int]bool // (archive, holder) pairs that failed this read
	frags    [][]byte
	out      pieces
	err      error
}

type stream struct {
	h int
	r io.ReadCloser
}

// NewReader returns a reader of bytes [off, off+n) of a body of size bytes, with no archive
// open yet: Open or Adopt opens them.
func NewReader(ctx context.Context, scheme *ec.Scheme, src Archives, size, off, n int64) *Reader {
	r := &Reader{ctx: ctx, scheme: scheme, src: src, size: size, pos: off, end: off + n,
		open: make([]*stream, scheme.Fragments()), tried: map[[2]int]bool{}, frags: make([][]byte, scheme.Fragments())}
	if n > 0 {
		r.seg = off / scheme.SegmentSize
		r.last = (off + n - 1) / scheme.SegmentSize
	}
	return r
}

// Open opens k archives at the range's first segment, so that a read that cannot be served
// fails before its client is answered rather than in the middle of the body.
func (r *Reader) Open() error {
	if r.pos >= r.end {
		return nil
	}
	return r.fill(r.seg, false)
}

// Adopt makes archive i, open on holder h from where the range's first segment starts, one
// that the reader reads (a read that opened archives before it knew it would decode them).
func (r *Reader) Adopt(i, h int, rc io.ReadCloser) {
	r.open[i] = &stream{h: h, r: rc}
}

func (r *Reader) Read(b []byte) (int, error) {
	for r.out.empty() {
		if r.err != nil {
			return 0, r.err
		}
		if r.pos >= r.end {
			return 0, io.EOF
		}
		if err := r.next(); err != nil {
			r.err = err
			return 0, err
		}
	}
	return r.out.read(b), nil
}

// Close closes the archives open.
func (r *Reader) Close() error {
	for i, s := range r.open {
		if s != nil {
			s.r.Close()
			r.open[i] = nil
		}
	}
	return nil
}

// frag returns fragment i's buffer, of fl bytes, made on first use: an archive never opened
// costs nothing.
func (r *Reader) frag(i int, fl int64) []byte {
	if int64(cap(r.frags[i])) < fl {
		r.frags[i] = make([]byte, 0, r.scheme.FragmentLen(r.size, r.seg))
	}
	return r.frags[i][:fl]
}

// next decodes the next segment's part of the range into r.out.
func (r *Reader) next() error {
	seg := r.seg
	fl := r.scheme.FragmentLen(r.size, seg)
	for i := range r.frags {
		r.frags[i] = r.frags[i][:0]
	}
	errs := make([]error, len(r.open))
	var wg sync.WaitGroup
	for i, s := range r.open {
		if s == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = io.ReadFull(s.r, r.frag(i, fl))
		}()
	}
	wg.Wait()
	if err := r.ctx.Err(); err != nil {
		return err
	}
	for i, err := range errs {
		switch {
		case err != nil:
			r.drop(i, err)
		case r.open[i] != nil:
			r.frags[i] = r.frags[i][:fl]
		}
	}
	if err := r.fill(seg, true); err != nil {
		return err
	}
	from := max(r.pos, seg*r.scheme.SegmentSize)
	to := min(r.end, (seg+1)*r.scheme.SegmentSize)
	if err := r.scheme.DecodeSegment(&r.out, r.frags, r.size, from, to-from); err != nil {
		return fmt.Errorf("%v: %w", err, meta.ErrUnavailable)
	}
	r.pos, r.seg = to, seg+1
	return nil
}

// drop closes archive i after it failed.
func (r *Reader) drop(i int, cause error) {
	s := r.open[i]
	r.open[i] = nil
	s.r.Close()
	r.tried[[2]int{i, s.h}] = true
	r.src.Broke(i, s.h, cause)
}

// fill opens archives until k are open: data fragments first, then parity. Archives opened
// here start at segment seg; when readNow, that segment is being decoded and each new
// archive's fragment of it is read at once.
func (r *Reader) fill(seg int64, readNow bool) error {
	fl := r.scheme.FragmentLen(r.size, seg)
	have := 0
	for _, s := range r.open {
		if s != nil {
			have++
		}
	}
	start := r.scheme.ArchiveOffset(seg)
	stop := r.scheme.ArchiveOffset(r.last) + r.scheme.FragmentLen(r.size, r.last) - 1
	var lastErr error
	for i := 0; i < r.scheme.Fragments() && have < r.scheme.K; i++ {
		if r.open[i] != nil {
			continue
		}
		for h := range r.src.Holders(i) {
			if r.tried[[2]int{i, h}] {
				continue
			}
			rc, err := r.src.Open(r.ctx, i, h, start, stop)
			if err == nil && readNow {
				if _, err = io.ReadFull(rc, r.frag(i, fl)); err != nil {
					rc.Close()
					r.src.Broke(i, h, err)
				} else {
					r.frags[i] = r.frags[i][:fl]
				}
			}
			if err != nil {
				r.tried[[2]int{i, h}] = true
				lastErr = err
				continue
			}
			r.open[i] = &stream{h: h, r: rc}
			have++
			break
		}
	}
	if have < r.scheme.K {
		if lastErr == nil {
			lastErr = errors.New("no other archive holds these bytes")
		}
		return fmt.Errorf("%d of %d fragment archives readable, need %d (%v): %w", have, r.scheme.Fragments(), r.scheme.K, lastErr, meta.ErrUnavailable)
	}
	return nil
}

// pieces is the decoded part of a segment not returned yet: slices of the reader's fragment
// buffers (a segment's bytes are its data fragments in order), which stay put until the next
// segment is read, so that decoding copies nothing.
type pieces struct{ s [][]byte }

func (p *pieces) Write(b []byte) (int, error) {
	if len(b) > 0 {
		p.s = append(p.s, b)
	}
	return len(b), nil
}

func (p *pieces) empty() bool { return len(p.s) == 0 }

func (p *pieces) read(b []byte) int {
	n := 0
	for n < len(b) && len(p.s) > 0 {
		c := copy(b[n:], p.s[0])
		n += c
		if p.s[0] = p.s[0][c:]; len(p.s[0]) == 0 {
			p.s = p.s[1:]
		}
	}
	return n
}
