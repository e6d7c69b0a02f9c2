package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"golang.org/x/time/rate"

	"github.com/cairn-store/cairn/internal/binenc"
	"github.com/cairn-store/cairn/internal/meta"
)

// Listing rows carry checksums (keys.go). A row that fails its checksum is never served:
// listings skip it (and count it), and a write that replaces it treats it as absent. The row's
// loss leaves its container's usage unknown, so the write's batch also notes the container for
// a recount (a recountKey). The audit pass verifies every row, seals the rows written before
// checksums existed, and removes a bad row (or rebuilds it, where the caller knows what it
// held), keeping its bytes in quarantine; container replication restores a removed row from
// another replica. Then it recounts the usage of the noted containers and accounts from what
// their listings hold, so that counters and listings agree again.
//
// Not covered: container records ('a') and usage counters ('s') carry no checksum of their
// own (Pebble's block checksums cover them on disk, as everything else).

// recountPrefix starts the keys of the containers (and accounts) whose usage waits for a
// recount: binenc account, then the container's name ("" for the account's totals, which no
// container is named). The value is a token that changes with every note, so that a recount
// forgets only the note it answered.
var recountPrefix = []byte("!index-recount\x00")

func recountKey(account, container string) []byte {
	return append(binenc.AppendString(bytes.Clone(recountPrefix), account), container...)
}

var recountSeq atomic.Uint64

// noteRecount adds to b the note that a container's usage (container "": an account's totals)
// must be recounted.
func noteRecount(b *pebble.Batch, account, container string) error {
	token := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(meta.Now())), recountSeq.Add(1))
	return b.Set(recountKey(account, container), token, nil)
}

// unreadableState counts the unreadable rows that reads and writes met.
type unreadableState struct {
	skipped  atomic.Int64
	replaced atomic.Int64
	// logs bounds the log lines of a bad row met by listings, which may list it often before
	// the auditor comes by.
	logs rate.Sometimes
}

// skipUnreadable counts and logs a row a read skipped.
func (ix *Index) skipUnreadable(k []byte, err error) {
	ix.unreadable.skipped.Add(1)
	ix.unreadable.logs.Do(func() {
		ix.log.Error("listing row fails its checksum: skipped, never listed; the auditor removes it", "key", fmt.Sprintf("%q", k), "err", err)
	})
}

// replacingUnreadable counts and logs a row a write replaces without knowing what it held;
// the write notes its container for a recount.
func (ix *Index) replacingUnreadable(account, container string, k, v []byte, err error) {
	ix.unreadable.replaced.Add(1)
	ix.log.Error("replacing a listing row that fails its checksum; the container's usage is recounted by the next audit pass",
		"account", account, "container", container, "key", fmt.Sprintf("%q", k), "value", fmt.Sprintf("%x", v), "err", err)
}

// Stats are the index's counts of rows that failed their checksums outside the audit.
type Stats struct {
	// UnreadableRowsSkipped counts the times listings skipped a row that failed its checksum
	// (a row listed often counts often, until the auditor removes it).
	UnreadableRowsSkipped int64
	// UnreadableRowsReplaced counts rows failing their checksums that writes replaced.
	UnreadableRowsReplaced int64
}

// Stats returns the index's counters.
func (ix *Index) Stats() Stats {
	return Stats{UnreadableRowsSkipped: ix.unreadable.skipped.Load(), UnreadableRowsReplaced: ix.unreadable.replaced.Load()}
}

// AuditOptions configure an audit pass over the index.
type AuditOptions struct {
	// Pace is called before each row is read, with records 1 and the row's size (key and
	// value), and before each row a recount reads; its error stops the pass. Nil: no pacing.
	Pace func(ctx context.Context, records, bytes int64) error
	// Progress, if set, is called after each batch of rows with the LSM bytes (by Pebble's
	// estimate) of the rows passed; AuditSize is the whole.
	Progress func(done int64)
	// Lock locks an object's name against every writer of its listing entry (the engine's
	// name lock), as the sweeper does. Required.
	Lock func(account, container, object string) (unlock func())
	// Rebuild, if set, returns what the entry of a bad row should hold, called with the name
	// locked: nil for no entry (the row is then removed). The storage node sets it where its
	// own engine is the only thing that feeds the listing (a node alone), and the object's
	// record says what the entry held. Unset, bad rows are removed.
	Rebuild func(account, container, object string) (*meta.ListEntry, error)
	// Quarantine, if set, keeps the bytes of a bad row before it is removed or rebuilt.
	Quarantine func(key, value []byte)
}

// AuditStats counts what an audit pass over the index did.
type AuditStats struct {
	Rows  int64 // rows visited: listing entries and tombstones, account rows
	Bytes int64 // their bytes, keys and values
	// Corrupt counts the rows found failing their checksums (or not decoding) and removed or
	// rebuilt; Rebuilt, those of them rebuilt (from the object's record, or an account row
	// from its container's record).
	Corrupt, Rebuilt int64
	// Sealed counts rows of earlier versions given their checksum.
	Sealed int64
	// Recounted counts the containers and accounts whose usage counters were corrected.
	Recounted int64
}

// auditBatch and auditBatchBytes bound what is read under one LSM iterator (see the engine's
// audit: an iterator pins the LSM's files as they were when it opened).
const (
	auditBatch      = 256
	auditBatchBytes = 4 << 20
)

// AuditSize estimates the LSM bytes an audit pass over the index walks, the unit of
// AuditOptions.Progress (0 when the rows are still in memory only).
func (ix *Index) AuditSize() int64 {
	var total int64
	for _, p := range []byte{prefixEntry, prefixRow} {
		if n, err := ix.db.EstimateDiskUsage([]byte{p}, []byte{p + 1}); err == nil {
			total += int64(n)
		}
	}
	return total
}

// Audit verifies every listing row (container listings, then account rows) in key order, seals
// the unsealed ones and removes or rebuilds the bad ones, then recounts the usage of the
// containers and accounts whose rows it changed (and of the containers writes noted).
func (ix *Index) Audit(ctx context.Context, opts AuditOptions) (AuditStats, error) {
	var st AuditStats
	if opts.Lock == nil {
		return st, errors.New("index: audit without a lock of names")
	}
	if opts.Pace == nil {
		opts.Pace = func(context.Context, int64, int64) error { return nil }
	}
	a := &audit{ix: ix, opts: opts, st: &st}
	entries, err := a.span(ctx, prefixEntry, 0, a.checkEntry, a.fixEntry)
	if err != nil {
		return st, err
	}
	if err := a.recounts(ctx, false); err != nil {
		return st, err
	}
	if _, err := a.span(ctx, prefixRow, entries, a.checkRow, a.fixRow); err != nil {
		return st, err
	}
	return st, a.recounts(ctx, true)
}

// recounts recounts the usage of every container noted for it (accounts: the totals of every
// account noted). A recount that fails stays noted, for the next pass.
func (a *audit) recounts(ctx context.Context, accounts bool) error {
	ix := a.ix
	it, err := ix.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: recountPrefix, UpperBound: successor(recountPrefix)})
	if err != nil {
		return storageErr("recounting", err)
	}
	type note struct {
		account, container string
		token              []byte
	}
	var notes []note
	for ok := it.First(); ok; ok = it.Next() {
		d := binenc.Decoder{B: it.Key()[len(recountPrefix):]}
		account := d.Str()
		if d.Err != nil {
			ix.log.Warn("dropping a malformed recount note", "key", fmt.Sprintf("%q", it.Key()))
			ix.db.Delete(it.Key(), pebble.NoSync)
			continue
		}
		if container := string(d.B); (container == "") == accounts {
			notes = append(notes, note{account, container, bytes.Clone(it.Value())})
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return storageErr("recounting", err)
	}
	for _, n := range notes {
		if accounts {
			err = a.recountAccount(ctx, n.account, n.token)
		} else {
			err = a.recountContainer(ctx, n.account, n.container, n.token)
		}
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			ix.log.Warn("recounting usage failed; retried next pass", "account", n.account, "container", n.container, "err", err)
		}
	}
	return nil
}

// audit is one pass.
type audit struct {
	ix   *Index
	opts AuditOptions
	st   *AuditStats
}

// auditRow is a row the pass must act on: bad (failing its checksum, or not decoding) or
// unsealed.
type auditRow struct {
	key, value []byte
	bad        error
}

// span walks the rows under prefix in batches, checking each, and fixes those check finds bad
// or unsealed once the batch's iterator is closed. base is the LSM bytes passed before the
// span; span returns it with the span's own.
func (a *audit) span(ctx context.Context, prefix byte, base int64, check func(k, v []byte) (sealed bool, err error),
	fix func(r auditRow) error,
) (int64, error) {
	db := a.ix.db
	lower, upper := []byte{prefix}, []byte{prefix + 1}
	for {
		it, err := db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return base, storageErr("auditing", err)
		}
		var todo []auditRow
		var last []byte
		n, held := 0, 0
		for ok := it.First(); ok && n < auditBatch && held < auditBatchBytes; ok = it.Next() {
			lv := it.LazyValue()
			size := int64(len(it.Key()) + lv.Len())
			if err := a.opts.Pace(ctx, 1, size); err != nil {
				it.Close()
				return base, err
			}
			v, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return base, storageErr("auditing", err)
			}
			n++
			a.st.Rows++
			a.st.Bytes += size
			last = bytes.Clone(it.Key())
			if sealed, bad := check(it.Key(), v); bad != nil || !sealed {
				todo = append(todo, auditRow{key: last, value: bytes.Clone(v), bad: bad})
				held += len(v)
			}
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return base, storageErr("auditing", err)
		}
		for _, r := range todo {
			if err := fix(r); err != nil {
				return base, err
			}
		}
		if n == 0 {
			if end, err := db.EstimateDiskUsage([]byte{prefix}, upper); err == nil {
				base += int64(end)
			}
			return base, nil
		}
		if a.opts.Progress != nil {
			if done, err := db.EstimateDiskUsage([]byte{prefix}, last); err == nil {
				a.opts.Progress(base + int64(done))
			}
		}
		lower = append(last, 0)
	}
}

// checkEntry verifies a row of a container listing: an entry or a listing tombstone.
func (a *audit) checkEntry(k, v []byte) (sealed bool, err error) {
	_, _, object, err := parseEntryKey(k)
	if err != nil {
		return false, err
	}
	kind, _, sealed, err := openRow(k, v)
	if err != nil {
		return false, err
	}
	switch kind {
	case valueVersion:
		_, err = decodeEntry(k, object, v)
	case tombstoneValue:
		_, err = decodeTombstone(k, object, v)
	default:
		err = fmt.Errorf("index: listing row %q of kind %d: %w: %w", k, kind, errBadValue, meta.ErrCorrupt)
	}
	return sealed, err
}

// checkRow verifies an account row.
func (a *audit) checkRow(k, v []byte) (sealed bool, err error) {
	_, container, err := parseRowKey(k)
	if err != nil {
		return false, err
	}
	if _, err := decodeRow(k, container, v); err != nil {
		return false, err
	}
	_, _, sealed, _ = openRow(k, v)
	return sealed, nil
}

// unchanged reports whether k still holds v (the caller holds what locks its writers).
func (a *audit) unchanged(k, v []byte) (bool, error) {
	cur, err := a.ix.get(k)
	return err == nil && bytes.Equal(cur, v), err
}

// dropMalformedKey removes a row whose key no writer makes (its names do not parse): nothing
// can lock it, nothing would replace it, and no listing shows it right.
func (a *audit) dropMalformedKey(r auditRow) error {
	a.quarantine(r)
	a.ix.log.Error("listing row under a malformed key removed", "key", fmt.Sprintf("%q", r.key), "err", r.bad)
	a.st.Corrupt++
	return storageErr("removing a malformed listing row", a.ix.db.Delete(r.key, pebble.Sync))
}

func (a *audit) quarantine(r auditRow) {
	if a.opts.Quarantine != nil {
		a.opts.Quarantine(r.key, r.value)
	}
}

// fixEntry seals an unsealed listing row, or removes (rebuilds) a bad one, with its name
// locked and only if it still holds what the pass read.
func (a *audit) fixEntry(r auditRow) error {
	account, container, object, err := parseEntryKey(r.key)
	if err != nil {
		return a.dropMalformedKey(r)
	}
	defer a.opts.Lock(account, container, object)()
	if same, err := a.unchanged(r.key, r.value); err != nil || !same {
		return err // replaced meanwhile, by a write that saw what it replaced
	}
	db := a.ix.db
	if r.bad == nil {
		a.st.Sealed++
		// Not synced: a seal lost in a crash is made again by the next pass.
		return storageErr("sealing a listing row", db.Set(r.key, seal(r.key, r.value), pebble.NoSync))
	}
	var entry *meta.ListEntry
	if a.opts.Rebuild != nil {
		if entry, err = a.opts.Rebuild(account, container, object); err != nil {
			a.ix.log.Warn("a bad listing row cannot be rebuilt now; retried next pass", "account", account, "container", container, "object", object, "err", err)
			return nil
		}
	}
	a.quarantine(r)
	b := db.NewBatch()
	defer b.Close()
	if entry != nil {
		entry.Name = object
		err = b.Set(r.key, encodeEntry(r.key, *entry), nil)
	} else {
		err = b.Delete(r.key, nil)
	}
	if err == nil {
		err = noteRecount(b, account, container)
	}
	if err == nil {
		err = b.Commit(pebble.Sync)
	}
	if err != nil {
		return storageErr("replacing a bad listing row", err)
	}
	a.st.Corrupt++
	what := "removed (container replication restores it from another replica)"
	if entry != nil {
		a.st.Rebuilt++
		what = "rebuilt from the object's record"
	}
	a.ix.log.Error("listing row failed its checksum: "+what, "account", account, "container", container, "object", object, "err", r.bad)
	return nil
}

// fixRow seals an unsealed account row, or replaces a bad one: rebuilt as a linked row when the
// container lives here with its row linked (the row's usage is then the container's own
// counters, so nothing but its put timestamp is lost), removed otherwise (its container's
// replicas report it again).
func (a *audit) fixRow(r auditRow) error {
	account, container, err := parseRowKey(r.key)
	if err != nil {
		return a.dropMalformedKey(r)
	}
	ix := a.ix
	ix.containers.Lock()
	defer ix.containers.Unlock()
	defer ix.lockRow(account, container)()
	if same, err := a.unchanged(r.key, r.value); err != nil || !same {
		return err
	}
	if r.bad == nil {
		a.st.Sealed++
		return storageErr("sealing an account row", ix.db.Set(r.key, seal(r.key, r.value), pebble.NoSync))
	}
	defer ix.exclusiveUsage()()
	rec, err := ix.record(account, container)
	if err != nil && !errors.Is(err, meta.ErrNotFound) && !errors.Is(err, meta.ErrCorrupt) {
		return err
	}
	linked := err == nil && rec.localRow
	a.quarantine(r)
	b := ix.db.NewBatch()
	defer b.Close()
	if linked {
		row := accountRow{ContainerRow: meta.ContainerRow{Name: container, PutTimestamp: rec.Created}, linked: true}
		err = b.Set(r.key, encodeRow(r.key, row), nil)
	} else {
		err = b.Delete(r.key, nil)
	}
	if err == nil {
		err = noteRecount(b, account, "")
	}
	if err == nil {
		err = b.Commit(pebble.Sync)
	}
	if err != nil {
		return storageErr("replacing a bad account row", err)
	}
	a.st.Corrupt++
	what := "removed (the container's replicas report it again)"
	if linked {
		a.st.Rebuilt++
		what = "rebuilt from the container's record"
	}
	ix.log.Error("account row failed its checksum: "+what, "account", account, "container", container, "err", r.bad)
	return nil
}

// snapshot returns a view of the LSM in which every usage counter agrees with the rows it
// counts: it is taken with every usage writer excluded, and writers add to counters in the
// batches that change the rows.
func (ix *Index) snapshot() *pebble.Snapshot {
	release := ix.exclusiveUsage()
	defer release()
	return ix.db.NewSnapshot()
}

// snapCounters reads a usage vector of n elements from snap.
func snapCounters(snap *pebble.Snapshot, key []byte, n int) ([]int64, error) {
	c := make([]int64, n)
	v, closer, err := snap.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return c, nil
	}
	if err != nil {
		return nil, storageErr("reading usage", err)
	}
	defer closer.Close()
	if err := decodeCounters(v, c); err != nil {
		return nil, fmt.Errorf("index: usage counters: %w: %w", err, meta.ErrCorrupt)
	}
	return c, nil
}

// recountContainer makes a container's usage counters the sum of its live entries: it sums
// them in a snapshot and adds the difference to the counters (and to the account's totals, when
// the container's row here is linked), which is right whatever writes happened since, as every
// write adds its own difference. The sum is paced like the pass. The note (token) is forgotten
// in the same batch, unless a write noted the container again meanwhile.
func (a *audit) recountContainer(ctx context.Context, account, container string, token []byte) error {
	ix := a.ix
	snap := ix.snapshot()
	defer snap.Close()
	rec, err := snapContainer(snap, account, container)
	if err != nil {
		return err
	}
	skey := cstatsKey(account, container)
	var delta [2]int64
	if rec != nil {
		cur, err := snapCounters(snap, skey, 2)
		if err != nil {
			return err
		}
		var sum [2]int64
		err = a.walk(ctx, snap, containerBase(account, container), func(k, v []byte) error {
			if isTombstone(v) {
				return nil
			}
			if e, err := decodeEntry(k, "", v); err == nil {
				sum[0]++
				sum[1] += e.Size
			}
			return nil
		})
		if err != nil {
			return err
		}
		delta = [2]int64{sum[0] - cur[0], sum[1] - cur[1]}
	}
	// The same container still, and not deleted while its difference is added (a delete
	// removes its counters, which the difference must not bring back); no write in between
	// deciding what it adds and its commit, so that the note's token says whether one noted
	// the container again.
	ix.containers.Lock()
	defer ix.containers.Unlock()
	defer ix.exclusiveUsage()()
	b := ix.db.NewBatch()
	defer b.Close()
	if err := a.forgetNote(b, account, container, token); err != nil {
		return err
	}
	if rec != nil && delta != [2]int64{} {
		now, err := ix.record(account, container)
		if err != nil && !errors.Is(err, meta.ErrNotFound) {
			return err
		}
		if err == nil && now.Created == rec.Created {
			if err := b.Merge(skey, encodeCounters(delta[:]...), nil); err != nil {
				return storageErr("recounting", err)
			}
			ix.noteOperand(skey)
			local, err := ix.localRow(skey, account, container)
			if err != nil {
				return err
			}
			if local {
				akey := astatsKey(account)
				if err := b.Merge(akey, encodeCounters(0, delta[0], delta[1]), nil); err != nil {
					return storageErr("recounting", err)
				}
				ix.noteOperand(akey)
			} else {
				ix.changed.note(account, container) // the account replica elsewhere hears of it
			}
		} else {
			delta = [2]int64{}
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return storageErr("recounting", err)
	}
	if delta != [2]int64{} {
		a.st.Recounted++
		ix.log.Warn("container usage recounted from its listing", "account", account, "container", container,
			"objects", delta[0], "bytes", delta[1])
	}
	return nil
}

// recountAccount makes an account's totals the sum of its live rows' contributions (see
// account.go), as recountContainer does for a container.
func (a *audit) recountAccount(ctx context.Context, account string, token []byte) error {
	ix := a.ix
	snap := ix.snapshot()
	defer snap.Close()
	akey := astatsKey(account)
	cur, err := snapCounters(snap, akey, 3)
	if err != nil {
		return err
	}
	var sum [3]int64
	base := rowBase(account)
	err = a.walk(ctx, snap, base, func(k, v []byte) error {
		name := string(k[len(base):])
		r, err := decodeRow(k, name, v)
		if err != nil || r.Deleted() {
			return nil
		}
		objects, bytes := r.ObjectCount, r.BytesUsed
		if r.linked {
			u, err := snapCounters(snap, cstatsKey(account, name), 2)
			if err != nil {
				return err
			}
			objects, bytes = u[0], u[1]
		}
		sum[0]++
		sum[1] += objects
		sum[2] += bytes
		return nil
	})
	if err != nil {
		return err
	}
	delta := [3]int64{sum[0] - cur[0], sum[1] - cur[1], sum[2] - cur[2]}
	defer ix.exclusiveUsage()() // see recountContainer
	b := ix.db.NewBatch()
	defer b.Close()
	if err := a.forgetNote(b, account, "", token); err != nil {
		return err
	}
	if delta != [3]int64{} {
		if err := b.Merge(akey, encodeCounters(delta[:]...), nil); err != nil {
			return storageErr("recounting", err)
		}
		ix.noteOperand(akey)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return storageErr("recounting", err)
	}
	if delta != [3]int64{} {
		a.st.Recounted++
		ix.log.Warn("account totals recounted from its rows", "account", account, "containers", delta[0], "objects", delta[1], "bytes", delta[2])
	}
	return nil
}

// forgetNote adds to b the removal of a recount note, if it still holds token (a write that
// noted the container again since needs a recount of its own). The caller excludes the writes
// that note.
func (a *audit) forgetNote(b *pebble.Batch, account, container string, token []byte) error {
	key := recountKey(account, container)
	cur, err := a.ix.get(key)
	if err != nil || !bytes.Equal(cur, token) {
		return err
	}
	return storageErr("recounting", b.Delete(key, nil))
}

// walk calls fn with every row under base in snap, paced like the pass.
func (a *audit) walk(ctx context.Context, snap *pebble.Snapshot, base []byte, fn func(k, v []byte) error) error {
	it, err := snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: base, UpperBound: successor(base)})
	if err != nil {
		return storageErr("recounting", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err == nil {
			err = a.opts.Pace(ctx, 1, int64(len(it.Key())+len(v)))
		}
		if err == nil {
			err = fn(it.Key(), v)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return storageErr("recounting", errors.Join(it.Error(), it.Close()))
}

// snapContainer reads a container's record from snap (nil: none).
func snapContainer(snap *pebble.Snapshot, account, container string) (*containerRecord, error) {
	v, closer, err := snap.Get(containerKey(account, container))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storageErr("recounting", err)
	}
	defer closer.Close()
	rec, err := decodeContainer(container, v)
	if err != nil {
		return nil, err
	}
	return &rec, nil
}
