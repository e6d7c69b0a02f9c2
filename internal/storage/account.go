package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/binenc"
	"github.com/cairn-store/cairn/internal/index"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Account listings in a cluster (Swift's account server fed by its container servers and
// container updater). A container PUT or DELETE names the account replica whose listing it
// updates (nodeclient.AccountUpdate). When that replica is the container's own device, the
// account's row commits in the container's batch and follows the container's usage at once, as
// in the embedded default. Otherwise the row is kept as a pending record in the container's
// batch (so that a crash cannot lose it), sent once the change is durable, and removed when the
// account replica has it; the updater resends what is left. The updater also reports the usage
// of such containers when it changes (the container's record keeps what was last reported).

// pendingRowPrefix starts the keys of pending account rows ('w', then the account, the
// container and the row's timestamps, so that a create and a delete are two records).
const pendingRowPrefix = 'w'

// pendingRow is an account row waiting to reach its account replica.
type pendingRow struct {
	target  nodeclient.AccountUpdate
	account string
	row     meta.ContainerRow
}

func (u *pendingRow) key() []byte {
	k := []byte{pendingRowPrefix}
	k = binenc.AppendString(k, u.account)
	k = binenc.AppendString(k, u.row.Name)
	k = binary.BigEndian.AppendUint64(k, uint64(u.row.PutTimestamp))
	return binary.BigEndian.AppendUint64(k, uint64(u.row.DeleteTimestamp))
}

func (u *pendingRow) encode() []byte {
	b := []byte{1} // version
	b = encodeTarget(b, u.target)
	b = binenc.AppendString(b, u.account)
	b = binenc.AppendString(b, u.row.Name)
	b = binary.AppendUvarint(b, uint64(u.row.PutTimestamp))
	b = binary.AppendUvarint(b, uint64(u.row.DeleteTimestamp))
	b = binary.AppendVarint(b, u.row.ObjectCount)
	return binary.AppendVarint(b, u.row.BytesUsed)
}

func decodePendingRow(v []byte) (*pendingRow, error) {
	if len(v) < 1 || v[0] != 1 {
		return nil, fmt.Errorf("storage: pending account row version: %w", meta.ErrCorrupt)
	}
	d := binenc.Decoder{B: v[1:]}
	u := &pendingRow{target: decodeTarget(&d)}
	u.account = d.Str()
	u.row.Name = d.Str()
	u.row.PutTimestamp = meta.Timestamp(d.Uvarint())
	u.row.DeleteTimestamp = meta.Timestamp(d.Uvarint())
	u.row.ObjectCount, u.row.BytesUsed = d.Varint(), d.Varint()
	if d.Err != nil || len(d.B) != 0 {
		return nil, fmt.Errorf("storage: pending account row: %v: %w", d.Err, meta.ErrCorrupt)
	}
	return u, nil
}

// encodeTarget appends an account replica's address (what a container record keeps as its
// index.ContainerOptions.Target).
func encodeTarget(b []byte, t nodeclient.AccountUpdate) []byte {
	b = binenc.AppendString(b, t.Node)
	b = binenc.AppendString(b, t.Device)
	return binary.AppendUvarint(b, uint64(t.Part))
}

func decodeTarget(d *binenc.Decoder) nodeclient.AccountUpdate {
	t := nodeclient.AccountUpdate{Node: d.Str(), Device: d.Str()}
	part := d.Uvarint()
	if part > 1<<32-1 && d.Err == nil {
		d.Err = errors.New("partition out of range")
	}
	t.Part = uint32(part)
	return t
}

// accountInBatch reports whether a container change on device devName updates the account row
// of upd in its own batch: upd names this very device.
func (n *Node) accountInBatch(devName string, upd *nodeclient.AccountUpdate) bool {
	return upd != nil && upd.Device == devName && n.isSelf(upd.Node)
}

// containerOptions turns a container change's options into the index's, with a pending row
// (set into *pending when the change makes one) for an account replica elsewhere.
func (n *Node) containerOptions(devName, account string, opts nodeclient.ContainerOptions, pending **pendingRow) index.ContainerOptions {
	if opts.Account == nil {
		return index.ContainerOptions{}
	}
	if n.accountInBatch(devName, opts.Account) {
		return index.ContainerOptions{LocalRow: true}
	}
	target := *opts.Account
	return index.ContainerOptions{
		Target: encodeTarget(nil, target),
		InBatch: func(b *pebble.Batch, row meta.ContainerRow) error {
			u := &pendingRow{target: target, account: account, row: row}
			*pending = u
			return b.Set(u.key(), u.encode(), nil)
		},
	}
}

// PutContainer creates a container (meta.ErrExists if it exists).
func (n *Node) PutContainer(ctx context.Context, devName string, part uint32, account string, c meta.Container, opts nodeclient.ContainerOptions) error {
	d, err := n.device(devName)
	if err != nil {
		return err
	}
	if err := d.engine.CheckWriteSpace(); err != nil {
		return err
	}
	var pending *pendingRow
	if err := d.index.CreateContainer(ctx, account, c, n.containerOptions(devName, account, opts, &pending)); err != nil {
		return err
	}
	if pending != nil {
		n.sendRow(ctx, d, pending)
	}
	return nil
}

// DeleteContainer deletes an empty container at ts.
func (n *Node) DeleteContainer(ctx context.Context, devName string, part uint32, account, container string, ts meta.Timestamp, opts nodeclient.ContainerOptions) error {
	d, err := n.device(devName)
	if err != nil {
		return err
	}
	if ts <= 0 {
		return fmt.Errorf("storage: delete container %q without a timestamp: %w", container, meta.ErrInvalidName)
	}
	if err := d.engine.CheckDeleteSpace(); err != nil {
		return err
	}
	var pending *pendingRow
	iopts := n.containerOptions(devName, account, opts, &pending)
	// The container's tombstone, for replication to spread to replicas that missed the delete.
	toAccount := iopts.InBatch
	iopts.InBatch = func(b *pebble.Batch, row meta.ContainerRow) error {
		if err := d.index.MarkDeleted(b, account, row); err != nil {
			return err
		}
		if toAccount != nil {
			return toAccount(b, row)
		}
		return nil
	}
	if err := d.index.DeleteContainer(ctx, account, container, ts, iopts); err != nil {
		return err
	}
	if pending != nil {
		n.sendRow(ctx, d, pending)
	}
	return nil
}

// UpdateAccount merges a container's row into this device's listing of an account (Swift's
// account server container PUT); newest timestamps win.
func (n *Node) UpdateAccount(ctx context.Context, devName string, part uint32, account string, row meta.ContainerRow) error {
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
	return d.index.UpdateAccountRow(ctx, account, row)
}

// sendRow delivers a pending account row after its change committed, and forgets it once the
// account replica has it. A failure leaves it for the updater.
func (n *Node) sendRow(ctx context.Context, d *device, u *pendingRow) (sent bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), updateTimeout)
	defer cancel()
	row := u.row
	if row.DeleteTimestamp == 0 {
		// A creation: report the container's usage as it is now, so that a creation delivered
		// late never undoes a report of its usage sent meanwhile.
		if r, ok, err := d.index.Report(u.account, row.Name); err == nil && ok && r.Row.PutTimestamp == row.PutTimestamp {
			row = r.Row
		}
	}
	if err := n.deliverRow(ctx, u.target, u.account, row); err != nil {
		n.log.Debug("account update left for the updater", "account", u.account, "container", row.Name, "node", u.target.Node, "err", err)
		n.metrics.accountUpdates.WithLabelValues("row", "deferred").Inc()
		return false
	}
	n.metrics.accountUpdates.WithLabelValues("row", "sent").Inc()
	// NoSync: a removal lost in a crash only makes the updater send the row again, and rows
	// are idempotent (newest timestamps win).
	if err := d.db.Delete(u.key(), pebble.NoSync); err != nil {
		n.log.Warn("cannot forget a delivered account update", "err", err)
	}
	if !row.Deleted() {
		if err := d.index.SetReported(u.account, row.Name, row.PutTimestamp, row.ObjectCount, row.BytesUsed); err != nil {
			n.log.Warn("cannot record the usage reported to an account", "err", err)
		}
	}
	return true
}

// deliverRow sends one account row to its account replica.
func (n *Node) deliverRow(ctx context.Context, t nodeclient.AccountUpdate, account string, row meta.ContainerRow) error {
	var c nodeclient.Client = n
	if !n.isSelf(t.Node) {
		var err error
		if c, err = n.peers.Dial(t.Node); err != nil {
			return err
		}
	}
	return c.UpdateAccount(ctx, t.Device, t.Part, account, row)
}

// flushRows sends every pending account row of a device once, and returns how many are left.
func (n *Node) flushRows(ctx context.Context, d *device) (left int, err error) {
	return flushQueue(ctx, n, d, pendingRowPrefix, "account update", decodePendingRow, n.sendRow)
}

// reportUsage is the stats pass over one device (Swift's container updater): it sends the row
// of each container whose usage changed since it was last reported to its account replica
// elsewhere. all visits every container; otherwise only those the index saw change and those
// whose report failed before.
func (n *Node) reportUsage(ctx context.Context, d *device, all bool) error {
	changed, overflow := d.index.TakeChanged()
	d.statsMu.Lock()
	for k := range d.statsRetry {
		changed = append(changed, k)
	}
	d.statsRetry = map[[2]string]struct{}{}
	d.statsMu.Unlock()
	unreachable := map[string]bool{} // nodes that failed this pass: not tried again until the next
	report := func(r index.ContainerReport) error {
		if !r.Changed() {
			return nil
		}
		d2 := binenc.Decoder{B: r.Target}
		t := decodeTarget(&d2)
		if d2.Err != nil {
			n.log.Error("a container's account replica is unreadable; its usage is not reported", "account", r.Account, "container", r.Row.Name, "err", d2.Err)
			return nil
		}
		var err error
		if unreachable[t.Node] {
			err = meta.ErrUnavailable
		} else {
			sctx, cancel := context.WithTimeout(ctx, updateTimeout)
			err = n.deliverRow(sctx, t, r.Account, r.Row)
			cancel()
		}
		if err != nil {
			unreachable[t.Node] = true
			n.metrics.accountUpdates.WithLabelValues("usage", "deferred").Inc()
			d.statsMu.Lock()
			d.statsRetry[[2]string{r.Account, r.Row.Name}] = struct{}{}
			d.statsMu.Unlock()
			return nil
		}
		n.metrics.accountUpdates.WithLabelValues("usage", "sent").Inc()
		return d.index.SetReported(r.Account, r.Row.Name, r.Row.PutTimestamp, r.Row.ObjectCount, r.Row.BytesUsed)
	}
	if all || overflow {
		return d.index.ReportAll(ctx, report)
	}
	for _, k := range changed {
		if ctx.Err() != nil {
			return nil
		}
		r, ok, err := d.index.Report(k[0], k[1])
		if err != nil {
			return err
		}
		if ok {
			if err := report(r); err != nil {
				return err
			}
		}
	}
	return nil
}
