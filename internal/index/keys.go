package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/binenc"
	"github.com/cairn-store/cairn/internal/meta"
)

// Key layout. Names are uvarint-length-prefixed except the last component, which is appended
// as is so that a listing is one ordered range scan over byte-ordered names. Length prefixes are
// prefix-free, so no container's keys can fall inside another's range whatever bytes the names
// hold.
//
//	'c' account container object → listing entry
//	'a' account container        → container record (created, metadata)
//	's' account                  → account usage: containers, objects, bytes (merge operands)
//	's' account container        → container usage: objects, bytes (merge operands)
const (
	prefixEntry     = 'c'
	prefixContainer = 'a'
	prefixStats     = 's'
)

// containerBase is the prefix of the listing entries of a container.
func containerBase(account, container string) []byte {
	return binenc.AppendString(binenc.AppendString([]byte{prefixEntry}, account), container)
}

func entryKey(account, container, object string) []byte {
	return append(containerBase(account, container), object...)
}

// accountBase is the prefix of the container records of an account.
func accountBase(account string) []byte { return binenc.AppendString([]byte{prefixContainer}, account) }

func containerKey(account, container string) []byte {
	return append(accountBase(account), container...)
}

func astatsKey(account string) []byte { return binenc.AppendString([]byte{prefixStats}, account) }

func cstatsKey(account, container string) []byte {
	return binenc.AppendString(astatsKey(account), container)
}

// successor returns the smallest key greater than every key that starts with p, or nil when
// there is none (p is all 0xff).
func successor(p []byte) []byte {
	s := slices.Clone(p)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}

var errBadValue = errors.New("malformed value")

// Values start with a version byte so that their encoding can evolve.
const valueVersion = 1

// encodeEntry: version, timestamp, size, etag, content type.
func encodeEntry(e meta.ListEntry) []byte {
	b := make([]byte, 0, 24+len(e.ETag)+len(e.ContentType))
	b = append(b, valueVersion)
	b = binary.AppendUvarint(b, uint64(e.Timestamp))
	b = binary.AppendVarint(b, e.Size)
	b = binenc.AppendString(b, e.ETag)
	return binenc.AppendString(b, e.ContentType)
}

func decodeEntry(name string, v []byte) (meta.ListEntry, error) {
	if len(v) == 0 || v[0] != valueVersion {
		return meta.ListEntry{}, fmt.Errorf("index: entry %q: %w: %w", name, errBadValue, meta.ErrCorrupt)
	}
	r := binenc.Decoder{B: v[1:]}
	e := meta.ListEntry{Name: name}
	e.Timestamp = meta.Timestamp(r.Uvarint())
	e.Size = r.Varint()
	e.ETag = r.Str()
	e.ContentType = r.Str()
	if r.Err != nil {
		return meta.ListEntry{}, fmt.Errorf("index: entry %q: %w: %w", name, r.Err, meta.ErrCorrupt)
	}
	return e, nil
}

// encodeContainer: version, created, metadata (count, sorted key/value pairs).
func encodeContainer(c meta.Container) []byte {
	b := []byte{valueVersion}
	b = binary.AppendUvarint(b, uint64(c.Created))
	return binenc.AppendMap(b, c.Meta)
}

func decodeContainer(name string, v []byte) (meta.Container, error) {
	if len(v) == 0 || v[0] != valueVersion {
		return meta.Container{}, fmt.Errorf("index: container %q: %w: %w", name, errBadValue, meta.ErrCorrupt)
	}
	r := binenc.Decoder{B: v[1:]}
	c := meta.Container{Name: name}
	c.Created = meta.Timestamp(r.Uvarint())
	c.Meta = r.Map()
	if c.Meta == nil {
		c.Meta = map[string]string{}
	}
	if r.Err != nil {
		return meta.Container{}, fmt.Errorf("index: container %q: %w: %w", name, r.Err, meta.ErrCorrupt)
	}
	return c, nil
}

// Usage counters are vectors of zigzag varints; merge operands are deltas and merging sums them
// element-wise, so that concurrent writers to one container never read-modify-write a shared
// key.
func encodeCounters(v ...int64) []byte {
	b := make([]byte, 0, 3*binary.MaxVarintLen64)
	for _, x := range v {
		b = binary.AppendVarint(b, x)
	}
	return b
}

func decodeCounters(b []byte, into []int64) error {
	for i := 0; len(b) > 0; i++ {
		x, n := binary.Varint(b)
		if n <= 0 {
			return errBadValue
		}
		if i < len(into) {
			into[i] += x
		}
		b = b[n:]
	}
	return nil
}

// Merger must be passed as pebble.Options.Merger when opening a DB the index uses; it sums the
// usage counters.
var Merger = &pebble.Merger{
	Name: "cairn.usage.v1",
	Merge: func(key, value []byte) (pebble.ValueMerger, error) {
		m := &sumMerger{}
		return m, m.add(value)
	},
}

// sumMerger adds counter vectors; addition commutes, so older and newer operands are the same.
type sumMerger struct{ sum [3]int64 }

func (m *sumMerger) add(v []byte) error {
	if err := decodeCounters(v, m.sum[:]); err != nil {
		return fmt.Errorf("index: usage counter: %w", err)
	}
	return nil
}

func (m *sumMerger) MergeNewer(v []byte) error { return m.add(v) }
func (m *sumMerger) MergeOlder(v []byte) error { return m.add(v) }

func (m *sumMerger) Finish(bool) ([]byte, io.Closer, error) {
	return encodeCounters(m.sum[:]...), nil, nil
}
