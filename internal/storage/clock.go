package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/engine"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Timestamps order every write of a name, newest wins, and this process stamps them with its
// clock. A clock that goes backwards across a restart (a wrong RTC, NTP stepping) would make
// every overwrite of a name written before the restart lose: a timestamp floor kept in each
// device's LSM, a little ahead of the clock, puts the clock back at least where it was.

// clockKey holds the floor (8 bytes, big-endian nanoseconds).
var clockKey = []byte("!clock")

const (
	clockPersistEvery = time.Second
	// clockLead is how far ahead of the clock the floor is written, so that every timestamp
	// issued before the next persist (or a crash) is below it.
	clockLead = 3 * clockPersistEvery
)

// restoreClock advances the process clock to the highest floor of devs, and raises the
// node's fresh bound to it (a device already open keeps the floor it read). A device without a
// floor that holds versions (written before floors were kept) gets one above all of them, from
// a scan of its placement index, once; if that fails, no name counts as fresh in this run.
func (n *Node) restoreClock(devs map[string]*device) {
	for name, d := range devs {
		if d.floor.Load() != 0 {
			continue
		}
		floor, err := n.readFloor(d)
		if err != nil {
			n.log.Warn("the device's timestamp floor cannot be restored: no version name is taken as new until a restart restores it", "device", name, "err", err)
			n.freshAbove.Store(math.MaxInt64)
			continue
		}
		if floor == 0 {
			continue // nothing stored
		}
		if now := meta.Timestamp(time.Now().UnixNano()); floor > now+meta.Timestamp(clockLead) {
			n.log.Warn("the clock is behind the timestamps this node wrote before; continuing from them", "device", name, "behind", time.Duration(floor-now))
		}
		meta.AdvanceClock(floor)
		raise(&n.freshAbove, int64(floor))
	}
}

// readFloor reads the device's floor into d.floor, or, when it has none or an unreadable one,
// makes one above every version it holds (0: it holds none).
func (n *Node) readFloor(d *device) (meta.Timestamp, error) {
	v, closer, err := d.db.Get(clockKey)
	if err == nil {
		ok := len(v) == 8
		floor := int64(0)
		if ok {
			floor = int64(binary.BigEndian.Uint64(v))
		}
		closer.Close()
		if ok {
			d.floor.Store(floor)
			return meta.Timestamp(floor), nil
		}
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return 0, fmt.Errorf("reading the floor: %w", err)
	}
	var newest meta.Timestamp
	err = d.engine.ScanPlacement(context.Background(), 0, math.MaxUint64, func(v engine.Version) error {
		newest = max(newest, v.Timestamp)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("scanning the versions for a floor: %w", err)
	}
	if newest == 0 {
		return 0, nil
	}
	floor := leadOf(newest)
	if err := d.raiseFloor(floor); err != nil {
		return 0, fmt.Errorf("writing the floor: %w", err)
	}
	n.log.Info("the device had no timestamp floor: made one above its newest version", "floor", floor)
	return meta.Timestamp(floor), nil
}

// leadOf is ts plus the lead, short of overflowing.
func leadOf(ts meta.Timestamp) int64 {
	if int64(ts) > math.MaxInt64-int64(clockLead) {
		return math.MaxInt64
	}
	return int64(ts) + int64(clockLead)
}

// persistClock writes the floor to every device; unsynced, because the next synced write of
// the device (every PUT is one) makes it durable, and a floor lost with the last second before
// a crash is still covered by the lead of the one before.
func (n *Node) persistClock() {
	floor := int64(meta.Now()) + int64(clockLead)
	for name, d := range n.devs() {
		if d.engine.CheckDeleteSpace() != nil {
			continue // a full disk: its WAL must not grow (the floor in place still holds)
		}
		if err := d.raiseFloor(floor); err != nil {
			n.log.Warn("writing the timestamp floor", "device", name, "err", err)
		}
	}
}

// raiseFloor writes floor to the device unless a floor as high is written already. Writes of
// the floor are serialized and only ever raise it, so the floor in the LSM never goes down.
func (d *device) raiseFloor(floor int64) error {
	d.floorMu.Lock()
	defer d.floorMu.Unlock()
	if floor <= d.floor.Load() {
		return nil
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(floor))
	if err := d.db.Set(clockKey, v[:], pebble.NoSync); err != nil {
		return err
	}
	d.floor.Store(floor)
	return nil
}

// coverTimestamp raises the device's floor above ts, before a write at ts commits, when it is
// not above it already, on a node alone (where isNew relies on it): every version a device
// holds is then below the floor it restores after a crash, whether the persister kept up or
// not (a stalled disk, a full one it skips, a clock advanced past it by a newer version seen).
// The floor goes into the WAL ahead of the write's batch, so the write's sync makes it durable.
// (A node of a cluster leaves its floor to its own clock: a peer's clock far ahead must not
// drag it along for good.)
func (n *Node) coverTimestamp(d *device, ts meta.Timestamp) error {
	if !n.alone() || int64(ts) < d.floor.Load() {
		return nil
	}
	if err := d.raiseFloor(leadOf(ts)); err != nil {
		return fmt.Errorf("timestamp floor: %w", err)
	}
	return nil
}

// isNew reports whether a PUT at ts may skip looking for a version under its name (engine
// PutOptions.New): the caller minted the name for this write (nodeclient Fresh), in this
// process, and no other writes the node's devices (it has no peers, and Fresh does not cross
// the network). Every record under such a name carries its timestamp or a later one; names
// minted in this process are distinct; and a name minted before the node opened has its
// records below the floor it restored, which ts is above.
func (n *Node) isNew(opts nodeclient.PutOptions, ts meta.Timestamp) bool {
	return opts.Fresh && n.alone() && opts.If.IsZero() && int64(ts) > n.freshAbove.Load()
}

// raise sets v to x if x is greater.
func raise(v *atomic.Int64, x int64) {
	for {
		cur := v.Load()
		if x <= cur || v.CompareAndSwap(cur, x) {
			return
		}
	}
}

// keepClock persists the floor every clockPersistEvery until stop closes.
func (n *Node) keepClock(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(clockPersistEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			n.persistClock()
			return
		case <-t.C:
			n.persistClock()
		}
	}
}
