package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
)

// A container's listing is kept by each of its replicas, which hear of each write from the
// object replicas after their commits (and retry what they could not deliver). A replica that
// was down, paused or cut off when an update was sent lists without it until the retry or
// replication brings it, so one replica's listing can miss an acknowledged write or name a
// deleted object (the robustness tier's LISTs found it: docs/consistency.md). A listing is
// therefore read from a quorum of the container's primaries and merged: a name they agree on
// is listed as they list it; a name some list and others do not is looked up (a HEAD, itself
// checked by a quorum of the object's replicas), and listed only if it exists. Listings made
// while every replica took its updates agree, and cost only the second replica's read.

// listQuorum returns a page of the container's listing, read from a quorum of pl's primaries
// and merged (see above); with fewer than a quorum answering, what one replica lists.
func (p *Proxy) listQuorum(ctx context.Context, pl *placement, account, container string, opts meta.ListOptions) (meta.ObjectListing, error) {
	one := func() (meta.ObjectListing, error) {
		return read(ctx, pl, true, func(ctx context.Context, t target) (meta.ObjectListing, error) {
			return t.client.ListObjects(ctx, t.dev.Name, pl.part, account, container, opts)
		})
	}
	quorum := listingQuorum(len(pl.primaries))
	if quorum < 2 {
		return one()
	}
	type answer struct {
		l   meta.ObjectListing
		err error
	}
	answers := make(chan answer, len(pl.primaries))
	ctx, cancel := context.WithCancel(ctx)
	// The reads still running once a quorum has answered are cancelled and waited for: a
	// listing leaves nothing running behind it (a node closed after it is not read).
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait() }()
	for _, t := range pl.readOrder() {
		// A replica passed over for its recent errors is asked too: a quorum needs it when
		// another is away, and what it missed while it was away is settled below.
		t = p.unsuppressed(t)
		running.Go(func() {
			var a answer
			a.err = t.err
			if a.err == nil {
				a.err = pl.call(ctx, t, true, func(ctx context.Context, t target) error {
					var err error
					a.l, err = t.client.ListObjects(ctx, t.dev.Name, pl.part, account, container, opts)
					return err
				})
			}
			answers <- a
		})
	}
	var pages []meta.ObjectListing
	for range pl.primaries {
		if a := <-answers; a.err == nil {
			pages = append(pages, a.l)
		}
		if len(pages) == quorum {
			break
		}
	}
	if len(pages) < quorum {
		// Too few to merge (or no container): a single read, with its handoffs and its
		// rules for when "not found" is evidence.
		return one()
	}
	merged, disputed := mergeListings(pages, opts)
	if len(disputed) == 0 {
		return merged, nil
	}
	found, err := p.settleDisputed(ctx, account, container, disputed)
	if err != nil {
		return meta.ObjectListing{}, err
	}
	merged.Objects = slices.DeleteFunc(merged.Objects, func(e meta.ListEntry) bool {
		settled, isDisputed := found[e.Name]
		return isDisputed && settled == nil
	})
	for i, e := range merged.Objects {
		if settled := found[e.Name]; settled != nil {
			merged.Objects[i] = *settled
		}
	}
	return merged, nil
}

// settleDisputed looks up each disputed name: its entry as a listing shows it when it exists,
// nil when it does not.
func (p *Proxy) settleDisputed(ctx context.Context, account, container string, names []string) (map[string]*meta.ListEntry, error) {
	found := make(map[string]*meta.ListEntry, len(names))
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, name := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			o, err := p.HeadObjectBrief(ctx, meta.ObjectName{Account: account, Container: container, Object: name})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				e := o.Listed(name)
				found[name] = &e
			case errors.Is(err, meta.ErrNotFound):
				found[name] = nil
			case firstErr == nil:
				firstErr = err
			}
		})
	}
	wg.Wait()
	return found, firstErr
}

// mergeListings merges the pages that a quorum of replicas answered for one listing request:
// the names (objects and common prefixes) in the order opts asks for, up to the point every
// page covers (a truncated page covers names up to its last), within opts' limit. An object
// that some pages list and others do not is disputed: it is returned, with its newest entry,
// among the objects, and its name among the disputed, for the caller to settle. A common
// prefix any page lists is listed.
func mergeListings(pages []meta.ObjectListing, opts meta.ListOptions) (meta.ObjectListing, []string) {
	before := func(a, b string) bool {
		if opts.Reverse {
			return a > b
		}
		return a < b
	}
	// The names every page covers: up to the nearest last name of a truncated page.
	cut, cutSet := "", false
	for _, pg := range pages {
		if !pg.Truncated {
			continue
		}
		last := pg.NextMarker
		if !cutSet || before(last, cut) {
			cut, cutSet = last, true
		}
	}
	within := func(name string) bool { return !cutSet || !before(cut, name) }

	type item struct {
		name   string
		prefix bool
		entry  meta.ListEntry
		count  int
	}
	items := map[string]*item{}
	for _, pg := range pages {
		for _, e := range pg.Objects {
			if !within(e.Name) {
				continue
			}
			it := items[e.Name]
			if it == nil {
				it = &item{name: e.Name, entry: e}
				items[e.Name] = it
			} else if it.entry.Timestamp < e.Timestamp {
				it.entry = e
			}
			it.count++
		}
		for _, cp := range pg.CommonPrefixes {
			if !within(cp) {
				continue
			}
			if items[cp] == nil {
				items[cp] = &item{name: cp, prefix: true}
			}
		}
	}
	order := make([]*item, 0, len(items))
	for _, it := range items {
		order = append(order, it)
	}
	slices.SortFunc(order, func(a, b *item) int {
		c := strings.Compare(a.name, b.name)
		if opts.Reverse {
			c = -c
		}
		return c
	})
	limit := opts.Limit
	if limit <= 0 {
		limit = meta.DefaultListLimit
	}
	var out meta.ObjectListing
	var disputed []string
	for i, it := range order {
		if i == limit {
			out.Truncated, out.NextMarker = true, order[i-1].name
			return out, disputed
		}
		if it.prefix {
			out.CommonPrefixes = append(out.CommonPrefixes, it.name)
			continue
		}
		out.Objects = append(out.Objects, it.entry)
		if it.count < len(pages) {
			disputed = append(disputed, it.name)
		}
	}
	if cutSet {
		out.Truncated, out.NextMarker = true, cut
	}
	return out, disputed
}

// listingQuorum is how many of a container's n primaries make a quorum, for reads and writes
// of its listing alike: any two quorums meet.
func listingQuorum(n int) int { return n/2 + 1 }

// writeListing is the listing side of one object write: which replicas of the container's
// listing each object replica updates (to, from listingFor), and which of them hold the
// write's entry once the object replicas have answered (listed, which each fills in).
//
// A listing is read from a quorum of the container's primaries (listQuorum), so a write is
// acknowledged once a quorum of them holds its entry (settle), or every one this proxy can
// reach: then a listing read after it meets a replica that lists it, and the merge settles the
// rest. Usually the object replicas' own updates are that quorum and settle costs nothing;
// when they fell short (container replicas cut off from the object replicas, paused, or down
// when they sent them), the proxy sends the entry to the primaries that lack it, and the write
// is answered 503 only when none holds it: stored, and listed once the object replicas'
// updaters reach the listings, but by none yet. What is left open: primaries away from every
// proxy at the write that come back and answer a LIST together before the updaters reach them,
// while those holding the entry are away or slower (docs/consistency.md).
type writeListing struct {
	p      *Proxy
	name   meta.ObjectName
	ring   *ring.Ring
	part   uint32
	devs   []ring.Device // the container's primaries
	assign [][]int       // pairLocalFirst: object replica -> indexes into devs
	listed *nodeclient.Listed
}

// to returns the listing replicas that the object replica updates.
func (w *writeListing) to(replica int) []nodeclient.ContainerUpdate {
	idx := w.assign[replica%len(w.assign)]
	out := make([]nodeclient.ContainerUpdate, len(idx))
	for i, j := range idx {
		out[i] = w.update(j)
	}
	return out
}

func (w *writeListing) update(j int) nodeclient.ContainerUpdate {
	return nodeclient.ContainerUpdate{Node: w.devs[j].Node, Device: w.devs[j].Name, Part: w.part}
}

// again starts over for another attempt of the write (another timestamp): what the last one
// listed is not this one's entry.
func (w *writeListing) again() { w.listed = new(nodeclient.Listed) }

// settleDelete is settle for a DELETE's tombstone at at.
func (w *writeListing) settleDelete(ctx context.Context, at meta.Timestamp) error {
	return w.settle(ctx, meta.ListEntry{Name: w.name.Object, Timestamp: at}, true)
}

// settle returns once a quorum of the container's primaries hold the write's entry e (deleted:
// its removal), or every one it can reach does, sending it to those the object replicas did
// not reach; meta.ErrUnavailable when none holds it.
func (w *writeListing) settle(ctx context.Context, e meta.ListEntry, deleted bool) error {
	quorum := listingQuorum(len(w.devs))
	have := 0
	var missing []int
	for j := range w.devs {
		if w.listed.Has(w.update(j)) {
			have++
		} else {
			missing = append(missing, j)
		}
	}
	if have >= quorum || len(w.devs) == 0 {
		return nil
	}
	pl := w.p.place(w.ring, w.part)
	// Sent to every primary that lacks the entry at once, not one after another: one of them
	// may be slow. Once a quorum holds it the rest are cancelled (the object replicas'
	// updaters bring it to them) and waited for, so that nothing runs on after the answer.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(missing))
	for _, j := range missing {
		t := w.p.unsuppressed(pl.primaries[j])
		go func() {
			if t.err != nil {
				errs <- t.err
				return
			}
			errs <- pl.call(sctx, t, true, func(ctx context.Context, t target) error {
				return t.client.UpdateListing(ctx, t.dev.Name, pl.part, w.name.Account, w.name.Container, e, deleted)
			})
		}()
	}
	var firstErr error
	for answered := range len(missing) {
		if err := <-errs; err == nil {
			have++
		} else if firstErr == nil {
			firstErr = err
		}
		if have >= quorum {
			cancel()
			for range len(missing) - answered - 1 {
				<-errs
			}
			break
		}
	}
	w.p.log.Debug("listing entry sent by the proxy", "container", w.name.Container, "object", w.name.Object,
		"holding", have, "replicas", len(w.devs), "err", firstErr)
	if have > 0 {
		// Every primary this proxy could reach holds the entry. Those it could not are away
		// (a LIST reads the others meanwhile, which list it) and will hear of it from the
		// object replicas' updaters once back; a write refused here would make a policy that
		// survives two nodes down refuse writes while the listing its LISTs read is whole.
		return nil
	}
	return fmt.Errorf("listing of %q: none of the %d container replicas holds it (%v): %w",
		w.name.Object, len(w.devs), firstErr, meta.ErrUnavailable)
}
