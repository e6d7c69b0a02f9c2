package sse

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
)

// The stream format. A stream is the plaintext cut into segments of SegmentSize bytes (the last
// one shorter, or empty for an empty plaintext), each sealed on its own with AES-256-GCM and
// followed by its 16-byte tag. The key of a stream is derived from the object's data key and
// the stream's name ("" for a plain object, the stored part's name for a part of a multipart
// object), so that no two streams share a key. The nonce of segment i is i (8 bytes, big
// endian) and a final flag (1 for the stream's last segment), so that a segment moved,
// dropped, repeated or cut off at the end fails authentication.
const (
	SegmentSize   = 64 << 10
	TagSize       = 16
	sealedSegment = SegmentSize + TagSize
)

// CipherSize is the size of the stream of a plaintext of plain bytes.
func CipherSize(plain int64) int64 {
	if plain <= 0 {
		return TagSize
	}
	n := (plain + SegmentSize - 1) / SegmentSize
	return plain + n*TagSize
}

// PlainSize is the plaintext size of a stream of c bytes; ErrBadLayout when no stream has it.
func PlainSize(c int64) (int64, error) {
	if c < TagSize {
		return 0, fmt.Errorf("%w: %d bytes", ErrBadLayout, c)
	}
	k, rem := c/sealedSegment, c%sealedSegment
	switch {
	case rem == 0:
		return k * SegmentSize, nil
	case rem < TagSize, rem == TagSize && k > 0:
		return 0, fmt.Errorf("%w: %d bytes", ErrBadLayout, c)
	}
	return k*SegmentSize + rem - TagSize, nil
}

func streamAEAD(dataKey []byte, stream string) (cipher.AEAD, error) {
	m := hmac.New(sha256.New, dataKey)
	m.Write([]byte("cairn-sse-v1 stream\x00"))
	m.Write([]byte(stream))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("sse: stream key: %w", err)
	}
	return cipher.NewGCM(block)
}

func segmentNonce(i uint64, final bool) []byte {
	var n [12]byte
	binary.BigEndian.PutUint64(n[:8], i)
	if final {
		n[8] = 1
	}
	return n[:]
}

// Encrypter reads a plaintext of a declared size and returns its stream. It also hashes the
// plaintext (MD5, the ETag S3 gives an SSE-S3 object).
type Encrypter struct {
	src       io.Reader
	remaining int64 // -1: unknown (read to src's end)
	read      int64
	peek      []byte // a byte read ahead to learn whether a segment is the last
	aead      cipher.AEAD
	idx       uint64
	buf, out  []byte
	pos       int
	done      bool
	md5       hash.Hash
}

// NewEncrypter encrypts the size bytes src holds with dataKey as stream name. src ending early
// is io.ErrUnexpectedEOF; bytes past size are left in src for the caller to notice. A size of
// -1 encrypts whatever src holds up to its end.
func NewEncrypter(src io.Reader, size int64, dataKey []byte, stream string) (*Encrypter, error) {
	aead, err := streamAEAD(dataKey, stream)
	if err != nil {
		return nil, err
	}
	bufSize := SegmentSize
	if size >= 0 && size < SegmentSize {
		bufSize = int(size) // a small object needs no whole segment's buffer
	}
	return &Encrypter{src: src, remaining: size, aead: aead, buf: make([]byte, bufSize), md5: md5.New()}, nil
}

// Read implements io.Reader.
func (e *Encrypter) Read(p []byte) (int, error) {
	for e.pos == len(e.out) {
		if e.done {
			return 0, io.EOF
		}
		var n int
		var final bool
		if e.remaining < 0 {
			var err error
			if n, final, err = e.fillUnknown(); err != nil {
				return 0, err
			}
		} else {
			n = int(min(e.remaining, SegmentSize))
			if _, err := io.ReadFull(e.src, e.buf[:n]); err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return 0, err
			}
			e.remaining -= int64(n)
			final = e.remaining == 0
		}
		if e.md5 != nil {
			e.md5.Write(e.buf[:n])
		}
		e.read += int64(n)
		e.out = e.aead.Seal(e.out[:0], segmentNonce(e.idx, final), e.buf[:n], nil)
		e.pos = 0
		e.idx++
		e.done = final
	}
	n := copy(p, e.out[e.pos:])
	e.pos += n
	return n, nil
}

// fillUnknown reads the next segment of a plaintext of unknown size into buf, and whether it
// is the last (src ends right after it: a byte is read ahead to know).
func (e *Encrypter) fillUnknown() (n int, final bool, err error) {
	n = copy(e.buf, e.peek)
	e.peek = e.peek[:0]
	m, err := io.ReadFull(e.src, e.buf[n:])
	n += m
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, true, nil
	}
	if err != nil {
		return 0, false, err
	}
	var one [1]byte
	k, err := io.ReadFull(e.src, one[:])
	if errors.Is(err, io.EOF) {
		return n, true, nil
	}
	if err != nil {
		return 0, false, err
	}
	e.peek = append(e.peek, one[:k]...)
	return n, false, nil
}

// PlainSize is the number of plaintext bytes read so far (all once Read returned io.EOF).
func (e *Encrypter) PlainSize() int64 { return e.read }

// SkipMD5 stops the hashing of the plaintext (call it before the first Read) when nothing
// needs its MD5: it is most of an encryption's cost.
func (e *Encrypter) SkipMD5() { e.md5 = nil }

// PlainMD5 is the hex MD5 of the plaintext read so far (all of it once Read returned io.EOF),
// or "" after SkipMD5.
func (e *Encrypter) PlainMD5() string {
	if e.md5 == nil {
		return ""
	}
	return hex.EncodeToString(e.md5.Sum(nil))
}

// Part is one stream of an object: a plain object has one, named ""; a multipart object one
// per part, named as the part is stored. CipherSize is the stream's stored size.
type Part struct {
	Name       string
	CipherSize int64
}

type layoutPart struct {
	Part
	cipherOff, plainOff, plainSize int64
}

// Layout places an object's streams in its stored bytes and in its plaintext.
type Layout struct {
	parts       []layoutPart
	plain, cphr int64
}

// NewLayout lays out an object of the given streams, in order.
func NewLayout(parts []Part) (*Layout, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no streams", ErrBadLayout)
	}
	l := &Layout{}
	for _, p := range parts {
		ps, err := PlainSize(p.CipherSize)
		if err != nil {
			return nil, err
		}
		l.parts = append(l.parts, layoutPart{Part: p, cipherOff: l.cphr, plainOff: l.plain, plainSize: ps})
		l.cphr += p.CipherSize
		l.plain += ps
	}
	return l, nil
}

// PlainSize is the object's plaintext size.
func (l *Layout) PlainSize() int64 { return l.plain }

// PlainSizes are the plaintext sizes of the object's streams.
func (l *Layout) PlainSizes() []int64 {
	out := make([]int64, len(l.parts))
	for i, p := range l.parts {
		out[i] = p.plainSize
	}
	return out
}

// CipherRange is the stored byte range to read for plaintext [off, off+n): whole segments,
// from the one holding off to the one holding off+n-1. n == 0 reads everything (an empty
// object's segments are still authenticated).
func (l *Layout) CipherRange(off, n int64) (coff, cn int64) {
	if n <= 0 {
		return 0, l.cphr
	}
	first, last := l.locate(off), l.locate(off+n-1)
	coff = first.cipherOff + ((off-first.plainOff)/SegmentSize)*sealedSegment
	lastSeg := (off + n - 1 - last.plainOff) / SegmentSize
	end := min(last.cipherOff+(lastSeg+1)*sealedSegment, last.cipherOff+last.CipherSize)
	return coff, end - coff
}

// locate finds the stream holding plaintext offset off (of a non-empty stream).
func (l *Layout) locate(off int64) *layoutPart { return &l.parts[l.index(off)] }

func (l *Layout) index(off int64) int {
	for i := range l.parts {
		if p := &l.parts[i]; off < p.plainOff+p.plainSize {
			return i
		}
	}
	return len(l.parts) - 1
}

// NewReader decrypts plaintext [off, off+n) from src, which holds the stored bytes of
// CipherRange(off, n) and nothing else. Bytes that fail authentication are ErrTampered; a
// short src is ErrTampered too (wrapping io.ErrUnexpectedEOF): no byte that was not
// authenticated is ever returned.
func (l *Layout) NewReader(src io.Reader, dataKey []byte, off, n int64) io.Reader {
	return l.newDecrypter(src, dataKey, off, n)
}

func (l *Layout) newDecrypter(src io.Reader, dataKey []byte, off, n int64) *decrypter {
	r := &decrypter{l: l, src: src, key: dataKey, off: off, end: off + n}
	if n <= 0 {
		r.off, r.end, r.all = 0, 0, true
	}
	return r
}

// prime decrypts the first segment now, so that its failure is known before any byte is
// returned.
func (d *decrypter) prime() error {
	if d.pos == len(d.out) && d.err == nil {
		d.err = d.next()
	}
	if d.err != nil && !errors.Is(d.err, io.EOF) {
		return d.err
	}
	return nil
}

type decrypter struct {
	l        *Layout
	src      io.Reader
	key      []byte
	off, end int64 // the plaintext still to return
	all      bool  // authenticate every segment (an empty read)
	part     int
	seg      int64
	aead     cipher.AEAD
	started  bool
	buf, out []byte
	pos      int
	err      error
}

func (d *decrypter) Read(p []byte) (int, error) {
	for d.pos == len(d.out) {
		if d.err != nil {
			return 0, d.err
		}
		if d.err = d.next(); d.err != nil && d.pos == len(d.out) {
			return 0, d.err
		}
	}
	n := copy(p, d.out[d.pos:])
	d.pos += n
	return n, nil
}

// next decrypts the next segment into out (the part of it the range asks for).
func (d *decrypter) next() error {
	if !d.started {
		d.started = true
		if d.all {
			d.part, d.seg = 0, 0
		} else {
			d.part = d.l.index(d.off)
			d.seg = (d.off - d.l.parts[d.part].plainOff) / SegmentSize
		}
	}
	for {
		if d.part >= len(d.l.parts) || (!d.all && d.off >= d.end) {
			return io.EOF
		}
		pt := &d.l.parts[d.part]
		segs := max(1, (pt.plainSize+SegmentSize-1)/SegmentSize)
		if d.seg >= segs {
			d.part, d.seg, d.aead = d.part+1, 0, nil
			continue
		}
		if d.aead == nil {
			a, err := streamAEAD(d.key, pt.Name)
			if err != nil {
				return err
			}
			d.aead = a
		}
		final := d.seg == segs-1
		size := int64(sealedSegment)
		if final {
			size = pt.CipherSize - d.seg*sealedSegment
		}
		if cap(d.buf) < int(size) {
			d.buf = make([]byte, size)
		}
		if _, err := io.ReadFull(d.src, d.buf[:size]); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("%w: stream %q segment %d: %w", ErrTampered, pt.Name, d.seg, err)
		}
		plain, err := d.aead.Open(d.buf[:0], segmentNonce(uint64(d.seg), final), d.buf[:size], nil)
		if err != nil {
			return fmt.Errorf("%w: stream %q segment %d", ErrTampered, pt.Name, d.seg)
		}
		segOff := pt.plainOff + d.seg*SegmentSize
		d.seg++
		if d.all {
			d.out, d.pos = plain[:0], 0
			continue
		}
		lo, hi := max(d.off-segOff, 0), min(d.end-segOff, int64(len(plain)))
		if lo >= hi {
			continue
		}
		d.out, d.pos = plain[lo:hi], 0
		d.off = segOff + hi
		return nil
	}
}
