package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// The rows of listings as replicas compare and exchange them: a container's rows (object
// entries and listing tombstones) and an account's (container rows). Replicas compare a digest
// of all of a listing's rows (the XOR of one digest per row, so that it does not depend on the
// order rows are visited in), then, for a large listing, digests of buckets of its rows, then
// the versions of the rows in the buckets that differ.

// Row is a row of a container's listing: an object entry, or a listing tombstone (Deleted, with
// only Entry.Name and Entry.Timestamp set).
type Row struct {
	Entry   meta.ListEntry
	Deleted bool
}

// RowDigests are the digests of a listing's rows: of all of them, and by bucket.
type RowDigests struct {
	Total   uint64
	Count   int
	Buckets map[uint32]uint64 // nil unless buckets were asked for
}

func (d *RowDigests) add(name string, h uint64, bucket func(string) uint32) {
	d.Total ^= h
	d.Count++
	if bucket != nil {
		if d.Buckets == nil {
			d.Buckets = map[uint32]uint64{}
		}
		d.Buckets[bucket(name)] ^= h
	}
}

// rowDigest is one row's contribution: its name and what decides between two rows of the name.
func rowDigest(name string, stamps ...uint64) uint64 {
	h := fnv.New64a()
	var buf [binary.MaxVarintLen64]byte
	h.Write(buf[:binary.PutUvarint(buf[:], uint64(len(name)))])
	h.Write([]byte(name))
	for _, s := range stamps {
		h.Write(buf[:binary.PutUvarint(buf[:], s)])
	}
	return h.Sum64()
}

func (r Row) digest() uint64 {
	deleted := uint64(0)
	if r.Deleted {
		deleted = 1
	}
	return rowDigest(r.Entry.Name, uint64(r.Entry.Timestamp), deleted)
}

// accountRowDigest leaves the usage out: replicas of an account take a container's usage from
// its replicas' reports, and replication only carries rows a replica lacks or holds with older
// timestamps (see WantAccountRows), so a usage difference is nothing to exchange.
func accountRowDigest(r meta.ContainerRow) uint64 {
	return rowDigest(r.Name, uint64(r.PutTimestamp), uint64(r.DeleteTimestamp))
}

// scanFrom calls fn with each key under base whose name (the rest of the key) is after after,
// in order, with the key and its value, until fn says stop or fails.
func (ix *Index) scanFrom(ctx context.Context, base []byte, after string, fn func(key []byte, name string, v []byte) (stop bool, err error)) error {
	lower := base
	if after != "" {
		lower = append(append([]byte(nil), base...), after+"\x00"...)
	}
	return ix.iterate(ctx, lower, successor(base), "listing rows", func(k, v []byte) (bool, error) {
		return fn(k, string(k[len(base):]), v)
	})
}

// iterate calls fn with every key in [lower, upper) and its value (valid during the call), in
// order, until fn says stop or fails; what names the scan in errors.
func (ix *Index) iterate(ctx context.Context, lower, upper []byte, what string, fn func(k, v []byte) (stop bool, err error)) error {
	it, err := ix.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return storageErr(what, err)
	}
	defer it.Close()
	for valid, n := it.First(), 0; valid; valid, n = it.Next(), n+1 {
		if n%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return storageErr(what, err)
		}
		if stop, err := fn(it.Key(), v); err != nil || stop {
			return err
		}
	}
	return storageErr(what, it.Error())
}

// decodeRowValue decodes a container listing's value: an entry or a listing tombstone.
func decodeRowValue(key []byte, name string, v []byte) (Row, error) {
	if isTombstone(v) {
		ts, err := decodeTombstone(key, name, v)
		return Row{Entry: meta.ListEntry{Name: name, Timestamp: ts}, Deleted: true}, err
	}
	e, err := decodeEntry(key, name, v)
	return Row{Entry: e}, err
}

// ContainerRowDigests returns the digests of a container's rows on this device, by the buckets
// bucket puts names in (nil: no buckets).
func (ix *Index) ContainerRowDigests(ctx context.Context, account, container string, bucket func(string) uint32) (RowDigests, error) {
	var d RowDigests
	err := ix.scanFrom(ctx, containerBase(account, container), "", func(key []byte, name string, v []byte) (bool, error) {
		r, err := decodeRowValue(key, name, v)
		if err != nil {
			ix.log.Warn("an unreadable listing row is left out of replication", "account", account, "container", container, "err", err)
			return false, nil
		}
		d.add(name, r.digest(), bucket)
		return false, nil
	})
	return d, err
}

// ContainerRows returns up to limit rows of a container after the name after, in name order,
// that keep accepts (nil: all); more says the limit stopped the scan.
func (ix *Index) ContainerRows(ctx context.Context, account, container, after string, limit int, keep func(string) bool) (rows []Row, more bool, err error) {
	err = ix.scanFrom(ctx, containerBase(account, container), after, func(key []byte, name string, v []byte) (bool, error) {
		if keep != nil && !keep(name) {
			return false, nil
		}
		if len(rows) == limit {
			more = true
			return true, nil
		}
		r, err := decodeRowValue(key, name, v)
		if err != nil {
			return false, nil // left out, as by ContainerRowDigests
		}
		rows = append(rows, r)
		return false, nil
	})
	return rows, more, err
}

// WantContainerRows returns the indexes of the rows this device's listing would change for, by
// UpdateListing's rules: an entry newer than what is listed and than the name's listing
// tombstone, or a tombstone newer than the tombstone and not older than the entry.
func (ix *Index) WantContainerRows(ctx context.Context, account, container string, rows []Row) ([]int, error) {
	var want []int
	for i, r := range rows {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		prev, deletedAt, unreadable, err := ix.listed(account, container, r.Entry.Name)
		if err != nil {
			return nil, err
		}
		ts := r.Entry.Timestamp
		var takes bool
		switch {
		case unreadable: // this device's row is bad: a replica's replaces it
			takes = true
		case r.Deleted:
			takes = deletedAt < ts && (prev == nil || prev.Timestamp <= ts)
		default:
			takes = deletedAt < ts && (prev == nil || prev.Timestamp < ts)
		}
		if takes {
			want = append(want, i)
		}
	}
	return want, nil
}

// EvictContainerRow adds to b the removal of a row of a handoff's listing (no tombstone left),
// if the row is still r, and the usage change it makes; it reports whether it removes it. The
// caller holds the object's name locked and the usage hold, as for PutEntry.
func (ix *Index) EvictContainerRow(b *pebble.Batch, account, container string, r Row) (bool, error) {
	prev, deletedAt, unreadable, err := ix.listed(account, container, r.Entry.Name)
	if err != nil || unreadable {
		return false, err // an unreadable row is not the row that was sent: the auditor's
	}
	key := entryKey(account, container, r.Entry.Name)
	switch {
	case r.Deleted && deletedAt == r.Entry.Timestamp:
		err = errors.Join(b.Delete(key, nil), b.Delete(tombAgeKey(deletedAt, key), nil))
	case !r.Deleted && prev != nil && prev.Timestamp == r.Entry.Timestamp:
		if err := b.Delete(key, nil); err != nil {
			return false, fmt.Errorf("index: evict row: %w", err)
		}
		err = ix.addUsage(b, account, container, -1, -prev.Size)
	default:
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("index: evict row: %w", err)
	}
	return true, nil
}

// accountRowOf returns a row as its account's listing shows it: a linked row with its
// container's usage.
func (ix *Index) accountRowOf(account string, r accountRow) (meta.ContainerRow, error) {
	if r.linked && !r.Deleted() {
		u, err := ix.counters(cstatsKey(account, r.Name), 2)
		if err != nil {
			return meta.ContainerRow{}, err
		}
		r.ObjectCount, r.BytesUsed = u[0], u[1]
	}
	return r.ContainerRow, nil
}

// AccountRowDigests returns the digests of an account's rows on this device, by the buckets
// bucket puts names in (nil: no buckets).
func (ix *Index) AccountRowDigests(ctx context.Context, account string, bucket func(string) uint32) (RowDigests, error) {
	var d RowDigests
	err := ix.scanFrom(ctx, rowBase(account), "", func(key []byte, name string, v []byte) (bool, error) {
		r, err := decodeRow(key, name, v)
		if err != nil {
			ix.log.Warn("an unreadable account row is left out of replication", "account", account, "err", err)
			return false, nil
		}
		d.add(name, accountRowDigest(r.ContainerRow), bucket)
		return false, nil
	})
	return d, err
}

// AccountRows returns up to limit rows of an account after the name after, in name order, that
// keep accepts (nil: all), each with the usage the account's listing shows; more says the limit
// stopped the scan.
func (ix *Index) AccountRows(ctx context.Context, account, after string, limit int, keep func(string) bool) (rows []meta.ContainerRow, more bool, err error) {
	err = ix.scanFrom(ctx, rowBase(account), after, func(key []byte, name string, v []byte) (bool, error) {
		if keep != nil && !keep(name) {
			return false, nil
		}
		if len(rows) == limit {
			more = true
			return true, nil
		}
		r, err := decodeRow(key, name, v)
		if err != nil {
			return false, nil
		}
		row, err := ix.accountRowOf(account, r)
		if err != nil {
			return true, err
		}
		rows = append(rows, row)
		return false, nil
	})
	return rows, more, err
}

// WantAccountRows returns the indexes of the rows this device lacks or holds with an older put or
// delete timestamp.
func (ix *Index) WantAccountRows(ctx context.Context, account string, rows []meta.ContainerRow) ([]int, error) {
	var want []int
	for i, in := range rows {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		old, err := ix.row(account, in.Name)
		if err != nil {
			return nil, err
		}
		if old == nil || old.PutTimestamp < in.PutTimestamp || old.DeleteTimestamp < in.DeleteTimestamp {
			want = append(want, i)
		}
	}
	return want, nil
}

// MergeAccountRows merges rows into an account's listing as UpdateAccountRow does, with one sync
// for all of them.
func (ix *Index) MergeAccountRows(ctx context.Context, account string, rows []meta.ContainerRow) error {
	for _, r := range rows {
		if err := ix.updateAccountRow(ctx, account, r, pebble.NoSync); err != nil {
			return err
		}
	}
	return ix.Flush()
}

// Flush makes every write committed before it durable.
func (ix *Index) Flush() error {
	return storageErr("sync", ix.db.LogData(nil, pebble.Sync))
}

// EvictAccountRows removes the rows of a handoff's copy of an account that are still as given
// (timestamps and usage), and returns how many it removed. A linked row's container stops
// feeding this device's account totals (its replicas elsewhere report its usage).
func (ix *Index) EvictAccountRows(ctx context.Context, account string, rows []meta.ContainerRow) (int, error) {
	n := 0
	for _, want := range rows {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		gone, err := ix.evictAccountRow(account, want)
		if err != nil {
			return n, err
		}
		if gone {
			n++
		}
	}
	return n, ix.Flush()
}

func (ix *Index) evictAccountRow(account string, want meta.ContainerRow) (bool, error) {
	unlock := ix.lockRow(account, want.Name)
	old, err := ix.row(account, want.Name)
	if err != nil || old == nil {
		unlock()
		return false, err
	}
	if !old.linked {
		defer unlock()
		defer ix.HoldUsage()()
		return ix.evictRow(account, old, want)
	}
	unlock()
	// As updateLinkedRow: the container's record changes with the row.
	ix.containers.Lock()
	defer ix.containers.Unlock()
	defer ix.lockRow(account, want.Name)()
	defer ix.exclusiveUsage()()
	if old, err = ix.row(account, want.Name); err != nil || old == nil {
		return false, err
	}
	return ix.evictRow(account, old, want)
}

// evictRow removes old if it is still want, with its contribution to the account's totals; a
// linked row's container record stops saying so. The caller holds what evictAccountRow takes.
// A linked row's usage is left out of the comparison: it moves with every write into its
// container, and the container's other replicas report it to the primaries.
func (ix *Index) evictRow(account string, old *accountRow, want meta.ContainerRow) (bool, error) {
	cur, err := ix.accountRowOf(account, *old)
	if err != nil {
		return false, err
	}
	if old.linked {
		cur.ObjectCount, cur.BytesUsed = want.ObjectCount, want.BytesUsed
	}
	if cur != want {
		return false, nil
	}
	contrib, err := ix.contribution(account, old)
	if err != nil {
		return false, err
	}
	b := ix.db.NewBatch()
	defer b.Close()
	if err := b.Delete(rowKey(account, want.Name), nil); err != nil {
		return false, fmt.Errorf("index: evict account row: %w", err)
	}
	if contrib != [3]int64{} {
		key := astatsKey(account)
		if err := b.Merge(key, encodeCounters(-contrib[0], -contrib[1], -contrib[2]), nil); err != nil {
			return false, fmt.Errorf("index: evict account row: %w", err)
		}
		ix.noteOperand(key)
	}
	unlinked := false
	if old.linked {
		rec, err := ix.record(account, want.Name)
		if err != nil && !errors.Is(err, meta.ErrNotFound) {
			return false, err
		}
		if err == nil && rec.localRow {
			rec.localRow, unlinked = false, true
			if err := b.Set(containerKey(account, want.Name), encodeContainer(rec), nil); err != nil {
				return false, fmt.Errorf("index: evict account row: %w", err)
			}
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		if unlinked {
			ix.links.forget(cstatsKey(account, want.Name))
		}
		return false, storageErr("evict account row", err)
	}
	if unlinked {
		ix.links.set(cstatsKey(account, want.Name), false)
	}
	return true, nil
}

// EvictAccount removes what is left of a handoff's copy of an account once its rows are gone
// (its totals, zero by then); it reports false while a row remains.
func (ix *Index) EvictAccount(ctx context.Context, account string) (bool, error) {
	defer ix.exclusiveUsage()()
	empty := true
	err := ix.scanFrom(ctx, rowBase(account), "", func([]byte, string, []byte) (bool, error) {
		empty = false
		return true, nil
	})
	if err != nil || !empty {
		return false, err
	}
	return true, storageErr("evict account", ix.db.Delete(astatsKey(account), pebble.Sync))
}

// DetachContainer makes a handoff's copy of a container stop feeding account listings, before
// its rows are evicted: its account row here (if linked) keeps the usage it has now, and the
// stats pass stops reporting its usage elsewhere, which would otherwise fall to nothing as its
// rows leave. Its replicas on its primaries report for it.
func (ix *Index) DetachContainer(ctx context.Context, account, container string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.containers.Lock()
	defer ix.containers.Unlock()
	rec, err := ix.record(account, container)
	if errors.Is(err, meta.ErrNotFound) {
		return nil
	}
	if err != nil || (!rec.localRow && rec.target == nil) {
		return err
	}
	b := ix.db.NewBatch()
	defer b.Close()
	if rec.localRow {
		defer ix.lockRow(account, container)()
		defer ix.exclusiveUsage()()
		u, err := ix.counters(cstatsKey(account, container), 2)
		if err != nil {
			return err
		}
		row := meta.ContainerRow{Name: container, PutTimestamp: rec.Created, ObjectCount: u[0], BytesUsed: u[1]}
		if _, err := ix.putRow(b, account, row, unlink); err != nil {
			return err
		}
	}
	rec.localRow, rec.target = false, nil
	if err := b.Set(containerKey(account, container), encodeContainer(rec), nil); err != nil {
		return fmt.Errorf("index: detach container: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		ix.links.forget(cstatsKey(account, container))
		return storageErr("detach container", err)
	}
	ix.links.set(cstatsKey(account, container), false)
	return nil
}

// EvictContainer removes a handoff's copy of a container once its rows are gone, if its record
// is still the one of digest (Record.Digest): the record or tombstone, its usage and its state.
// It reports false while a row remains or when the record changed.
func (ix *Index) EvictContainer(ctx context.Context, account, container string, digest uint64) (bool, error) {
	ix.containers.Lock()
	defer ix.containers.Unlock()
	defer ix.exclusiveUsage()()
	empty := true
	err := ix.scanFrom(ctx, containerBase(account, container), "", func([]byte, string, []byte) (bool, error) {
		empty = false
		return true, nil
	})
	if err != nil || !empty {
		return false, err
	}
	rec, _, r, ok, err := ix.replica(account, container)
	if err != nil || (ok && r.Digest() != digest) || (rec != nil && rec.localRow) {
		return false, err
	}
	b := ix.db.NewBatch()
	defer b.Close()
	err = errors.Join(b.Delete(containerKey(account, container), nil), b.Delete(cstatsKey(account, container), nil),
		b.Delete(stateKey(account, container), nil))
	if err != nil {
		return false, fmt.Errorf("index: evict container: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		ix.links.forget(cstatsKey(account, container))
		return false, storageErr("evict container", err)
	}
	ix.links.set(cstatsKey(account, container), false)
	return true, nil
}

// Accounts calls fn with every account that has a row on this device, in name order, until fn
// fails: one seek per account.
func (ix *Index) Accounts(ctx context.Context, fn func(account string) error) error {
	it, err := ix.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: []byte{prefixRow}, UpperBound: []byte{prefixRow + 1}})
	if err != nil {
		return storageErr("listing accounts", err)
	}
	defer it.Close()
	for valid := it.First(); valid; {
		if err := ctx.Err(); err != nil {
			return err
		}
		account, _, err := parseContainerKey(append([]byte{prefixContainer}, it.Key()[1:]...))
		if err != nil {
			ix.log.Warn("skipping a malformed account row key", "err", err)
			valid = it.Next()
			continue
		}
		if err := fn(account); err != nil {
			return err
		}
		next := successor(rowBase(account))
		if next == nil {
			break
		}
		valid = it.SeekGE(next)
	}
	return storageErr("listing accounts", it.Error())
}
