package ring

import (
	"crypto/md5"
	"encoding/binary"
	"iter"
	"strconv"
)

// Handoffs lists, for a partition, the devices to use in place of failed primaries, best first,
// in the order Swift's Ring.get_more_nodes gives: first devices in regions no primary is in,
// then in zones none is in, then on nodes none is on, then any other device. Within each stage
// devices are taken from the primaries of other partitions, walked from a starting partition
// that a hash of the partition's number picks, so the list is the same on every proxy and
// mostly stays the same when the ring changes. Only devices holding some partition are listed.
//
// Cairn's node is host:port (as its builder places by); Swift's handoffs compare the IP only,
// so the two orders agree wherever each storage node has one address and port.
func (r *Ring) Handoffs(part uint32) iter.Seq[Device] {
	return func(yield func(Device) bool) {
		if int(part) >= r.Partitions() || len(r.Assignments) == 0 {
			return
		}
		x := r.handoffIndex()
		used := make(map[int]bool)
		regions := make(map[int]bool)
		zones := make(map[zoneKey]bool)
		nodes := make(map[nodeKey]bool)
		take := func(i int) {
			used[i] = true
			d := &r.Devices[i]
			regions[d.Region] = true
			zones[zoneKey{d.Region, d.Zone}] = true
			nodes[nodeKey{d.Region, d.Zone, d.Node}] = true
		}
		for _, row := range r.Assignments {
			if int(part) < len(row) {
				take(row[part])
			}
		}
		parts := r.Partitions()
		sum := md5.Sum([]byte(strconv.FormatUint(uint64(part), 10)))
		start := int(binary.BigEndian.Uint32(sum[:4]) >> (32 - r.PartPower))
		step := max(parts/65536, 1)
		// The walk: start..parts, then the wrapped-around rest at the same stride (Swift's
		// starting offset for the second leg, which skips partition 0 when step is 1, kept
		// so that the orders agree).
		walk := func(visit func(p int) bool) {
			for p := start; p < parts; p += step {
				if !visit(p) {
					return
				}
			}
			for p := step - (parts-start)%step; p < start; p += step {
				if !visit(p) {
					return
				}
			}
		}
		stages := []struct {
			fresh func(d *Device) bool
			done  func() bool
		}{
			{func(d *Device) bool { return !regions[d.Region] }, func() bool { return len(regions) >= x.regions }},
			{func(d *Device) bool { return !zones[zoneKey{d.Region, d.Zone}] }, func() bool { return len(zones) >= x.zones }},
			{func(d *Device) bool { return !nodes[nodeKey{d.Region, d.Zone, d.Node}] }, func() bool { return len(nodes) >= x.nodes }},
			{func(*Device) bool { return true }, func() bool { return len(used) >= x.devices }},
		}
		for _, st := range stages {
			stopped := false
			walk(func(p int) bool {
				if st.done() {
					return false
				}
				for _, row := range r.Assignments {
					if p >= len(row) {
						continue
					}
					i := row[p]
					if used[i] || !st.fresh(&r.Devices[i]) {
						continue
					}
					take(i)
					if !yield(r.Devices[i]) {
						stopped = true
						return false
					}
					if st.done() {
						return false
					}
				}
				return true
			})
			if stopped {
				return
			}
		}
	}
}

type zoneKey struct{ region, zone int }

type nodeKey struct {
	region, zone int
	node         string
}

// handoffIndex counts the regions, zones, nodes and devices that hold partitions, so that each
// stage of Handoffs stops as soon as it has nothing new to find.
type handoffIndex struct{ regions, zones, nodes, devices int }

func (r *Ring) handoffIndex() *handoffIndex {
	if x := r.handoff.Load(); x != nil {
		return x
	}
	has := make([]bool, len(r.Devices))
	for _, row := range r.Assignments {
		for _, i := range row {
			has[i] = true
		}
	}
	regions := map[int]bool{}
	zones := map[zoneKey]bool{}
	nodes := map[nodeKey]bool{}
	x := &handoffIndex{}
	for i, d := range r.Devices {
		if !has[i] {
			continue
		}
		x.devices++
		regions[d.Region] = true
		zones[zoneKey{d.Region, d.Zone}] = true
		nodes[nodeKey{d.Region, d.Zone, d.Node}] = true
	}
	x.regions, x.zones, x.nodes = len(regions), len(zones), len(nodes)
	r.handoff.Store(x)
	return x
}
