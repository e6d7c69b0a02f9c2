package index

import (
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// versionKey holds the layout version of the index.
var versionKey = []byte("!index-version")

// layoutVersion 2 added account rows; an index of version 1 (or none) kept each container's
// account listing on the container's own device, under its container record.
const layoutVersion = 2

// Upgrade brings an index written by an earlier version of Cairn to the current layout: it
// gives every container recorded in the version 1 layout a linked account row (they all had
// their account listing on their own device, and the account totals already count them), once.
// Call it when the device opens, before serving.
func (ix *Index) Upgrade(ctx context.Context) error {
	v, err := ix.get(versionKey)
	if err != nil {
		return err
	}
	if len(v) == 1 && v[0] >= layoutVersion {
		return nil
	}
	ix.containers.Lock()
	defer ix.containers.Unlock()
	it, err := ix.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: []byte{prefixContainer}, UpperBound: []byte{prefixContainer + 1}})
	if err != nil {
		return fmt.Errorf("index: upgrade: %w", err)
	}
	b := ix.db.NewBatch()
	defer b.Close()
	upgraded := 0
	for valid := it.First(); valid; valid = it.Next() {
		val := it.Value()
		if len(val) == 0 || val[0] != valueVersion {
			continue
		}
		account, container, err := parseContainerKey(it.Key())
		if err != nil {
			it.Close()
			return err
		}
		rec, err := decodeContainer(container, val)
		if err != nil {
			it.Close()
			return err
		}
		row := accountRow{ContainerRow: meta.ContainerRow{Name: container, PutTimestamp: rec.Created}, linked: true}
		rk := rowKey(account, container)
		if err := errors.Join(b.Set(rk, encodeRow(rk, row), nil),
			b.Set(containerKey(account, container), encodeContainer(rec), nil)); err != nil {
			it.Close()
			return fmt.Errorf("index: upgrade: %w", err)
		}
		upgraded++
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("index: upgrade: %w", err)
	}
	if err := b.Set(versionKey, []byte{layoutVersion}, nil); err != nil {
		return fmt.Errorf("index: upgrade: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return storageErr("upgrade", err)
	}
	if upgraded > 0 {
		ix.log.Info("index upgraded: account rows for containers of the earlier layout", "containers", upgraded)
	}
	return nil
}
