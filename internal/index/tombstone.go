package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// SweepTombstones removes the listing tombstones older than before: a deleted row must outlive
// every replica that might still send an older PUT row for the name (Swift keeps them for
// reclaim_age), after which it only slows listings down. The tombstones are found by age ('x'
// keys), so a pass reads only what it removes. pace is called before each one (a rate limiter;
// its error stops the pass); lock locks the object's name against every writer of its listing
// entry while the tombstone is checked and removed, so that an entry written meanwhile is never
// lost.
func (ix *Index) SweepTombstones(ctx context.Context, before meta.Timestamp, pace func(context.Context) error,
	lock func(account, container, object string) (unlock func()),
) (reclaimed int64, err error) {
	upper := binary.BigEndian.AppendUint64([]byte{prefixTombAge}, uint64(max(before, 0)))
	it, err := ix.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: []byte{prefixTombAge}, UpperBound: upper})
	if err != nil {
		return 0, storageErr("sweeping listing tombstones", err)
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		if err := pace(ctx); err != nil {
			return reclaimed, err
		}
		ageKey := bytes.Clone(it.Key())
		if len(ageKey) < 9 {
			continue
		}
		ts := meta.Timestamp(binary.BigEndian.Uint64(ageKey[1:9]))
		gone, err := ix.reclaim(ageKey, ageKey[9:], ts, lock)
		if err != nil {
			return reclaimed, err
		}
		if gone {
			reclaimed++
		}
	}
	return reclaimed, storageErr("sweeping listing tombstones", it.Error())
}

// reclaim removes the listing tombstone at ts under entry, if it is still there, and its age
// key in any case (an age key whose tombstone was replaced is only left over).
func (ix *Index) reclaim(ageKey, entry []byte, ts meta.Timestamp, lock func(account, container, object string) func()) (bool, error) {
	account, container, object, err := parseEntryKey(entry)
	if err != nil {
		ix.log.Warn("dropping a malformed listing tombstone age key", "key", fmt.Sprintf("%q", ageKey), "err", err)
		return false, storageErr("sweeping listing tombstones", ix.db.Delete(ageKey, pebble.NoSync))
	}
	defer lock(account, container, object)()
	v, err := ix.get(entry)
	if err != nil {
		return false, err
	}
	b := ix.db.NewBatch()
	defer b.Close()
	gone := false
	if v != nil && isTombstone(v) {
		if at, err := decodeTombstone(entry, object, v); err == nil && at == ts {
			gone = true
			if err := b.Delete(entry, nil); err != nil {
				return false, storageErr("sweeping listing tombstones", err)
			}
		}
	}
	// Not synced: a removal lost in a crash is redone by the next pass.
	err = errors.Join(b.Delete(ageKey, nil), b.Commit(pebble.NoSync))
	return gone, storageErr("sweeping listing tombstones", err)
}
