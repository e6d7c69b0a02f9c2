// Package microstore owns the cluster description of the microstores (docs/microstores.md,
// the MOS design of seed 004): which microstores the cluster has, each a named set of proxies
// and a storage policy whose ring covers the microstore's own nodes and devices, and which
// workload classes its new buckets come from. The description is one versioned document kept
// in the cluster; this package is its model and its rules (every change checked against the
// whole), pure of I/O: the server keeps the document as an object and serves the changes.
package microstore

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/workload"
)

// Description is the cluster's microstores, at one generation.
type Description struct {
	// Generation counts the description's changes: each change makes the next.
	Generation  uint64       `json:"generation"`
	Changed     time.Time    `json:"changed"`
	Microstores []Microstore `json:"microstores"`
	// Pool is the free proxies, which the resource manager gives to microstores and takes
	// back (internal/rmanager). Like every proxy they serve any bucket of no microstore.
	Pool []string `json:"pool,omitempty"`
}

// Microstore is one sub-cluster.
type Microstore struct {
	Name string `json:"name"`
	// Policy is the storage policy whose object ring holds the microstore's objects: its
	// ring's nodes and devices are the microstore's. A bucket belongs to the microstore of
	// its policy.
	Policy string `json:"policy"`
	// Proxies are the addresses (host:port) of the proxies that serve its buckets.
	Proxies []string `json:"proxies"`
	// Classes are the workload classes whose new buckets are placed here.
	Classes []workload.Class `json:"classes,omitempty"`
}

// Errors of a change.
var (
	ErrExists    = errors.New("microstore exists")
	ErrNotFound  = errors.New("no such microstore")
	ErrInvalid   = errors.New("invalid microstore")
	ErrConflicts = errors.New("conflicts with another microstore")
)

// maxName bounds a microstore's name.
const maxName = 63

// Validate checks the description as a whole: names well formed and unique, and no policy,
// proxy or class in two microstores (a bucket's microstore must be one, and a proxy serves one
// microstore at a time).
func (d *Description) Validate() error {
	names := map[string]bool{}
	policies, proxies := map[string]string{}, map[string]string{}
	classes := map[workload.Class]string{}
	for _, m := range d.Microstores {
		if err := m.validate(); err != nil {
			return err
		}
		if names[m.Name] {
			return fmt.Errorf("microstore %q: %w", m.Name, ErrExists)
		}
		names[m.Name] = true
		if o, ok := policies[strings.ToLower(m.Policy)]; ok {
			return fmt.Errorf("microstore %q: storage policy %q is microstore %q's: %w", m.Name, m.Policy, o, ErrConflicts)
		}
		policies[strings.ToLower(m.Policy)] = m.Name
		for _, p := range m.Proxies {
			if o, ok := proxies[p]; ok {
				return fmt.Errorf("microstore %q: proxy %s serves microstore %q: %w", m.Name, p, o, ErrConflicts)
			}
			proxies[p] = m.Name
		}
		for _, c := range m.Classes {
			if o, ok := classes[c]; ok {
				return fmt.Errorf("microstore %q: class %v goes to microstore %q: %w", m.Name, c, o, ErrConflicts)
			}
			classes[c] = m.Name
		}
	}
	for _, p := range d.Pool {
		if err := checkProxy(p); err != nil {
			return fmt.Errorf("the pool: %w", err)
		}
		if o, ok := proxies[p]; ok {
			if o == "" {
				return fmt.Errorf("the pool: proxy %s named twice: %w", p, ErrInvalid)
			}
			return fmt.Errorf("the pool: proxy %s serves microstore %q: %w", p, o, ErrConflicts)
		}
		proxies[p] = ""
	}
	return nil
}

// checkProxy checks a proxy's address: an IP address or a host name, and a port.
func checkProxy(p string) error {
	host, port, err := net.SplitHostPort(p)
	n, perr := strconv.Atoi(port)
	if err != nil || host == "" || perr != nil || n < 1 || n > 65535 ||
		(net.ParseIP(host) == nil && strings.IndexFunc(host, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-')
		}) >= 0) {
		return fmt.Errorf("proxy %q is not host:port: %w", p, ErrInvalid)
	}
	return nil
}

func (m *Microstore) validate() error {
	if m.Name == "" || len(m.Name) > maxName || strings.IndexFunc(m.Name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-')
	}) >= 0 || m.Name[0] == '-' {
		return fmt.Errorf("microstore name %q: 1 to %d of a-z, 0-9 and '-', not starting with '-': %w", m.Name, maxName, ErrInvalid)
	}
	if m.Policy == "" {
		return fmt.Errorf("microstore %q: no storage policy: %w", m.Name, ErrInvalid)
	}
	seen := map[string]bool{}
	for _, p := range m.Proxies {
		if err := checkProxy(p); err != nil {
			return fmt.Errorf("microstore %q: %w", m.Name, err)
		}
		if seen[p] {
			return fmt.Errorf("microstore %q: proxy %s named twice: %w", m.Name, p, ErrInvalid)
		}
		seen[p] = true
	}
	for _, c := range m.Classes {
		if c == workload.Unclassified || c > workload.LargeWrites {
			return fmt.Errorf("microstore %q: class %v: only A, B, C and D place buckets: %w", m.Name, c, ErrInvalid)
		}
	}
	return nil
}

// Find returns the microstore named name.
func (d *Description) Find(name string) (Microstore, bool) {
	i := slices.IndexFunc(d.Microstores, func(m Microstore) bool { return m.Name == name })
	if i < 0 {
		return Microstore{}, false
	}
	return d.Microstores[i], true
}

// OfPolicy returns the microstore whose storage policy is policy (any of its names, without
// regard to case, as policies are named): the microstore of a bucket in that policy.
func (d *Description) OfPolicy(names ...string) (Microstore, bool) {
	for _, m := range d.Microstores {
		for _, n := range names {
			if strings.EqualFold(m.Policy, n) {
				return m, true
			}
		}
	}
	return Microstore{}, false
}

// ForClass returns the microstore whose new buckets come from class.
func (d *Description) ForClass(c workload.Class) (Microstore, bool) {
	for _, m := range d.Microstores {
		if slices.Contains(m.Classes, c) {
			return m, true
		}
	}
	return Microstore{}, false
}

// A Change turns a description into the next; it returns an error wrapping one of the
// package's and changes nothing when it cannot be made.
type Change func(d *Description) error

// Apply returns the description after change, at the next generation, checked as a whole.
func (d *Description) Apply(change Change, now time.Time) (*Description, error) {
	next := d.clone()
	if err := change(next); err != nil {
		return nil, err
	}
	if err := next.Validate(); err != nil {
		return nil, err
	}
	slices.SortFunc(next.Microstores, func(a, b Microstore) int { return cmp.Compare(a.Name, b.Name) })
	next.Generation, next.Changed = d.Generation+1, now.UTC()
	return next, nil
}

func (d *Description) clone() *Description {
	c := &Description{Generation: d.Generation, Changed: d.Changed, Microstores: make([]Microstore, len(d.Microstores)), Pool: slices.Clone(d.Pool)}
	for i, m := range d.Microstores {
		m.Proxies, m.Classes = slices.Clone(m.Proxies), slices.Clone(m.Classes)
		c.Microstores[i] = m
	}
	return c
}

// Create adds a microstore.
func Create(m Microstore) Change {
	return func(d *Description) error {
		if _, ok := d.Find(m.Name); ok {
			return fmt.Errorf("microstore %q: %w", m.Name, ErrExists)
		}
		m.Proxies, m.Classes = slices.Clone(m.Proxies), slices.Clone(m.Classes)
		d.Microstores = append(d.Microstores, m)
		return nil
	}
}

// edit changes the microstore named name in place.
func edit(name string, f func(m *Microstore) error) Change {
	return func(d *Description) error {
		i := slices.IndexFunc(d.Microstores, func(m Microstore) bool { return m.Name == name })
		if i < 0 {
			return fmt.Errorf("microstore %q: %w", name, ErrNotFound)
		}
		return f(&d.Microstores[i])
	}
}

// Resize gives the microstore named name the proxies given, in place of its own: a proxy that
// serves another microstore is refused (it moves by a Resize of that one first).
func Resize(name string, proxies []string) Change {
	return edit(name, func(m *Microstore) error {
		m.Proxies = slices.Clone(proxies)
		return nil
	})
}

// Assign makes the microstore named name the one new buckets of the classes given go to, in
// place of those it had; a class another microstore takes is moved from it.
func Assign(name string, classes []workload.Class) Change {
	return func(d *Description) error {
		if _, ok := d.Find(name); !ok {
			return fmt.Errorf("microstore %q: %w", name, ErrNotFound)
		}
		for i := range d.Microstores {
			m := &d.Microstores[i]
			if m.Name == name {
				m.Classes = slices.Clone(classes)
				continue
			}
			m.Classes = slices.DeleteFunc(m.Classes, func(c workload.Class) bool { return slices.Contains(classes, c) })
		}
		return nil
	}
}

// Delete removes the microstore named name. Its policy's buckets then belong to none, and are
// served by every proxy, as before microstores.
func Delete(name string) Change {
	return func(d *Description) error {
		i := slices.IndexFunc(d.Microstores, func(m Microstore) bool { return m.Name == name })
		if i < 0 {
			return fmt.Errorf("microstore %q: %w", name, ErrNotFound)
		}
		d.Microstores = slices.Delete(d.Microstores, i, i+1)
		return nil
	}
}

// SetPool makes the proxies given the free pool, in place of those it had.
func SetPool(proxies []string) Change {
	return func(d *Description) error {
		d.Pool = slices.Clone(proxies)
		return nil
	}
}

// Move moves a proxy of the pool or of a microstore to the microstore named to, or to the pool
// when to is "" (the resource manager's step).
func Move(proxy, to string) Change {
	return func(d *Description) error {
		if to != "" {
			if _, ok := d.Find(to); !ok {
				return fmt.Errorf("microstore %q: %w", to, ErrNotFound)
			}
		}
		found := false
		if i := slices.Index(d.Pool, proxy); i >= 0 {
			d.Pool, found = slices.Delete(d.Pool, i, i+1), true
		}
		for i := range d.Microstores {
			m := &d.Microstores[i]
			if j := slices.Index(m.Proxies, proxy); j >= 0 {
				m.Proxies, found = slices.Delete(m.Proxies, j, j+1), true
			}
		}
		if !found {
			return fmt.Errorf("proxy %s is in no microstore and not in the pool: %w", proxy, ErrNotFound)
		}
		if to == "" {
			d.Pool = append(d.Pool, proxy)
			return nil
		}
		return edit(to, func(m *Microstore) error {
			m.Proxies = append(m.Proxies, proxy)
			return nil
		})(d)
	}
}

// Encode writes the description as the document the cluster keeps.
func (d *Description) Encode() ([]byte, error) { return json.MarshalIndent(d, "", "  ") }

// Decode reads a document Encode wrote, and checks it.
func Decode(b []byte) (*Description, error) {
	var d Description
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("microstore description: %v: %w", err, ErrInvalid)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("microstore description: %w", err)
	}
	return &d, nil
}
