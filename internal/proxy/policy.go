package proxy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/ring"
)

// Storage policies. A container is created in a policy (the one its creator names, else the
// default) and keeps it: the index is stored in its record (meta.ContainerPolicyKey) on every
// container replica, and the container's objects are placed by that policy's object ring. So
// every object request first learns its container's policy, from the container cache that
// object PUTs already use (Swift's proxy reads the same from memcache); with one policy there
// is nothing to learn, and reads skip the lookup. A manifest's segments are objects of their
// own containers, each looked up in turn, so they may be in other policies than the manifest.

// ErrPolicyConflict is a create of a container that exists in another storage policy than the
// one asked for (Swift's 409): a container's policy never changes.
var ErrPolicyConflict = fmt.Errorf("the container exists in another storage policy: %w", meta.ErrConflict)

// validatePolicies fills in the policies and the object rings (policy 0 alone, on ObjectRing,
// by default) and checks that they go together: a ring for every policy and none for a policy
// that does not exist, an erasure-coded policy's ring with as many replicas as it has
// fragments (as Swift requires), and a default policy this version can store objects in.
func (c *Config) validatePolicies() error {
	if c.Policies == nil {
		c.Policies = policy.Legacy()
	}
	switch {
	case c.ObjectRings == nil && c.ObjectRing != nil:
		c.ObjectRings = map[int]func() *ring.Ring{0: c.ObjectRing}
	case c.ObjectRings != nil && c.ObjectRing != nil:
		return errors.New("proxy: give the object ring of policy 0 (ObjectRing) or the object rings of every policy (ObjectRings), not both")
	}
	for idx := range c.ObjectRings {
		if _, ok := c.Policies.ByIndex(idx); !ok {
			return fmt.Errorf("proxy: an object ring for storage policy %d, which is not defined", idx)
		}
	}
	for _, p := range c.Policies.All() {
		f := c.ObjectRings[p.Index]
		if f == nil || f() == nil {
			return fmt.Errorf("proxy: no object ring (%s.ring.gz) for %s", p.RingName(), p)
		}
		if n := p.Replicas(); n != 0 && f().Replicas() != n {
			return fmt.Errorf("proxy: %s is erasure-coded %d+%d: its ring needs exactly %d replicas, it has %d", p, p.EC.DataFragments, p.EC.ParityFragments, n, f().Replicas())
		}
	}
	if err := c.Policies.Default().Usable(); err != nil {
		return fmt.Errorf("proxy: the default storage policy cannot be: %w", err)
	}
	return nil
}

// Policies returns the cluster's storage policies.
func (p *Proxy) Policies() *policy.Set { return p.policies }

// ContainerPolicy returns the storage policy of a container's objects (meta.ErrNoContainer
// when there is no such container), cached as the proxy's own lookups are.
func (p *Proxy) ContainerPolicy(ctx context.Context, account, container string) (policy.Policy, error) {
	idx, err := p.containerPolicy(ctx, account, container, false)
	if err != nil {
		return policy.Policy{}, err
	}
	pol, ok := p.policies.ByIndex(idx)
	if !ok {
		return policy.Policy{}, fmt.Errorf("container %q: no storage policy %d here: %w", container, idx, meta.ErrUnavailable)
	}
	return pol, nil
}

// containerPolicy returns the storage policy of a container's objects: meta.ErrNoContainer
// when the container does not exist. A read (write false) with one policy in the cluster asks
// nothing, as before policies existed; otherwise the answer is cached for ContainerCacheTTL.
func (p *Proxy) containerPolicy(ctx context.Context, account, container string, write bool) (int, error) {
	if !write && p.policies.Len() == 1 {
		return 0, nil
	}
	now := time.Now()
	if p.known.ttl > 0 {
		if idx, ok := p.known.lookup(account, container, now); ok {
			return idx, nil
		}
	}
	gen := p.known.generation()
	c, err := p.HeadContainer(ctx, account, container)
	if err != nil {
		if errors.Is(err, meta.ErrNotFound) {
			return 0, meta.ErrNoContainer
		}
		return 0, err
	}
	idx, ok := c.PolicyIndex()
	if !ok {
		return 0, fmt.Errorf("container %q: storage policy index %q: %w", container, c.Meta[meta.ContainerPolicyKey], meta.ErrCorrupt)
	}
	p.known.remember(account, container, idx, now, gen)
	return idx, nil
}

// objectRing returns the ring of policy idx's objects, and its erasure code (nil for a
// replicated policy): an unknown index, which a container made by another cluster's proxy
// could hold, is a failure to serve (503); a policy this version cannot store objects in,
// policy.ErrNotSupported.
// PolicyRing returns the object ring of the storage policy of index idx, as it is now.
func (p *Proxy) PolicyRing(idx int) (*ring.Ring, error) {
	r, _, err := p.objectRing(idx)
	return r, err
}

func (p *Proxy) objectRing(idx int) (*ring.Ring, *ec.Scheme, error) {
	pol, ok := p.policies.ByIndex(idx)
	if !ok {
		return nil, nil, fmt.Errorf("storage policy %d is not defined here: %w", idx, meta.ErrUnavailable)
	}
	if err := pol.Usable(); err != nil {
		return nil, nil, err
	}
	return p.objectRings[idx](), p.schemes[idx], nil
}

// placeObject is where an object's requests go: the partition of its container's policy's
// ring. The context returned carries the policy to the node clients (nodeclient.WithPolicy).
// write says that the request needs the container to exist (a PUT).
func (p *Proxy) placeObject(ctx context.Context, name meta.ObjectName, write bool) (context.Context, *placement, error) {
	idx, err := p.containerPolicy(ctx, name.Account, name.Container, write)
	if err != nil {
		return ctx, nil, err
	}
	r, scheme, err := p.objectRing(idx)
	if err != nil {
		return ctx, nil, fmt.Errorf("container %q: %w", name.Container, err)
	}
	pl := p.place(r, partition(r, name.Account, name.Container, name.Object))
	pl.scheme = scheme
	pl.strict = scheme == nil
	if pl.strict {
		pl.joinPrevious(p.now())
		if p.leases != nil {
			// The nodes' CrossRing rule needs to know which rings this proxy's requests
			// follow (readlease.Granter.CrossRing).
			ids := []string{r.PlacementID()}
			if pl.previous != nil {
				ids = append(ids, r.PreviousPlacementID())
			}
			ctx = nodeclient.WithRings(ctx, ids...)
		}
	}
	return nodeclient.WithPolicy(ctx, idx), pl, nil
}

// ecSchemes returns the erasure code of every erasure-coded policy this version serves, by
// index.
func ecSchemes(pols *policy.Set) (map[int]*ec.Scheme, error) {
	out := map[int]*ec.Scheme{}
	for _, pol := range pols.All() {
		if pol.Type != policy.ErasureCoding || pol.Usable() != nil {
			continue
		}
		s, err := ec.New(pol.EC.DataFragments, pol.EC.ParityFragments, int64(pol.EC.SegmentSize))
		if err != nil {
			return nil, fmt.Errorf("proxy: %s: %w", pol, err)
		}
		out[pol.Index] = s
	}
	return out, nil
}

// Placement chooses the storage policy of a container its creator made without naming one: a
// microstore's policy, by the workload class of the container's account. ok false leaves the
// default. It must be quick (it runs inside the create) and must not create containers.
type Placement func(ctx context.Context, account, container string) (policyIndex int, ok bool)

// SetPlacement sets how containers created without naming a policy are placed (nil: in the
// default policy).
func (p *Proxy) SetPlacement(f Placement) {
	if f == nil {
		p.placement.Store(nil)
		return
	}
	p.placement.Store(&f)
}

// createPolicy returns a container create's metadata with its policy: the one m names (which
// must be defined and usable here), else the placement's (when it chooses a usable one), else
// the default. explicit says whether m named it: a policy chosen here is not, so that a
// container that exists keeps its own, as one created without naming a policy does in Swift.
func (p *Proxy) createPolicy(ctx context.Context, account, container string, m map[string]string) (out map[string]string, idx int, explicit bool, err error) {
	out = maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	if v, ok := out[meta.ContainerPolicyKey]; ok {
		n, err := strconv.Atoi(v)
		pol, found := p.policies.ByIndex(n)
		if err != nil || !found {
			return nil, 0, false, fmt.Errorf("storage policy index %q: %w", v, policy.ErrUnknown)
		}
		if err := pol.Usable(); err != nil {
			return nil, 0, false, err
		}
		return out, n, true, nil
	}
	idx = p.policies.Default().Index
	if place := p.placement.Load(); place != nil {
		if n, ok := (*place)(ctx, account, container); ok && n != idx {
			// A container that exists keeps its policy; asking the replicas first keeps one
			// that missed its first create from taking the placed policy instead (the nodes
			// would answer it exists, and nothing would notice the split).
			if have, err := p.containerPolicy(ctx, account, container, true); err == nil {
				n = have
			}
			if pol, found := p.policies.ByIndex(n); found && pol.Usable() == nil && !pol.Deprecated {
				idx = n
			}
		}
	}
	out[meta.ContainerPolicyKey] = strconv.Itoa(idx)
	return out, idx, false, nil
}

// checkPolicyConflict turns a create that found its container (meta.ErrExists from Cairn's
// nodes, meta.ErrConflict from Swift's container servers when the policies differ) into
// ErrPolicyConflict when the container is in another policy than the one asked for.
func (p *Proxy) checkPolicyConflict(ctx context.Context, account, container string, want int, err error) error {
	if !errors.Is(err, meta.ErrExists) && !errors.Is(err, meta.ErrConflict) {
		return err
	}
	c, herr := p.HeadContainer(ctx, account, container)
	if herr != nil {
		return err
	}
	if idx, _ := c.PolicyIndex(); idx != want {
		return fmt.Errorf("container %q is in storage policy %d, not %d: %w", container, idx, want, ErrPolicyConflict)
	}
	return err
}
