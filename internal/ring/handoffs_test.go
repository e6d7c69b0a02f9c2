package ring

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestHandoffs(t *testing.T) {
	b, err := NewBuilder(8, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Two regions: the first with three zones of two nodes, the second with one node.
	for z := 1; z <= 3; z++ {
		for n := 1; n <= 2; n++ {
			if _, err := b.Add(Device{ID: -1, Region: 1, Zone: z, Node: fmt.Sprintf("10.0.%d.%d:6200", z, n), Name: "sda", Weight: 100}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := b.Add(Device{ID: -1, Region: 2, Zone: 1, Node: "10.2.1.1:6200", Name: "sda", Weight: 50}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Rebalance(time.Unix(1e9, 0), 1); err != nil {
		t.Fatal(err)
	}
	r, err := b.Ring()
	if err != nil {
		t.Fatal(err)
	}
	for p := range uint32(r.Partitions()) {
		prim := r.Nodes(p)
		var hs []Device
		for d := range r.Handoffs(p) {
			hs = append(hs, d)
		}
		if len(hs)+len(prim) != len(r.Devices) {
			t.Fatalf("partition %d: %d handoffs and %d primaries of %d devices", p, len(hs), len(prim), len(r.Devices))
		}
		seen := map[int]bool{}
		regions, zones := map[int]bool{}, map[zoneKey]bool{}
		for _, d := range prim {
			seen[d.ID] = true
			regions[d.Region] = true
			zones[zoneKey{d.Region, d.Zone}] = true
		}
		for _, d := range hs {
			if seen[d.ID] {
				t.Fatalf("partition %d: device %d listed twice", p, d.ID)
			}
			seen[d.ID] = true
		}
		// The first handoff is in a region no primary is in, if there is one, else in a new zone.
		first := hs[0]
		switch {
		case len(regions) < 2 && first.Region != 2:
			t.Errorf("partition %d: primaries in region 1 only, first handoff %+v", p, first)
		case len(regions) == 2 && zones[zoneKey{first.Region, first.Zone}]:
			t.Errorf("partition %d: first handoff %+v in a zone of the primaries %+v", p, first, prim)
		}
		var again []Device
		for d := range r.Handoffs(p) {
			again = append(again, d)
			if len(again) == 2 {
				break
			}
		}
		if !slices.Equal(again, hs[:2]) {
			t.Fatalf("partition %d: handoffs differ between calls", p)
		}
	}
	for range r.Handoffs(uint32(r.Partitions())) {
		t.Fatal("handoffs of a partition out of range")
	}
}
