package engine

import (
	"fmt"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
)

// Free space is a reservation, not a sample: every write holds the bytes it will put on disk
// (its declared length, or for a body of unknown length what has arrived so far, rounded up to
// spaceStep) from before it reads its body until it has committed. A write is refused with
// meta.ErrInsufficientStorage when the disk's free space, less what writes in flight hold,
// would fall under Config.ReserveBytes. Concurrent uploads therefore cannot together overrun
// the reserve that deletes and the LSM's own work (WAL, flushes, compactions) need: Pebble
// treats a failed WAL or MANIFEST write as fatal.

// diskCheckInterval bounds how often free space is sampled (a statfs per PUT would be waste).
const diskCheckInterval = 50 * time.Millisecond

// spaceStep is the granularity in which a body of unknown length reserves space as it arrives.
const spaceStep = 8 << 20

// recordOverhead is what a version costs the LSM beyond its bytes (record, listing entry, WAL
// framing), held with every write.
const recordOverhead = 4 << 10

// spaceHold is the space one write holds.
type spaceHold struct {
	e    *Engine
	held int64
}

// holdSpace reserves n bytes (plus a record's overhead) for a write.
func (e *Engine) holdSpace(n int64) (*spaceHold, error) {
	h := &spaceHold{e: e}
	return h, h.growTo(n)
}

// growTo makes the hold cover a write of total bytes.
func (h *spaceHold) growTo(total int64) error {
	need := max(total, 0) + recordOverhead
	if need <= h.held || h.e.cfg.ReserveBytes < 0 {
		return nil
	}
	if h.held > 0 {
		need = max(need, h.held+spaceStep) // a growing body: reserve ahead, not per read
	}
	if err := h.e.takeSpace(need - h.held); err != nil {
		return err
	}
	h.held = need
	return nil
}

// release gives the hold back. written is how many bytes the write left on disk: until the
// next sample sees them, they count as used.
func (h *spaceHold) release(written int64) {
	if h == nil || h.held == 0 {
		return
	}
	h.e.inflight.Add(-h.held)
	h.held = 0
	if written > 0 {
		h.e.avail.Add(-written)
	}
}

// takeSpace adds n bytes to what writes in flight hold, unless that would eat into the reserve.
func (e *Engine) takeSpace(n int64) error {
	e.sampleSpace()
	for {
		held := e.inflight.Load()
		avail := e.avail.Load()
		if avail-held-n < e.cfg.ReserveBytes {
			return fmt.Errorf("engine: %d bytes free, %d held by writes in flight, %d more asked, %d reserved: %w",
				avail, held, n, e.cfg.ReserveBytes, meta.ErrInsufficientStorage)
		}
		if e.inflight.CompareAndSwap(held, held+n) {
			return nil
		}
	}
}

// CheckWriteSpace refuses a metadata-only write when free space is already under the reserve.
// Writers that share the device's LSM (the listing index) call it before a write that adds.
func (e *Engine) CheckWriteSpace() error {
	if e.cfg.ReserveBytes < 0 {
		return nil
	}
	e.sampleSpace()
	if avail, held := e.avail.Load(), e.inflight.Load(); avail-held-recordOverhead < e.cfg.ReserveBytes {
		return fmt.Errorf("engine: %d bytes free, %d held by writes in flight, %d reserved: %w", avail, held, e.cfg.ReserveBytes, meta.ErrInsufficientStorage)
	}
	return nil
}

// sampleSpace refreshes the free-space sample when it is older than diskCheckInterval.
func (e *Engine) sampleSpace() {
	now := time.Now().UnixNano()
	if now-e.availAt.Load() <= int64(diskCheckInterval) {
		return
	}
	u, err := e.cfg.FS.GetDiskUsage(e.cfg.Dir)
	if err != nil {
		// Unknown (an in-memory FS): let the write itself tell.
		e.avail.Store(1 << 62)
		e.availAt.Store(now)
		return
	}
	avail := int64(min(u.AvailBytes, 1<<62))
	e.avail.Store(avail)
	e.availAt.Store(now)
	switch {
	case e.cfg.ReserveBytes < 0 || e.cfg.BallastBytes <= 0:
	case avail < 2*e.deleteFloor():
		e.releaseBallast(avail)
	case e.ballast.Load() == 0 && avail >= e.cfg.ReserveBytes+2*e.cfg.BallastBytes && e.ballastPending.CompareAndSwap(false, true):
		go func() { // allocation syncs: not on a request's path
			defer e.ballastPending.Store(false)
			e.ensureBallast()
		}()
	}
}
