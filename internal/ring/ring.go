// Package ring maps names to partitions and partitions to devices, in Swift's model: 2^P
// partitions, each assigned to Replicas devices. This first version serves lookups; building and
// rebalancing multi-device rings (cairn ring) comes with the cluster.
package ring

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrInvalid reports a ring that cannot serve lookups.
var ErrInvalid = errors.New("invalid ring")

// Device is one disk of one storage node.
type Device struct {
	ID     int
	Region int
	Zone   int
	Node   string // the storage node's address, host:port
	Name   string // the device's name on that node
	Weight float64
}

// Ring assigns each of 2^PartPower partitions to Replicas devices.
type Ring struct {
	PartPower uint
	Devices   []Device
	// Assignments[r][p] is the index in Devices of replica r of partition p.
	Assignments [][]int
	// HashSalt is mixed into every name hash so that partitions cannot be predicted from names
	// alone (Swift's hash path prefix/suffix).
	HashSalt string
}

// Replicas is the number of devices each partition is stored on.
func (r *Ring) Replicas() int { return len(r.Assignments) }

// Validate checks that every partition has a device for every replica.
func (r *Ring) Validate() error {
	if r.PartPower > 24 {
		return fmt.Errorf("%w: partition power %d over 24", ErrInvalid, r.PartPower)
	}
	if len(r.Assignments) == 0 {
		return fmt.Errorf("%w: no replicas", ErrInvalid)
	}
	for rep, parts := range r.Assignments {
		if len(parts) != 1<<r.PartPower {
			return fmt.Errorf("%w: replica %d has %d partitions, want %d", ErrInvalid, rep, len(parts), 1<<r.PartPower)
		}
		for p, d := range parts {
			if d < 0 || d >= len(r.Devices) {
				return fmt.Errorf("%w: partition %d replica %d names device %d of %d", ErrInvalid, p, rep, d, len(r.Devices))
			}
		}
	}
	return nil
}

// SingleDevice is the ring of the embedded default: one device holding every partition once.
func SingleDevice(node, device string, partPower uint, salt string) *Ring {
	parts := make([]int, 1<<partPower)
	return &Ring{
		PartPower:   partPower,
		Devices:     []Device{{ID: 0, Node: node, Name: device, Weight: 1}},
		Assignments: [][]int{parts},
		HashSalt:    salt,
	}
}

// Partition returns the partition of an account, container or object: pass "" for the parts
// that do not apply (an account's partition is Partition(a, "", "")).
func (r *Ring) Partition(account, container, object string) uint32 {
	h := md5.New()
	h.Write([]byte(r.HashSalt))
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
	var sum [md5.Size]byte
	h.Sum(sum[:0])
	return binary.BigEndian.Uint32(sum[:4]) >> (32 - r.PartPower)
}

// Nodes returns the devices that hold a partition, primary replicas in order.
func (r *Ring) Nodes(part uint32) []Device {
	devs := make([]Device, len(r.Assignments))
	for rep, parts := range r.Assignments {
		devs[rep] = r.Devices[parts[part]]
	}
	return devs
}
