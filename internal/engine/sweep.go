package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// SweepStats counts what one pass of SweepTombstones did.
type SweepStats struct {
	Scanned   int64 // records visited
	Reclaimed int64 // tombstones removed
}

// SweepTombstones removes the tombstones older than before, visiting the device's records in
// key order. A tombstone must outlive every replica that might still hold the version it
// deleted (Swift keeps them for reclaim_age, a week by default), after which it is only a
// cost. pace is called before each record is looked at (a rate limiter; its error stops the
// pass). Each removal is checked under the name's lock against the current record, so a write
// that lands meanwhile is never lost.
func (e *Engine) SweepTombstones(ctx context.Context, before meta.Timestamp, pace func(context.Context) error) (SweepStats, error) {
	var st SweepStats
	if e.closed.Load() {
		return st, errClosed
	}
	it, err := e.cfg.DB.NewIter(&pebble.IterOptions{LowerBound: []byte{keyPrefix}, UpperBound: []byte{keyPrefix + 1}})
	if err != nil {
		return st, storageErr("sweeping", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := pace(ctx); err != nil {
			return st, err
		}
		st.Scanned++
		// A tombstone is a few dozen bytes; a value large enough to sit in a blob file holds
		// object bytes, and is not read at all.
		if lv := it.LazyValue(); lv.Len() > 256 {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return st, storageErr("sweeping", err)
		}
		rec, err := decodeRecord(bytes.Clone(v))
		if err != nil || !rec.obj.Deleted || rec.obj.Timestamp >= before {
			continue
		}
		if err := e.CheckDeleteSpace(); err != nil {
			return st, err
		}
		gone, err := e.reclaim(bytes.Clone(it.Key()), rec.obj.Timestamp)
		if err != nil {
			return st, err
		}
		if gone {
			st.Reclaimed++
		}
	}
	return st, storageErr("sweeping", it.Error())
}

// reclaim removes the tombstone at ts under key if it is still the current record.
func (e *Engine) reclaim(key []byte, ts meta.Timestamp) (bool, error) {
	mu := e.lockFor(key)
	mu.Lock()
	defer mu.Unlock()
	cur, _, err := e.load(key)
	if err != nil || cur == nil || !cur.obj.Deleted || cur.obj.Timestamp != ts {
		return false, nil // changed, or unreadable: not ours to remove
	}
	// Not synced: a removal lost in a crash is redone by the next pass.
	b := e.cfg.DB.NewBatch()
	defer b.Close()
	if err := errors.Join(b.Delete(key, nil), e.unplaceInBatch(b, key)); err != nil {
		return false, storageErr(fmt.Sprintf("reclaiming tombstone %q", key), err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return false, storageErr(fmt.Sprintf("reclaiming tombstone %q", key), err)
	}
	return true, nil
}

// SweepDataFiles removes data files whose record no longer points at them. Every replacement
// of a record drops its old file's key in the same batch, except one: a record that did not
// decode (corrupt) is replaced without knowing which file it held, and that file's key is left
// behind. This pass finds such keys (the record under the key they name points elsewhere, or is
// gone) and removes them and their files. pace is called before each key is looked at.
func (e *Engine) SweepDataFiles(ctx context.Context, pace func(context.Context) error) (removed int64, err error) {
	if e.closed.Load() {
		return 0, errClosed
	}
	it, err := e.cfg.DB.NewIter(&pebble.IterOptions{LowerBound: []byte{fileKeyPrefix}, UpperBound: []byte{fileKeyPrefix + 1}})
	if err != nil {
		return 0, storageErr("sweeping data files", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := pace(ctx); err != nil {
			return removed, err
		}
		file, key := string(it.Key()[1:]), bytes.Clone(it.Value())
		if err := e.CheckDeleteSpace(); err != nil {
			return removed, err
		}
		gone, err := e.dropLeakedFile(file, key)
		if err != nil {
			return removed, err
		}
		if gone {
			removed++
		}
	}
	return removed, storageErr("sweeping data files", it.Error())
}

// dropLeakedFile removes file and its key if the record under key does not point at it.
func (e *Engine) dropLeakedFile(file string, key []byte) (bool, error) {
	mu := e.lockFor(key)
	mu.Lock()
	defer mu.Unlock()
	cur, _, err := e.load(key)
	if err != nil || (cur != nil && cur.isFile && cur.file == file) {
		return false, nil // in use, or unreadable (a flagged version keeps what it has)
	}
	// Not synced: a removal lost in a crash is redone by the next pass.
	if err := e.cfg.DB.Delete(fileKey(file), pebble.NoSync); err != nil {
		return false, storageErr(fmt.Sprintf("dropping the key of leaked file %q", file), err)
	}
	e.removeData(file)
	e.log.Info("sweeper removed a data file no record points at", "file", file, "key", fmt.Sprintf("%q", key))
	return true, nil
}
