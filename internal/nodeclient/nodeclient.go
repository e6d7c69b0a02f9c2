// Package nodeclient is the contract between the proxy and the storage nodes: the object,
// container and account operations a node serves for each of its devices. The proxy only ever
// talks to storage through a Client; in the embedded default the Client is the storage node
// itself, called in-process, and in a cluster it will be an HTTP client with the same semantics.
package nodeclient

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/casreg"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/readlease"
)

// PutOptions hook into an object PUT on a node.
type PutOptions struct {
	// BeforeCommit runs after the whole body has arrived and before the object becomes visible,
	// with its final metadata (Size and ETag set); it may add SysMeta. An error aborts the PUT
	// and nothing is stored. (Over HTTP this becomes the proxy's footer phase.)
	BeforeCommit func(obj *meta.Object) error
	// Containers are the container replicas whose listings this write updates (none: no
	// listing). Usually one per object replica; where a policy keeps fewer object replicas
	// than the container ring keeps listings, some object replicas update two, so that every
	// listing hears of every write (Swift's comma-separated X-Container-Host). A replica on a
	// device of the same node commits the entry in the object's batch; the node sends the
	// others after the commit, and keeps them to retry if that fails.
	Containers []ContainerUpdate
	// Listed (nil: not asked) is told which of Containers hold the write's entry when the
	// node answers: the one in the object's batch, and those the node reached after it.
	Listed *Listed
	// If is checked by the node against the version the PUT replaces, atomically with the
	// commit (meta.ErrPreconditionFailed when it fails).
	If meta.Precondition
	// Companion (nil: none) is a second object the node commits in the same batch, on the
	// same device: only a Client that implements Companions is given one.
	Companion *Companion
	// Fresh says the name was minted for this write by this process's clock, with the
	// object's timestamp in it (a version name, internal/versions), and that every record
	// ever stored under such a name carries that timestamp or a later one. A node in the same
	// process that has no peers may then skip looking for a version under the name when the
	// timestamp is above every one its devices held when it opened (storage's timestamp
	// floor). It does not cross the network: a remote node looks as usual.
	Fresh bool
	// DecidedGen, when above 0, says that the object's register (ObjectRegisterKey) decided
	// this write in the change that made its generation DecidedGen: the node refuses it
	// (meta.ErrPreconditionFailed) when its acceptor of that register has accepted a later
	// generation, checked atomically with the commit. A proxy that took over from a writer
	// presumed dead thus keeps the writer from landing at a quorum afterwards.
	DecidedGen uint64
	// Undecided says that this is a client's write that the object's register did not decide
	// (a plain PUT through a proxy, not replication): the node refuses it (*meta.DecidedError)
	// when its acceptor of that register has taken a decision for a later write, and, once
	// admitted, counts it as being committed until it is, so that a decision guarded by an
	// older version (ObjectGuard) is refused meanwhile. A conditional write and a plain one
	// that race are thus ordered the same way on every replica they meet on.
	Undecided bool
}

// Companion is a bodiless object committed in the same batch as a PUT's object: both are
// durable after one sync, or neither is. A versioned write's link to the version it writes is
// one (internal/versions): a reader must never find a link to a version that is not there,
// and written one after the other, the two cost two commits in turn.
type Companion struct {
	Name      meta.ObjectName
	Timestamp meta.Timestamp
	// Build returns the companion's metadata from the PUT's object as the node commits it
	// (Size, ETag, BeforeCommit's additions in place). It has no bytes.
	Build func(obj meta.Object) (meta.Object, error)
	// If is checked against the version at Name, atomically with the commit: when it fails,
	// neither object is stored (meta.ErrPreconditionFailed).
	If meta.Precondition
	// Over, when set, names a SysMeta key: the companion replaces only nothing, a tombstone,
	// or a version with that key set to "true"; any other version stays, and the PUT's object
	// commits alone (CompanionResult.Err is ErrCompanionRefused).
	Over string
	// Containers are the companion's listing updates (see PutOptions.Containers).
	Containers []ContainerUpdate
	// Listed: see PutOptions.Listed, for the companion's entry.
	Listed *Listed
}

// ErrCompanionRefused: the version at a companion's name is not one it may replace
// (Companion.Over).
var ErrCompanionRefused = errors.New("the version in place is not one the companion may replace")

// CompanionResult is what became of a PUT's companion.
type CompanionResult struct {
	// Err is nil when the companion committed; otherwise it was left out and the PUT's object
	// committed alone: meta.ErrConflict (a version as new or newer is at its name) or
	// ErrCompanionRefused.
	Err    error
	Object meta.Object
	// Previous is the version it replaced, if any.
	Previous *meta.Object
}

// Companions is implemented by a Client that commits a PUT's companion (the storage node,
// in-process). Others (an HTTP client of a node, OpenStack Swift's servers) are never given one:
// the proxy writes the two objects one after the other.
type Companions interface {
	// CommitsCompanions reports whether device commits companions.
	CommitsCompanions(device string) bool
}

// Sole is implemented by a Client whose node no other process writes (the storage node,
// in-process, with no peers: the embedded default). A name this process mints from its own
// clock (a version's) cannot meet another process's there, so the proxy need not have the
// name's register decide who has it (proxy PutOptions.Fresh).
type Sole interface {
	// Sole reports whether no other process writes the node's devices.
	Sole() bool
}

// PutResult is the outcome of an object PUT.
type PutResult struct {
	Object meta.Object
	// Previous is the version this PUT replaced, if any (so that the proxy can clean up the
	// segments a replaced manifest owned).
	Previous *meta.Object
	// Companion is the outcome of PutOptions.Companion.
	Companion CompanionResult
}

// DeleteOptions hook into an object DELETE on a node.
type DeleteOptions struct {
	Containers []ContainerUpdate // see PutOptions.Containers
	Listed     *Listed           // see PutOptions.Listed
	If         meta.Precondition // see PutOptions.If
	DecidedGen uint64            // see PutOptions.DecidedGen: a conditional DELETE its register decided
	Undecided  bool              // see PutOptions.Undecided: a plain DELETE through a proxy
}

// PostOptions hook into an object POST on a node.
type PostOptions struct {
	Containers []ContainerUpdate // see PutOptions.Containers
	Listed     *Listed           // see PutOptions.Listed
	// If is checked against the version the POST updates, atomically with the commit: the
	// proxy names the newest version the replicas hold (IfTimestamp), so that a replica that
	// missed it refuses rather than make its stale bytes the newest version.
	If meta.Precondition
	// DecidedGen: see PutOptions.DecidedGen: a conditional POST its register decided.
	DecidedGen uint64
	// Undecided: see PutOptions.Undecided: a plain POST through a proxy.
	Undecided bool
}

// ContainerUpdate names one replica of a container's listing: Swift's X-Container-Host,
// -Device and -Partition.
type ContainerUpdate struct {
	Node   string // the node's address as the ring names it
	Device string
	Part   uint32
}

// Listed gathers, over the replicas of one write, the container replicas that hold the write's
// listing entry when its object replicas answer (each says which of its Containers it
// updated). A listing is read from a quorum of the container's replicas, so a write is
// acknowledged only once a quorum holds its entry: the proxy sends it to those missing when
// the object replicas' own updates fell short. The zero value is empty and ready; a nil
// *Listed takes nothing. Safe for concurrent use.
type Listed struct {
	mu  sync.Mutex
	has map[ContainerUpdate]bool
}

// Add records that u holds the write's entry.
func (l *Listed) Add(u ContainerUpdate) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.has == nil {
		l.has = map[ContainerUpdate]bool{}
	}
	l.has[u] = true
}

// Has reports whether u holds the write's entry.
func (l *Listed) Has(u ContainerUpdate) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.has[u]
}

// ContainerOptions hook into a container PUT or DELETE on a node.
type ContainerOptions struct {
	// Account is the account replica whose listing this change updates (nil: none). When it
	// is the same device, the account's row commits in the container's batch and follows the
	// container's usage at once; otherwise the node sends the row after the commit, keeps it
	// to retry if that fails, and later reports the container's usage there when it changes.
	Account *AccountUpdate
	// DefaultPolicy says that the storage policy in a create's metadata
	// (meta.ContainerPolicyKey) is the cluster's default, not one the client asked for: a
	// container that exists keeps its own (Swift's X-Backend-Storage-Policy-Default), where
	// one asked for and different is a conflict.
	DefaultPolicy bool
}

// AccountUpdate names one replica of an account's listing: Swift's X-Account-Host, -Device and
// -Partition.
type AccountUpdate struct {
	Node   string // the node's address as the ring names it
	Device string
	Part   uint32
}

// HeadOptions shape an object HEAD on a node.
type HeadOptions struct {
	// Brief leaves out a long manifest's segment list (meta.Object.Summary instead of
	// Manifest), for the HEADs that need only what clients see.
	Brief bool
}

// ObjectReader is an open object: metadata plus the bytes of the requested range.
type ObjectReader struct {
	Object         meta.Object
	Offset, Length int64
	// Alone: asked with WithLeaseRead, the node answered under its read lease
	// (internal/readlease): no other replica need be asked.
	Alone bool
	io.ReadCloser
}

// Client is what a storage node serves, addressed by device name and partition.
type Client interface {
	PutObject(ctx context.Context, device string, part uint32, name meta.ObjectName, obj meta.Object, body io.Reader, opts PutOptions) (PutResult, error)
	// GetObject opens an object or a range of it. A manifest is returned whole (its stored
	// body) whatever rng asks: ranges over segments are the proxy's to resolve.
	GetObject(ctx context.Context, device string, part uint32, name meta.ObjectName, rng *meta.Range) (*ObjectReader, error)
	HeadObject(ctx context.Context, device string, part uint32, name meta.ObjectName, opts HeadOptions) (meta.Object, error)
	// DeleteObject writes a tombstone at ts and returns the version it removed.
	DeleteObject(ctx context.Context, device string, part uint32, name meta.ObjectName, ts meta.Timestamp, opts DeleteOptions) (meta.Object, error)
	// PostObject replaces the object's ContentType, Headers and UserMeta with those of update
	// and merges update.SysMeta, keeping its bytes; it is a new version at update.Timestamp.
	PostObject(ctx context.Context, device string, part uint32, name meta.ObjectName, update meta.Object, opts PostOptions) (meta.Object, error)

	// UpdateListing records an object version in a container replica's listing, or its
	// removal (deleted): newest timestamp wins (Swift's container server object PUT/DELETE).
	UpdateListing(ctx context.Context, device string, part uint32, account, container string, e meta.ListEntry, deleted bool) error

	// PutContainer creates a container at c.Created (meta.ErrExists if it exists).
	PutContainer(ctx context.Context, device string, part uint32, account string, c meta.Container, opts ContainerOptions) error
	HeadContainer(ctx context.Context, device string, part uint32, account, container string) (meta.Container, error)
	// PostContainer merges metadata; an empty value removes a key.
	PostContainer(ctx context.Context, device string, part uint32, account, container string, m map[string]string) (meta.Container, error)
	// DeleteContainer deletes an empty container at ts (meta.ErrNotEmpty if it lists an
	// object; meta.ErrConflict if ts is not newer than its creation).
	DeleteContainer(ctx context.Context, device string, part uint32, account, container string, ts meta.Timestamp, opts ContainerOptions) error
	ListObjects(ctx context.Context, device string, part uint32, account, container string, opts meta.ListOptions) (meta.ObjectListing, error)

	// PutAccount creates an account replica at ts, or confirms that it exists (Swift's account
	// server PUT, which Swift's proxy sends before an account's first container, as
	// account_autocreate: Swift's container servers refuse a container, 404, whose account
	// replicas have no account). Cairn's nodes hold every account implicitly, so that for them
	// it changes nothing; the proxy sends it only when a container create answers 404.
	PutAccount(ctx context.Context, device string, part uint32, account string, ts meta.Timestamp) error
	// UpdateAccount merges a container's row, as a replica of the container reports it, into an
	// account replica's listing and totals: newest put and delete timestamps win (Swift's
	// account server container PUT).
	UpdateAccount(ctx context.Context, device string, part uint32, account string, row meta.ContainerRow) error
	// ListContainers returns a page of an account's containers: its live rows, each with the
	// usage last known.
	ListContainers(ctx context.Context, device string, part uint32, account string, opts meta.ListOptions) (meta.ContainerListing, error)
	// HeadAccount returns an account's totals: the sum of its live rows.
	HeadAccount(ctx context.Context, device string, part uint32, account string) (meta.Account, error)
}

// Dialer returns the Client for a storage node address as the ring names it.
type Dialer interface {
	Dial(node string) (Client, error)
}

// Local is a Dialer for the embedded default: every node address resolves to one in-process
// Client.
type Local struct{ Client Client }

// Dial returns the in-process client whatever the address.
func (l Local) Dial(string) (Client, error) { return l.Client, nil }

// Registers is implemented by a Client whose devices keep the acceptor state of the cluster's
// registers (internal/casreg): the storage node, and the HTTP client of one. OpenStack Swift's
// servers do not; their Client answers ErrNoRegisters.
type Registers interface {
	// Register delivers one protocol message to the acceptor of the register key, kept on
	// device in partition part (the partition of the name the register decides for), and
	// returns the acceptor's reply. A changed state is durable (synced) before it returns.
	Register(ctx context.Context, device string, part uint32, key string, m casreg.Message) (casreg.Reply, error)
}

// Leases is implemented by a Client whose devices take part in read leases
// (internal/readlease): the storage node, and the HTTP client of one. A device is in one
// storage policy's ring, which it names.
type Leases interface {
	// RenewLease asks device (a granter) to answer a holder's renewal.
	RenewLease(ctx context.Context, device string, r readlease.Renewal) (readlease.Grant, error)
	// RevokeLease asks device (a granter) to revoke holder's lease for part, and returns how
	// long the holder's last grant from it may still run.
	RevokeLease(ctx context.Context, device string, part uint32, holder string) (time.Duration, error)
}

// ErrNoLeases: the node takes no part in read leases (an OpenStack Swift server, a node from
// before them, or one that runs without).
var ErrNoLeases = errors.New("the node keeps no read leases")

// ErrNoRegisters: the node keeps no registers (an OpenStack Swift server), or not this version
// of them.
var ErrNoRegisters = errors.New("the node keeps no registers")

// MaxRegisterKey bounds a register's key: an object name's parts are bounded, and so is this.
const MaxRegisterKey = 8 << 10

// ObjectRegisterKey is the key of the register that decides an object name's conditional
// writes: the proxy proposes on it, and a node checks PutOptions.DecidedGen against it.
func ObjectRegisterKey(name meta.ObjectName) string {
	a, c, o := name.Placed()
	return "o" + strconv.Itoa(len(a)) + ":" + a + strconv.Itoa(len(c)) + ":" + c + o
}
