package ring

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A rebalance that moves replicas records where they were, and rings carry it until the
// change is complete, so that proxies can keep quorums of both (docs/consistency.md, "Ring
// changes").
func TestRebalanceRecordsTheChange(t *testing.T) {
	b := equalBuilder(t, 8, 4)
	t0 := time.Unix(1e9, 0).UTC()
	before, _ := rebalanced(t, b, t0)
	if before.Change != nil {
		t.Fatal("the first rebalance recorded a change: nothing was anywhere before it")
	}
	if _, err := b.Add(Device{ID: -1, Region: 1, Zone: 5, Node: "10.0.0.5:6200", Name: "sda", Weight: 100}); err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(2 * time.Hour)
	after, res := rebalanced(t, b, t1)
	if after.Change == nil || !after.Change.Until.Equal(t1.Add(time.Hour)) {
		t.Fatalf("change %+v, want one until %v (the rebalance plus min_part_hours)", after.Change, t1.Add(time.Hour))
	}
	moved := 0
	for p := range after.Partitions() {
		part := uint32(p)
		prev := after.PreviousNodes(part, t1)
		if slices.Equal(before.Nodes(part), after.Nodes(part)) {
			if prev != nil {
				t.Fatalf("partition %d did not move, yet has previous nodes %v", p, prev)
			}
			continue
		}
		moved++
		if !slices.Equal(prev, before.Nodes(part)) {
			t.Fatalf("partition %d: previous nodes %v, want %v", p, prev, before.Nodes(part))
		}
		if after.PreviousNodes(part, after.Change.Until) != nil {
			t.Fatalf("partition %d: previous nodes after the change is complete", p)
		}
	}
	if moved == 0 || moved != res.PartsMoved {
		t.Fatalf("%d partitions have previous nodes, the rebalance moved %d", moved, res.PartsMoved)
	}
	if !after.ChangeUnderway(t1) || after.ChangeUnderway(after.Change.Until) {
		t.Fatal("ChangeUnderway disagrees with Until")
	}
	// The ring before names the same placement as the new ring's previous one (a device
	// added without partitions changes nothing), the new ring another.
	if after.PreviousPlacementID() != before.PlacementID() || after.PlacementID() == before.PlacementID() || before.PreviousPlacementID() != "" {
		t.Fatalf("placement ids: before %s, after %s, after's previous %s", before.PlacementID(), after.PlacementID(), after.PreviousPlacementID())
	}

	// The ring file carries it; Swift reads the ring as it was, ignoring it.
	data := encodeBytes(t, after)
	got, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !sameRing(after, got) || got.Checksum() != after.Checksum() {
		t.Fatalf("round trip lost the change: %+v", got.Change)
	}
	if !bytes.Equal(encodeBytes(t, got), data) {
		t.Fatal("the same ring encodes to different bytes")
	}
	noChange := &Ring{PartPower: after.PartPower, Devices: after.Devices, Assignments: after.Assignments,
		HashPrefix: after.HashPrefix, HashSuffix: after.HashSuffix, Version: after.Version}
	if noChange.Checksum() == after.Checksum() {
		t.Fatal("the checksum does not cover the change")
	}
	// A rebalance that moves nothing keeps the change; the builder file keeps it too.
	if res, err := b.Rebalance(t1.Add(time.Minute), 1); err != nil || res.Moved != 0 {
		t.Fatalf("a second rebalance at once moved %d (%v)", res.Moved, err)
	}
	raw, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b2, err := UnmarshalBuilder(raw)
	if err != nil {
		t.Fatal(err)
	}
	again, err := b2.Ring()
	if err != nil || !sameRing(after, again) {
		t.Fatalf("the builder file lost the change: %v", err)
	}
	// The operator may end the change early; a ring written then carries none.
	if b2.EndChange(after.Change.Until) {
		t.Fatal("EndChange ended a change already complete")
	}
	if !b2.EndChange(t1) {
		t.Fatal("EndChange did not end the change under way")
	}
	if done, err := b2.Ring(); err != nil || done.Change != nil || done.PlacementID() != after.PlacementID() {
		t.Fatalf("the ring after EndChange: %v, change %+v", err, done.Change)
	}
	t.Run("swift reads it", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "object.ring.gz")
		if err := WriteFile(path, after); err != nil {
			t.Fatal(err)
		}
		compareWithSwift(t, path, after, false)
	})
}

// A replica whose device was removed (taken to be gone) is no move: a gone device is in no
// quorum, so a partition only it left has no previous nodes.
func TestChangeOfARemovedDevice(t *testing.T) {
	b := equalBuilder(t, 6, 5)
	t0 := time.Unix(1e9, 0).UTC()
	before, _ := rebalanced(t, b, t0)
	if err := b.Remove(0); err != nil {
		t.Fatal(err)
	}
	// Within min_part_hours: only the removed device's replicas move.
	after, _ := rebalanced(t, b, t0.Add(time.Minute))
	if after.Change == nil {
		t.Fatal("no change recorded")
	}
	left := 0
	for p := range after.Partitions() {
		part := uint32(p)
		if !slices.Equal(before.Nodes(part), after.Nodes(part)) {
			left++
		}
		if prev := after.PreviousNodes(part, t0); prev != nil {
			t.Fatalf("partition %d left only a removed device, yet has previous nodes %v", p, prev)
		}
	}
	if left == 0 {
		t.Fatal("no partition left the removed device")
	}
}

func TestRingFileChangeCorruption(t *testing.T) {
	b := equalBuilder(t, 4, 3)
	t0 := time.Unix(1e9, 0).UTC()
	rebalanced(t, b, t0)
	if _, err := b.Add(Device{ID: -1, Region: 1, Zone: 4, Node: "10.0.0.4:6200", Name: "sda", Weight: 100}); err != nil {
		t.Fatal(err)
	}
	r, _ := rebalanced(t, b, t0.Add(2*time.Hour))
	data := encodeBytes(t, r)
	for name, edit := range map[string]func([]byte) []byte{
		"previous rows cut short": func(raw []byte) []byte { return raw[:len(raw)-2] },
		"previous row names no device": func(raw []byte) []byte {
			out := slices.Clone(raw)
			out[len(out)-2], out[len(out)-1] = 0x99, 0x00
			return out
		},
		"previous row changed": func(raw []byte) []byte {
			out := slices.Clone(raw)
			out[len(out)-2] ^= 1
			return out
		},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode(bytes.NewReader(regzip(t, data, edit))); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode: %v, want ErrInvalid", err)
			}
		})
	}
}

// rebalanced rebalances b at now and returns its ring and what moved.
func rebalanced(t *testing.T, b *Builder, now time.Time) (*Ring, RebalanceResult) {
	t.Helper()
	res, err := b.Rebalance(now, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Ring()
	if err != nil {
		t.Fatal(err)
	}
	return r, res
}
