package engine

import (
	"errors"
	"fmt"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/vfs"
)

// The reserve (space.go) keeps the engine's own writes from filling the disk, but not another
// process's: a disk filled from outside leaves the LSM nowhere to write, and Pebble treats a
// failed WAL write as fatal (the process exits). Two defences stand behind the reserve:
//
//   - A ballast file of Config.BallastBytes, allocated when the device opens with room to
//     spare. When free space falls under the delete floor, the ballast is removed: the LSM
//     gets that much room back for the deletes that free space, and the operator a clear
//     signal in the log and /metrics (cairn_device_ballast_bytes). It comes back once free
//     space is above the reserve again.
//   - Deletes (and every other write) are refused with meta.ErrInsufficientStorage under the
//     delete floor (a sixteenth of the reserve, 16 MiB by default): a tombstone is small, but
//     the WAL must grow to take it.
//
// A process that keeps filling the disk faster than deletes free it can still win; what this
// bounds is the ordinary case, a disk filled once (a log, a copy) while Cairn serves.

// DefaultBallastBytes is the default Config.BallastBytes.
const DefaultBallastBytes = 32 << 20

const ballastName = "ballast"

func (e *Engine) ballastPath() string { return e.cfg.FS.PathJoin(e.cfg.Dir, ballastName) }

// deleteFloor is the free space under which even deletes are refused.
func (e *Engine) deleteFloor() int64 { return e.cfg.ReserveBytes / 16 }

// ensureBallast allocates the ballast file if it is missing and the disk has room for it
// above the reserve. An FS that cannot allocate (in memory) goes without.
func (e *Engine) ensureBallast() {
	if e.cfg.BallastBytes <= 0 || e.cfg.ReserveBytes < 0 {
		return
	}
	fs, path := e.cfg.FS, e.ballastPath()
	if st, err := fs.Stat(path); err == nil && st.Size() >= e.cfg.BallastBytes {
		e.ballast.Store(st.Size())
		return
	}
	u, err := fs.GetDiskUsage(e.cfg.Dir)
	if err != nil || int64(u.AvailBytes) < e.cfg.ReserveBytes+2*e.cfg.BallastBytes {
		return // no room now; retried when the disk has some (sampleSpace)
	}
	// Allocated under a temporary name, so that a crash never leaves a short ballast in place.
	tmp := path + ".tmp"
	f, err := fs.Create(tmp, "")
	if err != nil {
		e.log.Warn("cannot create the ballast file", "err", err)
		return
	}
	err = vfs.Allocate(f, e.cfg.BallastBytes)
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if err == nil {
		err = fs.Rename(tmp, path)
	}
	if err != nil {
		fs.Remove(tmp)
		if !errors.Is(err, errors.ErrUnsupported) {
			e.log.Warn("cannot allocate the ballast file", "err", err)
		}
		return
	}
	if err := vfs.SyncDir(fs, e.cfg.Dir); err != nil {
		e.log.Warn("cannot sync the directory of the ballast file", "err", err)
	}
	e.ballast.Store(e.cfg.BallastBytes)
	e.availAt.Store(0) // the next check samples again
}

// releaseBallast removes the ballast file, if there is one, to give the LSM room.
func (e *Engine) releaseBallast(avail int64) {
	n := e.ballast.Load()
	if n == 0 || !e.ballast.CompareAndSwap(n, 0) {
		return
	}
	if err := e.cfg.FS.Remove(e.ballastPath()); err != nil && !notExist(err) {
		e.log.Error("cannot remove the ballast file of a full disk", "err", err)
		return
	}
	e.log.Error("disk nearly full: removed the ballast file so that deletes can still be stored; free space now, or writes stop",
		"free_bytes", avail, "ballast_bytes", n)
	e.availAt.Store(0)
}

// CheckDeleteSpace refuses any write (deletes included) when free space is under the delete
// floor, after releasing the ballast if that helps. Writers that share the device's LSM (the
// listing index) call it before a write that removes something.
func (e *Engine) CheckDeleteSpace() error {
	if e.cfg.ReserveBytes < 0 {
		return nil
	}
	e.sampleSpace()
	avail := e.avail.Load()
	if avail >= 2*e.deleteFloor() {
		return nil
	}
	e.releaseBallast(avail)
	e.sampleSpace()
	if avail = e.avail.Load(); avail < e.deleteFloor() {
		return fmt.Errorf("engine: %d bytes free, under the %d bytes kept for the index's own writes: %w", avail, e.deleteFloor(), meta.ErrInsufficientStorage)
	}
	return nil
}
