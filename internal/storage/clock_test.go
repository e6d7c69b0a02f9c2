package storage

import (
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// A node restarted with its clock behind the floor its devices keep (the clock went backwards
// across the restart) stamps writes above the floor, so that they do not lose to what it
// wrote before.
func TestRestartResumesTheClockFromTheFloor(t *testing.T) {
	dev := DeviceConfig{Name: "d0", Dir: filepath.Join(t.TempDir(), "d0")}
	n, err := Open(Config{Devices: []DeviceConfig{dev}})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := n.device("d0")
	v, closer, err := d.db.Get(clockKey)
	if err != nil {
		t.Fatalf("no floor written at open: %v", err)
	}
	if floor := meta.Timestamp(binary.BigEndian.Uint64(v)); floor <= meta.Now() {
		t.Fatalf("floor %d is not ahead of the clock", floor)
	}
	closer.Close()
	close(n.clockStop) // stop the persister, which writes a last floor as it stops
	<-n.clockDone
	n.clockStop = nil
	// As if the previous run's clock had been an hour ahead of the one now.
	ahead := meta.Timestamp(time.Now().Add(time.Hour).UnixNano())
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(ahead))
	if err := d.db.Set(clockKey, b[:], pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n, err = Open(Config{Devices: []DeviceConfig{dev}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if now := meta.Now(); now <= ahead {
		t.Fatalf("after the restart the clock stamps %d, below the floor %d", now, ahead)
	}
}
