// Package ring owns the placement of data in a cluster, in Swift's model: names hash to one of
// 2^P partitions, and each partition is assigned to Replicas devices. It holds the ring a server
// reads (Ring: lookups, handoffs, Swift's .ring.gz file format, a Watcher that reloads a changed
// file) and the builder an operator edits (Builder: devices, weights, rebalancing by Swift's
// placement rules), which `cairn ring` drives.
package ring

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrInvalid reports a ring, ring file or builder that cannot be used, or a request to change a
// builder that would break it.
var ErrInvalid = errors.New("invalid ring")

// MaxPartPower bounds the partition power: 2^24 partitions of 2-byte device ids per replica is
// 32 MiB, far more than any cluster this ring serves needs.
const MaxPartPower = 24

// Device is one disk of one storage node.
type Device struct {
	ID     int     `json:"id"`
	Region int     `json:"region"`
	Zone   int     `json:"zone"`
	Node   string  `json:"node"`   // the storage node's address, host:port
	Name   string  `json:"device"` // the device's name on that node
	Weight float64 `json:"weight"`
	// ReplicationNode is the address replication traffic goes to; "" means Node.
	ReplicationNode string `json:"replication_node,omitempty"`
	Meta            string `json:"meta,omitempty"` // free text for operators
}

// Ring assigns each of 2^PartPower partitions to Replicas devices. A Ring is not changed once
// it is in use: a new ring replaces it (see Watcher).
type Ring struct {
	PartPower uint
	Devices   []Device
	// Assignments[r][p] is the index in Devices of replica r of partition p. Every replica has
	// 2^PartPower entries except that the last one may have fewer (a fractional replica count,
	// as Swift allows): partitions past its end have one replica fewer.
	Assignments [][]int
	// HashPrefix and HashSuffix are mixed into every name hash so that partitions cannot be
	// predicted from names alone: Swift's swift_hash_path_prefix and swift_hash_path_suffix.
	HashPrefix, HashSuffix string
	// Version counts the builder's changes (0 for a ring that was never built by a builder).
	Version int64
	// NextPartPower is Swift's next_part_power (a partition power increase under way), kept so
	// that a Swift ring read and written again says the same; 0 when not set.
	NextPartPower uint
	// Change is the last rebalance's change (change.go); nil when the ring has none.
	Change *Change

	handoff atomic.Pointer[handoffIndex] // built on first use by Handoffs
	// placementID and previousID are PlacementID and PreviousPlacementID, computed on first use.
	placementID, previousID atomic.Pointer[string]
}

// Replicas is the number of replica rows: each partition is stored on this many devices (one
// fewer for partitions past the end of a short last row).
func (r *Ring) Replicas() int { return len(r.Assignments) }

// ReplicaCount is the replica count as Swift reports it, fractional when the last row is short.
func (r *Ring) ReplicaCount() float64 {
	n := len(r.Assignments)
	if n == 0 {
		return 0
	}
	return float64(n-1) + float64(len(r.Assignments[n-1]))/float64(r.Partitions())
}

// Partitions is the number of partitions, 2^PartPower.
func (r *Ring) Partitions() int { return 1 << r.PartPower }

// Validate checks that every partition has a device for every replica.
func (r *Ring) Validate() error {
	if r.PartPower > MaxPartPower {
		return fmt.Errorf("%w: partition power %d over %d", ErrInvalid, r.PartPower, MaxPartPower)
	}
	if len(r.Assignments) == 0 {
		return fmt.Errorf("%w: no replicas", ErrInvalid)
	}
	for rep, parts := range r.Assignments {
		short := rep > 0 && rep == len(r.Assignments)-1 // only a last row after a full one
		if len(parts) != r.Partitions() && (!short || len(parts) > r.Partitions() || len(parts) == 0) {
			return fmt.Errorf("%w: replica %d has %d partitions, want %d", ErrInvalid, rep, len(parts), r.Partitions())
		}
		for p, d := range parts {
			if d < 0 || d >= len(r.Devices) {
				return fmt.Errorf("%w: partition %d replica %d names device %d of %d", ErrInvalid, p, rep, d, len(r.Devices))
			}
		}
	}
	return r.validateChange()
}

// SingleDevice is the ring of the embedded default: one device holding every partition once.
// prefix is the hash path prefix (the suffix is empty).
func SingleDevice(node, device string, partPower uint, prefix string) *Ring {
	parts := make([]int, 1<<partPower)
	return &Ring{
		PartPower:   partPower,
		Devices:     []Device{{ID: 0, Region: 1, Zone: 1, Node: node, Name: device, Weight: 1}},
		Assignments: [][]int{parts},
		HashPrefix:  prefix,
	}
}

// Partition returns the partition of an account, container or object: pass "" for the parts
// that do not apply (an account's partition is Partition(a, "", "")). It is Swift's: the top
// PartPower bits of md5(prefix + "/" + account[/container[/object]] + suffix).
func (r *Ring) Partition(account, container, object string) uint32 {
	return PartitionOf(NameHash(r.HashPrefix, r.HashSuffix, account, container, object), r.PartPower)
}

// NameHash is the top 64 bits of the name hash that partitions are taken from: names with the
// same top PartPower bits share a partition, so a store kept in NameHash order holds every
// partition, of any partition power, as one contiguous range.
func NameHash(prefix, suffix, account, container, object string) uint64 {
	h := md5.New()
	h.Write([]byte(prefix))
	h.Write([]byte{'/'})
	h.Write([]byte(account))
	if container != "" {
		h.Write([]byte{'/'})
		h.Write([]byte(container))
		if object != "" {
			h.Write([]byte{'/'})
			h.Write([]byte(object))
		}
	}
	h.Write([]byte(suffix))
	var sum [md5.Size]byte
	return binary.BigEndian.Uint64(h.Sum(sum[:0]))
}

// PartitionOf is the partition of a NameHash at a partition power.
func PartitionOf(hash uint64, partPower uint) uint32 {
	if partPower == 0 {
		return 0
	}
	return uint32(hash >> (64 - partPower))
}

// PartitionRange is the range of NameHash values of a partition, both ends included.
func PartitionRange(part uint32, partPower uint) (lo, hi uint64) {
	if partPower == 0 {
		return 0, ^uint64(0)
	}
	shift := 64 - partPower
	lo = uint64(part) << shift
	return lo, lo | (1<<shift - 1)
}

// Nodes returns the devices that hold a partition, primary replicas in order: one per replica
// row that covers the partition.
func (r *Ring) Nodes(part uint32) []Device {
	devs := make([]Device, 0, len(r.Assignments))
	for _, parts := range r.Assignments {
		if int(part) < len(parts) {
			devs = append(devs, r.Devices[parts[part]])
		}
	}
	return devs
}
