package proxy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// CreateContainer creates a container in an account; meta.ErrExists if it exists.
//
// Swift's container servers refuse (404) a container whose account replicas have no account,
// and Swift's account servers have none until it is PUT (Swift's proxy does that first, as
// account_autocreate). Cairn's nodes hold every account implicitly and never answer so, so the
// account is made only when the create answers not found: what a Cairn cluster pays for
// working over Swift's servers is nothing, and a Swift cluster pays one account PUT and a
// retry per new account.
//
// The container's storage policy is the one m names under meta.ContainerPolicyKey (an index,
// which must be defined and usable: policy.ErrUnknown, policy.ErrNotSupported), else the one
// the placement chooses (SetPlacement), else the default; a container that exists in another policy than the one named is ErrPolicyConflict
// (one created without naming a policy keeps its own, as in Swift).
func (p *Proxy) CreateContainer(ctx context.Context, account, container string, m map[string]string) error {
	m, idx, explicit, err := p.createPolicy(ctx, account, container, m)
	if err != nil {
		return fmt.Errorf("create container %q: %w", container, err)
	}
	pl := p.placeContainer(account, container)
	c := meta.Container{Name: container, Created: meta.Now(), Meta: m}
	acct := p.accountFor(account)
	gen := p.known.generation()
	create := func() error {
		return pl.fanOut(ctx, func(ctx context.Context, t target) error {
			return t.client.PutContainer(ctx, t.dev.Name, pl.part, account, c, nodeclient.ContainerOptions{Account: acct(t.replica), DefaultPolicy: !explicit})
		})
	}
	err = create()
	if errors.Is(err, meta.ErrNotFound) {
		if aerr := p.createAccount(ctx, account); aerr != nil {
			return fmt.Errorf("create container %q: %w", container, aerr)
		}
		// The same record again: the replicas the refused create made take it as the
		// container they have (202, meta.ErrExists) and now update the account.
		err = create()
		if errors.Is(err, meta.ErrExists) && p.createdAt(ctx, account, container, c.Created) {
			err = nil
		}
	}
	if explicit {
		err = p.checkPolicyConflict(ctx, account, container, idx, err)
	}
	if err != nil {
		return fmt.Errorf("create container %q: %w", container, err)
	}
	p.known.remember(account, container, idx, time.Now(), gen)
	return nil
}

// createAccount puts an account on its account replicas (Swift's autocreate_account).
func (p *Proxy) createAccount(ctx context.Context, account string) error {
	pl := p.placeAccount(account)
	ts := meta.Now()
	if err := pl.fanOut(ctx, func(ctx context.Context, t target) error {
		return t.client.PutAccount(ctx, t.dev.Name, pl.part, account, ts)
	}); err != nil {
		return fmt.Errorf("create account %q: %w", account, err)
	}
	p.log.Info("created an account on its account servers", "account", account)
	return nil
}

// createdAt reports whether a container's creation is the one at ts: whether the container a
// create found was made by that same create's first attempt. Swift's servers answer creation
// times to 10 µs, so they are compared to that.
func (p *Proxy) createdAt(ctx context.Context, account, container string, ts meta.Timestamp) bool {
	c, err := p.HeadContainer(ctx, account, container)
	const swiftResolution = meta.Timestamp(10 * time.Microsecond)
	return err == nil && c.Created/swiftResolution == ts/swiftResolution
}

// HeadContainer returns a container and its usage. What it learns (that the container exists,
// and its storage policy) goes to the container cache, as Swift's proxy keeps the container
// info of every HEAD in memcache: a front end that reads the container before an object
// request spares the proxy a read of its own.
func (p *Proxy) HeadContainer(ctx context.Context, account, container string) (meta.Container, error) {
	pl := p.placeContainer(account, container)
	gen := p.known.generation()
	c, err := read(ctx, pl, true, func(ctx context.Context, t target) (meta.Container, error) {
		return t.client.HeadContainer(ctx, t.dev.Name, pl.part, account, container)
	})
	if err == nil {
		if idx, ok := c.PolicyIndex(); ok {
			p.known.remember(account, container, idx, time.Now(), gen)
		}
	}
	return c, err
}

// PostContainer merges metadata into a container; an empty value removes a key. A container's
// storage policy (meta.ContainerPolicyKey) is not changed.
func (p *Proxy) PostContainer(ctx context.Context, account, container string, m map[string]string) (meta.Container, error) {
	if _, ok := m[meta.ContainerPolicyKey]; ok {
		m = maps.Clone(m)
		delete(m, meta.ContainerPolicyKey)
	}
	pl := p.placeContainer(account, container)
	var out meta.Container
	var mu sync.Mutex // replicas answer concurrently
	err := pl.fanOut(ctx, func(ctx context.Context, t target) error {
		c, err := t.client.PostContainer(ctx, t.dev.Name, pl.part, account, container, m)
		if err == nil {
			mu.Lock()
			out = c
			mu.Unlock()
		}
		return err
	})
	return out, err
}

// DeleteContainer deletes an empty container: meta.ErrNotEmpty otherwise.
func (p *Proxy) DeleteContainer(ctx context.Context, account, container string) error {
	pl := p.placeContainer(account, container)
	now := meta.Now() // one timestamp for every replica: newest wins in the account's rows
	acct := p.accountFor(account)
	err := pl.fanOut(ctx, func(ctx context.Context, t target) error {
		return t.client.DeleteContainer(ctx, t.dev.Name, pl.part, account, container, now, nodeclient.ContainerOptions{Account: acct(t.replica)})
	})
	// After the delete: a lookup that raced with it cannot cache it again (see generation).
	p.known.forget(account, container)
	return err
}

// ListObjects returns a page of a container's listing.
func (p *Proxy) ListObjects(ctx context.Context, account, container string, opts meta.ListOptions) (meta.ObjectListing, error) {
	return p.listQuorum(ctx, p.placeContainer(account, container), account, container, opts)
}

// ListContainers returns a page of an account's containers, hiding the ones Cairn reserves for
// itself.
func (p *Proxy) ListContainers(ctx context.Context, account string, opts meta.ListOptions) (meta.ContainerListing, error) {
	pl := p.placeAccount(account)
	// Reserved names sort before every client name (they start with \x00), so skipping them is
	// a matter of starting after them; the filter below catches any that remain.
	if !opts.Reverse && opts.Marker < reservedMarker {
		opts.Marker = reservedMarker
	}
	l, err := read(ctx, pl, true, func(ctx context.Context, t target) (meta.ContainerListing, error) {
		return t.client.ListContainers(ctx, t.dev.Name, pl.part, account, opts)
	})
	if noAccount(err) {
		return meta.ContainerListing{}, nil
	}
	if err != nil {
		return l, err
	}
	l.Containers = slices.DeleteFunc(l.Containers, func(c meta.Container) bool {
		return strings.HasPrefix(c.Name, meta.ReservedPrefix)
	})
	return l, nil
}

// ListReservedContainers returns a page of an account's reserved containers whose names start
// with prefix (itself starting with meta.ReservedPrefix), for the daemons that tend them.
func (p *Proxy) ListReservedContainers(ctx context.Context, account, prefix string, opts meta.ListOptions) (meta.ContainerListing, error) {
	if !strings.HasPrefix(prefix, meta.ReservedPrefix) {
		return meta.ContainerListing{}, fmt.Errorf("list reserved containers of %q: prefix %q is not reserved", account, prefix)
	}
	pl := p.placeAccount(account)
	opts.Prefix = prefix
	l, err := read(ctx, pl, true, func(ctx context.Context, t target) (meta.ContainerListing, error) {
		return t.client.ListContainers(ctx, t.dev.Name, pl.part, account, opts)
	})
	if noAccount(err) {
		return meta.ContainerListing{}, nil
	}
	return l, err
}

// noAccount reports whether an account read failed because no account replica holds the
// account (a Swift account server answers 404 until the account's first container is made).
// Such an account is an empty one, as Swift's proxy shows it with account_autocreate: its HEAD
// and listings succeed with nothing in them.
func noAccount(err error) bool { return errors.Is(err, meta.ErrNotFound) }

// reservedMarker sorts after every reserved container name Cairn makes. It is valid UTF-8 (the
// last code point), as Swift's servers require of markers.
const reservedMarker = meta.ReservedPrefix + "\U0010FFFF"

// AccountUsage returns a reader of an account's stored bytes and objects for quota checks
// (access.CheckAccountQuota); an account with nothing stored yet has none.
func (p *Proxy) AccountUsage(account string) func(context.Context) (access.Usage, error) {
	return func(ctx context.Context) (access.Usage, error) {
		a, err := p.HeadAccount(ctx, account)
		if err != nil && !errors.Is(err, meta.ErrNotFound) {
			return access.Usage{}, err
		}
		return access.Usage{Bytes: a.BytesUsed, Objects: a.ObjectCount}, nil
	}
}

// HeadAccount returns an account's usage totals. Its container count leaves out the containers
// Cairn reserves for itself, as its listing does, so that the two agree; their bytes and objects
// (an upload's parts, a large object's segments) are stored data and count.
func (p *Proxy) HeadAccount(ctx context.Context, account string) (meta.Account, error) {
	pl := p.placeAccount(account)
	a, err := read(ctx, pl, true, func(ctx context.Context, t target) (meta.Account, error) {
		return t.client.HeadAccount(ctx, t.dev.Name, pl.part, account)
	})
	if noAccount(err) {
		return meta.Account{Name: account}, nil
	}
	if err != nil || a.ContainerCount == 0 {
		return a, err
	}
	opts := meta.ListOptions{Prefix: meta.ReservedPrefix, Limit: 1000}
	for {
		l, err := read(ctx, pl, true, func(ctx context.Context, t target) (meta.ContainerListing, error) {
			return t.client.ListContainers(ctx, t.dev.Name, pl.part, account, opts)
		})
		if err != nil {
			return meta.Account{}, err
		}
		a.ContainerCount -= int64(len(l.Containers))
		if !l.Truncated || len(l.Containers) == 0 {
			break
		}
		opts.Marker = l.Containers[len(l.Containers)-1].Name
	}
	a.ContainerCount = max(a.ContainerCount, 0)
	return a, nil
}

// placeContainer is where a container's requests go.
func (p *Proxy) placeContainer(account, container string) *placement {
	r := p.containerRing()
	return p.place(r, partition(r, account, container, ""))
}

// placeAccount is where an account's requests go.
func (p *Proxy) placeAccount(account string) *placement {
	r := p.accountRing()
	return p.place(r, partition(r, account, "", ""))
}
