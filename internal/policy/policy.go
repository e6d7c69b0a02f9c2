// Package policy owns storage policies: what each is (an index, names, replication or erasure
// coding with its parameters, default, deprecated), read from the [storage-policy:N] sections
// of Swift's swift.conf beside the rings (conf.go), validated as Swift validates them, and looked
// up by index or by name. A policy's objects are placed by its own object ring
// (object.ring.gz for policy 0, object-N.ring.gz for policy N); which ring that is, and which
// policy a container is in, are for the server and the proxy: this package is configuration
// only and depends on nothing of Cairn's.
package policy

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Errors of policies, for errors.Is.
var (
	// ErrInvalid is a policy definition (or set of them) that Swift would refuse too.
	ErrInvalid = errors.New("invalid storage policy configuration")
	// ErrUnknown is a name or index that no policy has.
	ErrUnknown = errors.New("no such storage policy")
	// ErrDeprecated is a deprecated policy asked for a new container: its containers keep
	// working, but no new one may be made in it.
	ErrDeprecated = errors.New("storage policy is deprecated")
	// ErrNotSupported is an erasure-coded policy that Cairn cannot store objects in, asked to:
	// one of PyECLib's codes (its fragments are liberasurecode's format, which Cairn neither
	// writes nor reads), or a duplication factor other than 1. Such policies are read,
	// validated and kept, so that a swift.conf declaring one (a Swift cluster's) works.
	ErrNotSupported = errors.New("erasure code not supported")
)

// Type is how a policy stores an object: whole copies, or fragments of an erasure code.
type Type string

const (
	// Replication stores as many whole copies as the policy's ring has replicas.
	Replication Type = "replication"
	// ErasureCoding stores DataFragments + ParityFragments fragments, any DataFragments of
	// which rebuild the object (served with ec_type CairnScheme only: see Usable).
	ErasureCoding Type = "erasure_coding"
)

// CairnScheme is the ec_type of Cairn's own erasure code (Reed-Solomon over GF(2^8) with a
// Vandermonde-derived systematic matrix, klauspost/reedsolomon; internal/ec). Its fragment
// archives are Cairn's format: neither liberasurecode's nor readable by Swift. Swift's own
// ec_type names are accepted in swift.conf but not served (Usable), so that a Cairn proxy on a
// Swift cluster's rings never reads Swift's fragments as Cairn's, and a Cairn cluster never
// writes fragments that a Swift server would take for its own code's.
const CairnScheme = "cairn_rs"

// LegacyName is the name of policy 0 when swift.conf defines none (Swift's "Policy-0"), which
// no other policy may take.
const LegacyName = "Policy-0"

// DefaultSegmentSize is Swift's ec_object_segment_size when none is given (1 MiB).
const DefaultSegmentSize = 1 << 20

// Policy is one storage policy.
type Policy struct {
	Index int
	// Name is the policy's primary name; Aliases are its other names. Names are unique across
	// a cluster's policies, compared without case.
	Name    string
	Aliases []string
	// Default is the policy of containers created without naming one (exactly one is).
	Default bool
	// Deprecated: existing containers keep it, new ones may not take it, /info hides it.
	Deprecated bool
	Type       Type
	// EC holds the erasure code's parameters of an ErasureCoding policy (zero otherwise).
	EC EC
}

// EC is an erasure-coded policy's code (Swift's ec_* options).
type EC struct {
	// Scheme is the erasure code's implementation (Swift's ec_type, e.g.
	// liberasurecode_rs_vand).
	Scheme string
	// DataFragments (k) and ParityFragments (m): an object is cut into k data fragments and m
	// parity fragments, any k of which rebuild it.
	DataFragments, ParityFragments int
	// SegmentSize is the size of the pieces an object is encoded in (default 1 MiB).
	SegmentSize int
	// DuplicationFactor stores each fragment this many times (default 1).
	DuplicationFactor int
}

// schemes are the ec_type values PyECLib knows (Swift refuses any other) and Cairn's own, so
// that a typo is caught at startup.
var schemes = []string{CairnScheme, "liberasurecode_rs_vand", "jerasure_rs_vand", "jerasure_rs_cauchy", "flat_xor_hd_3",
	"flat_xor_hd_4", "isa_l_rs_vand", "isa_l_rs_cauchy", "shss", "libphazr"}

// Names returns the policy's name and then its aliases.
func (p Policy) Names() []string { return append([]string{p.Name}, p.Aliases...) }

// RingName is the name of the policy's object ring, as Swift names it: "object" for policy 0,
// "object-N" for policy N (its file is RingName()+".ring.gz").
func (p Policy) RingName() string {
	if p.Index == 0 {
		return "object"
	}
	return "object-" + strconv.Itoa(p.Index)
}

// Replicas is the replica count the policy's ring must have, or 0 when any will do: an
// erasure-coded policy stores each of its k+m fragments (times the duplication factor) on one
// device of the partition, as Swift requires of its ring.
func (p Policy) Replicas() int {
	if p.Type != ErasureCoding {
		return 0
	}
	return (p.EC.DataFragments + p.EC.ParityFragments) * p.EC.DuplicationFactor
}

// Usable reports whether this version can store objects in the policy: every replicated one,
// and an erasure-coded one with Cairn's code (CairnScheme) and no duplication. Any other code
// is ErrNotSupported: PyECLib's codes (Swift's) lay out fragments as liberasurecode does, which
// Cairn does not, so the objects Swift's servers hold in such a policy stay Swift's (501).
func (p Policy) Usable() error {
	if p.Type != ErasureCoding {
		return nil
	}
	if p.EC.Scheme != CairnScheme {
		return fmt.Errorf("storage policy %d (%s) is erasure-coded with %s %d+%d, whose fragments are liberasurecode's (Swift's) format; Cairn serves ec_type = %s: %w",
			p.Index, p.Name, p.EC.Scheme, p.EC.DataFragments, p.EC.ParityFragments, CairnScheme, ErrNotSupported)
	}
	if p.EC.DuplicationFactor > 1 {
		return fmt.Errorf("storage policy %d (%s): ec_duplication_factor %d: Cairn stores each fragment once: %w", p.Index, p.Name, p.EC.DuplicationFactor, ErrNotSupported)
	}
	return nil
}

func (p Policy) String() string { return fmt.Sprintf("storage policy %d (%s)", p.Index, p.Name) }

// validate checks one policy on its own, as Swift's BaseStoragePolicy does, and fills in the
// erasure code's defaults.
func (p *Policy) validate() error {
	if p.Index < 0 {
		return fmt.Errorf("%w: invalid index %d", ErrInvalid, p.Index)
	}
	names := p.Names()
	for i, n := range names {
		if err := checkName(n, p.Index); err != nil {
			return err
		}
		for _, prev := range names[:i] {
			if strings.EqualFold(prev, n) {
				return fmt.Errorf("%w: policy %d: the name %s is already assigned to this policy", ErrInvalid, p.Index, n)
			}
		}
	}
	if p.Deprecated && p.Default {
		return fmt.Errorf("%w: policy %d (%s): a deprecated policy cannot be the default", ErrInvalid, p.Index, p.Name)
	}
	switch p.Type {
	case "":
		p.Type = Replication
	case Replication:
	case ErasureCoding:
		return p.validateEC()
	default:
		return fmt.Errorf("%w: policy %d (%s): invalid policy_type %q (want %s or %s)", ErrInvalid, p.Index, p.Name, p.Type, Replication, ErasureCoding)
	}
	if p.EC != (EC{}) {
		return fmt.Errorf("%w: policy %d (%s): erasure code options on a %s policy", ErrInvalid, p.Index, p.Name, p.Type)
	}
	return nil
}

func (p *Policy) validateEC() error {
	ec := &p.EC
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: policy %d (%s): %s", ErrInvalid, p.Index, p.Name, fmt.Sprintf(format, args...))
	}
	if ec.Scheme == "" {
		return bad("missing ec_type")
	}
	if !slices.Contains(schemes, ec.Scheme) {
		return bad("wrong ec_type %s, should be one of %s", ec.Scheme, strings.Join(schemes, ", "))
	}
	if ec.DataFragments <= 0 {
		return bad("invalid ec_num_data_fragments %d", ec.DataFragments)
	}
	if ec.ParityFragments <= 0 {
		return bad("invalid ec_num_parity_fragments %d", ec.ParityFragments)
	}
	if ec.SegmentSize == 0 {
		ec.SegmentSize = DefaultSegmentSize
	}
	if ec.SegmentSize < 0 {
		return bad("invalid ec_object_segment_size %d", ec.SegmentSize)
	}
	if ec.DuplicationFactor == 0 {
		ec.DuplicationFactor = 1
	}
	if ec.DuplicationFactor < 0 {
		return bad("invalid ec_duplication_factor %d", ec.DuplicationFactor)
	}
	if ec.Scheme == CairnScheme && (ec.DataFragments+ec.ParityFragments > 256 || ec.SegmentSize < ec.DataFragments) {
		return bad("%s: at most 256 fragments in all, and segments of at least one byte per data fragment", CairnScheme)
	}
	// Swift's rule (its bug 1639691): this code with 5 or more parity fragments can lose data.
	if ec.Scheme == "isa_l_rs_vand" && ec.ParityFragments >= 5 && !p.Deprecated {
		return bad("isa_l_rs_vand with %d parity fragments is known to harm data durability: such a policy must be deprecated", ec.ParityFragments)
	}
	return nil
}

// validChars are the characters of a policy name: names travel in HTTP headers
// (X-Storage-Policy, X-Account-Storage-Policy-<name>-*).
func validChar(c rune) bool {
	return c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func checkName(name string, index int) error {
	if name == "" {
		return fmt.Errorf("%w: policy %d: invalid name %q", ErrInvalid, index, name)
	}
	if strings.IndexFunc(name, func(c rune) bool { return !validChar(c) }) >= 0 {
		return fmt.Errorf("%w: policy %d: invalid name %q: names are used as HTTP headers and may hold only letters, digits and '-'", ErrInvalid, index, name)
	}
	if strings.EqualFold(name, LegacyName) && index != 0 {
		return fmt.Errorf("%w: policy %d: the name %s is reserved for policy index 0", ErrInvalid, index, LegacyName)
	}
	return nil
}

// Set is a cluster's storage policies, validated together.
type Set struct {
	list   []Policy       // by index
	byName map[string]int // upper-cased name or alias → position in list
	def    int            // position of the default
}

// New validates policies as a set, as Swift's StoragePolicyCollection does: unique indexes and
// names (without case), policy 0 present when any policy is defined (none at all is policy 0
// "Policy-0" alone), at least one policy not deprecated, and exactly one default (a single
// policy is the default without saying so).
func New(policies ...Policy) (*Set, error) {
	if len(policies) == 0 {
		return Legacy(), nil
	}
	s := &Set{byName: map[string]int{}, def: -1}
	ps := slices.Clone(policies)
	for i := range ps {
		ps[i].Aliases = slices.Clone(ps[i].Aliases)
		if err := ps[i].validate(); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(ps, func(a, b Policy) int { return a.Index - b.Index })
	for i, p := range ps {
		if i > 0 && ps[i-1].Index == p.Index {
			return nil, fmt.Errorf("%w: two policies with index %d", ErrInvalid, p.Index)
		}
		for _, n := range p.Names() {
			if j, dup := s.byName[strings.ToUpper(n)]; dup {
				return nil, fmt.Errorf("%w: the name %s of policy %d is taken by policy %d (names are compared without case)", ErrInvalid, n, p.Index, ps[j].Index)
			}
			s.byName[strings.ToUpper(n)] = i
		}
		if p.Default {
			if s.def >= 0 {
				return nil, fmt.Errorf("%w: policies %d and %d are both the default", ErrInvalid, ps[s.def].Index, p.Index)
			}
			s.def = i
		}
	}
	if ps[0].Index != 0 {
		return nil, fmt.Errorf("%w: there is no policy 0: define [storage-policy:0] to define several policies", ErrInvalid)
	}
	if !slices.ContainsFunc(ps, func(p Policy) bool { return !p.Deprecated }) {
		return nil, fmt.Errorf("%w: every policy is deprecated", ErrInvalid)
	}
	if s.def < 0 {
		if len(ps) > 1 {
			return nil, fmt.Errorf("%w: no policy is the default (set default = yes on one)", ErrInvalid)
		}
		s.def = 0
		ps[0].Default = true
	}
	s.list = ps
	return s, nil
}

// Legacy is the set of a cluster that defines no policy: policy 0, "Policy-0", replicated.
func Legacy() *Set {
	p := Policy{Index: 0, Name: LegacyName, Default: true, Type: Replication}
	return &Set{list: []Policy{p}, byName: map[string]int{strings.ToUpper(LegacyName): 0}}
}

// All returns every policy, by index.
func (s *Set) All() []Policy {
	out := slices.Clone(s.list)
	for i := range out {
		out[i].Aliases = slices.Clone(out[i].Aliases)
	}
	return out
}

// Len is the number of policies.
func (s *Set) Len() int { return len(s.list) }

// Default is the policy of containers created without naming one.
func (s *Set) Default() Policy { return s.list[s.def] }

// ByIndex returns the policy of an index.
func (s *Set) ByIndex(index int) (Policy, bool) {
	i, ok := slices.BinarySearchFunc(s.list, index, func(p Policy, idx int) int { return p.Index - idx })
	if !ok {
		return Policy{}, false
	}
	return s.list[i], true
}

// ByName returns the policy with a name or alias, compared without case.
func (s *Set) ByName(name string) (Policy, bool) {
	i, ok := s.byName[strings.ToUpper(name)]
	if !ok {
		return Policy{}, false
	}
	return s.list[i], true
}

// ForNewContainer returns the policy a new container asks for by name ("" for the default):
// ErrUnknown for a name no policy has, ErrDeprecated for a deprecated policy, ErrNotSupported
// for one this version cannot store objects in.
func (s *Set) ForNewContainer(name string) (Policy, error) {
	if name == "" {
		p := s.Default()
		return p, p.Usable()
	}
	p, ok := s.ByName(name)
	if !ok {
		return Policy{}, fmt.Errorf("storage policy %q: %w", name, ErrUnknown)
	}
	if p.Deprecated {
		return p, fmt.Errorf("%v: %w", p, ErrDeprecated)
	}
	return p, p.Usable()
}
