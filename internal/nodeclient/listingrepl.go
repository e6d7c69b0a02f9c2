package nodeclient

import (
	"context"

	"github.com/cairn-store/cairn/internal/meta"
)

// Listing names a listing replica on a device: a container's (its record and its rows: object
// entries and listing tombstones), or an account's when Container is empty (its rows: one per
// container).
type Listing struct {
	Account, Container string
}

// IsAccount reports whether the listing is an account's.
func (l Listing) IsAccount() bool { return l.Container == "" }

// ListingDigest is what replicas of a listing compare before they exchange anything: a digest
// of the container's record (0 when the device holds none; always 0 for an account) and one of
// its rows. Two replicas with the same record and the same row versions have the same digests.
type ListingDigest struct {
	Record  uint64
	Deleted bool // the record is a deleted container's (its rows are not compared)
	Rows    uint64
	Count   int // rows counted in Rows
}

// ListingRow is one row of a listing as replicas exchange it. For a container's listing it is
// Entry (an object version) or, when Deleted, a listing tombstone (Entry.Name and
// Entry.Timestamp only); for an account's it is Container, a container's row. A row reduced to
// its version (RowVersion) carries what decides which of two rows wins.
type ListingRow struct {
	Entry     meta.ListEntry
	Deleted   bool
	Container meta.ContainerRow
}

// Name returns the row's name.
func (r ListingRow) Name() string {
	if r.Container.Name != "" {
		return r.Container.Name
	}
	return r.Entry.Name
}

// Version returns the row without what does not decide between two rows (an entry's size, ETag
// and content type); an account row is kept whole, since its usage is compared for eviction.
func (r ListingRow) Version() ListingRow {
	if r.Container.Name != "" {
		return r
	}
	return ListingRow{Entry: meta.ListEntry{Name: r.Entry.Name, Timestamp: r.Entry.Timestamp}, Deleted: r.Deleted}
}

// MetaValue is one key of a container's metadata with the time it was set; an empty Value is a
// key removed at Timestamp (a POST's empty value), which wins over older values.
type MetaValue struct {
	Value     string
	Timestamp meta.Timestamp
}

// ContainerRecord is a container replica's record as replicas exchange it: when it was created,
// when it was deleted (0: it lives), and its metadata with per-key timestamps. Newest wins: a
// deletion newer than a creation deletes it, a creation newer than a deletion makes it anew,
// and each metadata key takes its newest value (keys older than the creation belong to an
// earlier container of the name and are dropped).
type ContainerRecord struct {
	Created meta.Timestamp
	Deleted meta.Timestamp
	Meta    map[string]MetaValue
}

// ListingBucketBits bounds the sub-ranges a listing's rows are compared in: at most
// 2^ListingBucketBits buckets of names, by name hash.
const ListingBucketBits = 12

// ListingReplication is what a storage node serves the container and account replicators of its
// peers (and its own) for the listings of a device. Replication is push-only: the caller
// compares digests, asks which rows the device would take, and sends them.
type ListingReplication interface {
	// ListingDigests returns the digests of each named listing on a device (zero for one the
	// device does not hold).
	ListingDigests(ctx context.Context, device string, names []Listing) ([]ListingDigest, error)
	// ListingBuckets returns the digest of each non-empty bucket of a listing's rows, the rows
	// being split into 2^bits buckets by the top bits of a hash of their names (RowBucket).
	ListingBuckets(ctx context.Context, device string, name Listing, bits uint) (map[uint32]uint64, error)
	// WantRows returns the indexes, in order, of the row versions the listing lacks or holds
	// older (by the rules of UpdateListing and UpdateAccount).
	WantRows(ctx context.Context, device string, name Listing, versions []ListingRow) ([]int, error)
	// MergeRows merges rows into a listing as UpdateListing and UpdateAccount do (newest wins).
	// A container's listing must exist (meta.ErrNotFound otherwise: its record comes first).
	MergeRows(ctx context.Context, device string, part uint32, name Listing, rows []ListingRow) error
	// MergeContainer merges a container's record into the device's, creating or deleting the
	// container as the newer timestamps say; report names the account replica a container
	// created here reports its usage to (nil: none). live says whether the device holds the
	// container alive afterwards (its rows may follow).
	MergeContainer(ctx context.Context, device string, part uint32, account, container string, rec ContainerRecord, report *AccountUpdate) (live bool, err error)
}

// RowBucket returns the bucket of a row's name among 2^bits: the top bits of its FNV-1a hash.
// Both replicas of a listing bucket its rows alike, whatever else they hold.
func RowBucket(name string, bits uint) uint32 {
	if bits == 0 {
		return 0
	}
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return uint32(h >> (64 - bits))
}
