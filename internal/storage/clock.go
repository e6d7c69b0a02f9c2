package storage

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
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

// restoreClock advances the process clock to the highest floor of the node's devices.
func (n *Node) restoreClock() {
	for name, d := range n.devs() {
		v, closer, err := d.db.Get(clockKey)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			n.log.Warn("reading the timestamp floor", "device", name, "err", err)
			continue
		}
		if len(v) == 8 {
			floor := meta.Timestamp(binary.BigEndian.Uint64(v))
			if now := meta.Timestamp(time.Now().UnixNano()); floor > now+meta.Timestamp(clockLead) {
				n.log.Warn("the clock is behind the timestamps this node wrote before; continuing from them", "device", name, "behind", time.Duration(floor-now))
			}
			meta.AdvanceClock(floor)
		}
		closer.Close()
	}
}

// persistClock writes the floor to every device; unsynced, because the next synced write of
// the device (every PUT is one) makes it durable, and a floor lost with the last second before
// a crash is still covered by the lead of the one before.
func (n *Node) persistClock() {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(meta.Now())+uint64(clockLead))
	for name, d := range n.devs() {
		if d.engine.CheckDeleteSpace() != nil {
			continue // a full disk: its WAL must not grow (the floor in place still holds)
		}
		if err := d.db.Set(clockKey, b[:], pebble.NoSync); err != nil {
			n.log.Warn("writing the timestamp floor", "device", name, "err", err)
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
