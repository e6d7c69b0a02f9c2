package ring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
)

// BuilderFormat is the version of the builder file's layout.
const BuilderFormat = 1

// Builder is the editable form of a ring: its devices, and the assignment of partitions to them
// that Rebalance keeps up to date. It is Cairn's own (a JSON file, see Save); Swift's pickled
// .builder files are not read. All its decisions are pure: the time is passed in.
type Builder struct {
	Format       int    `json:"format"`
	PartPower    uint   `json:"part_power"`
	Replicas     int    `json:"replicas"`
	MinPartHours int    `json:"min_part_hours"`
	HashPrefix   string `json:"hash_path_prefix,omitempty"`
	HashSuffix   string `json:"hash_path_suffix,omitempty"`
	// Version counts the changes: every Add, Remove, SetWeight and every Rebalance that moves
	// something. Ring files carry it.
	Version int64 `json:"version"`
	// NextID is the id the next device gets: ids are never reused, so that an id in an old ring
	// file never names another disk.
	NextID  int             `json:"next_id"`
	Devices []BuilderDevice `json:"devices"`
	// Assignments[r][p] is the id of the device holding replica r of partition p (-1: none);
	// nil until the first rebalance.
	Assignments [][]int `json:"assignments,omitempty"`
	// LastMoved[p] is when a replica of partition p last moved, in Unix seconds.
	LastMoved []int64 `json:"last_moved,omitempty"`
	// Previous is the assignment (device ids) before the last rebalance that moved replicas,
	// and ChangeUntil (Unix seconds) when that change is complete: that rebalance's time plus
	// min_part_hours. Rings carry them (Ring.Change). Nil before a second rebalance.
	Previous    [][]int `json:"previous_assignments,omitempty"`
	ChangeUntil int64   `json:"change_until,omitempty"`
}

// BuilderDevice is a device of a builder.
type BuilderDevice struct {
	Device
	// Removed marks a device that the next rebalance takes out of the ring, after moving its
	// partitions elsewhere.
	Removed bool `json:"removed,omitempty"`
}

// NewBuilder starts a builder of 2^partPower partitions, replicas copies of each, moving at
// most one replica of a partition per minPartHours.
func NewBuilder(partPower uint, replicas, minPartHours int) (*Builder, error) {
	b := &Builder{Format: BuilderFormat, PartPower: partPower, Replicas: replicas, MinPartHours: minPartHours}
	if err := b.checkParams(); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Builder) checkParams() error {
	switch {
	case b.Format != BuilderFormat:
		return fmt.Errorf("%w: builder format %d, want %d", ErrInvalid, b.Format, BuilderFormat)
	case b.PartPower > MaxPartPower:
		return fmt.Errorf("%w: partition power %d over %d", ErrInvalid, b.PartPower, MaxPartPower)
	case b.Replicas < 1 || b.Replicas > maxReplicaRows:
		return fmt.Errorf("%w: %d replicas (1 to %d)", ErrInvalid, b.Replicas, maxReplicaRows)
	case b.MinPartHours < 0:
		return fmt.Errorf("%w: min_part_hours %d", ErrInvalid, b.MinPartHours)
	}
	return nil
}

// Partitions is 2^PartPower.
func (b *Builder) Partitions() int { return 1 << b.PartPower }

// Device returns the device with an id, nil if there is none.
func (b *Builder) Device(id int) *BuilderDevice {
	for i := range b.Devices {
		if b.Devices[i].ID == id {
			return &b.Devices[i]
		}
	}
	return nil
}

// Find returns the ids of the devices on a node (host:port), only those named device when
// device is not "".
func (b *Builder) Find(node, device string) []int {
	var ids []int
	for _, d := range b.Devices {
		if d.Node == node && (device == "" || d.Name == device) {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

func checkWeight(w float64) error {
	if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
		return fmt.Errorf("%w: weight %v (a number, 0 or more)", ErrInvalid, w)
	}
	return nil
}

// Add adds a device and returns its id: d.ID when it is 0 or more and unused, else the next
// free id. The device gets partitions at the next rebalance.
func (b *Builder) Add(d Device) (int, error) {
	if _, _, err := splitNode(d.Node); err != nil {
		return 0, err
	}
	if d.ReplicationNode != "" {
		if _, _, err := splitNode(d.ReplicationNode); err != nil {
			return 0, err
		}
	}
	if d.Name == "" || strings.ContainsAny(d.Name, "/ \t\n") {
		return 0, fmt.Errorf("%w: device name %q", ErrInvalid, d.Name)
	}
	if err := checkWeight(d.Weight); err != nil {
		return 0, err
	}
	if d.Region < 0 || d.Zone < 0 {
		return 0, fmt.Errorf("%w: region %d zone %d (0 or more)", ErrInvalid, d.Region, d.Zone)
	}
	for _, o := range b.Devices {
		if o.Node == d.Node && o.Name == d.Name && !o.Removed {
			return 0, fmt.Errorf("%w: %s/%s is already device %d", ErrInvalid, d.Node, d.Name, o.ID)
		}
	}
	if d.ID < 0 {
		d.ID = b.NextID
	}
	if d.ID >= noDevice {
		return 0, fmt.Errorf("%w: device id %d over %d", ErrInvalid, d.ID, noDevice-1)
	}
	if b.Device(d.ID) != nil {
		return 0, fmt.Errorf("%w: device id %d is taken", ErrInvalid, d.ID)
	}
	b.NextID = max(b.NextID, d.ID+1)
	b.Devices = append(b.Devices, BuilderDevice{Device: d})
	sort.Slice(b.Devices, func(i, j int) bool { return b.Devices[i].ID < b.Devices[j].ID })
	b.Version++
	return d.ID, nil
}

// Remove marks a device for removal: the next rebalance moves its partitions elsewhere (at
// once, whatever min_part_hours says: a removed disk is taken to be gone) and drops it.
func (b *Builder) Remove(id int) error {
	d := b.Device(id)
	if d == nil {
		return fmt.Errorf("%w: no device %d", ErrInvalid, id)
	}
	if !d.Removed {
		d.Removed = true
		b.Version++
	}
	return nil
}

// SetWeight changes a device's weight; the next rebalance moves partitions to match.
func (b *Builder) SetWeight(id int, weight float64) error {
	if err := checkWeight(weight); err != nil {
		return err
	}
	d := b.Device(id)
	if d == nil || d.Removed {
		return fmt.Errorf("%w: no device %d", ErrInvalid, id)
	}
	if d.Weight != weight {
		d.Weight = weight
		b.Version++
	}
	return nil
}

// ForgetMoves lets every partition move at the next rebalance, as if min_part_hours had passed
// since each last moved (for when data must move now, a failed disk's partitions elsewhere).
func (b *Builder) ForgetMoves() {
	for p := range b.LastMoved {
		b.LastMoved[p] = math.MinInt64 / 2
	}
}

// Ring returns the ring of the current assignment (devices marked for removal included, until
// the rebalance that removes them).
func (b *Builder) Ring() (*Ring, error) {
	if b.Assignments == nil {
		return nil, fmt.Errorf("%w: the builder was never rebalanced", ErrInvalid)
	}
	r := &Ring{PartPower: b.PartPower, HashPrefix: b.HashPrefix, HashSuffix: b.HashSuffix, Version: b.Version}
	index := map[int]int{}
	for i, d := range b.Devices {
		index[d.ID] = i
		r.Devices = append(r.Devices, d.Device)
	}
	for rep, row := range b.Assignments {
		out := make([]int, len(row))
		for p, id := range row {
			i, ok := index[id]
			if !ok {
				return nil, fmt.Errorf("%w: partition %d replica %d is on device %d, which the builder does not have", ErrInvalid, p, rep, id)
			}
			out[p] = i
		}
		r.Assignments = append(r.Assignments, out)
	}
	r.Change = b.change(index)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// Validate checks a builder read from a file.
func (b *Builder) Validate() error {
	if err := b.checkParams(); err != nil {
		return err
	}
	ids := map[int]bool{}
	for _, d := range b.Devices {
		if ids[d.ID] || d.ID < 0 || d.ID >= noDevice || d.ID >= b.NextID {
			return fmt.Errorf("%w: device id %d (duplicate, out of range, or not below next_id)", ErrInvalid, d.ID)
		}
		ids[d.ID] = true
		if err := checkWeight(d.Weight); err != nil {
			return err
		}
	}
	if b.Assignments == nil {
		if b.LastMoved != nil {
			return fmt.Errorf("%w: last_moved without assignments", ErrInvalid)
		}
		return nil
	}
	if len(b.Assignments) != b.Replicas || len(b.LastMoved) != b.Partitions() {
		return fmt.Errorf("%w: %d replica rows and %d last_moved entries for %d replicas of %d partitions", ErrInvalid, len(b.Assignments), len(b.LastMoved), b.Replicas, b.Partitions())
	}
	for rep, row := range b.Assignments {
		if len(row) != b.Partitions() {
			return fmt.Errorf("%w: replica %d has %d partitions", ErrInvalid, rep, len(row))
		}
		for p, id := range row {
			if id != -1 && !ids[id] {
				return fmt.Errorf("%w: partition %d replica %d is on device %d, which the builder does not have", ErrInvalid, p, rep, id)
			}
		}
	}
	if b.Previous != nil {
		if len(b.Previous) != b.Replicas {
			return fmt.Errorf("%w: %d previous replica rows for %d replicas", ErrInvalid, len(b.Previous), b.Replicas)
		}
		for rep, row := range b.Previous {
			if len(row) != b.Partitions() {
				return fmt.Errorf("%w: previous replica %d has %d partitions", ErrInvalid, rep, len(row))
			}
		}
	}
	return nil
}

// Marshal encodes the builder as JSON (the builder file).
func (b *Builder) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("builder: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBuilder decodes and validates a builder file.
func UnmarshalBuilder(data []byte) (*Builder, error) {
	var b Builder
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%w: builder file: %v", ErrInvalid, err)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return &b, nil
}

// Save writes the builder file atomically.
func (b *Builder) Save(path string) error {
	data, err := b.Marshal()
	if err != nil {
		return err
	}
	if err := writeAtomic(path, data, 0o644); err != nil {
		return fmt.Errorf("builder %s: %w", path, err)
	}
	return nil
}

// LoadBuilder reads a builder file.
func LoadBuilder(path string) (*Builder, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("builder: %w", err)
	}
	b, err := UnmarshalBuilder(data)
	if err != nil {
		return nil, fmt.Errorf("builder %s: %w", path, err)
	}
	return b, nil
}

// activeIDs are the devices that take partitions: not removed, weight above 0.
func (b *Builder) activeIDs() []int {
	var ids []int
	for _, d := range b.Devices {
		if !d.Removed && d.Weight > 0 {
			ids = append(ids, d.ID)
		}
	}
	return slices.Clip(ids)
}
