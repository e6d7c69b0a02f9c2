// Package binenc owns the compact binary encoding that Cairn's LSM keys and values are built
// from: varints, length-prefixed strings, and string maps written in sorted order (so that equal
// maps encode to equal bytes), and a Decoder that reads them back, remembering its first error
// and never allocating more than the bytes it holds could describe.
package binenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// ErrTruncated reports bytes that end before what they describe.
var ErrTruncated = errors.New("encoding truncated")

// AppendString appends s with its length in front.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendMap appends a count and the key/value pairs of m, keys sorted.
func AppendMap(b []byte, m map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	if len(m) == 0 {
		return b
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = AppendString(b, k)
		b = AppendString(b, m[k])
	}
	return b
}

// Decoder reads what the Append functions wrote. After the first failure every read returns a
// zero value and Err keeps the failure, so callers check once at the end.
type Decoder struct {
	B   []byte // what is left to read
	Err error
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.Err = ErrTruncated
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Varint reads a signed (zigzag) varint.
func (d *Decoder) Varint() int64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Varint(d.B)
	if n <= 0 {
		d.Err = ErrTruncated
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Uint32 reads a little-endian uint32.
func (d *Decoder) Uint32() uint32 {
	if d.Err != nil {
		return 0
	}
	if len(d.B) < 4 {
		d.Err = ErrTruncated
		return 0
	}
	v := binary.LittleEndian.Uint32(d.B)
	d.B = d.B[4:]
	return v
}

// Bytes returns the next n bytes, aliasing the input.
func (d *Decoder) Bytes(n uint64) []byte {
	if d.Err != nil {
		return nil
	}
	if n > uint64(len(d.B)) {
		d.Err = ErrTruncated
		return nil
	}
	v := d.B[:n:n]
	d.B = d.B[n:]
	return v
}

// Str reads a length-prefixed string.
func (d *Decoder) Str() string { return string(d.Bytes(d.Uvarint())) }

// Count reads a collection length, refusing one that the remaining bytes cannot hold at minEach
// bytes an element (a corrupted count must not make the caller allocate gigabytes).
func (d *Decoder) Count(minEach int) int {
	n := d.Uvarint()
	if n > uint64(len(d.B)/minEach) {
		if d.Err == nil {
			d.Err = ErrTruncated
		}
		return 0
	}
	return int(n)
}

// Map reads what AppendMap wrote; an empty map reads as nil.
func (d *Decoder) Map() map[string]string {
	n := d.Count(2)
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := d.Str()
		m[k] = d.Str()
	}
	return m
}

// Fail records a failure as bad with what was wrong, unless one is recorded already.
func (d *Decoder) Fail(bad error, what string) {
	if d.Err == nil {
		d.Err = fmt.Errorf("%w: %s", bad, what)
	}
}

// Version reads a leading version byte, failing as bad unless it is want.
func (d *Decoder) Version(want byte, bad error) {
	if b := d.Bytes(1); len(b) == 0 || b[0] != want {
		d.Fail(bad, "version")
	}
}

// Finish reports the first failure, or bytes left over, as bad (a truncation too), saying
// what was being decoded.
func (d *Decoder) Finish(bad error, what string) error {
	if d.Err == nil && len(d.B) != 0 {
		d.Fail(bad, "trailing bytes")
	}
	if d.Err != nil {
		if !errors.Is(d.Err, bad) {
			d.Err = fmt.Errorf("%w: %w", bad, d.Err)
		}
		return fmt.Errorf("decoding %s: %w", what, d.Err)
	}
	return nil
}
