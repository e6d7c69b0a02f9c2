package index

import (
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// ContainerOptions say where the account's row for a container lives when the container is
// created or deleted on this device (Swift's X-Account-Host/-Device/-Partition).
type ContainerOptions struct {
	// LocalRow: the account row is on this device. It commits in the container's own batch, and
	// while the container lives there the row's usage is the container's own counters, so the
	// account's listing and totals follow every object write at once.
	LocalRow bool
	// Target names the account replica elsewhere (opaque to the index: the storage node's
	// encoding of it; nil for none). It is kept with the container, so that the stats pass
	// knows where to report the container's usage.
	Target []byte
	// InBatch adds to the batch that commits the change, with the row the change makes for the
	// account replica named by Target (the storage node keeps it there as a pending update).
	InBatch func(b *pebble.Batch, row meta.ContainerRow) error
}

// CreateContainer creates a container and, when opts say so, its account row (durably).
// meta.ErrExists if it exists.
func (ix *Index) CreateContainer(ctx context.Context, account string, c meta.Container, opts ContainerOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.containers.Lock()
	defer ix.containers.Unlock()
	key := containerKey(account, c.Name)
	old, err := ix.get(key)
	if err != nil {
		return err
	}
	if old != nil {
		return fmt.Errorf("index: container %q: %w", c.Name, meta.ErrExists)
	}
	if c.Created == 0 {
		c.Created = meta.Now()
	}
	rec := containerRecord{Container: c, target: opts.Target}
	row := meta.ContainerRow{Name: c.Name, PutTimestamp: c.Created}
	b := ix.db.NewBatch()
	defer b.Close()
	if opts.LocalRow {
		defer ix.lockRow(account, c.Name)()
		// Linking a row to the container's counters must not overtake an object write that
		// has decided, under the shared hold, whether the account totals see it: this excludes
		// them all for the one commit (container creates are rare).
		defer ix.exclusiveUsage()()
		linked, err := ix.putRow(b, account, row, linkIfLive)
		if err != nil {
			return err
		}
		rec.localRow = linked
	}
	if err := b.Set(key, encodeContainer(rec), nil); err != nil {
		return fmt.Errorf("index: create container: %w", err)
	}
	if opts.InBatch != nil {
		if err := opts.InBatch(b, row); err != nil {
			return fmt.Errorf("index: create container: %w", err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		ix.links.forget(cstatsKey(account, c.Name)) // a failed commit may still have applied
		return storageErr("create container", err)
	}
	ix.links.set(cstatsKey(account, c.Name), rec.localRow)
	return nil
}

// usage fills in a container's object count and bytes.
func (ix *Index) usage(account, container string, c *meta.Container) error {
	u, err := ix.counters(cstatsKey(account, container), 2)
	if err != nil {
		return err
	}
	c.ObjectCount, c.BytesUsed = u[0], u[1]
	return nil
}

// record returns a container's record; meta.ErrNotFound if absent.
func (ix *Index) record(account, container string) (containerRecord, error) {
	v, err := ix.get(containerKey(account, container))
	if err != nil {
		return containerRecord{}, err
	}
	if v == nil {
		return containerRecord{}, fmt.Errorf("index: container %q: %w", container, meta.ErrNotFound)
	}
	return decodeContainer(container, v)
}

// GetContainer returns a container with its current usage; meta.ErrNotFound if absent.
func (ix *Index) GetContainer(ctx context.Context, account, container string) (meta.Container, error) {
	if err := ctx.Err(); err != nil {
		return meta.Container{}, err
	}
	rec, err := ix.record(account, container)
	if err != nil {
		return meta.Container{}, err
	}
	c := rec.Container
	return c, ix.usage(account, container, &c)
}

// UpdateContainerMeta changes a container's metadata durably.
func (ix *Index) UpdateContainerMeta(ctx context.Context, account, container string, update func(m map[string]string) error) (meta.Container, error) {
	if err := ctx.Err(); err != nil {
		return meta.Container{}, err
	}
	ix.containers.Lock()
	defer ix.containers.Unlock()
	rec, err := ix.record(account, container)
	if err != nil {
		return meta.Container{}, err
	}
	if err := update(rec.Meta); err != nil {
		return meta.Container{}, fmt.Errorf("index: update aborted: %w", err)
	}
	if err := ix.db.Set(containerKey(account, container), encodeContainer(rec), pebble.Sync); err != nil {
		return meta.Container{}, storageErr("update container", err)
	}
	c := rec.Container
	return c, ix.usage(account, container, &c)
}

// DeleteContainer removes an empty container (meta.ErrNotEmpty if it lists any object; listing
// tombstones do not count) at ts, which must be newer than its creation (meta.ErrConflict
// otherwise: a delete meant for an earlier container of that name). Its account row, when it
// is on this device, is marked deleted in the same batch.
//
// Emptiness is checked by a scan that stops at the first live entry; a PutEntry racing with
// the delete is the caller's to prevent (as in Swift, the listing may then briefly hold an
// entry of a deleted container).
func (ix *Index) DeleteContainer(ctx context.Context, account, container string, ts meta.Timestamp, opts ContainerOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.containers.Lock()
	defer ix.containers.Unlock()
	rec, err := ix.record(account, container)
	if err != nil {
		return err
	}
	if ts <= rec.Created {
		return fmt.Errorf("index: delete container %q at %d, created at %d: %w", container, ts, rec.Created, meta.ErrConflict)
	}
	nonEmpty, err := ix.hasLiveEntry(ctx, account, container)
	if err != nil {
		return err
	}
	if nonEmpty {
		return fmt.Errorf("index: container %q: %w", container, meta.ErrNotEmpty)
	}
	row := meta.ContainerRow{Name: container, PutTimestamp: rec.Created, DeleteTimestamp: ts}
	b := ix.db.NewBatch()
	defer b.Close()
	if rec.localRow || opts.LocalRow {
		defer ix.lockRow(account, container)()
		defer ix.exclusiveUsage()() // see CreateContainer
		if _, err := ix.putRow(b, account, row, unlink); err != nil {
			return err
		}
	}
	key := containerKey(account, container)
	if err := errors.Join(b.Delete(key, nil), b.Delete(cstatsKey(account, container), nil)); err != nil {
		return fmt.Errorf("index: delete container: %w", err)
	}
	if opts.InBatch != nil {
		if err := opts.InBatch(b, row); err != nil {
			return fmt.Errorf("index: delete container: %w", err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		ix.links.forget(cstatsKey(account, container)) // a failed commit may still have applied
		return storageErr("delete container", err)
	}
	ix.links.set(cstatsKey(account, container), false)
	return nil
}

// hasLiveEntry reports whether a container lists any object, skipping listing tombstones.
func (ix *Index) hasLiveEntry(ctx context.Context, account, container string) (bool, error) {
	base := containerBase(account, container)
	it, err := ix.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: base, UpperBound: successor(base)})
	if err != nil {
		return false, fmt.Errorf("index: listing: %w", err)
	}
	found := false
	for valid, n := it.First(), 0; valid && !found; valid, n = it.Next(), n+1 {
		if n%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				it.Close()
				return false, err
			}
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return false, fmt.Errorf("index: listing: %w", err)
		}
		found = !isTombstone(v)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return false, fmt.Errorf("index: listing: %w", err)
	}
	return found, nil
}

// ContainerReport is what the stats pass needs of a container whose account row is elsewhere.
type ContainerReport struct {
	Account string
	Row     meta.ContainerRow // as it is now: created, never deleted, current usage
	Target  []byte            // ContainerOptions.Target
	// Reported is the usage last reported (zero before any report).
	Reported [2]int64
}

// Changed reports whether the container's usage differs from what was last reported.
func (r ContainerReport) Changed() bool {
	return r.Row.ObjectCount != r.Reported[0] || r.Row.BytesUsed != r.Reported[1]
}

// Report returns what the stats pass needs of one container; ok is false when the container is
// absent or its account row is on this device or nowhere.
func (ix *Index) Report(account, container string) (r ContainerReport, ok bool, err error) {
	rec, err := ix.record(account, container)
	if errors.Is(err, meta.ErrNotFound) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	return ix.report(account, rec)
}

func (ix *Index) report(account string, rec containerRecord) (r ContainerReport, ok bool, err error) {
	if rec.localRow || len(rec.target) == 0 {
		return r, false, nil
	}
	container := rec.Name
	c := rec.Container
	if err := ix.usage(account, container, &c); err != nil {
		return r, false, err
	}
	r = ContainerReport{Account: account, Target: rec.target, Reported: rec.reported,
		Row: meta.ContainerRow{Name: container, PutTimestamp: rec.Created, ObjectCount: c.ObjectCount, BytesUsed: c.BytesUsed}}
	return r, true, nil
}

// ReportAll calls fn with the report of every container of this device whose account row is
// elsewhere, in key order, until fn fails.
func (ix *Index) ReportAll(ctx context.Context, fn func(ContainerReport) error) error {
	it, err := ix.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: []byte{prefixContainer}, UpperBound: []byte{prefixContainer + 1}})
	if err != nil {
		return fmt.Errorf("index: containers: %w", err)
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		account, container, err := parseContainerKey(it.Key())
		if err != nil {
			ix.log.Warn("skipping a malformed container key", "err", err)
			continue
		}
		rec, err := decodeContainer(container, it.Value())
		if err != nil {
			ix.log.Warn("skipping an unreadable container record", "account", account, "err", err)
			continue
		}
		r, ok, err := ix.report(account, rec)
		if err != nil {
			return err
		}
		if ok {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return it.Error()
}

// SetReported records the usage last reported for a container created at created (nothing
// happens if the container was deleted or created again since). Not synced: a record lost in a
// crash only makes the stats pass report the usage again.
func (ix *Index) SetReported(account, container string, created meta.Timestamp, objects, bytes int64) error {
	ix.containers.Lock()
	defer ix.containers.Unlock()
	rec, err := ix.record(account, container)
	if errors.Is(err, meta.ErrNotFound) {
		return nil
	}
	if err != nil || rec.Created != created || rec.reported == [2]int64{objects, bytes} {
		return err
	}
	rec.reported = [2]int64{objects, bytes}
	return storageErr("record reported usage", ix.db.Set(containerKey(account, container), encodeContainer(rec), pebble.NoSync))
}
