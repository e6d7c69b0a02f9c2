package nodelease

import (
	"encoding/binary"
	"hash/fnv"

	"github.com/cairn-store/cairn/internal/ring"
)

// RingOf is a ring as the leases see it: devices named "node/device", and a version that every
// node computes alike from the ring's contents (its devices and assignments).
func RingOf(r *ring.Ring) Ring {
	lr := &ringOf{r: r, names: make([]string, len(r.Devices))}
	h := fnv.New64a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(r.PartPower))
	h.Write(b[:])
	for i, d := range r.Devices {
		lr.names[i] = DeviceName(d.Node, d.Name)
		h.Write([]byte(lr.names[i]))
		h.Write([]byte{0})
	}
	for _, row := range r.Assignments {
		for _, dev := range row {
			binary.BigEndian.PutUint64(b[:], uint64(dev))
			h.Write(b[:])
		}
		h.Write([]byte{0xff})
	}
	lr.version = "r" + string(binary.BigEndian.AppendUint64(nil, h.Sum64()))
	return lr
}

type ringOf struct {
	r       *ring.Ring
	names   []string // by device index
	version string
}

func (l *ringOf) Devices() []string { return l.names }
func (l *ringOf) Replicas() int     { return l.r.Replicas() }
func (l *ringOf) Partitions() int   { return 1 << l.r.PartPower }
func (l *ringOf) Version() string   { return l.version }

func (l *ringOf) Primaries(part uint32) []string {
	out := make([]string, 0, len(l.r.Assignments))
	for _, row := range l.r.Assignments {
		if int(part) < len(row) {
			out = append(out, l.names[row[part]])
		}
	}
	return out
}
