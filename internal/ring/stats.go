package ring

import (
	"math"
	"sort"
)

// MaxBalance is the balance of a device that has partitions but no weight (Swift shows the
// same figure).
const MaxBalance = 999.99

// Stats says how well a ring places data: the balance of its devices and the dispersion of its
// partitions over each tier. Both are computed the same way for any ring, Swift's or Cairn's.
type Stats struct {
	Partitions int     `json:"partitions"`
	Replicas   float64 `json:"replicas"`
	// Balance is the largest |parts - wanted| / wanted * 100 over the devices, where a device
	// wants a share of all partition-replicas in proportion to its weight (Swift's balance).
	Balance float64 `json:"balance"`
	// Dispersion is the percentage of partitions that have more replicas in some region, zone,
	// node or device than an even spread over that tier's members allows (Swift's
	// max-replicas-by-tier: the replicas are split over the regions as evenly as possible,
	// each region's share over its zones, and so on, rounding up; a device holds at most one).
	Dispersion float64          `json:"dispersion"`
	Tiers      []TierDispersion `json:"tiers"`
	Devices    []DeviceStats    `json:"devices"`
}

// TierDispersion is the dispersion at one tier.
type TierDispersion struct {
	Tier       string  `json:"tier"`    // region, zone, node or device
	Members    int     `json:"members"` // how many regions (zones...) the ring has
	Dispersion float64 `json:"dispersion"`
}

// DeviceStats is one device's share.
type DeviceStats struct {
	Device
	Parts   int     `json:"parts"`
	Wanted  float64 `json:"wanted"`
	Balance float64 `json:"balance"`
}

// tierNames are the tiers, outermost first.
var tierNames = [4]string{"region", "zone", "node", "device"}

// devTiers returns a device's four tier keys, outermost first.
func devTiers(d *Device) [4]tierKey {
	return [4]tierKey{
		{level: 1, region: d.Region},
		{level: 2, region: d.Region, zone: d.Zone},
		{level: 3, region: d.Region, zone: d.Zone, node: d.Node},
		{level: 4, region: d.Region, zone: d.Zone, node: d.Node, dev: d.ID},
	}
}

// tierKey names one region, zone, node or device (level 1 to 4; 0 is the whole cluster).
type tierKey struct {
	level        int8
	region, zone int
	node         string
	dev          int
}

func (k tierKey) parent() tierKey {
	switch k.level {
	case 4:
		return tierKey{level: 3, region: k.region, zone: k.zone, node: k.node}
	case 3:
		return tierKey{level: 2, region: k.region, zone: k.zone}
	case 2:
		return tierKey{level: 1, region: k.region}
	}
	return tierKey{}
}

// evenMax is, for every tier of the devices given, the most replicas of one partition that an
// even spread puts there (Swift's _build_max_replicas_by_tier with ceil).
func evenMax(devs []Device, replicas float64) map[tierKey]int {
	children := map[tierKey]map[tierKey]bool{}
	for i := range devs {
		for _, t := range devTiers(&devs[i]) {
			p := t.parent()
			if children[p] == nil {
				children[p] = map[tierKey]bool{}
			}
			children[p][t] = true
		}
	}
	out := map[tierKey]int{}
	var walk func(t tierKey, n float64)
	walk = func(t tierKey, n float64) {
		for c := range children[t] {
			m := math.Ceil(n / float64(len(children[t])))
			if c.level == 4 {
				m = min(m, 1)
			}
			out[c] = int(m)
			walk(c, m)
		}
	}
	walk(tierKey{}, replicas)
	return out
}

// Stats computes the balance and dispersion of the ring.
func (r *Ring) Stats() Stats {
	s := Stats{Partitions: r.Partitions(), Replicas: r.ReplicaCount()}
	parts := make([]int, len(r.Devices))
	total := 0
	for _, row := range r.Assignments {
		for _, i := range row {
			parts[i]++
			total++
		}
	}
	weight := 0.0
	for _, d := range r.Devices {
		weight += d.Weight
	}
	for i, d := range r.Devices {
		ds := DeviceStats{Device: d, Parts: parts[i]}
		switch {
		case d.Weight > 0:
			ds.Wanted = d.Weight * float64(total) / weight
			ds.Balance = 100*float64(ds.Parts)/ds.Wanted - 100
		case ds.Parts > 0:
			ds.Balance = MaxBalance
		}
		s.Balance = max(s.Balance, math.Abs(ds.Balance))
		s.Devices = append(s.Devices, ds)
	}
	sort.Slice(s.Devices, func(i, j int) bool { return s.Devices[i].ID < s.Devices[j].ID })

	limit := evenMax(r.Devices, s.Replicas)
	var over [4]int
	anyOver := 0
	counts := map[tierKey]int{}
	for p := range s.Partitions {
		clear(counts)
		for _, row := range r.Assignments {
			if p < len(row) {
				for _, t := range devTiers(&r.Devices[row[p]]) {
					counts[t]++
				}
			}
		}
		var levels [4]bool
		for t, n := range counts {
			if n > limit[t] {
				levels[t.level-1] = true
			}
		}
		hit := false
		for l, b := range levels {
			if b {
				over[l]++
				hit = true
			}
		}
		if hit {
			anyOver++
		}
	}
	members := [4]int{}
	for t := range limit {
		members[t.level-1]++
	}
	pct := func(n int) float64 { return 100 * float64(n) / float64(max(s.Partitions, 1)) }
	for l, name := range tierNames {
		s.Tiers = append(s.Tiers, TierDispersion{Tier: name, Members: members[l], Dispersion: pct(over[l])})
	}
	s.Dispersion = pct(anyOver)
	return s
}

// Moved counts the partition-replicas whose device differs between two rings of the same
// partitions: for each partition, the devices of b that a does not have (counted with
// multiplicity; devices are matched by id). Replicas that only changed rows are not moves.
func Moved(a, b *Ring) (replicas, partitions int) {
	for p := range min(a.Partitions(), b.Partitions()) {
		had := map[int]int{}
		for _, d := range a.Nodes(uint32(p)) {
			had[d.ID]++
		}
		n := 0
		for _, d := range b.Nodes(uint32(p)) {
			if had[d.ID] > 0 {
				had[d.ID]--
			} else {
				n++
			}
		}
		replicas += n
		if n > 0 {
			partitions++
		}
	}
	return replicas, partitions
}
