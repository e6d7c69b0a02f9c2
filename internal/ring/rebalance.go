package ring

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
)

// RebalanceResult says what a rebalance did.
type RebalanceResult struct {
	// Moved is the number of partition-replicas now on another device than before (every one
	// on a first rebalance), in PartsMoved partitions.
	Moved      int `json:"moved"`
	PartsMoved int `json:"parts_moved"`
	// RemovedDevices is the number of devices marked for removal that were taken out.
	RemovedDevices int `json:"removed_devices"`
	// Pending is how many partition-replicas devices hold above what they want that could not
	// move yet (min_part_hours): rebalance again once it has passed.
	Pending    int     `json:"pending"`
	Balance    float64 `json:"balance"`
	Dispersion float64 `json:"dispersion"`
}

// Rebalance assigns partitions to devices, moving as few as it can, at time now (the clock is
// the caller's). seed makes the choices between equally good devices; the same builder, time
// and seed always give the same ring.
//
// It works as Swift's builder does, gather then place:
//  1. Replicas on removed devices, on devices of weight 0, and second replicas of a partition
//     on one device are gathered, whatever min_part_hours says.
//  2. A partition with more replicas in a tier than the plan allows (see plan) gives up one
//     replica, if it may move.
//  3. Gathered replicas are placed: down the tiers, at each level the tier furthest below its
//     quota (relative to it) among those the partition may still use, never a device already
//     holding the partition.
//  4. Devices above their quota give partitions to devices below theirs, directly where a
//     partition may go there, else along a chain of devices (each handing one partition to the
//     next), found breadth first so that chains are as short as they can be.
//
// A partition moves at most one replica per rebalance, and only when its last move is at least
// min_part_hours old, except for the replicas of step 1.
func (b *Builder) Rebalance(now time.Time, seed uint64) (RebalanceResult, error) {
	if err := b.Validate(); err != nil {
		return RebalanceResult{}, err
	}
	active := b.activeIDs()
	if len(active) < b.Replicas {
		return RebalanceResult{}, fmt.Errorf("%w: %d replicas need at least %d devices with weight; the builder has %d", ErrInvalid, b.Replicas, b.Replicas, len(active))
	}
	s := newRebalancer(b, now, seed)
	s.gatherForced()
	s.gatherForDispersion()
	s.placeGathered()
	s.balanceDirect()
	s.balanceChains()
	return s.finish(), nil
}

type rebalancer struct {
	b       *Builder
	pl      *plan
	parts   int
	row     [][]int // [replica][part] -> index in b.Devices, -1 for none
	orig    [][]int
	moved   []bool   // the partition moved (or lost a replica) in this rebalance
	placed  [][]bool // [replica][part]: this replica moved in this rebalance, and may again
	now     int64
	minAge  int64
	rng     *rand.Rand
	tie     []uint64 // per plan node: a random rank that orders equal tiers (drawn per pick)
	cnt     []int    // per plan node: replicas of the partition at hand (see count)
	touched []int
	scratch [5][]int
	gather  [][2]int // gathered (partition, replica) waiting for a device
}

func newRebalancer(b *Builder, now time.Time, seed uint64) *rebalancer {
	parts := b.Partitions()
	s := &rebalancer{b: b, parts: parts, now: now.Unix(), minAge: int64(b.MinPartHours) * 3600, rng: rand.New(rand.NewPCG(seed, uint64(b.Version)))}
	index := map[int]int{}
	var act []int
	for i, d := range b.Devices {
		index[d.ID] = i
		if !d.Removed && d.Weight > 0 {
			act = append(act, i)
		}
	}
	s.pl = newPlan(b.Devices, act, b.Replicas, parts)
	s.tie = make([]uint64, len(s.pl.nodes))
	for i := range s.tie {
		s.tie[i] = s.rng.Uint64()
	}
	s.cnt = make([]int, len(s.pl.nodes))
	if b.Assignments == nil {
		b.Assignments = make([][]int, b.Replicas)
		for r := range b.Assignments {
			b.Assignments[r] = slices.Repeat([]int{-1}, parts)
		}
		b.LastMoved = make([]int64, parts)
	}
	s.row = make([][]int, b.Replicas)
	s.orig = make([][]int, b.Replicas)
	for r, ids := range b.Assignments {
		s.row[r] = make([]int, parts)
		for p, id := range ids {
			s.row[r][p] = -1
			if i, ok := index[id]; ok && id >= 0 {
				s.row[r][p] = i
				if l, ok := s.pl.leaf[i]; ok {
					s.add(l, 1)
				}
			}
		}
		s.orig[r] = slices.Clone(s.row[r])
	}
	s.moved = make([]bool, parts)
	s.placed = make([][]bool, b.Replicas)
	for r := range s.placed {
		s.placed[r] = make([]bool, parts)
	}
	return s
}

// add changes the partition-replicas held by a leaf and its tiers.
func (s *rebalancer) add(leaf, n int) {
	for t := leaf; t >= 0; t = s.pl.nodes[t].parent {
		s.pl.nodes[t].have += n
	}
}

func (s *rebalancer) canMove(p int) bool {
	return !s.moved[p] && s.now-s.b.LastMoved[p] >= s.minAge
}

// mayMove says whether replica r of partition p may move: when the partition may, or when this
// very replica already moved in this rebalance (moving it again is still one move).
func (s *rebalancer) mayMove(p, r int) bool { return s.placed[r][p] || s.canMove(p) }

// moveTo moves replica r of partition p to a leaf.
func (s *rebalancer) moveTo(p, r, leaf int) {
	s.unassign(p, r)
	s.assign(p, r, leaf)
	s.moved[p] = true
	s.placed[r][p] = true
}

// count fills cnt with the tiers of partition p's replicas, leaving out replica skip.
func (s *rebalancer) count(p, skip int) {
	for _, t := range s.touched {
		s.cnt[t] = 0
	}
	s.touched = s.touched[:0]
	for r := range s.row {
		if r == skip || s.row[r][p] < 0 {
			continue
		}
		leaf, ok := s.pl.leaf[s.row[r][p]]
		if !ok {
			continue
		}
		for t := leaf; t > 0; t = s.pl.nodes[t].parent {
			if s.cnt[t] == 0 {
				s.touched = append(s.touched, t)
			}
			s.cnt[t]++
		}
	}
}

// fits says whether one more replica of the counted partition may go to a leaf.
func (s *rebalancer) fits(leaf int) bool {
	for t := leaf; t > 0; t = s.pl.nodes[t].parent {
		if s.cnt[t] >= s.pl.nodes[t].max {
			return false
		}
	}
	return true
}

func (s *rebalancer) unassign(p, r int) int {
	di := s.row[r][p]
	if l, ok := s.pl.leaf[di]; ok {
		s.add(l, -1)
	}
	s.row[r][p] = -1
	return di
}

func (s *rebalancer) assign(p, r, leaf int) {
	s.row[r][p] = s.pl.nodes[leaf].dev
	s.add(leaf, 1)
}

// pick finds a leaf for one more replica of the counted partition, below tier n, among the
// children the partition may still use (with strict, only those below their quota): first a
// child where the partition has fewer replicas than the plan's minimum, then the child
// furthest below its quota.
func (s *rebalancer) pick(n int, strict bool) int {
	node := &s.pl.nodes[n]
	if node.dev >= 0 {
		return n
	}
	level := node.key.level
	cands := s.scratch[level][:0]
	for _, c := range node.children {
		cn := &s.pl.nodes[c]
		if s.cnt[c] >= cn.max || strict && cn.have >= cn.quota {
			continue
		}
		cands = append(cands, c)
	}
	// Tiers within one sixteenth of their quota of each other count as equal and are taken in
	// a random order: always taking the very roomiest would deal partitions round-robin, so
	// that each device would share its partitions with the same few others, and could later
	// hand them to a new device only by way of those (more moves), and a failed device's
	// partitions would be re-replicated from few sources.
	for _, c := range cands {
		s.tie[c] = s.rng.Uint64()
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := &s.pl.nodes[cands[i]], &s.pl.nodes[cands[j]]
		if na, nb := s.cnt[cands[i]] < a.min, s.cnt[cands[j]] < b.min; na != nb {
			return na
		}
		if ra, rb := bucket(a.room()), bucket(b.room()); ra != rb {
			return ra > rb
		}
		return s.tie[cands[i]] < s.tie[cands[j]]
	})
	s.scratch[level] = cands
	for i := range cands {
		if l := s.pick(s.scratch[level][i], strict); l >= 0 {
			return l
		}
	}
	return -1
}

// bucket groups relative rooms into sixteenths.
func bucket(room float64) float64 { return math.Floor(room * 16) }

// place puts replica r of partition p (unassigned, and counted) on the best device: below
// quota if it can, else anywhere the plan allows, else on any device not holding it.
func (s *rebalancer) place(p, r int) {
	l := s.pick(0, true)
	if l < 0 {
		l = s.pick(0, false)
	}
	if l < 0 {
		// The partition's other replicas (held by min_part_hours) leave no tier the plan
		// allows: take the device that breaks the plan least.
		best, bestOver := -1, 0
		for _, leaf := range s.pl.leaf {
			if s.cnt[leaf] > 0 {
				continue
			}
			over := 0
			for t := s.pl.nodes[leaf].parent; t > 0; t = s.pl.nodes[t].parent {
				over += max(0, s.cnt[t]+1-s.pl.nodes[t].max)
			}
			if best < 0 || over < bestOver || over == bestOver && s.pl.nodes[leaf].room() > s.pl.nodes[best].room() ||
				over == bestOver && s.pl.nodes[leaf].room() == s.pl.nodes[best].room() && leaf < best {
				best, bestOver = leaf, over
			}
		}
		l = best
	}
	s.assign(p, r, l)
}

// gatherForced gathers what must move: replicas on devices that take no partitions, missing
// replicas, and a second replica of a partition on one device.
func (s *rebalancer) gatherForced() {
	for p := range s.parts {
		for r := range s.row {
			di := s.row[r][p]
			_, active := s.pl.leaf[di]
			dup := false
			for r2 := range r {
				dup = dup || di >= 0 && s.row[r2][p] == di
			}
			if di >= 0 && active && !dup {
				continue
			}
			if di >= 0 {
				s.unassign(p, r)
			}
			s.moved[p] = true
			s.gather = append(s.gather, [2]int{p, r})
		}
	}
}

// gatherForDispersion takes one replica from each partition (that may move) with more
// replicas in a tier than the plan allows: the one on the device furthest above its quota.
func (s *rebalancer) gatherForDispersion() {
	for p := range s.parts {
		if !s.canMove(p) {
			continue
		}
		s.count(p, -1)
		best, bestExcess := -1, 0
		for r := range s.row {
			leaf, ok := s.pl.leaf[s.row[r][p]]
			if !ok {
				continue
			}
			over := false
			for t := leaf; t > 0; t = s.pl.nodes[t].parent {
				over = over || s.cnt[t] > s.pl.nodes[t].max
			}
			if excess := s.pl.nodes[leaf].have - s.pl.nodes[leaf].quota; over && (best < 0 || excess > bestExcess) {
				best, bestExcess = r, excess
			}
		}
		if best >= 0 {
			s.unassign(p, best)
			s.moved[p] = true
			s.gather = append(s.gather, [2]int{p, best})
		}
	}
}

func (s *rebalancer) placeGathered() {
	// Start at a random place, so that the order of partitions favours none over many runs.
	if n := len(s.gather); n > 0 {
		k := s.rng.IntN(n)
		s.gather = append(s.gather[k:], s.gather[:k]...)
	}
	for _, g := range s.gather {
		s.count(g[0], -1)
		s.place(g[0], g[1])
		s.placed[g[1]][g[0]] = true
	}
	s.gather = nil
}

// partsOf lists, per device index, the partitions it holds (entries may go stale as
// partitions move; users check).
func (s *rebalancer) partsOf() map[int][]int {
	out := map[int][]int{}
	for r := range s.row {
		for p, di := range s.row[r] {
			out[di] = append(out[di], p)
		}
	}
	return out
}

func (s *rebalancer) replicaOn(p, di int) int {
	for r := range s.row {
		if s.row[r][p] == di {
			return r
		}
	}
	return -1
}

// balanceDirect moves partitions from devices above their quota straight to devices below.
func (s *rebalancer) balanceDirect() {
	lists := s.partsOf()
	var over []int
	for di, l := range s.pl.leaf {
		if n := &s.pl.nodes[l]; n.have > n.quota {
			over = append(over, di)
		}
	}
	sort.Slice(over, func(i, j int) bool {
		a, b := &s.pl.nodes[s.pl.leaf[over[i]]], &s.pl.nodes[s.pl.leaf[over[j]]]
		if a.room() != b.room() {
			return a.room() < b.room()
		}
		return over[i] < over[j]
	})
	for _, di := range over {
		leaf := s.pl.leaf[di]
		list := lists[di]
		if len(list) == 0 {
			continue
		}
		start := s.rng.IntN(len(list))
		// First the partitions that have more than one replica (and more than the plan's
		// minimum) in a region, zone or node of this device: moving those disperses too.
		for pass := range 2 {
			for i := range list {
				if s.pl.nodes[leaf].have <= s.pl.nodes[leaf].quota {
					break
				}
				p := list[(start+i)%len(list)]
				r := s.replicaOn(p, di)
				if r < 0 || !s.mayMove(p, r) || pass == 0 && !s.crowded(p, leaf) {
					continue
				}
				s.give(p, r, leaf)
			}
		}
	}
}

// crowded says whether partition p has more than one replica, and more than the plan's
// minimum, in the region, zone or node of a leaf.
func (s *rebalancer) crowded(p, leaf int) bool {
	s.count(p, -1)
	for t := s.pl.nodes[leaf].parent; t > 0; t = s.pl.nodes[t].parent {
		if s.cnt[t] > max(s.pl.nodes[t].min, 1) {
			return true
		}
	}
	return false
}

// give moves replica r of partition p from a leaf to the best leaf below its quota, if any.
func (s *rebalancer) give(p, r, leaf int) {
	s.unassign(p, r)
	s.count(p, -1)
	if l := s.pick(0, true); l >= 0 {
		s.assign(p, r, l)
		s.moved[p] = true
		s.placed[r][p] = true
		return
	}
	s.assign(p, r, leaf)
}

// balanceChains moves what balanceDirect could not, along chains of devices: the device above
// quota gives a partition to one that gives another to ... one below quota. Each chain found
// breadth first (shortest), each partition in it different and free to move.
func (s *rebalancer) balanceChains() {
	type step struct{ from, p, r int }
	lists := s.partsOf()
	leaves := make([]int, 0, len(s.pl.leaf))
	for di := range s.pl.leaf {
		leaves = append(leaves, di)
	}
	sort.Ints(leaves)
	for {
		var queue []int
		prev := map[int]step{}
		under := 0
		for _, di := range leaves {
			n := &s.pl.nodes[s.pl.leaf[di]]
			if n.have > n.quota {
				queue = append(queue, di)
				prev[di] = step{from: -1}
			}
			if n.have < n.quota {
				under++
			}
		}
		if len(queue) == 0 || under == 0 {
			return
		}
		found := -1
		for len(queue) > 0 && found < 0 {
			u := queue[0]
			queue = queue[1:]
			onPath := map[int]bool{}
			for v := u; prev[v].from >= 0; v = prev[v].from {
				onPath[prev[v].p] = true
			}
			for _, p := range lists[u] {
				r := s.replicaOn(p, u)
				if r < 0 || !s.mayMove(p, r) || onPath[p] {
					continue
				}
				s.count(p, r)
				for _, v := range leaves {
					if _, seen := prev[v]; seen || !s.fits(s.pl.leaf[v]) {
						continue
					}
					prev[v] = step{from: u, p: p, r: r}
					queue = append(queue, v)
					if n := &s.pl.nodes[s.pl.leaf[v]]; n.have < n.quota {
						found = v
						break
					}
				}
				if found >= 0 || len(prev) == len(leaves) {
					break
				}
			}
		}
		if found < 0 {
			return
		}
		for v := found; prev[v].from >= 0; v = prev[v].from {
			st := prev[v]
			s.moveTo(st.p, st.r, s.pl.leaf[v])
			lists[v] = append(lists[v], st.p)
		}
	}
}

// finish writes the assignment back to the builder and sums up.
func (s *rebalancer) finish() RebalanceResult {
	b := s.b
	var res RebalanceResult
	first := true // the first rebalance: nothing was anywhere before
	origIDs := make([][]int, len(s.orig))
	for r, row := range s.orig {
		origIDs[r] = make([]int, len(row))
		for p, i := range row {
			origIDs[r][p] = -1
			if i >= 0 {
				origIDs[r][p] = b.Devices[i].ID
				first = false
			}
		}
	}
	for p := range s.parts {
		had := map[int]int{}
		for r := range s.orig {
			had[s.orig[r][p]]++
		}
		n := 0
		for r := range s.row {
			if had[s.row[r][p]] > 0 {
				had[s.row[r][p]]--
			} else {
				n++
			}
		}
		if n > 0 {
			res.Moved += n
			res.PartsMoved++
			b.LastMoved[p] = s.now
		}
		for r := range s.row {
			b.Assignments[r][p] = b.Devices[s.row[r][p]].ID
		}
	}
	for _, l := range s.pl.leaf {
		res.Pending += max(0, s.pl.nodes[l].have-s.pl.nodes[l].quota)
	}
	if res.Moved > 0 && !first {
		b.noteChange(origIDs, s.now)
	}
	kept := b.Devices[:0]
	for _, d := range b.Devices {
		if d.Removed {
			res.RemovedDevices++
			continue
		}
		kept = append(kept, d)
	}
	b.Devices = kept
	if res.Moved > 0 || res.RemovedDevices > 0 {
		b.Version++
	}
	if r, err := b.Ring(); err == nil {
		st := r.Stats()
		res.Balance, res.Dispersion = st.Balance, st.Dispersion
	}
	return res
}
