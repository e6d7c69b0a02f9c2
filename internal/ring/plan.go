package ring

import (
	"math"
	"sort"
)

// A plan says, for the devices that take partitions, how much each tier (region, zone, node,
// device) should hold, as Swift's builder plans it with no overload:
//
//   - Each device's share of a partition's replicas ("replicanths") follows its weight, but a
//     device holds at most one replica of a partition, so a device whose weight asks for more
//     gets 1 and the rest is shared among the others by weight. A tier's share is its devices'.
//   - A partition may have at most ceil(share) replicas in a tier, and gets floor(share) there
//     first: as widely dispersed as the weights allow. Where weights ask for more than an even spread (a zone with most of the
//     weight), weight wins, as in Swift with overload 0, and the dispersion figure shows it.
//   - The partition-replicas a tier wants (its quota) is its share times the partitions,
//     rounded down the tree so that children add up to their parent exactly (largest
//     remainders get the extra ones).
type plan struct {
	nodes []planNode  // nodes[0] is the cluster
	leaf  map[int]int // device index (in Builder.Devices) -> its leaf node
}

type planNode struct {
	key      tierKey
	parent   int // -1 for the cluster
	children []int
	dev      int     // device index for a leaf, else -1
	share    float64 // replicas of each partition
	max      int     // replicas of one partition at most
	min      int     // replicas of one partition at least, where it can be had
	quota    int     // partition-replicas wanted
	have     int     // partition-replicas held (kept up to date while rebalancing)
}

// room is how far below its quota a tier is, relative to the quota.
func (n *planNode) room() float64 {
	if n.quota == 0 {
		return math.Inf(-1)
	}
	return float64(n.quota-n.have) / float64(n.quota)
}

// newPlan plans the devices given (indices into devs, all with weight above 0).
func newPlan(devs []BuilderDevice, active []int, replicas, parts int) *plan {
	pl := &plan{leaf: map[int]int{}}
	pl.nodes = append(pl.nodes, planNode{parent: -1, dev: -1})
	index := map[tierKey]int{{}: 0}
	// Devices sorted by tier keys, so that the tree (and every tie) comes out the same for the
	// same devices whatever order they were added in.
	order := append([]int(nil), active...)
	sort.Slice(order, func(i, j int) bool {
		return lessKey(devTiers(&devs[order[i]].Device)[3], devTiers(&devs[order[j]].Device)[3])
	})
	for _, di := range order {
		parent := 0
		for _, k := range devTiers(&devs[di].Device) {
			n, ok := index[k]
			if !ok {
				n = len(pl.nodes)
				index[k] = n
				pl.nodes = append(pl.nodes, planNode{key: k, parent: parent, dev: -1})
				pl.nodes[parent].children = append(pl.nodes[parent].children, n)
			}
			parent = n
		}
		pl.nodes[parent].dev = di
		pl.leaf[di] = parent
	}

	// Shares: by weight, capped at one replica per device, the excess spread again.
	share := map[int]float64{}
	total := 0.0
	for _, di := range order {
		total += devs[di].Weight
	}
	for _, di := range order {
		share[di] = devs[di].Weight * float64(replicas) / total
	}
	for range len(order) {
		excess, room := 0.0, 0.0
		for _, di := range order {
			if share[di] > 1 {
				excess += share[di] - 1
				share[di] = 1
			} else if share[di] < 1 {
				room += share[di]
			}
		}
		if excess < 1e-12 || room == 0 {
			break
		}
		for _, di := range order {
			if share[di] < 1 {
				share[di] *= 1 + excess/room
			}
		}
	}
	for _, di := range order {
		for n := pl.leaf[di]; n >= 0; n = pl.nodes[n].parent {
			pl.nodes[n].share += share[di]
		}
	}
	for i := range pl.nodes {
		n := &pl.nodes[i]
		n.max = int(math.Ceil(n.share - 1e-9))
		n.min = int(math.Floor(n.share + 1e-9))
		if n.dev >= 0 {
			n.max = min(n.max, 1)
		}
	}
	pl.nodes[0].max = replicas
	pl.nodes[0].quota = replicas * parts
	pl.splitQuota(0, parts)
	return pl
}

// splitQuota hands a node's quota down to its children: each the floor of its share of the
// partitions, the rest one each to the largest remainders, never over one replica per
// partition per device.
func (pl *plan) splitQuota(n, parts int) {
	node := &pl.nodes[n]
	if len(node.children) == 0 {
		return
	}
	type rem struct {
		child int
		frac  float64
	}
	var rems []rem
	left := node.quota
	for _, c := range node.children {
		exact := pl.nodes[c].share * float64(parts)
		q := int(math.Floor(exact + 1e-9))
		q = min(q, pl.nodes[c].max*parts)
		pl.nodes[c].quota = q
		left -= q
		rems = append(rems, rem{c, exact - float64(q)})
	}
	sort.SliceStable(rems, func(i, j int) bool { return rems[i].frac > rems[j].frac })
	for left > 0 {
		given := false
		for _, r := range rems {
			if left == 0 {
				break
			}
			if pl.nodes[r.child].quota < pl.nodes[r.child].max*parts {
				pl.nodes[r.child].quota++
				left--
				given = true
			}
		}
		if !given {
			break // cannot happen: shares fit under the caps
		}
	}
	for _, c := range node.children {
		pl.splitQuota(c, parts)
	}
}

func lessKey(a, b tierKey) bool {
	if a.region != b.region {
		return a.region < b.region
	}
	if a.zone != b.zone {
		return a.zone < b.zone
	}
	if a.node != b.node {
		return a.node < b.node
	}
	return a.dev < b.dev
}
