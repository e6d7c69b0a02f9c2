package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/binenc"
	"github.com/cairn-store/cairn/internal/meta"
)

// Container records as replicas compare them (Swift's container replicator merges the
// put/delete timestamps and the metadata of its DBs, newest wins). The container record ('a')
// keeps what serving needs; what only replication needs is kept beside it, under 'v' + account
// + container, so that neither the record's encoding nor the paths that read it change:
//
//   - a deleted container's creation and deletion times (the record itself is gone): a
//     container tombstone, which spreads the deletion to replicas that missed it and keeps an
//     older creation from making the container again;
//   - the time each metadata key was set or removed, when it is not the container's creation
//     (a key without one dates from the creation).
//
// A state whose creation time is not the record's belongs to an earlier container of the name
// and is ignored; the sweeper removes it, and container tombstones past the reclaim age.
const prefixState = 'v'

func stateKey(account, container string) []byte {
	return append(binenc.AppendString([]byte{prefixState}, account), container...)
}

// MetaStamp is a metadata value with the time it was set; an empty Value is a key removed then.
type MetaStamp struct {
	Value     string
	Timestamp meta.Timestamp
}

// Record is a container replica's record as replication sees it: Deleted is 0 for a container
// that lives, and Meta holds its keys and the keys removed since its creation.
type Record struct {
	Created, Deleted meta.Timestamp
	Meta             map[string]MetaStamp
}

// Digest identifies a record's state, leaving out metadata timestamps: replicas that hold the
// same values have nothing to exchange, whenever each of them learnt them.
func (r Record) Digest() uint64 {
	h := fnv.New64a()
	var buf [2 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(buf[:], uint64(r.Created))
	n += binary.PutUvarint(buf[n:], uint64(r.Deleted))
	h.Write(buf[:n])
	if r.Deleted == 0 {
		for _, k := range slices.Sorted(maps.Keys(r.Meta)) {
			if v := r.Meta[k].Value; v != "" {
				h.Write(binenc.AppendString(binenc.AppendString(nil, k), v))
			}
		}
	}
	return h.Sum64() | 1 // never 0, which stands for no record
}

// containerState is the value under a state key.
type containerState struct {
	created, deleted meta.Timestamp
	times            map[string]stamp
}

// stamp is when a metadata key was set, or removed.
type stamp struct {
	ts      meta.Timestamp
	removed bool
}

const stateVersion = 1

func encodeState(s containerState) []byte {
	b := []byte{stateVersion}
	b = binary.AppendUvarint(b, uint64(s.created))
	b = binary.AppendUvarint(b, uint64(s.deleted))
	b = binary.AppendUvarint(b, uint64(len(s.times)))
	for _, k := range slices.Sorted(maps.Keys(s.times)) {
		b = binenc.AppendString(b, k)
		b = binary.AppendUvarint(b, uint64(s.times[k].ts))
		if s.times[k].removed {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

func decodeState(v []byte) (containerState, error) {
	if len(v) == 0 || v[0] != stateVersion {
		return containerState{}, fmt.Errorf("index: container state: %w: %w", errBadValue, meta.ErrCorrupt)
	}
	d := binenc.Decoder{B: v[1:]}
	s := containerState{created: meta.Timestamp(d.Uvarint()), deleted: meta.Timestamp(d.Uvarint())}
	n := d.Uvarint()
	if n > uint64(len(d.B)) {
		d.Err = binenc.ErrTruncated
	}
	for i := uint64(0); i < n && d.Err == nil; i++ {
		if s.times == nil {
			s.times = map[string]stamp{}
		}
		k := d.Str()
		ts := meta.Timestamp(d.Uvarint())
		removed := d.Bytes(1)
		if d.Err == nil {
			s.times[k] = stamp{ts: ts, removed: removed[0] == 1}
		}
	}
	if d.Err != nil {
		return containerState{}, fmt.Errorf("index: container state: %w: %w", d.Err, meta.ErrCorrupt)
	}
	return s, nil
}

// state returns a container's state, nil if none.
func (ix *Index) state(account, container string) (*containerState, error) {
	v, err := ix.get(stateKey(account, container))
	if err != nil || v == nil {
		return nil, err
	}
	s, err := decodeState(v)
	return &s, err
}

// replica reads what a device holds of a container: its record (nil for none) and state (nil
// for none), and the record as replication sees it (ok false: neither a live nor a deleted
// container).
func (ix *Index) replica(account, container string) (rec *containerRecord, st *containerState, r Record, ok bool, err error) {
	got, err := ix.record(account, container)
	switch {
	case err == nil:
		rec = &got
	case !errors.Is(err, meta.ErrNotFound):
		return nil, nil, r, false, err
	}
	if st, err = ix.state(account, container); err != nil {
		return nil, nil, r, false, err
	}
	switch {
	case rec != nil:
		r = Record{Created: rec.Created, Meta: map[string]MetaStamp{}}
		for k, v := range rec.Meta {
			r.Meta[k] = MetaStamp{Value: v, Timestamp: rec.Created}
		}
		if st != nil && st.created == rec.Created {
			for k, t := range st.times {
				v, live := rec.Meta[k]
				if live != t.removed {
					r.Meta[k] = MetaStamp{Value: v, Timestamp: t.ts}
				}
			}
		}
		return rec, st, r, true, nil
	case st != nil && st.deleted > st.created:
		return nil, st, Record{Created: st.created, Deleted: st.deleted}, true, nil
	}
	return nil, st, r, false, nil
}

// Replica returns a container's record as replication sees it; ok is false when the device
// holds neither the container nor its tombstone.
func (ix *Index) Replica(account, container string) (r Record, ok bool, err error) {
	_, _, r, ok, err = ix.replica(account, container)
	return r, ok, err
}

// stateOf returns the state that keeps what a live record r needs beside its record.
func stateOf(r Record) containerState {
	s := containerState{created: r.Created}
	for k, v := range r.Meta {
		if v.Timestamp != r.Created || v.Value == "" {
			if s.times == nil {
				s.times = map[string]stamp{}
			}
			s.times[k] = stamp{ts: v.Timestamp, removed: v.Value == ""}
		}
	}
	return s
}

// liveMeta returns the values of a record's metadata, removed keys left out.
func liveMeta(r Record) map[string]string {
	m := map[string]string{}
	for k, v := range r.Meta {
		if v.Value != "" {
			m[k] = v.Value
		}
	}
	return m
}

// MarkDeleted adds to b the tombstone of a container deleted on this device (row: its
// creation and deletion times), for replication to spread. DeleteContainer's callers add it
// through ContainerOptions.InBatch.
func (ix *Index) MarkDeleted(b *pebble.Batch, account string, row meta.ContainerRow) error {
	err := b.Set(stateKey(account, row.Name), encodeState(containerState{created: row.PutTimestamp, deleted: row.DeleteTimestamp}), nil)
	if err != nil {
		return fmt.Errorf("index: container tombstone: %w", err)
	}
	return nil
}

// UpdateContainerMetaAt merges m into a container's metadata (an empty value removes a key), as
// set at ts, durably: each key changed keeps ts (or a time just after the one it had, if that
// was later), so that replicas can tell the newer value of a key.
func (ix *Index) UpdateContainerMetaAt(ctx context.Context, account, container string, ts meta.Timestamp, m map[string]string) (meta.Container, error) {
	if err := ctx.Err(); err != nil {
		return meta.Container{}, err
	}
	ix.containers.Lock()
	defer ix.containers.Unlock()
	rec, _, r, ok, err := ix.replica(account, container)
	if err != nil {
		return meta.Container{}, err
	}
	if !ok || rec == nil {
		return meta.Container{}, fmt.Errorf("index: container %q: %w", container, meta.ErrNotFound)
	}
	for k, v := range m {
		at := ts
		if old, ok := r.Meta[k]; ok && old.Timestamp >= at {
			at = old.Timestamp + 1
		}
		if v == "" {
			if _, ok := r.Meta[k]; !ok {
				continue // never set: nothing to remove
			}
		}
		r.Meta[k] = MetaStamp{Value: v, Timestamp: at}
	}
	rec.Meta = liveMeta(r)
	b := ix.db.NewBatch()
	defer b.Close()
	err = errors.Join(b.Set(containerKey(account, container), encodeContainer(*rec), nil),
		b.Set(stateKey(account, container), encodeState(stateOf(r)), nil))
	if err != nil {
		return meta.Container{}, fmt.Errorf("index: update container: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return meta.Container{}, storageErr("update container", err)
	}
	c := rec.Container
	return c, ix.usage(account, container, &c)
}

// mergeMeta merges two records' metadata: each key takes its newest value (on equal times, the
// greater value, so that replicas agree), and keys older than the creation are dropped.
func mergeMeta(created meta.Timestamp, a, b map[string]MetaStamp) map[string]MetaStamp {
	out := map[string]MetaStamp{}
	for _, m := range []map[string]MetaStamp{a, b} {
		for k, v := range m {
			if v.Timestamp < created {
				continue
			}
			if cur, ok := out[k]; ok && (cur.Timestamp > v.Timestamp || (cur.Timestamp == v.Timestamp && cur.Value >= v.Value)) {
				continue
			}
			out[k] = v
		}
	}
	return out
}

// MergeResult says what a device holds of a container after a merge.
type MergeResult struct {
	Live    bool // the container lives here (its rows may be merged)
	Changed bool // the merge changed the device's record
}

// MergeRecord merges a replica's record of a container into this device's (Swift's container
// replicator merging put/delete timestamps and metadata): a deletion newer than the creation
// here deletes the container, a creation newer than a deletion here makes it again (as a
// container whose usage the stats pass reports to target, an encoded account replica, if any),
// and the metadata keys take their newest values. A deletion of a container that still lists
// objects is refused with meta.ErrNotEmpty: the caller removes those entries first (see
// storage), as the other replicas did before they deleted it.
func (ix *Index) MergeRecord(ctx context.Context, account, container string, in Record, target []byte) (MergeResult, error) {
	if err := ctx.Err(); err != nil {
		return MergeResult{}, err
	}
	if account == "" || container == "" || in.Created < 0 || in.Deleted < 0 {
		return MergeResult{}, fmt.Errorf("index: container record %q/%q: %w", account, container, meta.ErrInvalidName)
	}
	ix.containers.Lock()
	defer ix.containers.Unlock()
	rec, _, cur, ok, err := ix.replica(account, container)
	if err != nil {
		return MergeResult{}, err
	}
	switch {
	case in.Deleted != 0 && in.Deleted > in.Created:
		switch {
		case rec != nil && in.Deleted > rec.Created:
			return MergeResult{Changed: true}, ix.deleteReplica(ctx, account, *rec, in)
		case rec != nil:
			return MergeResult{Live: true}, nil // created again since that deletion
		case ok && (cur.Deleted > in.Deleted || (cur.Deleted == in.Deleted && cur.Created >= in.Created)):
			return MergeResult{}, nil
		}
		err := ix.db.Set(stateKey(account, container), encodeState(containerState{created: in.Created, deleted: in.Deleted}), pebble.Sync)
		return MergeResult{Changed: true}, storageErr("container tombstone", err)
	case in.Deleted != 0:
		return MergeResult{}, fmt.Errorf("index: container record %q/%q deleted at %d, before its creation at %d: %w", account, container, in.Deleted, in.Created, meta.ErrInvalidName)
	case rec == nil:
		if ok && cur.Deleted >= in.Created {
			return MergeResult{}, nil // deleted after that creation
		}
		r := Record{Created: in.Created, Meta: mergeMeta(in.Created, in.Meta, nil)}
		nrec := containerRecord{Container: meta.Container{Name: container, Created: in.Created, Meta: liveMeta(r)}, target: target}
		return MergeResult{Live: true, Changed: true}, ix.writeReplica(account, nrec, r, false)
	}
	created := max(in.Created, rec.Created)
	r := Record{Created: created, Meta: mergeMeta(created, cur.Meta, in.Meta)}
	if r.Digest() == cur.Digest() && maps.Equal(r.Meta, cur.Meta) {
		return MergeResult{Live: true}, nil
	}
	newer := created != rec.Created
	rec.Created, rec.Meta = created, liveMeta(r)
	return MergeResult{Live: true, Changed: true}, ix.writeReplica(account, *rec, r, newer)
}

// writeReplica writes a container's record and state in one synced batch; newer says the record
// is a later container of the name than the one held, whose account row, when linked here,
// takes the new creation time.
func (ix *Index) writeReplica(account string, rec containerRecord, r Record, newer bool) error {
	b := ix.db.NewBatch()
	defer b.Close()
	if newer && rec.localRow {
		defer ix.lockRow(account, rec.Name)()
		defer ix.exclusiveUsage()()
		if _, err := ix.putRow(b, account, meta.ContainerRow{Name: rec.Name, PutTimestamp: rec.Created}, keepLink); err != nil {
			return err
		}
	}
	err := errors.Join(b.Set(containerKey(account, rec.Name), encodeContainer(rec), nil),
		b.Set(stateKey(account, rec.Name), encodeState(stateOf(r)), nil))
	if err != nil {
		return fmt.Errorf("index: container record: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		ix.links.forget(cstatsKey(account, rec.Name)) // a failed commit may still have applied
		return storageErr("container record", err)
	}
	ix.links.set(cstatsKey(account, rec.Name), rec.localRow)
	return nil
}

// deleteReplica deletes a container that other replicas deleted (in), as DeleteContainer does,
// leaving its tombstone. The caller holds ix.containers.
func (ix *Index) deleteReplica(ctx context.Context, account string, rec containerRecord, in Record) error {
	nonEmpty, err := ix.hasLiveEntry(ctx, account, rec.Name)
	if err != nil {
		return err
	}
	if nonEmpty {
		return fmt.Errorf("index: container %q deleted at %d elsewhere: %w", rec.Name, in.Deleted, meta.ErrNotEmpty)
	}
	b := ix.db.NewBatch()
	defer b.Close()
	if rec.localRow {
		defer ix.lockRow(account, rec.Name)()
		defer ix.exclusiveUsage()()
		row := meta.ContainerRow{Name: rec.Name, PutTimestamp: rec.Created, DeleteTimestamp: in.Deleted}
		if _, err := ix.putRow(b, account, row, unlink); err != nil {
			return err
		}
	}
	err = errors.Join(b.Delete(containerKey(account, rec.Name), nil), b.Delete(cstatsKey(account, rec.Name), nil),
		b.Set(stateKey(account, rec.Name), encodeState(containerState{created: in.Created, deleted: in.Deleted}), nil))
	if err != nil {
		return fmt.Errorf("index: delete container: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		ix.links.forget(cstatsKey(account, rec.Name))
		return storageErr("delete container", err)
	}
	ix.links.set(cstatsKey(account, rec.Name), false)
	return nil
}

// Containers calls fn with every container this device holds, live or deleted (a tombstone),
// in name order within each of the two kinds, until fn fails.
func (ix *Index) Containers(ctx context.Context, fn func(account, container string) error) error {
	if err := ix.eachKey(ctx, prefixContainer, func(k, _ []byte) error {
		account, container, err := parseContainerKey(k)
		if err != nil {
			ix.log.Warn("skipping a malformed container key", "err", err)
			return nil
		}
		return fn(account, container)
	}); err != nil {
		return err
	}
	return ix.eachKey(ctx, prefixState, func(k, v []byte) error {
		account, container, err := parseContainerKey(append([]byte{prefixContainer}, k[1:]...))
		if err != nil {
			ix.log.Warn("skipping a malformed container state key", "err", err)
			return nil
		}
		s, err := decodeState(v)
		if err != nil || s.deleted <= s.created {
			return nil // metadata times of a live container (listed above), or unreadable
		}
		if live, err := ix.get(containerKey(account, container)); err != nil || live != nil {
			return err // created again: listed above
		}
		return fn(account, container)
	})
}

// eachKey calls fn with every key under a one-byte prefix and its value (valid during the call).
func (ix *Index) eachKey(ctx context.Context, prefix byte, fn func(k, v []byte) error) error {
	return ix.iterate(ctx, []byte{prefix}, []byte{prefix + 1}, "scanning", func(k, v []byte) (bool, error) {
		return false, fn(k, v)
	})
}

// SweepContainerStates removes the container tombstones older than before (every replica has
// long learnt of the deletion, as with listing tombstones), and the states left by earlier
// containers of a name.
func (ix *Index) SweepContainerStates(ctx context.Context, before meta.Timestamp) (reclaimed int64, err error) {
	var stale [][]byte
	err = ix.eachKey(ctx, prefixState, func(k, v []byte) error {
		gone, err := ix.staleState(k, v, before)
		if gone {
			stale = append(stale, bytes.Clone(k))
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	ix.containers.Lock()
	defer ix.containers.Unlock()
	for _, k := range stale {
		// Checked again under the lock: a merge may have written the key since.
		v, err := ix.get(k)
		if err != nil {
			return reclaimed, err
		}
		if v == nil {
			continue
		}
		gone, err := ix.staleState(k, v, before)
		if err != nil {
			return reclaimed, err
		}
		if !gone {
			continue
		}
		if err := ix.db.Delete(k, pebble.NoSync); err != nil {
			return reclaimed, storageErr("sweeping container tombstones", err)
		}
		reclaimed++
	}
	return reclaimed, nil
}

// staleState reports whether the state under k is a tombstone deleted before before, or outlived
// the container it was kept for. One that does not decode is kept, for a look.
func (ix *Index) staleState(k, v []byte, before meta.Timestamp) (bool, error) {
	s, err := decodeState(v)
	if err != nil {
		return false, nil
	}
	rv, err := ix.get(append([]byte{prefixContainer}, k[1:]...))
	if err != nil {
		return false, err
	}
	if rv != nil {
		rec, err := decodeContainer("", rv)
		return err == nil && rec.Created != s.created, nil
	}
	if s.deleted > s.created {
		return s.deleted < before, nil
	}
	return true, nil
}
