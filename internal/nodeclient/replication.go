package nodeclient

import (
	"context"

	"github.com/cairn-store/cairn/internal/meta"
)

// SuffixBits splits each partition into 2^SuffixBits suffixes by the name-hash bits that follow
// the partition's: replicas compare one digest per suffix and exchange versions only for the
// suffixes that differ (Swift compares the hashes of a partition's suffix directories).
const SuffixBits = 8

// ObjectVersion is one version a device holds of a name: what replicas compare.
type ObjectVersion struct {
	Name      meta.ObjectName
	Timestamp meta.Timestamp
	Deleted   bool // a tombstone
}

// Replication is what a storage node serves the replicators of its peers (and its own) for the
// objects of a device: digests of a partition's suffixes, the versions in some of them, and
// which versions the device would take. A partition's bounds depend on the partition power of
// the ring the caller works from, which therefore travels with each call.
type Replication interface {
	// PartitionDigests returns a digest of each non-empty suffix of a partition on a device. Two
	// devices holding the same versions of a suffix's names have the same digest; a version
	// flagged corrupt digests differently from a good one.
	PartitionDigests(ctx context.Context, device string, partPower uint, part uint32) (map[uint32]uint64, error)
	// PartitionVersions returns the versions a device holds in the given suffixes of a
	// partition (every suffix when suffixes is nil), leaving out versions flagged corrupt,
	// which must not spread.
	PartitionVersions(ctx context.Context, device string, partPower uint, part uint32, suffixes []uint32) ([]ObjectVersion, error)
	// WantVersions returns the indexes, in order, of the versions the device does not hold,
	// holds only older, or holds flagged corrupt: those a replica should send it.
	WantVersions(ctx context.Context, device string, versions []ObjectVersion) ([]int, error)
}
