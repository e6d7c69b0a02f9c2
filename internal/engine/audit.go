package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// The audit re-reads what a device stores, with the checks a read makes, so that a copy that
// went bad is found before a client (or the last good replica's disk) needs it. A version
// found corrupt goes through corrupt, exactly as a failed client read: flagged, a bad data file
// moved to quarantine, and from then on reads answer meta.ErrCorrupt until a write or the
// replicator replaces it.

// AuditStats counts what one audit pass over a device's objects did.
type AuditStats struct {
	Records int64 // records visited
	Bytes   int64 // bytes read: records and data files
	// Corrupt counts the versions this pass found corrupt and flagged. A version that changed
	// while it was being read (overwritten, deleted) is not counted, nor flagged.
	Corrupt int64
	// Flagged counts the versions already flagged corrupt, which the pass does not read again.
	Flagged int64
	// ReadErrors counts data files the disk failed to read (an I/O error says nothing about
	// the bytes: the version is left alone, and the error logged).
	ReadErrors int64
}

// AuditOptions pace and observe an audit pass.
type AuditOptions struct {
	// Pace is called before the pass reads: with records 1 and the record's size before each
	// record, with records 0 and a block's size before each block of a data file. It is the
	// rate limiter (records and bytes per second); its error stops the pass. Nil: no pacing.
	Pace func(ctx context.Context, records, bytes int64) error
	// Progress, if set, is called after each batch of records with how far the pass has come,
	// in the LSM bytes (by Pebble's estimate) of the keys passed; AuditSize is the whole.
	Progress func(done int64)
}

// auditBatch bounds the records read under one LSM iterator. The pass reopens its iterator
// every batch: an iterator pins the LSM's files as they were when it opened, and a pass that
// takes days must not keep compactions from freeing space. Data files are read after the
// iterator is closed.
const auditBatch = 64

// auditBatchBytes bounds the record bytes a batch holds in memory (inline objects are up to
// MaxInlineThreshold each).
const auditBatchBytes = 8 << 20

// AuditSize estimates the LSM bytes an audit pass over the device's objects walks, the unit of
// AuditOptions.Progress (0 when the records are still in memory only).
func (e *Engine) AuditSize() int64 {
	n, err := e.cfg.DB.EstimateDiskUsage([]byte{keyPrefix}, []byte{keyPrefix + 1})
	if err != nil {
		return 0
	}
	return int64(n)
}

// auditRecord is a record as the pass read it.
type auditRecord struct{ key, raw []byte }

// Audit reads every object record of the device in key order and verifies it as reads do: the
// record's checksum, inline bytes against the data checksum, a manifest's segment list kept
// apart, and every data file whole (each block's checksum, the file's length, and the
// checksum of all its bytes end to end). A version that fails is flagged corrupt (as a failed
// read would), unless it changed meanwhile. Versions already flagged are skipped.
func (e *Engine) Audit(ctx context.Context, opts AuditOptions) (AuditStats, error) {
	var st AuditStats
	pace := opts.Pace
	if pace == nil {
		pace = func(context.Context, int64, int64) error { return nil }
	}
	lower, upper := []byte{keyPrefix}, []byte{keyPrefix + 1}
	for {
		if e.closed.Load() {
			return st, errClosed
		}
		batch, err := e.auditRead(ctx, lower, upper, pace, &st)
		if err != nil {
			return st, err
		}
		for _, r := range batch {
			if err := e.auditOne(ctx, r.key, r.raw, pace, &st); err != nil {
				return st, err
			}
		}
		if len(batch) == 0 {
			return st, nil
		}
		last := batch[len(batch)-1].key
		if opts.Progress != nil {
			if n, err := e.cfg.DB.EstimateDiskUsage([]byte{keyPrefix}, last); err == nil {
				opts.Progress(int64(n))
			}
		}
		// The next batch starts right after the last key read.
		lower = append(bytes.Clone(last), 0)
	}
}

// auditRead reads the next batch of records from lower on, pacing each before reading its
// value.
func (e *Engine) auditRead(ctx context.Context, lower, upper []byte, pace func(context.Context, int64, int64) error, st *AuditStats) ([]auditRecord, error) {
	it, err := e.cfg.DB.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, storageErr("auditing", err)
	}
	var batch []auditRecord
	held := 0
	for ok := it.First(); ok && len(batch) < auditBatch && held < auditBatchBytes; ok = it.Next() {
		lv := it.LazyValue()
		size := lv.Len()
		if err := pace(ctx, 1, int64(size)); err != nil {
			it.Close()
			return nil, err
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return nil, storageErr("auditing", err)
		}
		batch = append(batch, auditRecord{key: bytes.Clone(it.Key()), raw: bytes.Clone(v)})
		held += len(v)
		st.Records++
		st.Bytes += int64(len(v))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, storageErr("auditing", err)
	}
	return batch, nil
}

// auditOne verifies one record as read by the pass.
func (e *Engine) auditOne(ctx context.Context, key, raw []byte, pace func(context.Context, int64, int64) error, st *AuditStats) error {
	if e.isFlagged(key) {
		st.Flagged++
		return nil
	}
	fail := func(rec *record, why string) {
		if e.flagCorrupt(key, raw, rec, why) {
			st.Corrupt++
		}
	}
	rec, err := decodeRecord(raw)
	if err != nil {
		fail(nil, err.Error())
		return nil
	}
	if rec.obj.Deleted {
		return nil
	}
	if rec.apart {
		if err := e.loadSegments(key, rec); err != nil {
			if !errors.Is(err, meta.ErrCorrupt) {
				return err
			}
			// A write between reading the record and its list replaces both: then the
			// record differs from raw, and flagCorrupt leaves it alone.
			fail(rec, err.Error())
			return nil
		}
	}
	if !rec.isFile {
		if !rec.inlineIntact() {
			fail(rec, "inline data checksum mismatch")
		}
		return nil
	}
	return e.auditFile(ctx, key, raw, rec, pace, st)
}

// auditFile reads a record's data file whole through the reader that GETs use, which checks
// every block (and a file shorter than its record), and checks the checksum of all the bytes.
func (e *Engine) auditFile(ctx context.Context, key, raw []byte, rec *record, pace func(context.Context, int64, int64) error, st *AuditStats) error {
	fail := func(why string) {
		if e.flagCorrupt(key, raw, rec, why) {
			st.Corrupt++
		}
	}
	f, err := e.cfg.FS.Open(e.cfg.FS.PathJoin(e.objPath, rec.file))
	if err != nil {
		if notExist(err) {
			// An overwrite or delete removes the old file after its commit: the record then
			// differs from raw, and flagCorrupt does not report it.
			fail("data file missing")
			return nil
		}
		st.ReadErrors++
		e.log.Warn("auditor cannot open a data file", "file", rec.file, "err", err)
		return nil
	}
	r := &fileReader{e: e, f: f, rec: rec, key: key, raw: raw, end: rec.dataLen, blkOff: -1}
	defer r.Close()
	buf := make([]byte, rec.block)
	var crc uint32
	for r.off < r.end {
		if err := pace(ctx, 0, min(rec.block, r.end-r.off)); err != nil {
			return err
		}
		n, err := io.ReadFull(r, buf[:min(rec.block, r.end-r.off)])
		crc = crc32.Update(crc, castagnoli, buf[:n])
		st.Bytes += int64(n)
		if err != nil {
			if r.flagged {
				st.Corrupt++
			} else if !errors.Is(err, meta.ErrCorrupt) {
				st.ReadErrors++
				e.log.Warn("auditor cannot read a data file", "file", rec.file, "err", err)
			}
			return nil
		}
	}
	if crc != rec.dataCRC {
		fail(fmt.Sprintf("data checksum %08x, want %08x", crc, rec.dataCRC))
	}
	return nil
}

// inlineIntact reports whether inline bytes match their checksum; reads check it before
// serving them.
func (r *record) inlineIntact() bool {
	return crc32.Checksum(r.inline, castagnoli) == r.dataCRC
}

// Version returns the current version of name as its record says (a tombstone has Deleted
// set), without verifying its bytes and without flagging anything: it takes no lock, so a
// caller holding the name's lock (LockName) may call it. A record that does not decode is
// meta.ErrCorrupt, a name never written meta.ErrNotFound. A manifest whose segment list is
// kept apart has Summary, not Manifest.
func (e *Engine) Version(name meta.ObjectName) (meta.Object, error) {
	if e.closed.Load() {
		return meta.Object{}, errClosed
	}
	rec, _, err := e.load(objectKey(nil, name))
	if err != nil {
		return meta.Object{}, err
	}
	if rec == nil {
		return meta.Object{}, fmt.Errorf("engine: %q: %w", name.Object, meta.ErrNotFound)
	}
	return rec.obj, nil
}

// SaveQuarantined keeps bytes that failed their checksum elsewhere on the device (a listing
// row the index dropped) in the device's quarantine directory, as the engine keeps a bad
// record: Dir/quarantine/<hash of key>-<nanos>.<kind>, the key, a newline, then the bytes.
func (e *Engine) SaveQuarantined(key, raw []byte, kind string) { e.keepQuarantined(key, raw, kind) }
