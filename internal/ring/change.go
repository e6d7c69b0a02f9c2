package ring

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"time"
)

// A ring change reaches the nodes and proxies of a cluster one by one: for a while some answer
// on the old ring and some on the new, and a write acknowledged by a quorum of the old
// primaries and a read of a quorum of the new ones can miss each other. A proxy that has the
// new ring keeps a quorum of both until the change is complete (joint quorums,
// docs/consistency.md "Ring changes"). For that, a ring carries the primaries of the
// partitions its last rebalance moved, and until when the change may be under way: the
// rebalance plus min_part_hours, the operator's bound for pushing a ring out and for
// replication to bring the moved replicas to their new primaries.

// Change is the last rebalance's change of a ring: where each replica was before it.
type Change struct {
	// Previous[r][p] is the index in the ring's Devices of replica r of partition p before
	// the rebalance, the same shape as Assignments. A replica whose device left the ring
	// (removed, taken to be gone) counts as not moved: a gone device is in no quorum.
	Previous [][]int
	// Until is when the change is complete.
	Until time.Time
}

// PreviousNodes returns, while r's last change may be under way at now, the devices that held
// part's replicas before it, in replica order, when they are not the devices that hold them
// now; nil otherwise.
func (r *Ring) PreviousNodes(part uint32, now time.Time) []Device {
	c := r.Change
	if c == nil || !now.Before(c.Until) || int(part) >= r.Partitions() {
		return nil
	}
	moved := false
	for rep, row := range c.Previous {
		if int(part) < len(row) && row[part] != r.Assignments[rep][part] {
			moved = true
			break
		}
	}
	if !moved {
		return nil
	}
	devs := make([]Device, 0, len(c.Previous))
	for _, row := range c.Previous {
		if int(part) < len(row) {
			devs = append(devs, r.Devices[row[part]])
		}
	}
	return devs
}

// ChangeUnderway reports whether r's last change may be under way at now.
func (r *Ring) ChangeUnderway(now time.Time) bool {
	return r.Change != nil && now.Before(r.Change.Until)
}

// validateChange checks the change against the ring's shape.
func (r *Ring) validateChange() error {
	c := r.Change
	if c == nil {
		return nil
	}
	if len(c.Previous) != len(r.Assignments) {
		return fmt.Errorf("%w: the previous assignment has %d replica rows, the ring %d", ErrInvalid, len(c.Previous), len(r.Assignments))
	}
	for rep, row := range c.Previous {
		if len(row) != len(r.Assignments[rep]) {
			return fmt.Errorf("%w: previous replica %d has %d partitions, want %d", ErrInvalid, rep, len(row), len(r.Assignments[rep]))
		}
		for p, d := range row {
			if d < 0 || d >= len(r.Devices) {
				return fmt.Errorf("%w: partition %d previous replica %d names device %d of %d", ErrInvalid, p, rep, d, len(r.Devices))
			}
		}
	}
	return nil
}

// change is the builder's Change for its ring, whose device indices are index (by id).
func (b *Builder) change(index map[int]int) *Change {
	if b.Previous == nil {
		return nil
	}
	c := &Change{Until: time.Unix(b.ChangeUntil, 0).UTC()}
	for rep, row := range b.Previous {
		prev := make([]int, len(row))
		for p, id := range row {
			i, ok := index[id]
			if !ok {
				// Gone (or nothing before the first rebalance): not a move.
				i = index[b.Assignments[rep][p]]
			}
			prev[p] = i
		}
		c.Previous = append(c.Previous, prev)
	}
	return c
}

// EndChange says the last rebalance's change is complete at now (its ring is on every node
// and proxy, and replication has moved the data): rings written from now on carry none, and
// proxies stop keeping quorums of the ring before it. It reports whether a change was under
// way.
func (b *Builder) EndChange(now time.Time) bool {
	if b.Previous == nil || now.Unix() >= b.ChangeUntil {
		return false
	}
	b.Previous, b.ChangeUntil = nil, 0
	b.Version++
	return true
}

// noteChange records, after a rebalance at now that moved replicas, where they were before
// (orig: device ids by replica and partition) and until when the change may be under way.
func (b *Builder) noteChange(orig [][]int, now int64) {
	b.Previous = make([][]int, len(orig))
	for r, row := range orig {
		b.Previous[r] = slices.Clone(row)
	}
	b.ChangeUntil = now + int64(b.MinPartHours)*3600
}

// ChangedPartitions is the number of partitions the last change moved a replica of.
func (r *Ring) ChangedPartitions() int {
	if r.Change == nil {
		return 0
	}
	n := 0
	for p := range r.Partitions() {
		for rep, row := range r.Change.Previous {
			if p < len(row) && row[p] != r.Assignments[rep][p] {
				n++
				break
			}
		}
	}
	return n
}

// PlacementID names where r places partitions: two rings that give every partition the same
// primaries (by node and device name) in the same order have the same, whatever else differs
// (weights, devices without partitions, the builder's version). Read leases name rings by it
// (internal/readlease): every node and proxy computes it alike. It is computed once per ring.
func (r *Ring) PlacementID() string {
	if id := r.placementID.Load(); id != nil {
		return *id
	}
	id := placementID(r, r.Assignments)
	r.placementID.Store(&id)
	return id
}

// PreviousPlacementID is the PlacementID of the ring before r's last change, as r knows it
// (a device that left the ring in the change counts as not moved); "" when r carries no
// change.
func (r *Ring) PreviousPlacementID() string {
	if r.Change == nil {
		return ""
	}
	if id := r.previousID.Load(); id != nil {
		return *id
	}
	id := placementID(r, r.Change.Previous)
	r.previousID.Store(&id)
	return id
}

func placementID(r *Ring, rows [][]int) string {
	h := fnv.New64a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(r.PartPower))
	h.Write(b[:])
	names := make([][]byte, len(r.Devices))
	for i, d := range r.Devices {
		names[i] = append([]byte(d.Node+"/"+d.Name), 0)
	}
	for _, row := range rows {
		for _, dev := range row {
			h.Write(names[dev])
		}
		h.Write([]byte{0xff})
	}
	return "p" + strconv.FormatUint(h.Sum64(), 36)
}
