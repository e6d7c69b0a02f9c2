package nodelease

import (
	"github.com/cairn-store/cairn/internal/ring"
)

// RingOf is a ring as the leases see it: devices named "node/device", and a version that every
// node and proxy computes alike from where the ring places partitions (ring.PlacementID).
func RingOf(r *ring.Ring) Ring {
	lr := &ringOf{r: r, names: make([]string, len(r.Devices)), version: r.PlacementID()}
	for i, d := range r.Devices {
		lr.names[i] = DeviceName(d.Node, d.Name)
	}
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
