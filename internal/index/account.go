package index

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// The account service, as Swift's account server keeps it: one row per container of the
// account ('r' keys), reported by the container's replicas, with put and delete timestamps
// (newest wins) and the container's usage. The account's listing is its live rows, and its
// totals (the 's' account counters) are the sum of its live rows, kept as merge operands that
// each row change adds its difference to.
//
// A row is linked when its container lives on this device too and was created with its account
// row here (always, in the embedded default). A linked row's usage is the container's own
// counters, read live, and every object write into the container adds to the account totals in
// its own batch, so that a HEAD of the account right after a PUT shows it. Whether a container
// is linked is therefore read on the object write path; linkCache keeps it in memory. Linking
// and unlinking happen with every usage writer excluded (exclusiveUsage), so a write never
// decides with a stale answer. A row that is not linked holds the usage its container last
// reported, which the container's node resends when it changes (the stats pass).
//
// Invariant: the account counters = Σ over live rows (1, usage), usage being the container's
// counters for a linked row and the stored counts otherwise. A linked row is live, and its
// container's record says localRow.

// lockRow locks one account row by name; see rowLocks.
func (ix *Index) lockRow(account, container string) (unlock func()) {
	h := fnv.New32a()
	h.Write([]byte(account))
	h.Write([]byte{0})
	h.Write([]byte(container))
	mu := &ix.rowLocks[h.Sum32()%uint32(len(ix.rowLocks))]
	mu.Lock()
	return mu.Unlock
}

// row returns the account row of a container, nil if there is none.
func (ix *Index) row(account, container string) (*accountRow, error) {
	key := rowKey(account, container)
	v, err := ix.get(key)
	if err != nil || v == nil {
		return nil, err
	}
	r, err := decodeRow(key, container, v)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// mergeRow merges a report into the row kept: the newest put and delete timestamps win, and the
// usage is the report's (Swift's rule: the latest report counts) unless the report is about an
// earlier container of that name (an older put timestamp). A deleted row counts nothing.
func mergeRow(old *accountRow, in meta.ContainerRow) accountRow {
	r := accountRow{ContainerRow: in}
	if old != nil {
		r.linked = old.linked
		if in.PutTimestamp < old.PutTimestamp {
			r.ObjectCount, r.BytesUsed = old.ObjectCount, old.BytesUsed
		}
		r.PutTimestamp = max(old.PutTimestamp, in.PutTimestamp)
		r.DeleteTimestamp = max(old.DeleteTimestamp, in.DeleteTimestamp)
	}
	if r.Deleted() {
		r.ObjectCount, r.BytesUsed, r.linked = 0, 0, false
	}
	return r
}

// rowMode says what a row change does to the row's link with its container.
type rowMode int

const (
	keepLink   rowMode = iota // a report from a container replica: linked stays linked while live
	linkIfLive                // the container is created here with its row here
	unlink                    // the container is deleted here
)

// contribution is what a row adds to its account's totals. For a linked row it reads the
// container's counters: the caller excludes usage writers.
func (ix *Index) contribution(account string, r *accountRow) ([3]int64, error) {
	if r == nil || r.Deleted() {
		return [3]int64{}, nil
	}
	if !r.linked {
		return [3]int64{1, r.ObjectCount, r.BytesUsed}, nil
	}
	u, err := ix.counters(cstatsKey(account, r.Name), 2)
	if err != nil {
		return [3]int64{}, err
	}
	return [3]int64{1, u[0], u[1]}, nil
}

// putRow adds to b the merge of in into its row and the change of the account totals it makes,
// and returns whether the row is linked after it. The caller holds the row locked and holds
// the usage hold, exclusively when the row is or becomes linked.
func (ix *Index) putRow(b *pebble.Batch, account string, in meta.ContainerRow, mode rowMode) (linked bool, err error) {
	old, err := ix.row(account, in.Name)
	if err != nil {
		return false, err
	}
	r := mergeRow(old, in)
	switch mode {
	case linkIfLive:
		r.linked = !r.Deleted()
	case unlink:
		r.linked = false
	}
	if old != nil && *old == r {
		return r.linked, nil
	}
	before, err := ix.contribution(account, old)
	if err != nil {
		return false, err
	}
	after, err := ix.contribution(account, &r)
	if err != nil {
		return false, err
	}
	key := rowKey(account, in.Name)
	if err := b.Set(key, encodeRow(key, r), nil); err != nil {
		return false, fmt.Errorf("index: account row: %w", err)
	}
	if delta := [3]int64{after[0] - before[0], after[1] - before[1], after[2] - before[2]}; delta != [3]int64{} {
		key := astatsKey(account)
		if err := b.Merge(key, encodeCounters(delta[:]...), nil); err != nil {
			return false, fmt.Errorf("index: account row: %w", err)
		}
		ix.noteOperand(key)
	}
	return r.linked, nil
}

// UpdateAccountRow merges a container's row, as one of its replicas reports it, into this
// device's account listing and totals (Swift's account server's container PUT), durably.
func (ix *Index) UpdateAccountRow(ctx context.Context, account string, in meta.ContainerRow) error {
	return ix.updateAccountRow(ctx, account, in, pebble.Sync)
}

// updateAccountRow is UpdateAccountRow, committed with opts (unsynced for a batch of rows that
// the caller syncs at once).
func (ix *Index) updateAccountRow(ctx context.Context, account string, in meta.ContainerRow, opts *pebble.WriteOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if account == "" || in.Name == "" || in.PutTimestamp < 0 || in.DeleteTimestamp < 0 {
		return fmt.Errorf("index: account row %q/%q: %w", account, in.Name, meta.ErrInvalidName)
	}
	unlock := ix.lockRow(account, in.Name)
	old, err := ix.row(account, in.Name)
	if err != nil {
		unlock()
		return err
	}
	if old != nil && old.linked {
		unlock()
		return ix.updateLinkedRow(account, in, opts)
	}
	defer unlock()
	defer ix.HoldUsage()()
	b := ix.db.NewBatch()
	defer b.Close()
	if _, err := ix.putRow(b, account, in, keepLink); err != nil {
		return err
	}
	return storageErr("account row", b.Commit(opts))
}

// updateLinkedRow is UpdateAccountRow for a row linked to its container here: a report of the
// container's deletion (from a replica that saw it when this one did not) unlinks it, and the
// container's record stops feeding the account.
func (ix *Index) updateLinkedRow(account string, in meta.ContainerRow, opts *pebble.WriteOptions) error {
	ix.containers.Lock()
	defer ix.containers.Unlock()
	defer ix.lockRow(account, in.Name)()
	defer ix.exclusiveUsage()()
	b := ix.db.NewBatch()
	defer b.Close()
	linked, err := ix.putRow(b, account, in, keepLink)
	if err != nil {
		return err
	}
	rec, err := ix.record(account, in.Name)
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return err
	}
	exists := err == nil
	if exists && rec.localRow && !linked {
		rec.localRow = false
		if err := b.Set(containerKey(account, in.Name), encodeContainer(rec), nil); err != nil {
			return fmt.Errorf("index: account row: %w", err)
		}
	}
	if err := b.Commit(opts); err != nil {
		ix.links.forget(cstatsKey(account, in.Name)) // a failed commit may still have applied
		return storageErr("account row", err)
	}
	ix.links.set(cstatsKey(account, in.Name), exists && linked)
	return nil
}

// liveRow reports whether a listing value is a live account row. An unreadable one is skipped
// (and counted): a listing never shows what a row that failed its checksum says.
func (ix *Index) liveRow(k, v []byte) bool {
	r, err := decodeRow(k, "", v)
	if err != nil {
		ix.skipUnreadable(k, err)
		return false
	}
	return !r.Deleted()
}

// ListContainers returns a page of an account's containers (its live rows) with their usage.
// It lists every container, reserved names included: what clients may see is the front ends'
// decision.
func (ix *Index) ListContainers(ctx context.Context, account string, opts meta.ListOptions) (meta.ContainerListing, error) {
	var l meta.ContainerListing
	truncated, next, err := scan(ctx, ix.db, rowBase(account), opts, ix.liveRow,
		func(k []byte, name string, v []byte) error {
			r, err := decodeRow(k, name, v)
			if err != nil {
				ix.skipUnreadable(k, err)
				return errSkipRow
			}
			c := meta.Container{Name: name, Created: r.PutTimestamp, ObjectCount: r.ObjectCount, BytesUsed: r.BytesUsed}
			if r.linked {
				if err := ix.usage(account, name, &c); err != nil {
					return err
				}
			}
			l.Containers = append(l.Containers, c)
			return nil
		},
		func(p string) { l.CommonPrefixes = append(l.CommonPrefixes, p) })
	if err != nil {
		return meta.ContainerListing{}, err
	}
	l.Truncated = truncated
	if truncated {
		l.NextMarker = next
	}
	return l, nil
}

// linkCache remembers, by container (its usage key), whether a container's usage feeds this device's
// account totals (its record's localRow), so that object writes do not read the record. It is
// filled on demand and changed only with usage writers excluded, after the change commits.
type linkCache struct {
	mu sync.RWMutex
	m  map[string]bool
}

// maxLinks bounds the cache; past it, it starts again empty.
const maxLinks = 1 << 16

func (c *linkCache) get(key []byte) (local, ok bool) {
	c.mu.RLock()
	local, ok = c.m[string(key)]
	c.mu.RUnlock()
	return local, ok
}

// forget drops what the cache knows of a container, so that the next write reads its record.
func (c *linkCache) forget(key []byte) {
	c.mu.Lock()
	delete(c.m, string(key))
	c.mu.Unlock()
}

func (c *linkCache) set(key []byte, local bool) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxLinks {
		c.m = map[string]bool{}
	}
	c.m[string(key)] = local
	c.mu.Unlock()
}

// localRow reports whether a container's usage feeds this device's account totals; usageKey is
// its cstatsKey, which the caller has at hand. The caller holds the usage hold, so the answer
// cannot change before its batch commits.
func (ix *Index) localRow(usageKey []byte, account, container string) (bool, error) {
	if local, ok := ix.links.get(usageKey); ok {
		return local, nil
	}
	v, err := ix.get(containerKey(account, container))
	if err != nil {
		return false, err
	}
	local := false
	if v != nil {
		rec, err := decodeContainer(container, v)
		if err != nil {
			return false, err
		}
		local = rec.localRow
	}
	ix.links.set(usageKey, local)
	return local, nil
}

// changedSet collects the containers whose usage changed and whose account row is elsewhere,
// for the stats pass; when it would grow past maxChanged it gives up and says so (the pass then
// visits every container).
type changedSet struct {
	mu       sync.Mutex
	m        map[[2]string]struct{}
	overflow bool
}

const maxChanged = 100_000

func (s *changedSet) note(account, container string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.overflow {
		return
	}
	if s.m == nil {
		s.m = map[[2]string]struct{}{}
	}
	if len(s.m) >= maxChanged {
		s.m, s.overflow = nil, true
		return
	}
	s.m[[2]string{account, container}] = struct{}{}
}

// TakeChanged returns and forgets the containers (account, container) whose usage changed
// since the last call and whose account row is elsewhere; all is true when too many changed to
// keep track of, and every container must be looked at.
func (ix *Index) TakeChanged() (containers [][2]string, all bool) {
	s := &ix.changed
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.m {
		containers = append(containers, k)
	}
	all = s.overflow
	s.m, s.overflow = nil, false
	return containers, all
}
