// Package readlease is the protocol that lets a partition's first primary answer a read alone,
// without a second replica's word, and still return the newest acknowledged version: a read
// lease, granted to it by the partition's other primaries and revoked by any write or read
// that passes it by.
//
// Like internal/casreg, it is a pure state machine: no I/O, no goroutines, no clock of its
// own. The storage node holds a Holder (for the partitions whose first primary is one of its
// devices) and a Granter (for the others), feeds them the messages and the time, and sends
// what they return; the proxy follows the rules below. Tests drive it with scripts
// (testdata/) and with random histories over a network that loses and delays messages,
// crashes and pauses nodes and runs their clocks at different rates, each checked for
// linearizability.
//
// The protocol, for one partition with primaries P (the first, in ring order: the same for
// every proxy), G1, G2, ...:
//
//   - Grants. P asks every Gi for a grant every Renew, one message per peer device for all
//     the partitions they share. A grant lets P answer alone for Lease×(1−Drift) counted on
//     P's clock from when it *sent* the request, so that a pause or a slow link only
//     shortens it. Gi remembers when it last granted. P answers alone only while it holds a
//     grant from every Gi of the partition.
//   - Revocation. An answer P might not know of must revoke P's lease before it is given: a
//     write acknowledged without P's success (P down, cut off, past its deadline or refusing
//     it), and a read that answers a version P was not seen to hold. The proxy asks the other
//     primaries that hold the version to revoke P for the partition; each answers how long P's
//     last grant from it may still run, and once one of them has answered, the proxy waits
//     that long (×(1+Drift)) before it answers its client. Only such degraded operations wait.
//   - A revoked partition is named in every later grant, and P does not answer alone for it,
//     until replication has brought P the partition again: a replication pass from Gi to P
//     that began after the revocation clears it (Gi held the version when it revoked, so the
//     pass carries it).
//   - Settling. A version P answers alone must already be on a majority of the primaries, or
//     a later read by a quorum that misses P could return an older one. P marks a name
//     unsettled before a new version of it becomes visible (a client's write, a read's write-
//     back, replication), asks its granters in the next renewals whether they hold that
//     version, and answers the name alone again once a majority does.
//   - Starting. A restarted or newly ringed node knows neither whom it revoked nor what of its
//     own is settled. As granter it grants P nothing until a full replication pass to P, begun
//     after its start, has completed; a revocation it is asked for waits out Lease from its
//     start. As holder it answers nothing alone until its own full pass to each granter, begun
//     after its start, has completed (which puts everything it held on a majority). A ring
//     change is a start. Grants name the ring they were made on, and a grant made on a
//     different ring than P's is no grant.
//
// The reading edge must ask CanAnswer *after* it has read the version it will answer: a write
// that becomes visible in between has marked the name unsettled by then.
package readlease

import (
	"errors"
	"fmt"
	"time"
)

// Config is the protocol's timing and shape. Every node of a cluster and every proxy must use
// the same.
type Config struct {
	// Lease is how long a grant lets its holder answer alone, and how long a revocation waits
	// at most.
	Lease time.Duration
	// Renew is how often a holder asks each granter again; a fraction of Lease, so that a lost
	// request or two does not end the lease.
	Renew time.Duration
	// Drift bounds, as a fraction, how far two nodes' clocks may disagree on the length of an
	// interval (the sum of their rate errors). The holder counts its lease as
	// Lease×(1−Drift), a proxy waits a revocation's time ×(1+Drift).
	Drift float64
	// Replicas is the number of primaries of a partition: a version is settled once a
	// majority of them hold it.
	Replicas int
	// MaxUnsettled bounds the names a holder keeps unsettled (its granters being unreachable):
	// past it, the holder forgets them all and answers alone again only after its next full
	// pass to each granter, which settles everything it holds.
	MaxUnsettled int
	// MaxSettlePerRenewal bounds the names one renewal asks a granter about.
	MaxSettlePerRenewal int
}

// ErrInvalidConfig is returned by Validate.
var ErrInvalidConfig = errors.New("readlease: invalid config")

// DefaultConfig is the configuration for a partition of the given number of replicas.
func DefaultConfig(replicas int) Config {
	return Config{
		Lease:               3 * time.Second,
		Renew:               time.Second,
		Drift:               0.05,
		Replicas:            replicas,
		MaxUnsettled:        100_000,
		MaxSettlePerRenewal: 4096,
	}
}

// Validate reports a configuration the protocol cannot be safe or live with.
func (c Config) Validate() error {
	switch {
	case c.Lease <= 0:
		return fmt.Errorf("%w: Lease %v", ErrInvalidConfig, c.Lease)
	case c.Renew <= 0 || c.Renew >= c.Lease:
		return fmt.Errorf("%w: Renew %v must be above 0 and below Lease %v", ErrInvalidConfig, c.Renew, c.Lease)
	case c.Drift < 0 || c.Drift >= 0.5:
		return fmt.Errorf("%w: Drift %v must be in [0, 0.5)", ErrInvalidConfig, c.Drift)
	case c.Replicas < 2:
		return fmt.Errorf("%w: Replicas %d: a lease needs a partition of two primaries or more", ErrInvalidConfig, c.Replicas)
	case c.MaxUnsettled <= 0 || c.MaxSettlePerRenewal <= 0:
		return fmt.Errorf("%w: MaxUnsettled and MaxSettlePerRenewal must be above 0", ErrInvalidConfig)
	}
	return nil
}

// quorum is the number of primaries that make a majority.
func (c Config) quorum() int { return c.Replicas/2 + 1 }

// holderLease is how long a grant lasts on the holder's clock from when it asked.
func (c Config) holderLease() time.Duration {
	return time.Duration(float64(c.Lease) * (1 - c.Drift))
}

// WaitFor is how long a proxy must wait, on its own clock from when it received them, once
// granters answered a revocation with these waits: the least of them (P's lease needs every
// granter, so one that revoked ends it), stretched by Drift. Zero waits (or none) need none.
func (c Config) WaitFor(waits ...time.Duration) time.Duration {
	if len(waits) == 0 {
		return 0
	}
	least := waits[0]
	for _, w := range waits[1:] {
		least = min(least, w)
	}
	if least <= 0 {
		return 0
	}
	return time.Duration(float64(least)*(1+c.Drift)) + time.Millisecond
}

// Ring is what the protocol needs of the ring: a partition's primaries, the first of which
// holds its lease, and a name for the ring's version.
type Ring interface {
	Primaries(part uint32) []string
	Version() string
}

// Renewal is a holder's request to a granter: a grant for every partition they share, and
// whether the granter holds the versions of the names the holder wants settled.
type Renewal struct {
	Holder, Granter string
	Seq             uint64
	Ring            string
	Settle          []Version
}

// Version names one version of one name: its partition, the name, and the version's identity
// (the object's timestamp; a tombstone's for a deletion). Only equality matters.
type Version struct {
	Part    uint32
	Name    string
	Version string
}

// Grant is a granter's answer to a Renewal.
type Grant struct {
	Holder, Granter string
	Seq             uint64
	// Granted: the holder may answer alone, from when it sent the renewal, for every
	// partition they share but Revoked.
	Granted bool
	Revoked []uint32
	// Held: those of the renewal's Settle that the granter holds (the same version).
	Held []Version
}
