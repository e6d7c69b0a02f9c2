package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/index"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// The listings of a device as the container and account replicators see them
// (nodeclient.ListingReplication): digests of a listing's record and rows, the rows themselves,
// and merges that follow the rules of UpdateListing, UpdateAccount and container creation and
// deletion. Rows are merged each under its object's name lock, as UpdateListing does, with one
// sync for a batch.

var _ nodeclient.ListingReplication = (*Node)(nil)

// maxMergeRows bounds the rows of one merge or eviction.
const maxMergeRows = 10_000

// Listings calls fn with every container a device holds, live or deleted (accounts false), or
// every account with a row there (accounts true).
func (n *Node) Listings(ctx context.Context, devName string, accounts bool, fn func(nodeclient.Listing) error) error {
	d, err := n.device(devName)
	if err != nil {
		return err
	}
	if accounts {
		return d.index.Accounts(ctx, func(a string) error { return fn(nodeclient.Listing{Account: a}) })
	}
	return d.index.Containers(ctx, func(a, c string) error { return fn(nodeclient.Listing{Account: a, Container: c}) })
}

func checkListing(name nodeclient.Listing) error {
	if name.Account == "" {
		return fmt.Errorf("storage: listing without an account: %w", meta.ErrInvalidName)
	}
	return nil
}

// bucketer returns the bucket function of a number of bucket bits (nil for none).
func bucketer(bits uint) (func(string) uint32, error) {
	if bits > nodeclient.ListingBucketBits {
		return nil, fmt.Errorf("storage: %d bucket bits, at most %d: %w", bits, nodeclient.ListingBucketBits, meta.ErrInvalidName)
	}
	return func(name string) uint32 { return nodeclient.RowBucket(name, bits) }, nil
}

// ListingDigests returns the digests of listings on a device.
func (n *Node) ListingDigests(ctx context.Context, devName string, names []nodeclient.Listing) ([]nodeclient.ListingDigest, error) {
	d, err := n.device(devName)
	if err != nil {
		return nil, err
	}
	out := make([]nodeclient.ListingDigest, len(names))
	for i, name := range names {
		if err := checkListing(name); err != nil {
			return nil, err
		}
		var rows index.RowDigests
		if name.IsAccount() {
			rows, err = d.index.AccountRowDigests(ctx, name.Account, nil)
		} else {
			var r index.Record
			var ok bool
			if r, ok, err = d.index.Replica(name.Account, name.Container); err != nil || !ok {
				if err != nil {
					return nil, err
				}
				continue
			}
			out[i].Record, out[i].Deleted = r.Digest(), r.Deleted != 0
			if r.Deleted == 0 {
				rows, err = d.index.ContainerRowDigests(ctx, name.Account, name.Container, nil)
			}
		}
		if err != nil {
			return nil, err
		}
		out[i].Rows, out[i].Count = rows.Total, rows.Count
	}
	return out, nil
}

// ListingBuckets returns the digests of a listing's rows by bucket.
func (n *Node) ListingBuckets(ctx context.Context, devName string, name nodeclient.Listing, bits uint) (map[uint32]uint64, error) {
	d, err := n.device(devName)
	if err != nil {
		return nil, err
	}
	bucket, err := bucketer(bits)
	if err != nil {
		return nil, err
	}
	if err := checkListing(name); err != nil {
		return nil, err
	}
	var rows index.RowDigests
	if name.IsAccount() {
		rows, err = d.index.AccountRowDigests(ctx, name.Account, bucket)
	} else {
		rows, err = d.index.ContainerRowDigests(ctx, name.Account, name.Container, bucket)
	}
	if rows.Buckets == nil {
		rows.Buckets = map[uint32]uint64{}
	}
	return rows.Buckets, err
}

// ListingRows returns up to limit rows of a listing after the name after, in name order, of the
// given buckets of 2^bits (nil: every row); more says there are further rows.
func (n *Node) ListingRows(ctx context.Context, devName string, name nodeclient.Listing, bits uint, buckets []uint32, after string, limit int) (rows []nodeclient.ListingRow, more bool, err error) {
	d, err := n.device(devName)
	if err != nil {
		return nil, false, err
	}
	bucket, err := bucketer(bits)
	if err != nil {
		return nil, false, err
	}
	var keep func(string) bool
	if buckets != nil {
		keep = func(s string) bool { return slices.Contains(buckets, bucket(s)) }
	}
	if name.IsAccount() {
		got, more, err := d.index.AccountRows(ctx, name.Account, after, limit, keep)
		for _, r := range got {
			rows = append(rows, nodeclient.ListingRow{Container: r})
		}
		return rows, more, err
	}
	got, more, err := d.index.ContainerRows(ctx, name.Account, name.Container, after, limit, keep)
	for _, r := range got {
		rows = append(rows, nodeclient.ListingRow{Entry: r.Entry, Deleted: r.Deleted})
	}
	return rows, more, err
}

func containerRows(rows []nodeclient.ListingRow) ([]index.Row, error) {
	out := make([]index.Row, len(rows))
	for i, r := range rows {
		if r.Entry.Name == "" || r.Container.Name != "" || r.Entry.Timestamp <= 0 {
			return nil, fmt.Errorf("storage: container listing row %q: %w", r.Name(), meta.ErrInvalidName)
		}
		out[i] = index.Row{Entry: r.Entry, Deleted: r.Deleted}
	}
	return out, nil
}

func accountRows(rows []nodeclient.ListingRow) ([]meta.ContainerRow, error) {
	out := make([]meta.ContainerRow, len(rows))
	for i, r := range rows {
		if r.Container.Name == "" || r.Entry.Name != "" || r.Container.PutTimestamp < 0 || r.Container.DeleteTimestamp < 0 {
			return nil, fmt.Errorf("storage: account listing row %q: %w", r.Name(), meta.ErrInvalidName)
		}
		out[i] = r.Container
	}
	return out, nil
}

// WantRows returns the indexes of the row versions a listing would change for.
func (n *Node) WantRows(ctx context.Context, devName string, name nodeclient.Listing, versions []nodeclient.ListingRow) ([]int, error) {
	d, err := n.device(devName)
	if err != nil {
		return nil, err
	}
	if err := checkListing(name); err != nil {
		return nil, err
	}
	if name.IsAccount() {
		rows, err := accountRows(versions)
		if err != nil {
			return nil, err
		}
		return d.index.WantAccountRows(ctx, name.Account, rows)
	}
	rows, err := containerRows(versions)
	if err != nil {
		return nil, err
	}
	return d.index.WantContainerRows(ctx, name.Account, name.Container, rows)
}

// MergeRows merges rows into a listing; newest wins.
func (n *Node) MergeRows(ctx context.Context, devName string, part uint32, name nodeclient.Listing, rows []nodeclient.ListingRow) error {
	d, err := n.device(devName)
	if err != nil {
		return err
	}
	if err := checkListing(name); err != nil {
		return err
	}
	if len(rows) > maxMergeRows {
		return fmt.Errorf("storage: %d rows in one merge, at most %d: %w", len(rows), maxMergeRows, meta.ErrInvalidName)
	}
	if err := d.engine.CheckWriteSpace(); err != nil {
		return err
	}
	if name.IsAccount() {
		rs, err := accountRows(rows)
		if err != nil {
			return err
		}
		return d.index.MergeAccountRows(ctx, name.Account, rs)
	}
	rs, err := containerRows(rows)
	if err != nil {
		return err
	}
	if _, err := d.index.GetContainer(ctx, name.Account, name.Container); err != nil {
		return err
	}
	for _, r := range rs {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := n.eachRow(d, name, r, func(b *pebble.Batch) (bool, error) {
			if r.Deleted {
				return true, d.index.DeleteEntry(b, name.Account, name.Container, r.Entry.Name, r.Entry.Timestamp)
			}
			return true, d.index.PutEntry(b, name.Account, name.Container, r.Entry)
		})
		if err != nil {
			return err
		}
	}
	return d.index.Flush()
}

// eachRow runs change on a batch with the row's object name locked (as every writer of the
// listing entry locks it) and the usage hold taken, and commits the batch unsynced if change
// says so: the caller syncs once for all its rows.
func (n *Node) eachRow(d *device, name nodeclient.Listing, r index.Row, change func(*pebble.Batch) (bool, error)) error {
	unlock := d.engine.LockName(meta.ObjectName{Account: name.Account, Container: name.Container, Object: r.Entry.Name})
	defer unlock()
	var hold usageHold
	defer hold.release()
	hold.take(d.index)
	b := d.db.NewBatch()
	defer b.Close()
	commit, err := change(b)
	if err != nil || !commit {
		return err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("storage: listing row: %w", err)
	}
	return nil
}

// ContainerRecord returns a container's record as replicas exchange it; ok is false when the
// device holds neither the container nor its tombstone.
func (n *Node) ContainerRecord(ctx context.Context, devName, account, container string) (rec nodeclient.ContainerRecord, ok bool, err error) {
	d, err := n.device(devName)
	if err != nil {
		return rec, false, err
	}
	r, ok, err := d.index.Replica(account, container)
	if err != nil || !ok {
		return rec, ok, err
	}
	rec = nodeclient.ContainerRecord{Created: r.Created, Deleted: r.Deleted, Meta: map[string]nodeclient.MetaValue{}}
	for k, v := range r.Meta {
		rec.Meta[k] = nodeclient.MetaValue{Value: v.Value, Timestamp: v.Timestamp}
	}
	return rec, true, nil
}

func indexRecord(rec nodeclient.ContainerRecord) index.Record {
	r := index.Record{Created: rec.Created, Deleted: rec.Deleted, Meta: map[string]index.MetaStamp{}}
	for k, v := range rec.Meta {
		r.Meta[k] = index.MetaStamp{Value: v.Value, Timestamp: v.Timestamp}
	}
	return r
}

// MergeContainer merges a replica's record of a container into the device's. A deletion newer
// than the container here deletes it even if it still lists objects: those entries become
// listing tombstones at the deletion's time first (the replicas that took the delete listed
// none of them; Swift would instead let such rows revive the container). Entries newer than the
// deletion keep the container, and the merge fails until the deletion is older than them.
func (n *Node) MergeContainer(ctx context.Context, devName string, part uint32, account, container string, rec nodeclient.ContainerRecord, report *nodeclient.AccountUpdate) (bool, error) {
	d, err := n.device(devName)
	if err != nil {
		return false, err
	}
	if account == "" || container == "" {
		return false, fmt.Errorf("storage: container record without a name: %w", meta.ErrInvalidName)
	}
	if err := d.engine.CheckWriteSpace(); err != nil {
		return false, err
	}
	var target []byte
	if report != nil {
		target = encodeTarget(nil, *report)
	}
	in := indexRecord(rec)
	res, err := d.index.MergeRecord(ctx, account, container, in, target)
	if errors.Is(err, meta.ErrNotEmpty) {
		if err := n.emptyForDeletion(ctx, d, account, container, rec.Deleted); err != nil {
			return false, err
		}
		res, err = d.index.MergeRecord(ctx, account, container, in, target)
	}
	return res.Live, err
}

// emptyForDeletion turns the entries of a container older than its deletion elsewhere into
// listing tombstones at that time.
func (n *Node) emptyForDeletion(ctx context.Context, d *device, account, container string, deleted meta.Timestamp) error {
	name := nodeclient.Listing{Account: account, Container: container}
	removed := 0
	for after := ""; ; {
		rows, more, err := d.index.ContainerRows(ctx, account, container, after, 1000, nil)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if r.Deleted || r.Entry.Timestamp >= deleted {
				continue
			}
			err := n.eachRow(d, name, r, func(b *pebble.Batch) (bool, error) {
				return true, d.index.DeleteEntry(b, account, container, r.Entry.Name, deleted)
			})
			if err != nil {
				return err
			}
			removed++
		}
		if !more || len(rows) == 0 {
			break
		}
		after = rows[len(rows)-1].Entry.Name
	}
	n.log.Warn("a container deleted on its other replicas still listed objects here; they are unlisted with it",
		"account", account, "container", container, "objects", removed)
	return d.index.Flush()
}

// EvictRows removes the rows of a handoff's copy of a listing that are still as given, and
// returns how many it removed. A container stops feeding account listings first (its primaries'
// replicas report its usage).
func (n *Node) EvictRows(ctx context.Context, devName string, name nodeclient.Listing, rows []nodeclient.ListingRow) (int, error) {
	d, err := n.device(devName)
	if err != nil {
		return 0, err
	}
	if err := checkListing(name); err != nil {
		return 0, err
	}
	if name.IsAccount() {
		rs, err := accountRows(rows)
		if err != nil {
			return 0, err
		}
		return d.index.EvictAccountRows(ctx, name.Account, rs)
	}
	rs, err := containerRows(rows)
	if err != nil {
		return 0, err
	}
	if err := d.index.DetachContainer(ctx, name.Account, name.Container); err != nil {
		return 0, err
	}
	evicted := 0
	for _, r := range rs {
		if err := ctx.Err(); err != nil {
			return evicted, err
		}
		err := n.eachRow(d, name, r, func(b *pebble.Batch) (bool, error) {
			gone, err := d.index.EvictContainerRow(b, name.Account, name.Container, r)
			if gone {
				evicted++
			}
			return gone, err
		})
		if err != nil {
			return evicted, err
		}
	}
	return evicted, d.index.Flush()
}

// EvictListing removes what is left of a handoff's copy of a listing once its rows are gone: a
// container's record (if its digest is still recordDigest), usage and state, or an account's
// totals. It reports false while something remains that the primaries may lack.
func (n *Node) EvictListing(ctx context.Context, devName string, name nodeclient.Listing, recordDigest uint64) (bool, error) {
	d, err := n.device(devName)
	if err != nil {
		return false, err
	}
	if err := checkListing(name); err != nil {
		return false, err
	}
	if name.IsAccount() {
		return d.index.EvictAccount(ctx, name.Account)
	}
	// A container without rows was never detached by EvictRows.
	if err := d.index.DetachContainer(ctx, name.Account, name.Container); err != nil {
		return false, err
	}
	return d.index.EvictContainer(ctx, name.Account, name.Container, recordDigest)
}
