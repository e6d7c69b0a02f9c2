// Package index keeps the listings of one device in its LSM (Pebble): the objects of each
// container (name, size, ETag, content type, timestamp), the containers of each account with
// their metadata, and usage totals maintained with merge operands, so that PUT and list rates
// stay flat as a container grows to millions of objects.
package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// Index is the listing index of one device. It owns keys that start with 'c', 'a' and 's'.
type Index struct {
	db *pebble.DB
	// containers serializes the rare container lifecycle changes (create, metadata, delete),
	// which read-modify-write one record; object entries never take it.
	containers   sync.Mutex
	counterState usageState
	log          *slog.Logger
}

// New returns an index over db (which must have been opened with Merger). log may be nil.
func New(db *pebble.DB, log *slog.Logger) *Index {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Index{db: db, log: log}
}

// get returns a copy of the value under key, or nil if there is none.
func (ix *Index) get(key []byte) ([]byte, error) {
	v, closer, err := ix.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storageErr("reading", err)
	}
	defer closer.Close()
	return bytes.Clone(v), nil
}

// storageErr wraps an LSM error, marking a full disk as meta.ErrInsufficientStorage.
func storageErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("index: %s: %w: %w", op, meta.ErrInsufficientStorage, err)
	}
	return fmt.Errorf("index: %s: %w", op, err)
}

// counters reads a usage vector (n elements; zero when absent).
func (ix *Index) counters(key []byte, n int) ([]int64, error) {
	v, err := ix.get(key)
	if err != nil {
		return nil, err
	}
	c := make([]int64, n)
	if err := decodeCounters(v, c); err != nil {
		return nil, fmt.Errorf("index: usage counters: %w: %w", err, meta.ErrCorrupt)
	}
	return c, nil
}

// addUsage adds the usage deltas of one container (and of its account) to b. The caller holds
// HoldUsage until b commits.
func (ix *Index) addUsage(b *pebble.Batch, account, container string, containers, objects, size int64) error {
	if objects != 0 || size != 0 {
		key := cstatsKey(account, container)
		if err := b.Merge(key, encodeCounters(objects, size), nil); err != nil {
			return fmt.Errorf("index: usage: %w", err)
		}
		ix.noteOperand(key)
	}
	if containers != 0 || objects != 0 || size != 0 {
		key := astatsKey(account)
		if err := b.Merge(key, encodeCounters(containers, objects, size), nil); err != nil {
			return fmt.Errorf("index: usage: %w", err)
		}
		ix.noteOperand(key)
	}
	return nil
}

// PutEntry adds to b the listing entry of an object version and the usage change it makes. The
// caller holds the object's name locked until b commits. An entry older than the one listed is
// ignored.
func (ix *Index) PutEntry(b *pebble.Batch, account, container string, e meta.ListEntry) error {
	prev, err := ix.entry(account, container, e.Name)
	if err != nil {
		return err
	}
	return ix.ReplaceEntry(b, account, container, e, prev)
}

// ReplaceEntry is PutEntry for a caller that knows the entry listed now (nil for none): the
// object engine, whose record commits in the same batch as the entry, so that the two always
// agree. It saves a lookup on every PUT.
func (ix *Index) ReplaceEntry(b *pebble.Batch, account, container string, e meta.ListEntry, prev *meta.ListEntry) error {
	var objects, size int64 = 1, e.Size
	if prev != nil {
		if prev.Timestamp >= e.Timestamp {
			return nil
		}
		objects, size = 0, e.Size-prev.Size
	}
	if err := b.Set(entryKey(account, container, e.Name), encodeEntry(e), nil); err != nil {
		return fmt.Errorf("index: put entry: %w", err)
	}
	return ix.addUsage(b, account, container, 0, objects, size)
}

// DeleteEntry adds to b the removal of an object's listing entry (if not newer than ts) and the
// usage change it makes. Same locking rule as PutEntry.
func (ix *Index) DeleteEntry(b *pebble.Batch, account, container, object string, ts meta.Timestamp) error {
	prev, err := ix.entry(account, container, object)
	if err != nil || prev == nil {
		return err
	}
	if prev.Timestamp > ts {
		return nil
	}
	if err := b.Delete(entryKey(account, container, object), nil); err != nil {
		return fmt.Errorf("index: delete entry: %w", err)
	}
	return ix.addUsage(b, account, container, 0, -1, -prev.Size)
}

// entry returns the listing entry of an object, nil if none is listed.
func (ix *Index) entry(account, container, object string) (*meta.ListEntry, error) {
	v, err := ix.get(entryKey(account, container, object))
	if err != nil || v == nil {
		return nil, err
	}
	e, err := decodeEntry(object, v)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// CreateContainer creates a container and adds it to its account's listing (durably).
// meta.ErrExists if it exists.
func (ix *Index) CreateContainer(ctx context.Context, account string, c meta.Container) error {
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
	b := ix.db.NewBatch()
	defer b.Close()
	if err := b.Set(key, encodeContainer(c), nil); err != nil {
		return fmt.Errorf("index: create container: %w", err)
	}
	defer ix.HoldUsage()()
	if err := ix.addUsage(b, account, c.Name, 1, 0, 0); err != nil {
		return err
	}
	return storageErr("create container", b.Commit(pebble.Sync))
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

// GetContainer returns a container with its current usage; meta.ErrNotFound if absent.
func (ix *Index) GetContainer(ctx context.Context, account, container string) (meta.Container, error) {
	if err := ctx.Err(); err != nil {
		return meta.Container{}, err
	}
	v, err := ix.get(containerKey(account, container))
	if err != nil {
		return meta.Container{}, err
	}
	if v == nil {
		return meta.Container{}, fmt.Errorf("index: container %q: %w", container, meta.ErrNotFound)
	}
	c, err := decodeContainer(container, v)
	if err != nil {
		return meta.Container{}, err
	}
	return c, ix.usage(account, container, &c)
}

// UpdateContainerMeta changes a container's metadata durably.
func (ix *Index) UpdateContainerMeta(ctx context.Context, account, container string, update func(m map[string]string) error) (meta.Container, error) {
	if err := ctx.Err(); err != nil {
		return meta.Container{}, err
	}
	ix.containers.Lock()
	defer ix.containers.Unlock()
	key := containerKey(account, container)
	v, err := ix.get(key)
	if err != nil {
		return meta.Container{}, err
	}
	if v == nil {
		return meta.Container{}, fmt.Errorf("index: container %q: %w", container, meta.ErrNotFound)
	}
	c, err := decodeContainer(container, v)
	if err != nil {
		return meta.Container{}, err
	}
	if err := update(c.Meta); err != nil {
		return meta.Container{}, fmt.Errorf("index: update aborted: %w", err)
	}
	if err := ix.db.Set(key, encodeContainer(c), pebble.Sync); err != nil {
		return meta.Container{}, storageErr("update container", err)
	}
	return c, ix.usage(account, container, &c)
}

// DeleteContainer removes an empty container: meta.ErrNotEmpty if it lists any object.
//
// Emptiness is checked with one seek; a PutEntry racing with the delete is the caller's to
// prevent (as in Swift, the listing may then briefly hold an entry of a deleted container).
func (ix *Index) DeleteContainer(ctx context.Context, account, container string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.containers.Lock()
	defer ix.containers.Unlock()
	key := containerKey(account, container)
	v, err := ix.get(key)
	if err != nil {
		return err
	}
	if v == nil {
		return fmt.Errorf("index: container %q: %w", container, meta.ErrNotFound)
	}
	base := containerBase(account, container)
	it, err := ix.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: base, UpperBound: successor(base)})
	if err != nil {
		return fmt.Errorf("index: delete container: %w", err)
	}
	nonEmpty := it.First()
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("index: delete container: %w", err)
	}
	if nonEmpty {
		return fmt.Errorf("index: container %q: %w", container, meta.ErrNotEmpty)
	}
	// Whatever the counters still hold (they should be zero) leaves the account with them.
	defer ix.HoldUsage()()
	u, err := ix.counters(cstatsKey(account, container), 2)
	if err != nil {
		return err
	}
	b := ix.db.NewBatch()
	defer b.Close()
	if err := errors.Join(b.Delete(key, nil), b.Delete(cstatsKey(account, container), nil)); err != nil {
		return fmt.Errorf("index: delete container: %w", err)
	}
	if err := b.Merge(astatsKey(account), encodeCounters(-1, -u[0], -u[1]), nil); err != nil {
		return fmt.Errorf("index: delete container: %w", err)
	}
	ix.noteOperand(astatsKey(account))
	return storageErr("delete container", b.Commit(pebble.Sync))
}

// GetAccount returns an account's usage totals (zero for an account with no containers).
func (ix *Index) GetAccount(ctx context.Context, account string) (meta.Account, error) {
	if err := ctx.Err(); err != nil {
		return meta.Account{}, err
	}
	u, err := ix.counters(astatsKey(account), 3)
	if err != nil {
		return meta.Account{}, err
	}
	return meta.Account{Name: account, ContainerCount: u[0], ObjectCount: u[1], BytesUsed: u[2]}, nil
}
