package replicator

import (
	"context"
	"fmt"
	"maps"
	"math/bits"
	"slices"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
)

// Container and account replication (Swift's container and account replicators). A job is the
// containers (or accounts) of one device in one partition of the container (account) ring. For
// each other primary of the partition:
//
//  1. One request compares the digests of all the job's listings: a container's record
//     (creation, deletion, metadata) and its rows (object entries and listing tombstones), or
//     an account's rows (one per container). Listings in sync cost nothing more.
//  2. A record that differs is sent whole; the replica merges it, newest wins.
//  3. Rows that differ are found by sub-range: a listing of n rows is split into about n/256
//     buckets by a hash of the row names (at most 2^nodeclient.ListingBucketBits), both sides
//     digest each bucket, and only the buckets that differ are looked at. Their row versions
//     (names and timestamps) are offered, the replica says which it would take (what it lacks
//     or holds older), and only those rows are sent. Buckets by name hash need nothing agreed
//     beforehand but the number of bits, which the sender picks from its row count, and a
//     change anywhere in a listing touches one bucket.
//
// A device that is not a primary of the partition (a handoff, or a rebalance moved the
// partition away) sends each listing to every primary, page by page of rows, and removes each
// page's rows once every primary has them, then the rest of the listing (its record, usage,
// totals) once no row is left: a row written meanwhile changed what was sent, is kept, and goes
// with the next pass.

// rowsPerBucket is the number of rows a listing's buckets hold on average.
const rowsPerBucket = 256

// pageRows is the number of rows read, offered and sent at a time.
const pageRows = 1000

// maxDigestRows bounds the rows (by this device's count) whose digests one request asks a peer
// for: the peer reads them all before it answers, within the node timeout.
const maxDigestRows = 1 << 20

// digestBatch returns the end of the batch of listings starting at start that one digests
// request covers: at least one listing, at most maxDigestRows rows.
func digestBatch(mine []nodeclient.ListingDigest, start int) int {
	end, rows := start+1, mine[start].Count
	for end < len(mine) && rows+mine[end].Count <= maxDigestRows {
		rows += mine[end].Count
		end++
	}
	return end
}

// bucketBits returns the number of bucket bits for a listing of n rows: 0 (one bucket, no
// bucket digests) up to rowsPerBucket rows.
func bucketBits(n int) uint {
	if n <= rowsPerBucket {
		return 0
	}
	return min(uint(bits.Len(uint((n-1)/rowsPerBucket))), nodeclient.ListingBucketBits)
}

// listingPartition is the partition of a listing: of its names in the cluster, Swift's, as the
// proxy places it.
func listingPartition(rg *ring.Ring, l nodeclient.Listing) uint32 {
	return rg.Partition(meta.SwiftAccount(l.Account), l.Container, "")
}

// listingJobs returns a job for each partition of a listing ring in which a device of this node
// holds listings.
func (r *Replicator) listingJobs(ctx context.Context, kind ringKind, rg *ring.Ring, open map[string]bool) []job {
	if rg == nil {
		return nil
	}
	var jobs []job
	for _, dev := range ringDevices(rg, r.cfg.Self, open) {
		parts := map[uint32][]nodeclient.Listing{}
		err := r.cfg.Node.Listings(ctx, dev, kind == accountRing, func(l nodeclient.Listing) error {
			p := listingPartition(rg, l)
			parts[p] = append(parts[p], l)
			return nil
		})
		if err != nil && ctx.Err() == nil {
			r.log.Warn("listing a device's listings", "ring", kind.String(), "device", dev, "err", err)
		}
		for _, p := range slices.Sorted(maps.Keys(parts)) {
			jobs = append(jobs, job{kind: kind, ring: rg, device: dev, part: p, names: parts[p]})
		}
	}
	return jobs
}

// peer is a primary a listing job pushes to, dialled.
type peer struct {
	target
	c   nodeclient.ListingReplication
	err error // could not be dialled
}

func (r *Replicator) dialPeer(t target) peer {
	c, err := r.cfg.Dialer.Dial(t.addr())
	if err != nil {
		return peer{target: t, err: err}
	}
	lr, ok := c.(nodeclient.ListingReplication)
	if !ok {
		return peer{target: t, err: fmt.Errorf("replicator: node %s does not replicate listings", t.addr())}
	}
	return peer{target: t, c: lr}
}

// replicateListings reconciles the listings of one partition of one device with its primaries.
func (r *Replicator) replicateListings(ctx context.Context, j job) PassStats {
	st := PassStats{Partitions: 1, Listings: len(j.names)}
	targets, handoff := r.placement(j)
	kind := "primary"
	if handoff {
		kind, st.Handoffs = "handoff", 1
	}
	mine, err := r.cfg.Node.ListingDigests(ctx, j.device, j.names)
	if err != nil {
		return r.failed(ctx, st, j, kind, "digests of local listings", err)
	}
	peers := make([]peer, len(targets))
	for i, t := range targets {
		peers[i] = r.dialPeer(t)
	}
	ok := true
	if handoff {
		for i, name := range j.names {
			moved, err := r.moveListing(ctx, j, peers, name, mine[i], &st)
			if err != nil {
				ok = false
				if ctx.Err() != nil {
					return st
				}
				r.log.Debug("moving a listing from a handoff", "ring", j.kind.String(), "account", name.Account, "container", name.Container, "err", err)
			} else if !moved {
				st.Remaining = 1
			}
		}
	} else {
		for _, p := range peers {
			if err := r.syncListings(ctx, j, p, mine, &st); err != nil {
				ok = false
				if ctx.Err() != nil {
					return st
				}
				r.log.Debug("replicating listings", "ring", j.kind.String(), "device", j.device, "partition", j.part, "to", p.Node+"/"+p.Name, "err", err)
			}
		}
	}
	return r.outcome(st, j, kind, ok, handoff && !ok)
}

// syncListings pushes to one primary what it lacks of a job's listings; it goes on past a
// listing that fails, and returns the first failure.
func (r *Replicator) syncListings(ctx context.Context, j job, p peer, mine []nodeclient.ListingDigest, st *PassStats) error {
	if p.err != nil {
		r.metrics.listings.WithLabelValues(j.kind.String(), "failed").Add(float64(len(j.names)))
		return p.err
	}
	theirs := make([]nodeclient.ListingDigest, 0, len(j.names))
	for start := 0; start < len(j.names); {
		end := digestBatch(mine, start)
		ds, err := p.c.ListingDigests(ctx, p.Name, j.names[start:end])
		if err != nil {
			r.metrics.listings.WithLabelValues(j.kind.String(), "failed").Add(float64(len(j.names)))
			return fmt.Errorf("digests of %s/%s: %w", p.addr(), p.Name, err)
		}
		theirs = append(theirs, ds...)
		start = end
	}
	var first error
	for i, name := range j.names {
		m, t := mine[i], theirs[i]
		if m == t || m == (nodeclient.ListingDigest{}) {
			r.metrics.listings.WithLabelValues(j.kind.String(), "in_sync").Inc()
			continue
		}
		before := *st
		err := r.syncListing(ctx, j, p, name, m, t, st)
		switch {
		case err != nil:
			r.metrics.listings.WithLabelValues(j.kind.String(), "failed").Inc()
			if first == nil {
				first = fmt.Errorf("%s/%s to %s/%s: %w", name.Account, name.Container, p.addr(), p.Name, err)
			}
			if ctx.Err() != nil {
				return first
			}
		case st.Records == before.Records && st.Rows == before.Rows:
			// What differs is only what the peer has and this device lacks: its pass sends it.
			r.metrics.listings.WithLabelValues(j.kind.String(), "in_sync").Inc()
		default:
			r.metrics.listings.WithLabelValues(j.kind.String(), "synced").Inc()
		}
	}
	return first
}

// syncListing pushes one listing to one primary whose digests (t) differ from this device's (m).
func (r *Replicator) syncListing(ctx context.Context, j job, p peer, name nodeclient.Listing, m, t nodeclient.ListingDigest, st *PassStats) error {
	live := name.IsAccount() || (t.Record != 0 && !t.Deleted)
	if !name.IsAccount() && m.Record != t.Record {
		var err error
		if live, err = r.pushRecord(ctx, j, p, name, st); err != nil {
			return err
		}
	}
	if m.Deleted || !live || (m.Rows == t.Rows && m.Count == t.Count) {
		return nil // no rows of a deleted container, here or there
	}
	bits := bucketBits(m.Count)
	var buckets []uint32 // nil: all
	if bits > 0 {
		mb, err := r.cfg.Node.ListingBuckets(ctx, j.device, name, bits)
		if err != nil {
			return fmt.Errorf("local buckets: %w", err)
		}
		tb, err := p.c.ListingBuckets(ctx, p.Name, name, bits)
		if err != nil {
			return fmt.Errorf("buckets: %w", err)
		}
		for b, d := range mb {
			if tb[b] != d {
				buckets = append(buckets, b)
			}
		}
		if len(buckets) == 0 {
			return nil
		}
	}
	return r.eachPage(ctx, j, name, bits, buckets, func(rows []nodeclient.ListingRow) error {
		_, err := r.offer(ctx, j, p, name, rows, st)
		return err
	})
}

// pushRecord sends a container's record to a primary and returns whether the container lives
// there afterwards.
func (r *Replicator) pushRecord(ctx context.Context, j job, p peer, name nodeclient.Listing, st *PassStats) (bool, error) {
	rec, ok, err := r.cfg.Node.ContainerRecord(ctx, j.device, name.Account, name.Container)
	if err != nil || !ok {
		return false, err // gone meanwhile: nothing to send
	}
	live, err := p.c.MergeContainer(ctx, p.Name, j.part, name.Account, name.Container, rec, r.reportTo(name, p.replica))
	if err != nil {
		return false, fmt.Errorf("sending the record: %w", err)
	}
	st.Records++
	r.metrics.pushed.WithLabelValues(j.kind.String(), "record").Inc()
	return live, nil
}

// reportTo names the account replica that a container's replica of a given index reports its
// usage to, as the proxy pairs them when it creates the container (nil without an account
// ring).
func (r *Replicator) reportTo(name nodeclient.Listing, replica int) *nodeclient.AccountUpdate {
	if r.cfg.AccountRing == nil {
		return nil
	}
	rg := r.cfg.AccountRing()
	if rg == nil {
		return nil
	}
	part := listingPartition(rg, nodeclient.Listing{Account: name.Account})
	devs := rg.Nodes(part)
	if len(devs) == 0 {
		return nil
	}
	d := devs[replica%len(devs)]
	return &nodeclient.AccountUpdate{Node: d.Node, Device: d.Name, Part: part}
}

// eachPage calls fn with the rows of a listing in the given buckets, a page at a time.
func (r *Replicator) eachPage(ctx context.Context, j job, name nodeclient.Listing, bits uint, buckets []uint32, fn func([]nodeclient.ListingRow) error) error {
	for after := ""; ; {
		rows, more, err := r.cfg.Node.ListingRows(ctx, j.device, name, bits, buckets, after, pageRows)
		if err != nil {
			return fmt.Errorf("local rows: %w", err)
		}
		if len(rows) > 0 {
			if err := fn(rows); err != nil {
				return err
			}
		}
		if !more || len(rows) == 0 {
			return nil
		}
		after = rows[len(rows)-1].Name()
	}
}

// offer sends a primary the rows of a page it would take, and returns how many.
func (r *Replicator) offer(ctx context.Context, j job, p peer, name nodeclient.Listing, rows []nodeclient.ListingRow, st *PassStats) (int, error) {
	versions := make([]nodeclient.ListingRow, len(rows))
	for i, row := range rows {
		versions[i] = row.Version()
	}
	want, err := p.c.WantRows(ctx, p.Name, name, versions)
	if err != nil {
		return 0, fmt.Errorf("offering rows: %w", err)
	}
	st.Offered += int64(len(versions))
	r.metrics.offered.WithLabelValues(j.kind.String()).Add(float64(len(versions)))
	if len(want) == 0 {
		return 0, nil
	}
	send := make([]nodeclient.ListingRow, len(want))
	for i, k := range want {
		send[i] = rows[k]
	}
	if err := p.c.MergeRows(ctx, p.Name, j.part, name, send); err != nil {
		return 0, fmt.Errorf("sending rows: %w", err)
	}
	st.Rows += int64(len(send))
	r.metrics.pushed.WithLabelValues(j.kind.String(), "row").Add(float64(len(send)))
	return len(send), nil
}

// moveListing sends a handoff's listing to every primary and removes it once they all hold it.
// It reports whether the listing is gone from the device.
func (r *Replicator) moveListing(ctx context.Context, j job, peers []peer, name nodeclient.Listing, m nodeclient.ListingDigest, st *PassStats) (bool, error) {
	if !name.IsAccount() && m.Record == 0 {
		return true, nil // gone since the pass listed it
	}
	for _, p := range peers {
		if p.err != nil {
			return false, p.err
		}
	}
	// Which primaries take rows: all for an account; for a container, those where it lives
	// after the record (one holding a newer deletion has no use for them).
	takes := make([]bool, len(peers))
	for i, p := range peers {
		takes[i] = name.IsAccount()
		if m.Record != 0 {
			live, err := r.pushRecord(ctx, j, p, name, st)
			if err != nil {
				return false, fmt.Errorf("to %s/%s: %w", p.addr(), p.Name, err)
			}
			takes[i] = live && !m.Deleted
		}
	}
	err := r.eachPage(ctx, j, name, 0, nil, func(rows []nodeclient.ListingRow) error {
		for i, p := range peers {
			if !takes[i] {
				continue
			}
			if _, err := r.offer(ctx, j, p, name, rows, st); err != nil {
				return fmt.Errorf("to %s/%s: %w", p.addr(), p.Name, err)
			}
		}
		n, err := r.cfg.Node.EvictRows(ctx, j.device, name, rows)
		st.Evicted += int64(n)
		r.metrics.evicted.WithLabelValues(j.kind.String()).Add(float64(n))
		if err != nil {
			return fmt.Errorf("removing moved rows: %w", err)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	gone, err := r.cfg.Node.EvictListing(ctx, j.device, name, m.Record)
	if err != nil {
		return false, fmt.Errorf("removing the moved listing: %w", err)
	}
	if gone {
		st.Evicted++
		r.metrics.evicted.WithLabelValues(j.kind.String()).Inc()
	}
	return gone, nil
}
