package vfs

import (
	"errors"
	"fmt"
	"os"
)

// SyncDir fsyncs a directory, making the entries created, renamed or removed in it durable.
func SyncDir(fs FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("opening directory %s: %w", dir, err)
	}
	err = d.Sync()
	cerr := d.Close()
	if err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	if cerr != nil {
		return fmt.Errorf("closing directory %s: %w", dir, cerr)
	}
	return nil
}

// MkdirAllDurable creates dir and any missing parents, and fsyncs the parent of every
// directory it creates, so that a crash right after it returns cannot lose a directory (a
// directory entry is durable only once its parent is synced).
func MkdirAllDurable(fs FS, dir string, perm os.FileMode) error {
	var missing []string
	for d := fs.PathJoin(dir); ; d = fs.PathDir(d) {
		if _, err := fs.Stat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("stat %s: %w", d, err)
		}
		missing = append(missing, d)
		if parent := fs.PathDir(d); parent == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := fs.MkdirAll(d, perm); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
		if err := SyncDir(fs, fs.PathDir(d)); err != nil {
			return err
		}
	}
	return nil
}

// WriteFileDurable writes data to name atomically and durably: a temp file beside it, synced,
// renamed over name, and the directory synced. A crash leaves the old file or the new one.
func WriteFileDurable(fs FS, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fs.Create(tmp, "cairn-meta")
	if err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, name); err != nil {
		return fmt.Errorf("renaming %s: %w", tmp, err)
	}
	return SyncDir(fs, fs.PathDir(name))
}
