package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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
//	'c' account container object → listing entry, or listing tombstone (deleted at)
//	'a' account container        → container record (created, metadata, where its account row is)
//	's' account                  → account usage: containers, objects, bytes (merge operands)
//	's' account container        → container usage: objects, bytes (merge operands)
//	'r' account container        → account row of a container (put/delete timestamps, usage)
//	'x' timestamp(8, big-endian) listing-entry-key → a listing tombstone, by age (the sweeper's)
//	"!index-version"             → the layout version of this index (see upgrade.go)
const (
	prefixEntry     = 'c'
	prefixContainer = 'a'
	prefixStats     = 's'
	prefixRow       = 'r'
	prefixTombAge   = 'x'
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

// rowBase is the prefix of the account rows of an account.
func rowBase(account string) []byte { return binenc.AppendString([]byte{prefixRow}, account) }

func rowKey(account, container string) []byte { return append(rowBase(account), container...) }

// tombAgeKey indexes the listing tombstone under entry by its timestamp, so that the sweeper
// finds the old ones without reading every entry.
func tombAgeKey(ts meta.Timestamp, entry []byte) []byte {
	k := make([]byte, 0, 9+len(entry))
	k = append(k, prefixTombAge)
	k = binary.BigEndian.AppendUint64(k, uint64(ts))
	return append(k, entry...)
}

// parseEntryKey splits a listing entry key into its names.
func parseEntryKey(k []byte) (account, container, object string, err error) {
	if len(k) == 0 || k[0] != prefixEntry {
		return "", "", "", fmt.Errorf("index: entry key %q: %w: %w", k, errBadValue, meta.ErrCorrupt)
	}
	d := binenc.Decoder{B: k[1:]}
	account, container = d.Str(), d.Str()
	if d.Err != nil {
		return "", "", "", fmt.Errorf("index: entry key %q: %w: %w", k, d.Err, meta.ErrCorrupt)
	}
	return account, container, string(d.B), nil
}

// parseContainerKey splits a container record key into its names.
func parseContainerKey(k []byte) (account, container string, err error) {
	if len(k) == 0 || k[0] != prefixContainer {
		return "", "", fmt.Errorf("index: container key %q: %w: %w", k, errBadValue, meta.ErrCorrupt)
	}
	d := binenc.Decoder{B: k[1:]}
	account = d.Str()
	if d.Err != nil {
		return "", "", fmt.Errorf("index: container key %q: %w: %w", k, d.Err, meta.ErrCorrupt)
	}
	return account, string(d.B), nil
}

// parseRowKey splits an account row key into its names.
func parseRowKey(k []byte) (account, container string, err error) {
	if len(k) == 0 || k[0] != prefixRow {
		return "", "", fmt.Errorf("index: account row key %q: %w: %w", k, errBadValue, meta.ErrCorrupt)
	}
	d := binenc.Decoder{B: k[1:]}
	account = d.Str()
	if d.Err != nil {
		return "", "", fmt.Errorf("index: account row key %q: %w: %w", k, d.Err, meta.ErrCorrupt)
	}
	return account, string(d.B), nil
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

// A listing key holds either an entry (valueVersion) or a listing tombstone (tombstoneValue):
// the name was deleted at a timestamp, and an older entry must not list it again.
const tombstoneValue = 2

// Listing rows (entries, listing tombstones and account rows) are sealed: their first byte, the
// kind, carries flagSealed, and a CRC32C of the key and of the value before it ends the value,
// so that a flipped bit in a name, a size or an ETag is found rather than listed. The key is
// covered too: a row is only right under its own key. Rows written before sealing existed
// carry no flag and decode as they always did, unchecked; the auditor seals them (audit.go).
// (A flip of the flag bit itself makes a sealed row look unsealed; its trailing checksum then
// reads as fields, which the decoder of an entry or a row refuses as trailing bytes.)
const flagSealed = 0x80

// sealLen is the length of the checksum that ends a sealed row.
const sealLen = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func rowCRC(key, v []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, v)
}

// seal marks v (a row's unsealed value, which seal may change) sealed and appends its
// checksum under key.
func seal(key, v []byte) []byte {
	v[0] |= flagSealed
	return binary.LittleEndian.AppendUint32(v, rowCRC(key, v))
}

// openRow verifies a listing row and returns its kind and its fields (what follows the kind,
// without the checksum). An unsealed row (sealed false) is returned as it is.
func openRow(key, v []byte) (kind byte, fields []byte, sealed bool, err error) {
	if len(v) == 0 {
		return 0, nil, false, fmt.Errorf("index: row %q is empty: %w", key, meta.ErrCorrupt)
	}
	if v[0]&flagSealed == 0 {
		return v[0], v[1:], false, nil
	}
	if len(v) < 1+sealLen {
		return 0, nil, false, fmt.Errorf("index: row %q of %d bytes: %w", key, len(v), meta.ErrCorrupt)
	}
	body := v[:len(v)-sealLen]
	if want, got := binary.LittleEndian.Uint32(v[len(body):]), rowCRC(key, body); want != got {
		return 0, nil, false, fmt.Errorf("index: row %q checksum %08x, want %08x: %w", key, got, want, meta.ErrCorrupt)
	}
	return v[0] &^ flagSealed, body[1:], true, nil
}

// entryFields is an entry's unsealed value: version, timestamp, size, etag, content type, and
// the Last-Modified when it is not the timestamp (a field entries without one do not carry).
func entryFields(e meta.ListEntry) []byte {
	b := make([]byte, 0, 34+len(e.ETag)+len(e.ContentType)+sealLen)
	b = append(b, valueVersion)
	b = binary.AppendUvarint(b, uint64(e.Timestamp))
	b = binary.AppendVarint(b, e.Size)
	b = binenc.AppendString(b, e.ETag)
	b = binenc.AppendString(b, e.ContentType)
	if e.Modified != 0 {
		b = binary.AppendUvarint(b, uint64(e.Modified))
	}
	return b
}

// encodeEntry is the sealed value of an entry under key.
func encodeEntry(key []byte, e meta.ListEntry) []byte { return seal(key, entryFields(e)) }

// isTombstone reports whether a listing value is a tombstone: the one test a listing makes of
// each key before decoding it, so that containers without deletes pay nothing more.
func isTombstone(v []byte) bool { return len(v) > 0 && v[0]&^flagSealed == tombstoneValue }

// tombstoneFields is a tombstone's unsealed value: tombstoneValue, timestamp of the delete.
func tombstoneFields(ts meta.Timestamp) []byte {
	return binary.AppendUvarint(make([]byte, 1, 1+binary.MaxVarintLen64+sealLen), uint64(ts))
}

// encodeTombstone is the sealed value of a listing tombstone under key.
func encodeTombstone(key []byte, ts meta.Timestamp) []byte {
	v := tombstoneFields(ts)
	v[0] = tombstoneValue
	return seal(key, v)
}

func decodeTombstone(key []byte, name string, v []byte) (meta.Timestamp, error) {
	kind, fields, _, err := openRow(key, v)
	if err != nil {
		return 0, err
	}
	if kind != tombstoneValue {
		return 0, fmt.Errorf("index: tombstone %q: %w: %w", name, errBadValue, meta.ErrCorrupt)
	}
	r := binenc.Decoder{B: fields}
	ts := meta.Timestamp(r.Uvarint())
	if r.Err == nil && len(r.B) != 0 {
		r.Err = fmt.Errorf("%d trailing bytes", len(r.B))
	}
	if r.Err != nil {
		return 0, fmt.Errorf("index: tombstone %q: %w: %w", name, r.Err, meta.ErrCorrupt)
	}
	return ts, nil
}

func decodeEntry(key []byte, name string, v []byte) (meta.ListEntry, error) {
	kind, fields, _, err := openRow(key, v)
	if err != nil {
		return meta.ListEntry{}, err
	}
	if kind != valueVersion {
		return meta.ListEntry{}, fmt.Errorf("index: entry %q: %w: %w", name, errBadValue, meta.ErrCorrupt)
	}
	r := binenc.Decoder{B: fields}
	e := meta.ListEntry{Name: name}
	e.Timestamp = meta.Timestamp(r.Uvarint())
	e.Size = r.Varint()
	e.ETag = r.Str()
	e.ContentType = r.Str()
	if r.Err == nil && len(r.B) != 0 {
		e.Modified = meta.Timestamp(r.Uvarint())
	}
	if r.Err == nil && len(r.B) != 0 {
		r.Err = fmt.Errorf("%d trailing bytes", len(r.B))
	}
	if r.Err != nil {
		return meta.ListEntry{}, fmt.Errorf("index: entry %q: %w: %w", name, r.Err, meta.ErrCorrupt)
	}
	return e, nil
}

// containerRecord is what the container server keeps of a container: what meta.Container
// carries (its usage aside), and where the account's row for it lives.
type containerRecord struct {
	meta.Container
	// localRow: the account row is on this device and follows the container's usage in the
	// batches that change it (see account.go).
	localRow bool
	// target names the account replica to report to when the row is elsewhere (opaque to the
	// index; empty: none); reported is the usage last reported there.
	target   []byte
	reported [2]int64
}

// Container record versions: 1 (before account rows: every container's account listing was on
// its own device) and 2.
const containerVersion = 2

const flagLocalRow = 1 << 0

// encodeContainer: version, created, metadata (count, sorted key/value pairs), flags, target,
// reported objects and bytes.
func encodeContainer(c containerRecord) []byte {
	b := []byte{containerVersion}
	b = binary.AppendUvarint(b, uint64(c.Created))
	b = binenc.AppendMap(b, c.Meta)
	var flags byte
	if c.localRow {
		flags |= flagLocalRow
	}
	b = append(b, flags)
	b = binenc.AppendString(b, string(c.target))
	b = binary.AppendVarint(b, c.reported[0])
	return binary.AppendVarint(b, c.reported[1])
}

func decodeContainer(name string, v []byte) (containerRecord, error) {
	if len(v) == 0 || (v[0] != valueVersion && v[0] != containerVersion) {
		return containerRecord{}, fmt.Errorf("index: container %q: %w: %w", name, errBadValue, meta.ErrCorrupt)
	}
	r := binenc.Decoder{B: v[1:]}
	c := containerRecord{Container: meta.Container{Name: name}}
	c.Created = meta.Timestamp(r.Uvarint())
	c.Meta = r.Map()
	if c.Meta == nil {
		c.Meta = map[string]string{}
	}
	if v[0] == valueVersion {
		c.localRow = true // see upgrade.go
	} else {
		flags := r.Bytes(1)
		c.localRow = len(flags) == 1 && flags[0]&flagLocalRow != 0
		if t := r.Str(); t != "" {
			c.target = []byte(t)
		}
		c.reported[0], c.reported[1] = r.Varint(), r.Varint()
	}
	if r.Err != nil {
		return containerRecord{}, fmt.Errorf("index: container %q: %w: %w", name, r.Err, meta.ErrCorrupt)
	}
	return c, nil
}

// accountRow is an account's row for a container (meta.ContainerRow) as this device keeps it.
type accountRow struct {
	meta.ContainerRow
	// linked: the container is on this device too and its usage is the container's own
	// counters, read live (the stored counts are then unused).
	linked bool
}

const flagLinked = 1 << 0

// rowFields is an account row's unsealed value: version, flags, put and delete timestamps,
// objects, bytes.
func rowFields(r accountRow) []byte {
	b := make([]byte, 0, 2+4*binary.MaxVarintLen64+sealLen)
	b = append(b, valueVersion)
	var flags byte
	if r.linked {
		flags |= flagLinked
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(r.PutTimestamp))
	b = binary.AppendUvarint(b, uint64(r.DeleteTimestamp))
	b = binary.AppendVarint(b, r.ObjectCount)
	return binary.AppendVarint(b, r.BytesUsed)
}

// encodeRow is the sealed value of an account row under key.
func encodeRow(key []byte, r accountRow) []byte { return seal(key, rowFields(r)) }

func decodeRow(key []byte, name string, v []byte) (accountRow, error) {
	kind, fields, _, err := openRow(key, v)
	if err != nil {
		return accountRow{}, err
	}
	if kind != valueVersion || len(fields) < 1 {
		return accountRow{}, fmt.Errorf("index: account row %q: %w: %w", name, errBadValue, meta.ErrCorrupt)
	}
	r := binenc.Decoder{B: fields[1:]}
	row := accountRow{ContainerRow: meta.ContainerRow{Name: name}, linked: fields[0]&flagLinked != 0}
	row.PutTimestamp = meta.Timestamp(r.Uvarint())
	row.DeleteTimestamp = meta.Timestamp(r.Uvarint())
	row.ObjectCount, row.BytesUsed = r.Varint(), r.Varint()
	if r.Err == nil && len(r.B) != 0 {
		r.Err = fmt.Errorf("%d trailing bytes", len(r.B))
	}
	if r.Err != nil {
		return accountRow{}, fmt.Errorf("index: account row %q: %w: %w", name, r.Err, meta.ErrCorrupt)
	}
	return row, nil
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
