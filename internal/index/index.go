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
	"time"

	"github.com/cockroachdb/pebble/v2"
	"golang.org/x/time/rate"

	"github.com/cairn-store/cairn/internal/meta"
)

// Index is the listing index of one device. It owns keys that start with 'c', 'a', 's', 'r'
// and 'x', and "!index-version".
type Index struct {
	db *pebble.DB
	// containers serializes the rare container lifecycle changes (create, metadata, delete,
	// the usage last reported to the account), which read-modify-write one record; object
	// entries never take it.
	containers sync.Mutex
	// rowLocks serialize the changes of one account row (account.go), by name.
	rowLocks     [256]sync.Mutex
	counterState usageState
	links        linkCache
	changed      changedSet
	// unreadable: rows that failed their checksum, met by reads and writes (audit.go).
	unreadable unreadableState
	log        *slog.Logger
}

// New returns an index over db (which must have been opened with Merger). log may be nil.
func New(db *pebble.DB, log *slog.Logger) *Index {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ix := &Index{db: db, log: log}
	ix.unreadable.logs = rate.Sometimes{First: 10, Interval: time.Minute}
	return ix
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

// PutEntry adds to b the listing entry of an object version and the usage change it makes. The
// caller holds the object's name locked until b commits. An entry older than the one listed, or
// than the listing tombstone of the name, is ignored: a late PUT row must not list again an
// object deleted after it.
func (ix *Index) PutEntry(b *pebble.Batch, account, container string, e meta.ListEntry) error {
	prev, deletedAt, unreadable, err := ix.listed(account, container, e.Name)
	if err != nil {
		return err
	}
	if unreadable {
		if err := noteRecount(b, account, container); err != nil {
			return fmt.Errorf("index: put entry: %w", err)
		}
	}
	if prev == nil && deletedAt >= e.Timestamp {
		return nil
	}
	if deletedAt != 0 {
		// The tombstone gives way; its age key goes with it.
		if err := b.Delete(tombAgeKey(deletedAt, entryKey(account, container, e.Name)), nil); err != nil {
			return fmt.Errorf("index: put entry: %w", err)
		}
	}
	return ix.ReplaceEntry(b, account, container, e, prev)
}

// ReplaceEntry is PutEntry for a caller that knows the entry listed now (nil for none): the
// object engine of a device whose listing only that engine feeds, whose record commits in the
// same batch as the entry, so that the two always agree. It saves a lookup on every PUT.
func (ix *Index) ReplaceEntry(b *pebble.Batch, account, container string, e meta.ListEntry, prev *meta.ListEntry) error {
	var objects, size int64 = 1, e.Size
	if prev != nil {
		if prev.Timestamp >= e.Timestamp {
			return nil
		}
		objects, size = 0, e.Size-prev.Size
	}
	key := entryKey(account, container, e.Name)
	if err := b.Set(key, encodeEntry(key, e), nil); err != nil {
		return fmt.Errorf("index: put entry: %w", err)
	}
	return ix.addUsage(b, account, container, objects, size)
}

// DeleteEntry adds to b the removal of an object's listing entry (if not newer than ts) and the
// usage change it makes, and leaves a listing tombstone at ts (Swift's deleted row), which
// listings skip and which keeps an older PUT row from listing the name again until the sweeper
// reclaims it. Same locking rule as PutEntry.
func (ix *Index) DeleteEntry(b *pebble.Batch, account, container, object string, ts meta.Timestamp) error {
	return ix.deleteEntry(b, account, container, object, ts, true)
}

// RemoveEntry is DeleteEntry without a listing tombstone, for a listing only its device's
// engine feeds: the engine's own tombstone already refuses an older PUT, and listings of
// containers with many deletes stay as fast as any.
func (ix *Index) RemoveEntry(b *pebble.Batch, account, container, object string, ts meta.Timestamp) error {
	return ix.deleteEntry(b, account, container, object, ts, false)
}

func (ix *Index) deleteEntry(b *pebble.Batch, account, container, object string, ts meta.Timestamp, tombstone bool) error {
	prev, deletedAt, unreadable, err := ix.listed(account, container, object)
	if err != nil {
		return err
	}
	if unreadable {
		if err := noteRecount(b, account, container); err != nil {
			return fmt.Errorf("index: delete entry: %w", err)
		}
	}
	if (prev != nil && prev.Timestamp > ts) || (deletedAt != 0 && deletedAt >= ts) {
		return nil
	}
	key := entryKey(account, container, object)
	if tombstone || deletedAt != 0 {
		if deletedAt != 0 {
			if err := b.Delete(tombAgeKey(deletedAt, key), nil); err != nil {
				return fmt.Errorf("index: delete entry: %w", err)
			}
		}
		err = errors.Join(b.Set(key, encodeTombstone(key, ts), nil), b.Set(tombAgeKey(ts, key), nil, nil))
	} else if prev != nil || unreadable {
		err = b.Delete(key, nil)
	}
	if err != nil {
		return fmt.Errorf("index: delete entry: %w", err)
	}
	if prev == nil {
		return nil
	}
	return ix.addUsage(b, account, container, -1, -prev.Size)
}

// listed returns what the listing holds for an object: its entry, or the time of its listing
// tombstone, or neither. A row that fails its checksum or does not decode counts as neither
// (unreadable), as the engine replaces a record that does not decode: a corrupt row must not
// block the writes that replace it. Its usage is then unknown, so the caller notes the
// container in its batch for a recount of its usage by the next audit pass (audit.go).
func (ix *Index) listed(account, container, object string) (_ *meta.ListEntry, _ meta.Timestamp, unreadable bool, _ error) {
	key := entryKey(account, container, object)
	v, err := ix.get(key)
	if err != nil || v == nil {
		return nil, 0, false, err
	}
	if isTombstone(v) {
		ts, err := decodeTombstone(key, object, v)
		if err == nil {
			return nil, ts, false, nil
		}
		ix.replacingUnreadable(account, container, key, v, err)
		return nil, 0, true, nil
	}
	e, err := decodeEntry(key, object, v)
	if err != nil {
		ix.replacingUnreadable(account, container, key, v, err)
		return nil, 0, true, nil
	}
	return &e, 0, false, nil
}

// GetAccount returns an account's usage totals (zero for an account with no containers): the
// sum of its live rows on this device.
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
