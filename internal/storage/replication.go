package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/cairn-store/cairn/internal/engine"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/ring"
)

var _ nodeclient.Replication = (*Node)(nil)

// suffixOf is the suffix of a name hash within its partition: the SuffixBits after the
// partition's bits.
func suffixOf(hash uint64, partPower uint) uint32 {
	return uint32(hash<<partPower>>(64-nodeclient.SuffixBits)) & (1<<nodeclient.SuffixBits - 1)
}

// versionDigest is one version's contribution to its suffix's digest. Digests are the XOR of
// their versions', so that they do not depend on the order versions are visited in.
func versionDigest(v engine.Version) uint64 {
	h := fnv.New64a()
	var buf [binary.MaxVarintLen64 + 2]byte
	for _, s := range [...]string{v.Name.Account, v.Name.Container, v.Name.Object} {
		n := binary.PutUvarint(buf[:], uint64(len(s)))
		h.Write(buf[:n])
		h.Write([]byte(s))
	}
	n := binary.PutUvarint(buf[:], uint64(v.Timestamp))
	flags := byte(0)
	if v.Deleted {
		flags |= 1
	}
	if v.Corrupt {
		flags |= 2
	}
	buf[n] = flags
	h.Write(buf[:n+1])
	return h.Sum64()
}

// scanPartition calls fn for every version of a partition on a device.
func (n *Node) scanPartition(ctx context.Context, devName string, partPower uint, part uint32, fn func(engine.Version) error) error {
	d, err := n.device(devName)
	if err != nil {
		return err
	}
	if partPower > ring.MaxPartPower || (partPower > 0 && uint64(part) >= 1<<partPower) || (partPower == 0 && part != 0) {
		return fmt.Errorf("storage: partition %d of power %d: %w", part, partPower, meta.ErrInvalidName)
	}
	lo, hi := ring.PartitionRange(part, partPower)
	return d.engine.ScanPlacement(ctx, lo, hi, fn)
}

// PartitionDigests returns the digest of each non-empty suffix of a partition on a device.
func (n *Node) PartitionDigests(ctx context.Context, devName string, partPower uint, part uint32) (map[uint32]uint64, error) {
	out := map[uint32]uint64{}
	err := n.scanPartition(ctx, devName, partPower, part, func(v engine.Version) error {
		out[suffixOf(v.Hash, partPower)] ^= versionDigest(v)
		return nil
	})
	return out, err
}

// PartitionVersions returns the good versions a device holds in some suffixes of a partition.
func (n *Node) PartitionVersions(ctx context.Context, devName string, partPower uint, part uint32, suffixes []uint32) ([]nodeclient.ObjectVersion, error) {
	var out []nodeclient.ObjectVersion
	err := n.scanPartition(ctx, devName, partPower, part, func(v engine.Version) error {
		if v.Corrupt || (suffixes != nil && !slices.Contains(suffixes, suffixOf(v.Hash, partPower))) {
			return nil
		}
		out = append(out, nodeclient.ObjectVersion{Name: v.Name, Timestamp: v.Timestamp, Deleted: v.Deleted})
		return nil
	})
	return out, err
}

// WantVersions returns the indexes of the versions a device lacks, holds older, or holds flagged
// corrupt.
func (n *Node) WantVersions(ctx context.Context, devName string, versions []nodeclient.ObjectVersion) ([]int, error) {
	d, err := n.device(devName)
	if err != nil {
		return nil, err
	}
	var want []int
	for i, v := range versions {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur, err := d.engine.StatBrief(ctx, v.Name)
		switch {
		case errors.Is(err, meta.ErrNotFound), errors.Is(err, meta.ErrCorrupt):
			want = append(want, i)
		case err != nil:
			return nil, err
		case cur.Timestamp < v.Timestamp:
			want = append(want, i)
		}
	}
	return want, nil
}

// EvictObject removes a device's copy of a name at ts entirely (no tombstone), if it is still
// the current version: a handoff's copy, once the primaries hold it.
func (n *Node) EvictObject(ctx context.Context, devName string, name meta.ObjectName, ts meta.Timestamp) (bool, error) {
	d, err := n.device(devName)
	if err != nil {
		return false, err
	}
	return d.engine.Evict(ctx, name, ts)
}

// PartitionsWithData calls fn with each partition (at a partition power) that holds at least
// one version on a device, in order: what a replication pass visits.
func (n *Node) PartitionsWithData(ctx context.Context, devName string, partPower uint, fn func(part uint32) error) error {
	d, err := n.device(devName)
	if err != nil {
		return err
	}
	from := uint64(0)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, ok, err := d.engine.NextPlacement(from)
		if err != nil || !ok {
			return err
		}
		part := ring.PartitionOf(h, partPower)
		if err := fn(part); err != nil {
			return err
		}
		_, hi := ring.PartitionRange(part, partPower)
		if hi == ^uint64(0) {
			return nil
		}
		from = hi + 1
	}
}

// Devices returns the names of the node's open devices, sorted.
func (n *Node) Devices() []string {
	names := make([]string, 0, len(n.devs()))
	for name := range n.devs() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// placementHash is the ring's hash of an object's name in the cluster, which is Swift's
// (meta.SwiftAccount, meta.SwiftObject): the proxy places objects by it, so a device must
// enumerate its partitions by the same hash, or replication would move objects to where the
// proxy never looks for them.
func placementHash(prefix, suffix string, name meta.ObjectName) uint64 {
	a, c, o := name.Placed()
	return ring.NameHash(prefix, suffix, a, c, o)
}

// nameHashID identifies the placement hash (Swift's names under a hash path prefix and suffix)
// without storing the prefix and suffix (they are secrets of a kind: they keep partitions
// unpredictable from names). Devices whose placement keys hashed Cairn's own names carry
// another identity, and rebuild them.
func nameHashID(prefix, suffix string) string {
	return fmt.Sprintf("swift-names:%016x", ring.NameHash(prefix, suffix, "\x00cairn-hash-id", "", ""))
}
