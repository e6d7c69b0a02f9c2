// Package proxy maps account, container and object operations onto the storage nodes that own
// them: it finds the partition of a name with the ring, sends writes to every replica and
// succeeds at quorum, reads from one replica and falls back to the others, and serves manifest
// objects (large objects stored as segments: whole objects, ranges of them, inline bytes or
// nested manifests) as one stream. Front ends call the proxy; the proxy
// never parses a client protocol and never touches a disk.
package proxy

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/readlease"
	"github.com/cairn-store/cairn/internal/ring"
)

// Config configures a Proxy.
type Config struct {
	// Ring places accounts, containers and objects alike (the embedded default's one device).
	// A cluster sets AccountRing, ContainerRing and ObjectRing instead: functions returning the
	// ring in force, so that a ring.Watcher can swap a changed ring in between requests.
	Ring                                   *ring.Ring
	AccountRing, ContainerRing, ObjectRing func() *ring.Ring
	// Policies are the cluster's storage policies (default: policy 0 alone, "Policy-0"), and
	// ObjectRings the object ring of each, by index (default: ObjectRing, or Ring, for policy
	// 0 alone). A container's objects go to the ring of the policy it was created in.
	Policies    *policy.Set
	ObjectRings map[int]func() *ring.Ring
	Dialer      nodeclient.Dialer
	Logger      *slog.Logger
	// ContainerCacheTTL is how long the proxy trusts that a container it has seen exists
	// (default 5s; negative disables the cache).
	ContainerCacheTTL time.Duration
	// SegmentGrace is how long the segments of a replaced or deleted manifest outlive it, so
	// that downloads already under way can finish (default 5m; negative: delete at once).
	SegmentGrace time.Duration
	// NodeTimeout is the deadline of each request to a node that carries no object body
	// (HEAD, DELETE, POST, container and account requests, listings); bodies are bounded by
	// the node client's idle timeout instead (default 10s, Swift's node_timeout).
	NodeTimeout time.Duration
	// ErrorLimit is how many failures within ErrorInterval make the proxy stop sending a node
	// requests for ErrorInterval, using handoffs instead (Swift's error_suppression_limit and
	// _interval; defaults 10 and 60s; a negative limit never suppresses).
	ErrorLimit    int
	ErrorInterval time.Duration
	// DecidedGrace is how long a conditional write decided by its name's register may take
	// to land before other proxies presume its writer dead and decide over it (decided.go);
	// until then they answer 409 (default 1m).
	DecidedGrace time.Duration
	// ReadLeases: reads of replicated objects ask the first primary to answer alone under its
	// read lease, and writes and reads that pass it by revoke it first (lease.go,
	// docs/consistency.md "Read leases"). The storage nodes run with leases too.
	ReadLeases bool
}

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.Ring != nil {
		if c.AccountRing != nil || c.ContainerRing != nil || c.ObjectRing != nil {
			return errors.New("proxy: give one ring for everything or the three rings, not both")
		}
		if err := c.Ring.Validate(); err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		r := c.Ring
		c.AccountRing, c.ContainerRing, c.ObjectRing = func() *ring.Ring { return r }, func() *ring.Ring { return r }, func() *ring.Ring { return r }
	}
	if err := c.validatePolicies(); err != nil {
		return err
	}
	rings := []struct {
		what string
		f    func() *ring.Ring
	}{{"account", c.AccountRing}, {"container", c.ContainerRing}}
	for _, p := range c.Policies.All() {
		rings = append(rings, struct {
			what string
			f    func() *ring.Ring
		}{fmt.Sprintf("%s's object", p), c.ObjectRings[p.Index]})
	}
	for _, rf := range rings {
		if rf.f == nil || rf.f() == nil {
			return fmt.Errorf("proxy: no %s ring", rf.what)
		}
		if err := rf.f().Validate(); err != nil {
			return fmt.Errorf("proxy: %s ring: %w", rf.what, err)
		}
	}
	if c.Dialer == nil {
		return errors.New("proxy: no dialer")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ContainerCacheTTL == 0 {
		c.ContainerCacheTTL = 5 * time.Second
	}
	if c.SegmentGrace == 0 {
		c.SegmentGrace = 5 * time.Minute
	}
	if c.NodeTimeout == 0 {
		c.NodeTimeout = 10 * time.Second
	}
	if c.ErrorLimit == 0 {
		c.ErrorLimit = 10
	}
	if c.ErrorInterval == 0 {
		c.ErrorInterval = time.Minute
	}
	if c.DecidedGrace == 0 {
		c.DecidedGrace = time.Minute
	}
	if c.NodeTimeout < 0 || c.ErrorInterval < 0 || c.DecidedGrace < 0 {
		return errors.New("proxy: negative timeout")
	}
	return nil
}

// Proxy routes requests to storage nodes.
type Proxy struct {
	accountRing, containerRing func() *ring.Ring
	objectRings                map[int]func() *ring.Ring
	policies                   *policy.Set
	schemes                    map[int]*ec.Scheme // the erasure code of each EC policy
	dialer                     nodeclient.Dialer
	log                        *slog.Logger
	known                      *containerCache
	grace                      time.Duration
	later                      *releaser
	nodeTimeout                time.Duration
	health                     *health
	// regs and registerTimeout: the proxy as a proposer of registers (register.go); a
	// decision takes at least two synced rounds, and more when proxies duel, so it is bounded
	// by three node timeouts (a busy disk can make each round slow).
	regs            *registers
	flights         *Flights // writes stamped and in flight through this proxy (flights.go)
	registerTimeout time.Duration
	decidedGrace    time.Duration
	// now is the clock that ages decided writes (tests move it).
	now func() time.Time
	// leases: the read leases' timing, nil without Config.ReadLeases; alone: the nodes whose
	// last lease read was answered alone (lease.go).
	leases *readlease.Config
	alone  sync.Map
	// placement chooses the policy of a container created without naming one (SetPlacement).
	placement atomic.Pointer[Placement]
}

// New returns a Proxy.
func New(cfg Config) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	schemes, err := ecSchemes(cfg.Policies)
	if err != nil {
		return nil, err
	}
	return &Proxy{
		accountRing: cfg.AccountRing, containerRing: cfg.ContainerRing,
		objectRings: cfg.ObjectRings, policies: cfg.Policies, schemes: schemes,
		dialer: cfg.Dialer, log: cfg.Logger,
		known: newContainerCache(cfg.ContainerCacheTTL),
		grace: cfg.SegmentGrace, later: &releaser{pending: map[*time.Timer]func(){}},
		nodeTimeout: cfg.NodeTimeout,
		health:      newHealth(cfg.ErrorLimit, cfg.ErrorInterval, time.Now),
		regs:        newRegisters(), flights: &Flights{}, registerTimeout: 3 * cfg.NodeTimeout, decidedGrace: cfg.DecidedGrace, now: meta.Wall,
		leases: leaseConfig(cfg.ReadLeases),
	}, nil
}

// Close deletes at once the segments still waiting out their grace period (call it once no
// request is being served), so that a clean shutdown leaves no garbage.
func (p *Proxy) Close() {
	p.later.flush()
}

// listingFor assigns each replica of an object (objects: where it is written) the replicas of
// its container's listing it updates, so that every listing replica hears of every write, as
// Swift's proxy does round robin: one each while there are at least as many object replicas,
// and the listings left over shared out among the object replicas when the policy keeps fewer
// (Swift's comma-separated X-Container-Host). Cairn pairs an object replica with a listing
// replica on the same device first, then on the same node: a storage node commits a listing
// entry of its own device in the object's batch, in the same fsync, and reaches one of its own
// devices without the network, which in a small cluster (where most partitions share nodes)
// spares most PUTs a second synced commit elsewhere.
func (p *Proxy) listingFor(name meta.ObjectName, objects *placement) *writeListing {
	r := p.containerRing()
	part := partition(r, name.Account, name.Container, "")
	devs := r.Nodes(part)
	objs := make([]ring.Device, len(objects.primaries))
	for i, t := range objects.primaries {
		objs[i] = t.dev
	}
	return &writeListing{p: p, name: name, ring: r, part: part, devs: devs,
		assign: pairLocalFirst(objs, devs), listed: new(nodeclient.Listed)}
}

// pairLocalFirst maps each object device to the indexes of the listing devices it updates: the
// same device where one is free, then the same node, then the listing devices left in ring
// order, then round robin once each has one. Each listing device is used once before any is
// used twice, and every listing device is used: those left when each object device has one go
// to the object devices in turn, as extras.
func pairLocalFirst(objs, listings []ring.Device) [][]int {
	assign := make([]int, len(objs))
	for i := range assign {
		assign[i] = -1
	}
	used := make([]bool, len(listings))
	for _, same := range []func(a, b ring.Device) bool{
		func(a, b ring.Device) bool { return a.Node == b.Node && a.Name == b.Name },
		func(a, b ring.Device) bool { return a.Node == b.Node },
	} {
		for i, o := range objs {
			if assign[i] >= 0 {
				continue
			}
			for j, l := range listings {
				if !used[j] && same(o, l) {
					assign[i], used[j] = j, true
					break
				}
			}
		}
	}
	next := 0
	for i := range assign {
		if assign[i] >= 0 {
			continue
		}
		for next < len(listings) && used[next] {
			next++
		}
		if next < len(listings) {
			assign[i], used[next] = next, true
		} else {
			assign[i] = i % len(listings)
		}
	}
	out := make([][]int, len(objs))
	for i, j := range assign {
		out[i] = []int{j}
	}
	extra := 0
	for j := range listings {
		if !used[j] && len(objs) > 0 {
			out[extra%len(objs)] = append(out[extra%len(objs)], j)
			extra++
		}
	}
	return out
}

// accountFor assigns each replica of a container one replica of its account's listing to
// update, round robin as for listingFor (Swift's proxy does the same with X-Account-Host): the
// account ring's primaries, whatever handoff stands in for a container replica.
func (p *Proxy) accountFor(account string) func(replica int) *nodeclient.AccountUpdate {
	r := p.accountRing()
	part := partition(r, account, "", "")
	devs := r.Nodes(part)
	return func(replica int) *nodeclient.AccountUpdate {
		d := devs[replica%len(devs)]
		return &nodeclient.AccountUpdate{Node: d.Node, Device: d.Name, Part: part}
	}
}

// answerErrors are node errors that report a state of the data rather than a failure.
// The client's own mistakes (a range past the end, a body shorter or longer than it said, a
// name no node accepts) are answers too: asking another node would get the same.
var answerErrors = []error{meta.ErrNotFound, meta.ErrConflict, meta.ErrNotEmpty, meta.ErrExists, meta.ErrInsufficientStorage, meta.ErrPreconditionFailed,
	meta.ErrInvalidRange, meta.ErrIncompleteBody, meta.ErrBodyTooLong, meta.ErrInvalidName,
	// A decision above a plain write is taken on primaries only: a handoff, which keeps no
	// register, must not take the write in its place.
	meta.ErrDecidedAbove}

// isFinal says whether a write's error ends it on that replica: an answer, except a full
// device, which another device (a handoff) can take the write for.
func isFinal(err error) bool {
	return isAnswer(err) && !errors.Is(err, meta.ErrInsufficientStorage)
}

func isAnswer(err error) bool {
	for _, s := range answerErrors {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
