package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cockroachdb/pebble/v2"

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

func appendLP(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// containerBase is the prefix of the listing entries of a container.
func containerBase(account, container string) []byte {
	return appendLP(appendLP([]byte{prefixEntry}, account), container)
}

func entryKey(account, container, object string) []byte {
	return append(containerBase(account, container), object...)
}

// accountBase is the prefix of the container records of an account.
func accountBase(account string) []byte { return appendLP([]byte{prefixContainer}, account) }

func containerKey(account, container string) []byte {
	return append(accountBase(account), container...)
}

func astatsKey(account string) []byte { return appendLP([]byte{prefixStats}, account) }

func cstatsKey(account, container string) []byte {
	return appendLP(astatsKey(account), container)
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

// reader decodes the primitives of a value, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBadValue
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errBadValue
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errBadValue
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// Values start with a version byte so that their encoding can evolve.
const valueVersion = 1

// encodeEntry: version, timestamp, size, etag, content type.
func encodeEntry(e meta.ListEntry) []byte {
	b := make([]byte, 0, 24+len(e.ETag)+len(e.ContentType))
	b = append(b, valueVersion)
	b = binary.AppendUvarint(b, uint64(e.Timestamp))
	b = binary.AppendVarint(b, e.Size)
	b = appendLP(b, e.ETag)
	return appendLP(b, e.ContentType)
}

func decodeEntry(name string, v []byte) (meta.ListEntry, error) {
	if len(v) == 0 || v[0] != valueVersion {
		return meta.ListEntry{}, fmt.Errorf("index: entry %q: %w: %w", name, errBadValue, meta.ErrCorrupt)
	}
	r := reader{b: v[1:]}
	e := meta.ListEntry{Name: name}
	e.Timestamp = meta.Timestamp(r.uvarint())
	e.Size = r.varint()
	e.ETag = r.str()
	e.ContentType = r.str()
	if r.err != nil {
		return meta.ListEntry{}, fmt.Errorf("index: entry %q: %w: %w", name, r.err, meta.ErrCorrupt)
	}
	return e, nil
}

// encodeContainer: version, created, metadata (count, sorted key/value pairs).
func encodeContainer(c meta.Container) []byte {
	b := []byte{valueVersion}
	b = binary.AppendUvarint(b, uint64(c.Created))
	keys := make([]string, 0, len(c.Meta))
	for k := range c.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendLP(appendLP(b, k), c.Meta[k])
	}
	return b
}

func decodeContainer(name string, v []byte) (meta.Container, error) {
	if len(v) == 0 || v[0] != valueVersion {
		return meta.Container{}, fmt.Errorf("index: container %q: %w: %w", name, errBadValue, meta.ErrCorrupt)
	}
	r := reader{b: v[1:]}
	c := meta.Container{Name: name, Meta: map[string]string{}}
	c.Created = meta.Timestamp(r.uvarint())
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		k := r.str()
		c.Meta[k] = r.str()
	}
	if r.err != nil {
		return meta.Container{}, fmt.Errorf("index: container %q: %w: %w", name, r.err, meta.ErrCorrupt)
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
