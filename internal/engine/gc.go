package engine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// Every data file a record points at has a key of its own, 'd' + the file's path, committed in
// the record's batch and deleted in the batch that stops pointing at it. Recovery then visits
// the data files that exist, not every record: with small objects inline (and the LSM's large
// values in blob files) reading every record costs seconds per million objects.
const fileKeyPrefix = 'd'

func fileKey(file string) []byte { return append([]byte{fileKeyPrefix}, file...) }

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

// collectGarbage removes what a crash can leave behind: temp files, and data files that no
// record refers to (written and renamed, but the record never committed; or replaced, and the
// removal after the commit never happened). It runs in Open, before any write.
func (e *Engine) collectGarbage() error {
	fs := e.cfg.FS
	tmps, err := fs.List(e.tmpPath)
	if err != nil {
		return storageErr("listing temp files", err)
	}
	for _, t := range tmps {
		e.removeTmp(fs.PathJoin(e.tmpPath, t))
	}
	removed := 0
	for i := range 256 {
		sub := fmt.Sprintf("%02x", i)
		names, err := fs.List(fs.PathJoin(e.objPath, sub))
		if err != nil {
			return storageErr("listing data files", err)
		}
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
			if err := fs.Remove(fs.PathJoin(e.objPath, rel)); err != nil && !os.IsNotExist(err) {
				return storageErr("removing orphan data file", err)
			}
			removed++
		}
	}
	if removed > 0 || len(tmps) > 0 {
		e.log.Info("removed leftovers of interrupted writes", "data_files", removed, "temp_files", len(tmps))
	}
	return nil
}

// corrupt handles a checksum failure: it logs, moves what is bad to Dir/quarantine, and removes
// the record (if it is still the one that failed) so that the name reads as missing on this
// device and replication can restore a good copy, as Swift does. It returns the error wrapping
// meta.ErrCorrupt that the reader gets instead of bad bytes. rec is nil when the record itself
// is corrupt.
func (e *Engine) corrupt(key, raw []byte, rec *record, why string) error {
	e.log.Error("checksum failure, quarantining", "key", fmt.Sprintf("%q", key), "why", why)
	mu := e.lockFor(key)
	mu.Lock()
	v, closer, err := e.cfg.DB.Get(key)
	same := err == nil && bytes.Equal(v, raw)
	if closer != nil {
		closer.Close()
	}
	if same {
		if err := e.dropRecord(key); err != nil {
			e.log.Error("removing corrupt record", "err", err)
		}
	}
	mu.Unlock()
	if same {
		e.saveQuarantined(key, raw)
		if rec != nil && rec.isFile {
			fs := e.cfg.FS
			dst := fs.PathJoin(e.quaPath, fs.PathBase(rec.file))
			if err := fs.Rename(fs.PathJoin(e.objPath, rec.file), dst); err != nil && !os.IsNotExist(err) {
				e.log.Error("quarantining data file", "file", rec.file, "err", err)
			} else if err == nil {
				e.log.Warn("quarantined data file", "file", rec.file, "to", dst)
			}
		}
	}
	return fmt.Errorf("engine: %s: %w", why, meta.ErrCorrupt)
}

// saveQuarantined keeps a bad record's bytes (and its key) in Dir/quarantine for inspection.
func (e *Engine) saveQuarantined(key, raw []byte) {
	fs := e.cfg.FS
	name := fs.PathJoin(e.quaPath, fmt.Sprintf("%s-%d.record", nameHash(key), time.Now().UnixNano()))
	f, err := fs.Create(name, "cairn-quarantine")
	if err == nil {
		_, err = f.Write(append(append(append([]byte(nil), key...), '\n'), raw...))
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		e.log.Error("saving quarantined record", "file", name, "err", err)
	}
}

// dropRecord deletes a record, and through Config.OnDrop what lists it, in one synced batch.
func (e *Engine) dropRecord(key []byte) error {
	b := e.cfg.DB.NewBatch()
	defer b.Close()
	if err := b.Delete(key, nil); err != nil {
		return err
	}
	if e.cfg.OnDrop != nil {
		if name, err := parseKey(key); err == nil {
			release, err := e.cfg.OnDrop(b, name)
			if release != nil {
				defer release()
			}
			if err != nil {
				return err
			}
		}
	}
	return b.Commit(pebble.Sync)
}
