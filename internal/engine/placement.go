package engine

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// The placement index: every record (tombstones included) has a second key, 'h' + the name's
// 64-bit placement hash (big-endian) + its object key, holding the version's timestamp and
// whether it is a tombstone. The placement hash is the top of the ring's name hash, so every
// partition, of any partition power, is one contiguous range of these keys: replication
// enumerates and compares a partition without reading a record (the object keys stay in name
// order, see record.go, for the reasons given there). The key is written in the batch that
// writes the record and removed with it, so the two never disagree after a crash.
const placementPrefix = 'h'

// placementIDKey holds the identity of the hash the placement keys were computed with (key
// "h" alone sorts before every placement key). A device opened with another hash (a hash path
// prefix or suffix set differently) rebuilds its placement keys rather than enumerate
// partitions wrongly.
var placementIDKey = []byte{placementPrefix}

// placementVersion is part of the identity: bump it when the key or value layout changes.
const placementVersion = "2"

// Version is a version of a name as the placement index holds it: enough to compare replicas
// of a partition without reading records.
type Version struct {
	Name      meta.ObjectName
	Hash      uint64 // the name's placement hash
	Timestamp meta.Timestamp
	Deleted   bool
	// Corrupt: the version is flagged corrupt here (it needs a good copy from a replica).
	Corrupt bool
}

// DefaultNameHash is the placement hash of a ring with no hash path prefix or suffix: the top
// 64 bits of md5("/account/container/object"), as the ring hashes names.
func DefaultNameHash(name meta.ObjectName) uint64 {
	h := md5.New()
	for _, part := range [...]string{name.Account, name.Container, name.Object} {
		h.Write([]byte{'/'})
		h.Write([]byte(part))
	}
	var sum [md5.Size]byte
	return binary.BigEndian.Uint64(h.Sum(sum[:0]))
}

func placementKey(dst []byte, hash uint64, objKey []byte) []byte {
	dst = append(dst, placementPrefix)
	dst = binary.BigEndian.AppendUint64(dst, hash)
	return append(dst, objKey...)
}

func placementValue(ts meta.Timestamp, deleted bool) []byte {
	v := binary.AppendUvarint(make([]byte, 0, 12), uint64(ts))
	if deleted {
		return append(v, 1)
	}
	return append(v, 0)
}

func decodePlacement(k, v []byte) (Version, error) {
	var pv Version
	if len(k) < 10 || k[0] != placementPrefix {
		return pv, fmt.Errorf("engine: bad placement key %q: %w", k, meta.ErrCorrupt)
	}
	pv.Hash = binary.BigEndian.Uint64(k[1:9])
	name, err := parseKey(k[9:])
	if err != nil {
		return pv, err
	}
	pv.Name = name
	ts, n := binary.Uvarint(v)
	if n <= 0 || len(v) != n+1 {
		return pv, fmt.Errorf("engine: bad placement value for %q: %w", k, meta.ErrCorrupt)
	}
	pv.Timestamp, pv.Deleted = meta.Timestamp(ts), v[n] == 1
	return pv, nil
}

// placeInBatch adds to b the placement key of the record rec under key.
func (e *Engine) placeInBatch(b *pebble.Batch, key []byte, rec *record) error {
	name, err := parseKey(key)
	if err != nil {
		return err
	}
	return b.Set(placementKey(nil, e.cfg.NameHash(name), key), placementValue(rec.obj.Timestamp, rec.obj.Deleted), nil)
}

// unplaceInBatch adds to b the removal of key's placement key.
func (e *Engine) unplaceInBatch(b *pebble.Batch, key []byte) error {
	name, err := parseKey(key)
	if err != nil {
		return err
	}
	return b.Delete(placementKey(nil, e.cfg.NameHash(name), key), nil)
}

// checkPlacement rebuilds the placement keys when they were computed with another hash, or
// never (a device written before they existed): one pass over the records, in batches.
func (e *Engine) checkPlacement() error {
	id := []byte(placementVersion + ":" + e.cfg.NameHashID)
	v, closer, err := e.cfg.DB.Get(placementIDKey)
	switch {
	case err == nil:
		same := bytes.Equal(v, id)
		closer.Close()
		if same {
			return nil
		}
	case !errors.Is(err, pebble.ErrNotFound):
		return storageErr("reading the placement index's identity", err)
	}
	e.log.Info("building the placement index of the device's objects")
	if err := e.cfg.DB.DeleteRange([]byte{placementPrefix, 0}, []byte{placementPrefix + 1}, pebble.NoSync); err != nil {
		return storageErr("clearing the placement index", err)
	}
	it, err := e.cfg.DB.NewIter(&pebble.IterOptions{LowerBound: []byte{keyPrefix}, UpperBound: []byte{keyPrefix + 1}})
	if err != nil {
		return storageErr("building the placement index", err)
	}
	defer it.Close()
	b := e.cfg.DB.NewBatch()
	defer func() { b.Close() }()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return storageErr("building the placement index", err)
		}
		rec, err := decodeRecord(bytes.Clone(v))
		if err != nil {
			// A record that does not decode stands for a version nobody can read: it is
			// placed as the oldest possible version, so that any replica's copy wins.
			rec = &record{obj: meta.Object{Timestamp: 0}}
		}
		if err := e.placeInBatch(b, bytes.Clone(it.Key()), rec); err != nil {
			return storageErr("building the placement index", err)
		}
		if n++; n%10000 == 0 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return storageErr("building the placement index", err)
			}
			b.Close()
			b = e.cfg.DB.NewBatch()
		}
	}
	if err := it.Error(); err != nil {
		return storageErr("building the placement index", err)
	}
	if err := b.Set(placementIDKey, id, nil); err != nil {
		return storageErr("building the placement index", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return storageErr("building the placement index", err)
	}
	e.log.Info("placement index built", "objects", n)
	return nil
}

// ScanPlacement calls fn for every version whose placement hash is in [lo, hi] (inclusive), in
// hash order. fn's error stops the scan and is returned.
func (e *Engine) ScanPlacement(ctx context.Context, lo, hi uint64, fn func(Version) error) error {
	if e.closed.Load() {
		return errClosed
	}
	opts := &pebble.IterOptions{LowerBound: placementKey(nil, lo, nil)}
	if hi == ^uint64(0) {
		opts.UpperBound = []byte{placementPrefix + 1}
	} else {
		opts.UpperBound = placementKey(nil, hi+1, nil)
	}
	it, err := e.cfg.DB.NewIter(opts)
	if err != nil {
		return storageErr("scanning placement", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		v, err := decodePlacement(it.Key(), it.Value())
		if err != nil {
			e.log.Warn("skipping a bad placement key", "err", err)
			continue
		}
		v.Corrupt = e.isFlagged(it.Key()[9:])
		if err := fn(v); err != nil {
			return err
		}
	}
	return storageErr("scanning placement", it.Error())
}

// NextPlacement returns the smallest placement hash at or above from that any version has, and
// false when there is none: replication uses it to visit only the partitions a device holds.
func (e *Engine) NextPlacement(from uint64) (uint64, bool, error) {
	if e.closed.Load() {
		return 0, false, errClosed
	}
	it, err := e.cfg.DB.NewIter(&pebble.IterOptions{LowerBound: placementKey(nil, from, nil), UpperBound: []byte{placementPrefix + 1}})
	if err != nil {
		return 0, false, storageErr("scanning placement", err)
	}
	defer it.Close()
	if !it.First() {
		return 0, false, storageErr("scanning placement", it.Error())
	}
	k := it.Key()
	if len(k) < 9 {
		return 0, false, fmt.Errorf("engine: bad placement key %q: %w", k, meta.ErrCorrupt)
	}
	return binary.BigEndian.Uint64(k[1:9]), true, nil
}

// Evict removes a name's version at ts from this device entirely (record, data file, placement
// key; no tombstone), if it is still the current one: what replication does with a handoff's
// copy once the primaries hold it. It reports whether it removed anything.
func (e *Engine) Evict(ctx context.Context, name meta.ObjectName, ts meta.Timestamp) (bool, error) {
	if e.closed.Load() {
		return false, errClosed
	}
	key := objectKey(nil, name)
	mu := e.lockFor(key)
	mu.Lock()
	defer mu.Unlock()
	cur, _, err := e.load(key)
	if err != nil || cur == nil || cur.obj.Timestamp != ts {
		return false, nil // changed, or unreadable: not this version to remove
	}
	b := e.cfg.DB.NewBatch()
	defer b.Close()
	errs := []error{b.Delete(key, nil), e.unplaceInBatch(b, key)}
	if cur.isFile {
		errs = append(errs, b.Delete(fileKey(cur.file), nil))
	}
	if cur.apart {
		errs = append(errs, b.Delete(segmentsKey(key), nil))
	}
	unflag, err := e.clearFlag(b, key)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return false, storageErr("evicting", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return false, storageErr("evicting", err)
	}
	if unflag {
		e.forgetFlag(key)
	}
	if cur.isFile {
		e.removeData(cur.file)
	}
	return true, nil
}
