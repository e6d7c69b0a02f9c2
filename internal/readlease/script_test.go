package readlease

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// The scripts in testdata/scripts drive holders and granters by hand, with a clock that moves
// only when told, each message delivered when the script says. Commands:
//
//	config lease=MS renew=MS drift=F max-unsettled=N    before anything else (default: lease
//	                            600, renew 200, drift 0.05, 3 replicas, 100 unsettled)
//	ring VERSION PART=A,B,C ...  the ring every device started after it uses
//	start DEV                   (re)start a device: new holder and granter state, at now
//	tick ms=N                   time passes
//	renew DEV                   the holder's renewals due now; printed and queued
//	grant DEV                   DEV answers the renewals queued for it; printed and queued
//	take DEV [seq=N]            DEV takes the grants queued for it (only seq N), in order
//	store DEV NAME=VERSION ...  what DEV holds (its answers to settle questions)
//	wrote DEV PART NAME=VERSION DEV marks a name unsettled
//	can DEV PART NAME           whether DEV may answer alone now, and if not why
//	revoke DEV holder=H part=P  DEV revokes H's lease for P; prints the wait and a proxy's
//	pass DEV TO begun=MS        DEV's full replication pass to TO, begun at MS, completed
//	replicated DEV TO part=P begun=MS   one partition's pass completed
//	push DEV TO begun=MS        the holder DEV's own full pass to TO completed
//	reset DEV VERSION           DEV loads the ring of that version
//	cross DEV from=(V,...) part=P  a request about P from a proxy on the rings V reaches DEV;
//	                            prints how long DEV makes its answer wait
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/scripts", func(t *testing.T, path string) {
		s := newScript()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := s.run(d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

type scriptRing struct {
	version string
	parts   map[uint32][]string
}

func (r *scriptRing) Primaries(p uint32) []string { return r.parts[p] }
func (r *scriptRing) Version() string             { return r.version }

type script struct {
	cfg     Config
	now     time.Duration
	rings   map[string]*scriptRing
	ring    *scriptRing
	holders map[string]*Holder
	grants  map[string]*Granter
	stores  map[string]map[string]string
	renewal []Renewal
	granted []Grant
}

func newScript() *script {
	cfg := DefaultConfig(3)
	cfg.Lease, cfg.Renew, cfg.MaxUnsettled = 600*time.Millisecond, 200*time.Millisecond, 100
	return &script{cfg: cfg, rings: map[string]*scriptRing{}, holders: map[string]*Holder{}, grants: map[string]*Granter{}, stores: map[string]map[string]string{}}
}

func (s *script) clock() time.Time { return simEpoch.Add(s.now) }

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

func (s *script) peersOf(dev string, r *scriptRing) []string {
	var out []string
	for _, prim := range r.parts {
		if len(prim) > 0 && prim[0] == dev {
			for _, p := range prim[1:] {
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func arg(d *datadriven.TestData, key string) (string, bool) {
	for _, a := range d.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0], true
		}
	}
	return "", false
}

func msArg(d *datadriven.TestData, key string) (time.Duration, error) {
	v, ok := arg(d, key)
	if !ok {
		return 0, fmt.Errorf("%s=MS needed", key)
	}
	n, err := strconv.Atoi(v)
	return time.Duration(n) * time.Millisecond, err
}

func (s *script) run(d *datadriven.TestData) (string, error) {
	pos := func(i int) string {
		if i < len(d.CmdArgs) {
			return d.CmdArgs[i].Key
		}
		return ""
	}
	var b strings.Builder
	switch d.Cmd {
	case "config":
		for _, a := range d.CmdArgs {
			v := a.Vals[0]
			switch a.Key {
			case "lease", "renew":
				n, err := strconv.Atoi(v)
				if err != nil {
					return "", err
				}
				if a.Key == "lease" {
					s.cfg.Lease = time.Duration(n) * time.Millisecond
				} else {
					s.cfg.Renew = time.Duration(n) * time.Millisecond
				}
			case "drift":
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return "", err
				}
				s.cfg.Drift = f
			case "max-unsettled":
				n, err := strconv.Atoi(v)
				if err != nil {
					return "", err
				}
				s.cfg.MaxUnsettled = n
			}
		}
		return "", s.cfg.Validate()
	case "ring":
		r := &scriptRing{version: pos(0), parts: map[uint32][]string{}}
		for _, a := range d.CmdArgs[1:] {
			p, err := strconv.Atoi(a.Key)
			if err != nil {
				return "", err
			}
			r.parts[uint32(p)] = strings.Split(a.Vals[0], ",")
		}
		s.rings[r.version] = r
		s.ring = r
	case "start":
		dev := pos(0)
		s.holders[dev] = NewHolder(s.cfg, dev, s.ring, s.peersOf(dev, s.ring), s.clock())
		s.grants[dev] = NewGranter(s.cfg, dev, s.ring, s.clock())
		if s.stores[dev] == nil {
			s.stores[dev] = map[string]string{}
		}
	case "reset":
		dev, r := pos(0), s.rings[pos(1)]
		if r == nil {
			return "", fmt.Errorf("no ring %s", pos(1))
		}
		s.holders[dev].Reset(r, s.peersOf(dev, r), s.clock())
		s.grants[dev].Reset(r, s.clock())
	case "tick":
		n, err := msArg(d, "ms")
		if err != nil {
			return "", err
		}
		s.now += n
		fmt.Fprintf(&b, "now %s\n", ms(s.now))
	case "renew":
		for _, r := range s.holders[pos(0)].Renewals(s.clock()) {
			s.renewal = append(s.renewal, r)
			fmt.Fprintf(&b, "%s→%s renew #%d ring %s settle %s\n", r.Holder, r.Granter, r.Seq, r.Ring, versions(r.Settle))
		}
	case "grant":
		dev := pos(0)
		var keep []Renewal
		for _, r := range s.renewal {
			if r.Granter != dev {
				keep = append(keep, r)
				continue
			}
			g := s.grants[dev].Grant(s.clock(), r, func(v Version) bool { return s.stores[dev][v.Name] == v.Version })
			s.granted = append(s.granted, g)
			fmt.Fprintf(&b, "%s→%s %s\n", g.Granter, g.Holder, grantString(g))
		}
		s.renewal = keep
	case "take":
		dev := pos(0)
		only, _ := arg(d, "seq")
		var keep []Grant
		for _, g := range s.granted {
			if g.Holder != dev || (only != "" && strconv.FormatUint(g.Seq, 10) != only) {
				keep = append(keep, g)
				continue
			}
			s.holders[dev].Granted(s.clock(), g)
			fmt.Fprintf(&b, "%s took %s's %s\n", dev, g.Granter, grantString(g))
		}
		s.granted = keep
	case "store":
		for _, a := range d.CmdArgs[1:] {
			s.stores[pos(0)][a.Key] = a.Vals[0]
		}
	case "wrote":
		p, err := strconv.Atoi(pos(1))
		if err != nil {
			return "", err
		}
		for _, a := range d.CmdArgs[2:] {
			s.holders[pos(0)].Wrote(uint32(p), a.Key, a.Vals[0], s.clock())
		}
	case "can":
		p, err := strconv.Atoi(pos(1))
		if err != nil {
			return "", err
		}
		why := s.holders[pos(0)].Refusal(s.clock(), uint32(p), pos(2))
		if why == Answers {
			return "yes\n", nil
		}
		return "no: " + why + "\n", nil
	case "revoke":
		h, _ := arg(d, "holder")
		p, _ := arg(d, "part")
		part, err := strconv.Atoi(p)
		if err != nil {
			return "", err
		}
		wait := s.grants[pos(0)].Revoke(s.clock(), h, uint32(part))
		fmt.Fprintf(&b, "wait %s (proxy waits %s)\n", ms(wait), ms(s.cfg.WaitFor(wait)))
	case "cross":
		var from []string
		for _, a := range d.CmdArgs {
			if a.Key == "from" {
				from = a.Vals
			}
		}
		p, _ := arg(d, "part")
		part, err := strconv.Atoi(p)
		if err != nil {
			return "", err
		}
		wait := s.grants[pos(0)].CrossRing(s.clock(), uint32(part), from...)
		fmt.Fprintf(&b, "wait %s\n", ms(wait))
	case "pass", "push", "replicated":
		begun, err := msArg(d, "begun")
		if err != nil {
			return "", err
		}
		at := simEpoch.Add(begun)
		switch d.Cmd {
		case "pass":
			s.grants[pos(0)].FullPass(pos(1), at)
		case "push":
			s.holders[pos(0)].Pushed(pos(1), at)
		default:
			p, _ := arg(d, "part")
			part, err := strconv.Atoi(p)
			if err != nil {
				return "", err
			}
			s.grants[pos(0)].Replicated(pos(1), uint32(part), at)
		}
	default:
		return "", fmt.Errorf("unknown command %q", d.Cmd)
	}
	return b.String(), nil
}

func versions(vs []Version) string {
	if len(vs) == 0 {
		return "-"
	}
	var parts []string
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%d/%s=%s", v.Part, v.Name, v.Version))
	}
	return strings.Join(parts, " ")
}

func grantString(g Grant) string {
	s := fmt.Sprintf("#%d ", g.Seq)
	if g.Granted {
		s += "granted"
		if len(g.Revoked) > 0 {
			s += fmt.Sprintf(" but %v", g.Revoked)
		}
	} else {
		s += "refused"
	}
	return s + " held " + versions(g.Held)
}
