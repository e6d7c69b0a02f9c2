package ring

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// The builder's cases are scripts in testdata/builder, run by datadriven: each command is
// followed by its expected output, and `go test -run TestBuilderScripts -rewrite` writes the
// outputs anew (then read the diff). Commands:
//
//	create part-power=P replicas=N min-part-hours=H
//	add region=R zone=Z node=HOST:PORT device=NAME weight=W   (or one device per input line)
//	remove id=N
//	set-weight id=N weight=W
//	rebalance [seed=S]        prints what moved, balance, dispersion, and any broken rule
//	advance hours=N           moves the test clock on
//	show                      prints each device's partitions
//
// After every rebalance the rules are checked apart from the builder's own code: no partition
// has two replicas on one device or more replicas in a tier than the plan allows (unless
// min_part_hours held it), and a partition moved at most one replica, and only after
// min_part_hours, except replicas leaving removed or weightless devices.
func TestBuilderScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/builder", func(t *testing.T, path string) {
		var b *Builder
		now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "create":
				var p, r, h int
				d.ScanArgs(t, "part-power", &p)
				d.ScanArgs(t, "replicas", &r)
				d.ScanArgs(t, "min-part-hours", &h)
				var err error
				if b, err = NewBuilder(uint(p), r, h); err != nil {
					return err.Error()
				}
				return ""
			case "add":
				lines := []string{argsLine(d)}
				if strings.TrimSpace(d.Input) != "" {
					lines = strings.Split(strings.TrimSpace(d.Input), "\n")
				}
				var out []string
				for _, line := range lines {
					dev, err := parseDevice(line)
					if err != nil {
						t.Fatalf("%s: %v", d.Pos, err)
					}
					id, err := b.Add(dev)
					if err != nil {
						out = append(out, err.Error())
						continue
					}
					out = append(out, fmt.Sprintf("device %d", id))
				}
				return strings.Join(out, "\n") + "\n"
			case "remove":
				var id int
				d.ScanArgs(t, "id", &id)
				if err := b.Remove(id); err != nil {
					return err.Error()
				}
				return ""
			case "set-weight":
				var id int
				var w float64
				d.ScanArgs(t, "id", &id)
				d.ScanArgs(t, "weight", &w)
				if err := b.SetWeight(id, w); err != nil {
					return err.Error()
				}
				return ""
			case "advance":
				var h int
				d.ScanArgs(t, "hours", &h)
				now = now.Add(time.Duration(h) * time.Hour)
				return ""
			case "rebalance":
				seed := uint64(1)
				if d.HasArg("seed") {
					d.ScanArgs(t, "seed", &seed)
				}
				return rebalanceReport(t, b, now, seed)
			case "show":
				return showDevices(t, b)
			}
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			return ""
		})
	})
}

// argsLine is the directive's arguments as key=value words.
func argsLine(d *datadriven.TestData) string {
	var words []string
	for _, a := range d.CmdArgs {
		words = append(words, a.String())
	}
	return strings.Join(words, " ")
}

// parseDevice reads key=value words: region, zone, node, device, weight.
func parseDevice(line string) (Device, error) {
	d := Device{ID: -1, Region: 1, Zone: 1}
	for _, w := range strings.Fields(line) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return d, fmt.Errorf("word %q is not key=value", w)
		}
		var err error
		switch k {
		case "region":
			d.Region, err = strconv.Atoi(v)
		case "zone":
			d.Zone, err = strconv.Atoi(v)
		case "node":
			d.Node = v
		case "device":
			d.Name = v
		case "weight":
			d.Weight, err = strconv.ParseFloat(v, 64)
		case "id":
			d.ID, err = strconv.Atoi(v)
		default:
			return d, fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

func showDevices(t *testing.T, b *Builder) string {
	r, err := b.Ring()
	if err != nil {
		return err.Error()
	}
	var sb strings.Builder
	for _, d := range r.Stats().Devices {
		fmt.Fprintf(&sb, "%d r%dz%d %s/%s weight %g: %d parts, wants %.1f, balance %.2f\n", d.ID, d.Region, d.Zone, d.Node, d.Name, d.Weight, d.Parts, d.Wanted, d.Balance)
	}
	return sb.String()
}

func rebalanceReport(t *testing.T, b *Builder, now time.Time, seed uint64) string {
	var before *Ring
	if b.Assignments != nil {
		before, _ = b.Ring()
	}
	lastMoved := append([]int64(nil), b.LastMoved...)
	forced := map[int]bool{} // ids whose replicas must move
	for _, d := range b.Devices {
		forced[d.ID] = d.Removed || d.Weight == 0
	}
	res, err := b.Rebalance(now, seed)
	if err != nil {
		return err.Error() + "\n"
	}
	after, err := b.Ring()
	if err != nil {
		t.Fatal(err)
	}
	st := after.Stats()
	var sb strings.Builder
	fmt.Fprintf(&sb, "moved %d replicas of %d partitions; pending %d\n", res.Moved, res.PartsMoved, res.Pending)
	fmt.Fprintf(&sb, "balance %.2f dispersion %.2f (", st.Balance, st.Dispersion)
	for i, td := range st.Tiers {
		if i > 0 {
			sb.WriteString(" ")
		}
		fmt.Fprintf(&sb, "%s %.2f", td.Tier, td.Dispersion)
	}
	sb.WriteString(")\n")
	for _, v := range checkRules(b, before, after, lastMoved, forced, now) {
		sb.WriteString("BROKEN: " + v + "\n")
	}
	if res.Balance != st.Balance || res.Dispersion != st.Dispersion {
		sb.WriteString("BROKEN: the result's balance and dispersion are not the ring's\n")
	}
	return sb.String()
}

// checkRules checks the placement rules on a rebalanced ring, apart from the builder's code.
func checkRules(b *Builder, before, after *Ring, lastMoved []int64, forced map[int]bool, now time.Time) []string {
	var broken []string
	report := func(format string, args ...any) {
		if len(broken) < 5 {
			broken = append(broken, fmt.Sprintf(format, args...))
		}
	}
	// The plan's limits, computed again here from the weights.
	var devs []BuilderDevice
	var act []int
	for i, d := range after.Devices {
		devs = append(devs, BuilderDevice{Device: d})
		if d.Weight > 0 {
			act = append(act, i)
		}
	}
	pl := newPlan(devs, act, b.Replicas, b.Partitions())
	limit := map[tierKey]int{}
	for _, n := range pl.nodes {
		limit[n.key] = n.max
	}
	minAge := int64(b.MinPartHours) * 3600
	for p := range after.Partitions() {
		nodes := after.Nodes(uint32(p))
		count := map[tierKey]int{}
		for _, d := range nodes {
			if d.Weight == 0 {
				report("partition %d on device %d of weight 0", p, d.ID)
			}
			for _, k := range devTiers(&d) {
				count[k]++
			}
		}
		movable := len(lastMoved) == 0 || now.Unix()-lastMoved[p] >= minAge
		for k, n := range count {
			if n > limit[k] && (k.level == 4 || movable) {
				report("partition %d has %d replicas in %s %+v (plan allows %d)", p, n, tierNames[k.level-1], k, limit[k])
			}
		}
		if before == nil {
			continue
		}
		had := map[int]int{}
		for _, d := range before.Nodes(uint32(p)) {
			had[d.ID]++
		}
		for _, d := range nodes {
			if had[d.ID] > 0 {
				had[d.ID]--
			}
		}
		free := 0 // replicas that left a device that did not have to give them up
		for id, n := range had {
			if !forced[id] {
				free += n
			}
		}
		if free > 1 {
			report("partition %d moved %d replicas", p, free)
		}
		if free == 1 && !movable {
			report("partition %d moved within min_part_hours", p)
		}
	}
	return broken
}

func TestBuilderErrors(t *testing.T) {
	b, err := NewBuilder(6, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Device{
		{ID: -1, Node: "no-port", Name: "d", Weight: 1},
		{ID: -1, Node: "h:1", Name: "", Weight: 1},
		{ID: -1, Node: "h:1", Name: "d", Weight: -1},
		{ID: -1, Node: "h:1", Name: "d", Weight: math.NaN()},
	} {
		if _, err := b.Add(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Add(%+v) = %v", bad, err)
		}
	}
	if _, err := b.Add(Device{ID: -1, Node: "h:1", Name: "d", Weight: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add(Device{ID: -1, Node: "h:1", Name: "d", Weight: 1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a second h:1/d: %v", err)
	}
	if _, err := b.Rebalance(time.Unix(0, 0), 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("3 replicas on one device: %v", err)
	}
	for _, args := range [][3]int{{25, 3, 1}, {8, 0, 1}, {8, 3, -1}} {
		if _, err := NewBuilder(uint(args[0]), args[1], args[2]); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewBuilder%v: %v", args, err)
		}
	}
}

func TestBuilderFile(t *testing.T) {
	b := equalBuilder(t, 8, 4)
	if _, err := b.Rebalance(time.Unix(1e9, 0), 3); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "object.builder")
	if err := b.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadBuilder(path)
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := b.Ring()
	r2, err := got.Ring()
	if err != nil || !sameRing(r1, r2) || got.Version != b.Version || got.NextID != b.NextID {
		t.Fatalf("builder file round trip: %v", err)
	}
	got.Assignments[0][3] = 99
	data, _ := got.Marshal()
	if _, err := UnmarshalBuilder(data); !errors.Is(err, ErrInvalid) {
		t.Errorf("a builder naming a missing device: %v", err)
	}
	if _, err := UnmarshalBuilder([]byte(`{"format":1,"part_power":4,"replicas":1,"bogus":1}`)); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown field: %v", err)
	}
}

// The same builder, time and seed make the same ring.
func TestRebalanceDeterministic(t *testing.T) {
	var rings []*Ring
	for range 2 {
		b := equalBuilder(t, 8, 5)
		if _, err := b.Rebalance(time.Unix(1e9, 0), 42); err != nil {
			t.Fatal(err)
		}
		r, _ := b.Ring()
		rings = append(rings, r)
	}
	if !sameRing(rings[0], rings[1]) {
		t.Fatal("two rebalances of the same builder differ")
	}
}

// equalBuilder is n devices of equal weight, one per node, one node per zone, 3 replicas.
func equalBuilder(t *testing.T, power uint, n int) *Builder {
	t.Helper()
	b, err := NewBuilder(power, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := b.Add(Device{ID: -1, Region: 1, Zone: i + 1, Node: fmt.Sprintf("10.0.0.%d:6200", i+1), Name: "sda", Weight: 100}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}
