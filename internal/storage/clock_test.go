package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// A node restarted with its clock behind the floor its devices keep (the clock went backwards
// across the restart) stamps writes above the floor, so that they do not lose to what it
// wrote before.
func TestRestartResumesTheClockFromTheFloor(t *testing.T) {
	dev := DeviceConfig{Name: "d0", Dir: filepath.Join(t.TempDir(), "d0")}
	// The floor is the clock at a write plus the lead: compared with the clock before the open,
	// not with the clock when the test reads it, which a slow machine may have taken past it.
	beforeOpen := meta.Now()
	n, err := Open(Config{Devices: []DeviceConfig{dev}})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := n.device("d0")
	v, closer, err := d.db.Get(clockKey)
	if err != nil {
		t.Fatalf("no floor written at open: %v", err)
	}
	if floor := meta.Timestamp(binary.BigEndian.Uint64(v)); floor < beforeOpen+meta.Timestamp(clockLead) {
		t.Fatalf("floor %d is not the lead ahead of the clock at the open (%d)", floor, beforeOpen)
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
	n = restart(t, n, dev)
	defer func() { n.Close() }()
	if now := meta.Now(); now <= ahead {
		t.Fatalf("after the restart the clock stamps %d, below the floor %d", now, ahead)
	}
}

// A write stamped ahead of the floor (a clock advanced past it by a newer version seen, a
// persister that fell behind) raises the floor before it commits, and the persister never takes
// it back down: after a restart the clock, and the bound above which version names count as
// new, are past every version the device holds.
func TestWritesAheadOfTheFloorRaiseIt(t *testing.T) {
	ctx := context.Background()
	dev := DeviceConfig{Name: "d0", Dir: filepath.Join(t.TempDir(), "d0")}
	n, err := Open(Config{Devices: []DeviceConfig{dev}})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.PutContainer(ctx, "d0", 0, "a", meta.Container{Name: "c"}, nodeclient.ContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	ahead := meta.Timestamp(time.Now().Add(time.Hour).UnixNano())
	name := meta.ObjectName{Account: "a", Container: "c", Object: "o"}
	if _, err := n.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: ahead, Size: 1}, strings.NewReader("x"), nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	n.persistClock() // as the persister does every second: the floor must stay above the write
	n = restart(t, n, dev)
	defer func() { n.Close() }()
	if now := meta.Now(); now <= ahead {
		t.Fatalf("after the restart the clock stamps %d, at or below a version it holds (%d)", now, ahead)
	}
	if above := n.freshAbove.Load(); above <= int64(ahead) {
		t.Fatalf("names count as new above %d, at or below a version the device holds (%d)", above, ahead)
	}
}

// A PUT that says its name is fresh skips the lookup only on a node alone (the embedded
// default), and only when its timestamp is above every one the devices held when they opened.
// The test sees the lookup by putting under a name that holds a newer version (which a caller
// of Fresh must never do): looked up, the write is refused as older; skipped, it is stored.
func TestFreshNamesSkipTheLookupOnlyWhereSafe(t *testing.T) {
	ctx := context.Background()
	put := func(n *Node, object string, ts meta.Timestamp, fresh bool) error {
		_, err := n.PutObject(ctx, "d0", 0, meta.ObjectName{Account: "a", Container: "c", Object: object},
			meta.Object{Timestamp: ts, Size: 1}, strings.NewReader("x"), nodeclient.PutOptions{Fresh: fresh})
		return err
	}
	// Reopened, so that its device has a floor to restore (a new one has none: it holds nothing).
	dev := DeviceConfig{Name: "d0", Dir: filepath.Join(t.TempDir(), "d0")}
	first, err := Open(Config{Devices: []DeviceConfig{dev}})
	if err != nil {
		t.Fatal(err)
	}
	alone := restart(t, first, dev)
	t.Cleanup(func() { alone.Close() })
	if alone.freshAbove.Load() == 0 {
		t.Fatal("no floor restored")
	}
	ps := &peers{nodes: map[string]*Node{}, down: map[string]bool{}}
	withPeers := openPeer(t, ps, "127.0.0.1:1", filepath.Join(t.TempDir(), "d0"))
	t.Cleanup(func() { withPeers.Close() })
	for _, n := range []*Node{alone, withPeers} {
		if err := n.PutContainer(ctx, "d0", 0, "a", meta.Container{Name: "c"}, nodeclient.ContainerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		what   string
		n      *Node
		older  meta.Timestamp
		fresh  bool
		stored bool
	}{
		{"not fresh", alone, 0, false, false},
		{"fresh, alone, above the floor", alone, 0, true, true},
		{"fresh, alone, below the floor", alone, meta.Timestamp(alone.freshAbove.Load()), true, false},
		{"fresh, with peers", withPeers, 0, true, false},
	} {
		older := tc.older
		if older == 0 {
			older = meta.Timestamp(max(tc.n.freshAbove.Load(), int64(meta.Now()))) + 1000
		}
		if err := put(tc.n, tc.what, older+1000, false); err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		err := put(tc.n, tc.what, older, tc.fresh)
		if stored := err == nil; stored != tc.stored || !stored && !errors.Is(err, meta.ErrConflict) {
			t.Errorf("%s: older write over a newer version: %v, want stored %v (else a conflict)", tc.what, err, tc.stored)
		}
	}
}

// restart closes n and opens its device again (the caller closes the node it returns).
func restart(t *testing.T, n *Node, dev DeviceConfig) *Node {
	t.Helper()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n, err := Open(Config{Devices: []DeviceConfig{dev}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A device written before floors were kept (or whose floor is lost) holds versions but no
// floor: on opening it gets one above its newest version, and until then no name counts as new
// below it — else a version name minted again by a clock gone back would be overwritten unread.
func TestDeviceWithoutAFloorGetsOneAboveItsVersions(t *testing.T) {
	ctx := context.Background()
	dev := DeviceConfig{Name: "d0", Dir: filepath.Join(t.TempDir(), "d0")}
	n, err := Open(Config{Devices: []DeviceConfig{dev}})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.PutContainer(ctx, "d0", 0, "a", meta.Container{Name: "c"}, nodeclient.ContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	ahead := meta.Now() + meta.Timestamp(time.Hour) // the process clock, which earlier tests may have advanced
	name := meta.ObjectName{Account: "a", Container: "c", Object: "v"}
	if _, err := n.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: ahead, Size: 1}, strings.NewReader("x"), nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	close(n.clockStop) // no persister from here: the floor is dropped as an older version had none
	<-n.clockDone
	n.clockStop = nil
	d, _ := n.device("d0")
	if err := d.db.Delete(clockKey, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	n = restart(t, n, dev)
	defer func() { n.Close() }()
	if above := n.freshAbove.Load(); above <= int64(ahead) {
		t.Fatalf("names count as new above %d, below a version the device holds (%d)", above, ahead)
	}
	_, err = n.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: ahead, Size: 1}, strings.NewReader("y"), nodeclient.PutOptions{Fresh: true})
	if !errors.Is(err, meta.ErrConflict) {
		t.Fatalf("a fresh write under the name of a version in place: %v, want a conflict", err)
	}
	n = restart(t, n, dev) // the floor made is kept
	if above := n.freshAbove.Load(); above <= int64(ahead) {
		t.Fatalf("after a second restart names count as new above %d, below %d", above, ahead)
	}
}

// A node of a cluster does not let a peer's clock move its floor: a write stamped an hour
// ahead (a proxy whose clock is wrong) must not drag the node's clock forward for good.
func TestClusterNodeFloorFollowsItsOwnClock(t *testing.T) {
	ctx := context.Background()
	ps := &peers{nodes: map[string]*Node{}, down: map[string]bool{}}
	n := openPeer(t, ps, "127.0.0.1:1", filepath.Join(t.TempDir(), "d0"))
	defer n.Close()
	if err := n.PutContainer(ctx, "d0", 0, "a", meta.Container{Name: "c"}, nodeclient.ContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	ahead := meta.Now() + meta.Timestamp(time.Hour) // the process clock, which earlier tests may have advanced
	if _, err := n.PutObject(ctx, "d0", 0, meta.ObjectName{Account: "a", Container: "c", Object: "o"}, meta.Object{Timestamp: ahead, Size: 1}, strings.NewReader("x"), nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	d, _ := n.device("d0")
	if f := d.floor.Load(); f >= int64(ahead) {
		t.Errorf("a peer's write an hour ahead moved the floor to %d (its timestamp %d)", f, ahead)
	}
}
