package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/vfs"
)

// Every data file a record points at has a key of its own, 'd' + the file's path, committed in
// the record's batch and deleted in the batch that stops pointing at it. Recovery then visits
// the data files that exist, not every record: with small objects inline (and the LSM's large
// values in blob files) reading every record costs seconds per million objects.
const fileKeyPrefix = 'd'

func fileKey(file string) []byte { return append([]byte{fileKeyPrefix}, file...) }

// A version found corrupt keeps its record (and its listing entry) and gets a flag, 'q' + its
// object key, holding why and when: reads of it answer meta.ErrCorrupt, the object stays
// visible to listings, metrics and the log, and a later write or delete of the name (a client,
// or replication restoring a good copy) clears the flag. Dropping the record instead would make
// the object vanish without a trace.
const corruptKeyPrefix = 'q'

func corruptKey(key []byte) []byte { return append([]byte{corruptKeyPrefix}, key...) }

// orphansDir is where Open moves data files that no record refers to.
const orphansDir = "orphans"

// trackDataFiles adds to b the file keys that replacing old with rec changes.
func trackDataFiles(b *pebble.Batch, key []byte, rec, old *record) error {
	if old != nil && old.isFile && (!rec.isFile || rec.file != old.file) {
		if err := b.Delete(fileKey(old.file), nil); err != nil {
			return err
		}
	}
	if rec.isFile && (old == nil || !old.isFile || old.file != rec.file) {
		return b.Set(fileKey(rec.file), key, nil)
	}
	return nil
}

// collectGarbage deals with what a crash can leave behind, before any write: temp files (never
// acknowledged) are removed; data files that no record refers to (written and renamed, but the
// record never committed; or replaced, and the removal after the commit never happened) are
// moved to Dir/quarantine/orphans and counted, never deleted: a file without a record may also
// be a file whose index was lost, and only the operator may decide that it is garbage.
func (e *Engine) collectGarbage() error {
	fs := e.cfg.FS
	tmps, err := fs.List(e.tmpPath)
	if err != nil {
		return storageErr("listing temp files", err)
	}
	for _, t := range tmps {
		e.removeTmp(fs.PathJoin(e.tmpPath, t))
	}
	orphans := fs.PathJoin(e.quaPath, orphansDir)
	moved := 0
	for i := range 256 {
		sub := fmt.Sprintf("%02x", i)
		dir := fs.PathJoin(e.objPath, sub)
		names, err := fs.List(dir)
		if err != nil {
			return storageErr("listing data files", err)
		}
		movedHere := 0
		for _, n := range names {
			if _, ok := hashOfDataFile(n); !ok {
				e.log.Warn("unknown file in data directory", "file", sub+"/"+n)
				continue
			}
			rel := sub + "/" + n
			_, closer, err := e.cfg.DB.Get(fileKey(rel))
			if err == nil {
				closer.Close()
				continue
			}
			if !errors.Is(err, pebble.ErrNotFound) {
				return storageErr("looking up data file", err)
			}
			if movedHere == 0 && moved == 0 {
				if err := vfs.MkdirAllDurable(fs, orphans, 0o755); err != nil {
					return storageErr("creating the orphans directory", err)
				}
			}
			if err := fs.Rename(fs.PathJoin(dir, n), fs.PathJoin(orphans, n)); err != nil {
				return storageErr("quarantining orphan data file", err)
			}
			movedHere++
			moved++
		}
		if movedHere > 0 {
			if err := e.syncDir(dir); err != nil {
				return err
			}
		}
	}
	if moved > 0 {
		if err := e.syncDir(orphans); err != nil {
			return err
		}
		e.orphans.Add(int64(moved))
		e.log.Warn("data files without a record moved to quarantine (a crash between writing a file and committing its record, or a lost index)",
			"files", moved, "dir", orphans)
	}
	if len(tmps) > 0 {
		e.log.Info("removed temp files of interrupted writes", "files", len(tmps))
	}
	return nil
}

// loadCorrupt reads the corruption flags into memory, so that reads check them without a
// lookup.
func (e *Engine) loadCorrupt() error {
	it, err := e.cfg.DB.NewIter(&pebble.IterOptions{LowerBound: []byte{corruptKeyPrefix}, UpperBound: []byte{corruptKeyPrefix + 1}})
	if err != nil {
		return storageErr("reading corruption flags", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		e.flagged.Store(string(it.Key()[1:]), struct{}{})
		e.flaggedN.Add(1)
	}
	if n := e.flaggedN.Load(); n > 0 {
		e.log.Warn("device holds objects flagged corrupt; reads of them fail until they are rewritten or restored", "objects", n)
	}
	return storageErr("reading corruption flags", it.Error())
}

// isFlagged reports whether the version under key was found corrupt.
func (e *Engine) isFlagged(key []byte) bool {
	if e.flaggedN.Load() == 0 {
		return false
	}
	_, ok := e.flagged.Load(string(key))
	return ok
}

// clearFlag adds to b the removal of key's corruption flag, if it has one; the caller removes
// it from memory once b has committed.
func (e *Engine) clearFlag(b *pebble.Batch, key []byte) (bool, error) {
	if !e.isFlagged(key) {
		return false, nil
	}
	return true, b.Delete(corruptKey(key), nil)
}

func (e *Engine) forgetFlag(key []byte) {
	if _, ok := e.flagged.LoadAndDelete(string(key)); ok {
		e.flaggedN.Add(-1)
	}
}

// errFlagged is what reads of a flagged version answer.
func (e *Engine) errFlagged(name meta.ObjectName) error {
	return fmt.Errorf("engine: %s/%s/%s was found corrupt and is kept for repair: %w", name.Account, name.Container, name.Object, meta.ErrCorrupt)
}

// corrupt handles a checksum failure of the version under key: it logs the object by name,
// flags the record (durably, if it is still the one that failed), keeps a copy of a record
// that does not decode in Dir/quarantine and moves a bad data file there, and returns the error
// wrapping meta.ErrCorrupt that the reader gets instead of bad bytes. rec is nil when the
// record itself is corrupt.
func (e *Engine) corrupt(key, raw []byte, rec *record, why string) error {
	e.flagCorrupt(key, raw, rec, why)
	return corruptErr(key, why)
}

// corruptErr is the error a reader of a corrupt version gets.
func corruptErr(key []byte, why string) error {
	name, _ := parseKey(key)
	return fmt.Errorf("engine: %s/%s/%s: %s: %w", name.Account, name.Container, name.Object, why, meta.ErrCorrupt)
}

// flagCorrupt is corrupt without the error: it reports whether this call found the version
// (still the one whose raw bytes failed, and not flagged before) and flagged it, which is what
// the auditor counts.
func (e *Engine) flagCorrupt(key, raw []byte, rec *record, why string) bool {
	name, _ := parseKey(key)
	mu := e.lockFor(key)
	mu.Lock()
	defer mu.Unlock()
	v, closer, err := e.cfg.DB.Get(key)
	same := err == nil && bytes.Equal(v, raw)
	if closer != nil {
		closer.Close()
	}
	if !same || e.isFlagged(key) {
		return false
	}
	e.checksumFailures.Add(1)
	e.log.Error("checksum failure: object flagged corrupt, kept for repair", "account", name.Account, "container", name.Container, "object", name.Object, "why", why)
	flag := []byte(strconv.FormatInt(time.Now().Unix(), 10) + " " + why)
	if err := e.cfg.DB.Set(corruptKey(key), flag, pebble.Sync); err != nil {
		e.log.Error("flagging a corrupt object", "err", err)
	} else if _, loaded := e.flagged.LoadOrStore(string(key), struct{}{}); !loaded {
		e.flaggedN.Add(1)
	}
	if rec == nil {
		e.saveQuarantined(key, raw)
	} else if rec.isFile {
		e.quarantineFile(rec.file)
	}
	return true
}

// quarantineFile moves a bad data file to Dir/quarantine, durably; its record keeps naming it,
// and reads of the record stop at the corruption flag.
func (e *Engine) quarantineFile(rel string) {
	fs := e.cfg.FS
	src := fs.PathJoin(e.objPath, rel)
	dst := fs.PathJoin(e.quaPath, fs.PathBase(rel))
	if err := fs.Rename(src, dst); err != nil {
		if !notExist(err) {
			e.log.Error("quarantining data file", "file", rel, "err", err)
		}
		return
	}
	if err := errors.Join(e.syncDir(e.quaPath), e.syncDir(fs.PathDir(src))); err != nil {
		e.log.Error("quarantining data file", "file", rel, "err", err)
		return
	}
	e.log.Warn("quarantined data file", "file", rel, "to", dst)
}

// saveQuarantined keeps a bad record's bytes (and its key) in Dir/quarantine for inspection.
func (e *Engine) saveQuarantined(key, raw []byte) { e.keepQuarantined(key, raw, "record") }

// keepQuarantined writes key, a newline and raw to Dir/quarantine/<hash of key>-<nanos>.<kind>,
// durably.
func (e *Engine) keepQuarantined(key, raw []byte, kind string) {
	fs := e.cfg.FS
	name := fs.PathJoin(e.quaPath, fmt.Sprintf("%s-%d.%s", nameHash(key), time.Now().UnixNano(), kind))
	f, err := fs.Create(name, "cairn-quarantine")
	if err == nil {
		_, err = f.Write(append(append(append([]byte(nil), key...), '\n'), raw...))
		if err == nil {
			err = f.Sync()
		}
		err = errors.Join(err, f.Close())
	}
	if err == nil {
		err = e.syncDir(e.quaPath)
	}
	if err != nil {
		e.log.Error("saving quarantined record", "file", name, "err", err)
	}
}

// Stats are counts an operator watches on a device.
type Stats struct {
	// CorruptObjects is the number of versions flagged corrupt, waiting for a rewrite or repair.
	CorruptObjects int64
	// ChecksumFailures counts versions found corrupt since Open.
	ChecksumFailures int64
	// OrphansQuarantined counts data files without a record that Open moved to quarantine.
	OrphansQuarantined int64
	// BallastBytes is the size of the ballast file in place (0: released, or none).
	BallastBytes int64
	// FileSyncs counts fsyncs of data files and directories since Open.
	FileSyncs int64
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	return Stats{CorruptObjects: e.flaggedN.Load(), ChecksumFailures: e.checksumFailures.Load(), OrphansQuarantined: e.orphans.Load(), BallastBytes: e.ballast.Load(), FileSyncs: e.fileSyncs.Load()}
}
