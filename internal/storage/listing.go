package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/binenc"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Container listings in a cluster. An object write names the container replica whose listing it
// updates (nodeclient.ContainerUpdate). When that replica is the write's own device, the entry
// commits in the object's batch, as in the embedded default. Otherwise the update is kept as a
// pending record in the object's batch (so that a crash cannot lose it), sent once the object is
// durable, and removed when the container replica has it; the updater resends what is left.

// pendingPrefix starts the keys of pending listing updates ('u', then the object's name and the
// write's timestamp, so that two writes of a name are two updates).
const pendingPrefix = 'u'

// updateTimeout bounds the listing update sent after a write (Swift's container_update_timeout):
// past it the client is answered and the updater finishes the job.
const updateTimeout = time.Second

// pendingUpdate is a listing update waiting to reach its container replica.
type pendingUpdate struct {
	target  nodeclient.ContainerUpdate
	account string
	cont    string
	entry   meta.ListEntry
	deleted bool
	// slot tells apart the updates of one write that go to several listing replicas (the
	// write's position in its list of targets); the first keeps the key of updates written
	// before there could be several.
	slot uint8
}

func (u *pendingUpdate) key() []byte {
	k := []byte{pendingPrefix}
	k = binenc.AppendString(k, u.account)
	k = binenc.AppendString(k, u.cont)
	k = binenc.AppendString(k, u.entry.Name)
	k = fmt.Appendf(k, "%016x", uint64(u.entry.Timestamp))
	if u.slot > 0 {
		k = append(k, '/', u.slot)
	}
	return k
}

// encode writes version 1 (one target per write) for the first slot, which older nodes read
// too, version 2 (the slot last) for the others, and version 3 (the slot, then the entry's
// Modified) for an entry whose Last-Modified is not its timestamp.
func (u *pendingUpdate) encode() []byte {
	version := byte(1)
	switch {
	case u.entry.Modified != 0:
		version = 3
	case u.slot > 0:
		version = 2
	}
	b := []byte{version}
	b = binenc.AppendString(b, u.target.Node)
	b = binenc.AppendString(b, u.target.Device)
	b = fmt.Appendf(b, "%08x", u.target.Part)
	b = binenc.AppendString(b, u.account)
	b = binenc.AppendString(b, u.cont)
	b = binenc.AppendString(b, u.entry.Name)
	b = fmt.Appendf(b, "%016x%016x", uint64(u.entry.Timestamp), uint64(u.entry.Size))
	b = binenc.AppendString(b, u.entry.ETag)
	b = binenc.AppendString(b, u.entry.ContentType)
	if u.deleted {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	if version >= 2 {
		b = append(b, u.slot)
	}
	if version == 3 {
		b = fmt.Appendf(b, "%016x", uint64(u.entry.Modified))
	}
	return b
}

func decodePending(v []byte) (*pendingUpdate, error) {
	if len(v) < 1 || v[0] < 1 || v[0] > 3 {
		return nil, fmt.Errorf("storage: pending update version: %w", meta.ErrCorrupt)
	}
	version := v[0]
	d := binenc.Decoder{B: v[1:]}
	u := &pendingUpdate{}
	u.target.Node = d.Str()
	u.target.Device = d.Str()
	var part uint32
	if _, err := fmt.Sscanf(string(d.Bytes(8)), "%08x", &part); err != nil && d.Err == nil {
		d.Err = err
	}
	u.target.Part = part
	u.account = d.Str()
	u.cont = d.Str()
	u.entry.Name = d.Str()
	var ts, size uint64
	if _, err := fmt.Sscanf(string(d.Bytes(32)), "%016x%016x", &ts, &size); err != nil && d.Err == nil {
		d.Err = err
	}
	u.entry.Timestamp, u.entry.Size = meta.Timestamp(ts), int64(size)
	u.entry.ETag = d.Str()
	u.entry.ContentType = d.Str()
	last := d.Bytes(1)
	if version >= 2 {
		if slot := d.Bytes(1); len(slot) == 1 {
			u.slot = slot[0]
		}
	}
	if version == 3 {
		var modified uint64
		if _, err := fmt.Sscanf(string(d.Bytes(16)), "%016x", &modified); err != nil && d.Err == nil {
			d.Err = err
		}
		u.entry.Modified = meta.Timestamp(modified)
	}
	if d.Err != nil || len(last) != 1 || len(d.B) != 0 || (version == 2 && u.slot == 0) || (version == 3 && u.entry.Modified == 0) {
		return nil, fmt.Errorf("storage: pending update: %v: %w", d.Err, meta.ErrCorrupt)
	}
	u.deleted = last[0] == 1
	return u, nil
}

// inBatch reports whether a write on device devName updates the listing of upd in its own
// batch: upd names this very device.
func (n *Node) inBatch(devName string, upd nodeclient.ContainerUpdate) bool {
	return upd.Device == devName && n.isSelf(upd.Node)
}

// queued is what queueUpdates made of a write's listing updates: the pending ones, sent after
// its commit, and the one the caller commits in the write's own batch (here; nil: none).
type queued struct {
	pending []*pendingUpdate
	here    *nodeclient.ContainerUpdate
}

// queueUpdates puts a write's listing updates into its batch: those for listings elsewhere as
// pending updates (update, to each target), sent once the batch commits (sendAll) or else by
// the updater. here names the target that is this very device, whose listing the caller
// updates in the batch itself.
func (n *Node) queueUpdates(b *pebble.Batch, devName string, targets []nodeclient.ContainerUpdate, update pendingUpdate) (q queued, err error) {
	if len(targets) > 255 {
		return queued{}, fmt.Errorf("storage: %d listing updates for one write, at most 255", len(targets))
	}
	for i, t := range targets {
		if q.here == nil && n.inBatch(devName, t) {
			q.here = &targets[i]
			continue
		}
		u := update
		u.target, u.slot = t, uint8(i)
		if err := b.Set(u.key(), u.encode(), nil); err != nil {
			return queued{}, err
		}
		q.pending = append(q.pending, &u)
	}
	return q, nil
}

// sendAll delivers a committed write's pending updates (queueUpdates), and tells listed which
// of its listings hold its entry now: the one its batch updated and those it reached.
func (n *Node) sendAll(ctx context.Context, d *device, q queued, listed *nodeclient.Listed) {
	if q.here != nil {
		listed.Add(*q.here)
	}
	for _, u := range q.pending {
		if n.sendPending(ctx, d, u) {
			listed.Add(u.target)
		}
	}
}

// isSelf reports whether a ring address is this node's: a node without peers is alone, and
// every address is its own.
func (n *Node) isSelf(node string) bool { return n.peers == nil || node == n.address }

// alone reports whether the node has no peers. Then each listing on its devices is fed by the
// objects of the same device only, in the objects' own batches (the embedded default), and the
// engine's record of a name says what its listing holds: a write can replace the entry without
// reading it, and a delete needs no listing tombstone. (Listing updates that do come from
// elsewhere, through UpdateListing, still keep theirs.)
func (n *Node) alone() bool { return n.peers == nil }

// sendPending delivers a pending update after its write committed, and forgets it once the
// container replica has it. A failure leaves it for the updater.
func (n *Node) sendPending(ctx context.Context, d *device, u *pendingUpdate) (sent bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), updateTimeout)
	defer cancel()
	if err := n.deliver(ctx, u); err != nil {
		n.log.Debug("listing update left for the updater", "container", u.cont, "object", u.entry.Name, "node", u.target.Node, "err", err)
		n.metrics.listingUpdates.WithLabelValues("deferred").Inc()
		return false
	}
	n.metrics.listingUpdates.WithLabelValues("sent").Inc()
	// NoSync: a removal lost in a crash only makes the updater send the update again, and
	// updates are idempotent (newest timestamp wins).
	if err := d.db.Delete(u.key(), pebble.NoSync); err != nil {
		n.log.Warn("cannot forget a delivered listing update", "err", err)
	}
	return true
}

// deliver sends one listing update to its container replica.
func (n *Node) deliver(ctx context.Context, u *pendingUpdate) error {
	var c nodeclient.Client = n
	if !n.isSelf(u.target.Node) {
		var err error
		if c, err = n.peers.Dial(u.target.Node); err != nil {
			return err
		}
	}
	return c.UpdateListing(ctx, u.target.Device, u.target.Part, u.account, u.cont, u.entry, u.deleted)
}

// UpdateListing records an object version in this device's listing of a container (Swift's
// container server object PUT and DELETE); newest timestamp wins.
func (n *Node) UpdateListing(ctx context.Context, devName string, part uint32, account, container string, e meta.ListEntry, deleted bool) error {
	if err := n.enter(); err != nil {
		return err
	}
	defer n.leave()
	d, err := n.device(devName)
	if err != nil {
		return err
	}
	if err := d.engine.CheckWriteSpace(); err != nil {
		return err
	}
	if _, err := d.index.GetContainer(ctx, account, container); err != nil {
		if errors.Is(err, meta.ErrNotFound) {
			if r, ok, rerr := d.index.Replica(account, container); rerr == nil && ok && r.Deleted >= e.Timestamp {
				// The container was deleted after this row was written (its tombstone says
				// so): there is nothing to list it in, now or later, and a pending update
				// that carries it is done.
				return nil
			}
		}
		return err
	}
	// The engine's lock of the name: the object writes of this device that change the entry
	// in their own batches hold it too, and so does the sweeper.
	unlock := d.engine.LockName(meta.ObjectName{Account: account, Container: container, Object: e.Name})
	defer unlock()
	var hold usageHold
	defer hold.release()
	hold.take(d.index)
	b := d.db.NewBatch()
	defer b.Close()
	if deleted {
		err = d.index.DeleteEntry(b, account, container, e.Name, e.Timestamp)
	} else {
		err = d.index.PutEntry(b, account, container, e)
	}
	if err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("storage: listing update: %w", err)
	}
	return nil
}

// statsFullEvery is how many updater passes go by between two stats passes that visit every
// container (the others visit those seen to change): with the default interval, five minutes,
// as Swift's container updater. The first pass after the node opens visits every container, for
// what a crash kept the node from reporting.
const statsFullEvery = 60

// runUpdater resends the pending listing updates and account rows of every device, and reports
// the usage of containers that changed, every interval, until stop.
func (n *Node) runUpdater(interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for pass := 0; ; pass++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		n.updatePass(ctx, pass%statsFullEvery == 0)
	}
}

// FlushUpdates sends now, once, every pending listing update and account row of every device,
// and reports the usage of every container whose account replica is elsewhere and whose usage
// changed since it was last reported (what the updater does in the background). Failures are
// left for the updater.
func (n *Node) FlushUpdates(ctx context.Context) {
	n.updatePass(ctx, true)
}

// updatePass is one pass of the updater; passes never overlap.
func (n *Node) updatePass(ctx context.Context, allStats bool) {
	n.updaterMu.Lock()
	defer n.updaterMu.Unlock()
	var updates, rows int
	for name, d := range n.devs() {
		left, err := n.flushPending(ctx, d)
		if err != nil {
			n.log.Warn("listing updater pass failed", "device", name, "err", err)
		}
		updates += left
		left, err = n.flushRows(ctx, d)
		if err != nil {
			n.log.Warn("account updater pass failed", "device", name, "err", err)
		}
		rows += left
		if err := n.reportUsage(ctx, d, allStats); err != nil && ctx.Err() == nil {
			n.log.Warn("container usage pass failed", "device", name, "err", err)
		}
	}
	n.metrics.pendingUpdates.Set(float64(updates))
	n.metrics.pendingRows.Set(float64(rows))
}

// flushPending sends every pending update of a device once, and returns how many are left.
func (n *Node) flushPending(ctx context.Context, d *device) (left int, err error) {
	return flushQueue(ctx, n, d, pendingPrefix, "listing update", decodePending, n.sendPending)
}

// flushQueue sends every record of a device's queue of pending updates (the keys under prefix)
// once, oldest first, at most 10,000 a pass, and returns how many are left. A record that no
// longer decodes is dropped, loudly: it can never be sent.
func flushQueue[T any](ctx context.Context, n *Node, d *device, prefix byte, what string,
	decode func([]byte) (T, error), send func(context.Context, *device, T) bool) (left int, err error) {
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
	if err != nil {
		return 0, err
	}
	var todo []T
	for ok := it.First(); ok && len(todo) < 10_000; ok = it.Next() {
		u, err := decode(it.Value())
		if err != nil {
			n.log.Error("dropping an unreadable pending "+what, "key", fmt.Sprintf("%q", it.Key()), "err", err)
			d.db.Delete(it.Key(), pebble.NoSync)
			continue
		}
		todo = append(todo, u)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return 0, err
	}
	left = len(todo)
	for _, u := range todo {
		if ctx.Err() != nil {
			return left, nil
		}
		if send(ctx, d, u) {
			left--
		}
	}
	return left, nil
}
