// Package index keeps the listings of one device in its LSM (Pebble): the objects of each
// container (name, size, ETag, content type, timestamp), the containers of each account with
// their metadata, and usage totals maintained with merge operands, so that PUT and list rates
// stay flat as a container grows to millions of objects.
package index

import (
	"context"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// Merger must be passed as pebble.Options.Merger when opening a DB the index uses; it sums the
// usage counters.
var Merger *pebble.Merger

// Index is the listing index of one device. It owns keys that start with 'c', 'a' and 's'.
type Index struct{}

// New returns an index over db (which must have been opened with Merger).
func New(db *pebble.DB) *Index { panic("not implemented") }

// PutEntry adds to b the listing entry of an object version and the usage change it makes. The
// caller holds the object's name locked until b commits. An entry older than the one listed is
// ignored.
func (ix *Index) PutEntry(b *pebble.Batch, account, container string, e meta.ListEntry) error {
	panic("not implemented")
}

// DeleteEntry adds to b the removal of an object's listing entry (if not newer than ts) and the
// usage change it makes. Same locking rule as PutEntry.
func (ix *Index) DeleteEntry(b *pebble.Batch, account, container, object string, ts meta.Timestamp) error {
	panic("not implemented")
}

// CreateContainer creates a container and adds it to its account's listing (durably).
// meta.ErrExists if it exists.
func (ix *Index) CreateContainer(ctx context.Context, account string, c meta.Container) error {
	panic("not implemented")
}

// GetContainer returns a container with its current usage; meta.ErrNotFound if absent.
func (ix *Index) GetContainer(ctx context.Context, account, container string) (meta.Container, error) {
	panic("not implemented")
}

// UpdateContainerMeta changes a container's metadata durably.
func (ix *Index) UpdateContainerMeta(ctx context.Context, account, container string, update func(m map[string]string) error) (meta.Container, error) {
	panic("not implemented")
}

// DeleteContainer removes an empty container: meta.ErrNotEmpty if it lists any object.
func (ix *Index) DeleteContainer(ctx context.Context, account, container string) error {
	panic("not implemented")
}

// ListObjects returns a page of a container's listing.
func (ix *Index) ListObjects(ctx context.Context, account, container string, opts meta.ListOptions) (meta.ObjectListing, error) {
	panic("not implemented")
}

// ListContainers returns a page of an account's containers with their usage.
func (ix *Index) ListContainers(ctx context.Context, account string, opts meta.ListOptions) (meta.ContainerListing, error) {
	panic("not implemented")
}

// GetAccount returns an account's usage totals (zero for an account with no containers).
func (ix *Index) GetAccount(ctx context.Context, account string) (meta.Account, error) {
	panic("not implemented")
}
