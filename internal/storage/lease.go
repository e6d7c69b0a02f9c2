package storage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/nodelease"
	"github.com/cairn-store/cairn/internal/readlease"
)

// Leases is the node's read-lease state (internal/nodelease), which the server wires in with
// SetLeases. Devices are named "node/device" there.
type Leases interface {
	// Wrote marks a name unsettled before a new version of it becomes visible on a device.
	Wrote(device string, part uint32, name, version string)
	// Renew answers a holder's renewal for a device of this node.
	Renew(ctx context.Context, r readlease.Renewal) (readlease.Grant, error)
	// Revoke revokes holder's lease for part on a device of this node.
	Revoke(device, holder string, part uint32) (time.Duration, error)
	// Refusal is why a device may not answer a read of a name alone (readlease.Answers: it
	// may); asked after the version was read.
	Refusal(device string, part uint32, name string) string
	// CrossRing is a request about part on a device from a proxy on the rings of these
	// placement ids: it returns how long the answer must wait (readlease.Granter.CrossRing).
	CrossRing(device string, part uint32, rings []string) time.Duration
}

// SetLeases wires the node's read-lease state in; until it is, the node answers LEASE
// requests with nodeclient.ErrNoLeases.
func (n *Node) SetLeases(l Leases) { n.leases.Store(&l) }

func (n *Node) leaseState() Leases {
	if p := n.leases.Load(); p != nil {
		return *p
	}
	return nil
}

// leaseDevice is a device's name as leases use it.
func (n *Node) leaseDevice(dev string) string { return nodelease.DeviceName(n.address, dev) }

// LeaseName is an object's name as leases use it.
func LeaseName(name meta.ObjectName) string {
	return name.Account + "/" + name.Container + "/" + name.Object
}

func parseLeaseName(s string) (meta.ObjectName, bool) {
	a, rest, ok1 := strings.Cut(s, "/")
	c, o, ok2 := strings.Cut(rest, "/")
	return meta.ObjectName{Account: a, Container: c, Object: o}, ok1 && ok2 && a != "" && c != "" && o != ""
}

// LeaseVersion is a version's identity as leases compare it: its time, and whether it is a
// deletion (a POST gives an object a new time).
func LeaseVersion(ts meta.Timestamp, deleted bool) string {
	if deleted {
		return "d" + strconv.FormatInt(int64(ts), 10)
	}
	return strconv.FormatInt(int64(ts), 10)
}

// markWrote tells the leases of a version about to become visible on a device.
func (n *Node) markWrote(dev string, part uint32, name meta.ObjectName, ts meta.Timestamp, deleted bool) {
	if l := n.leaseState(); l != nil {
		l.Wrote(n.leaseDevice(dev), part, LeaseName(name), LeaseVersion(ts, deleted))
	}
}

// crossRing is the read leases' rule for an object request from a proxy that named its rings
// (nodeclient.WithRings): when the device's ring is not among them, its own ring's first
// primary's lease is revoked now, and the answer waits the grant out. Call it when the request
// begins and the function it returns when the answer is ready (defer n.crossRing(...)()).
func (n *Node) crossRing(ctx context.Context, dev string, part uint32) func() {
	l := n.leaseState()
	rings := nodeclient.Rings(ctx)
	if l == nil || len(rings) == 0 {
		return func() {}
	}
	wait := l.CrossRing(n.leaseDevice(dev), part, rings)
	if wait <= 0 {
		return func() {}
	}
	until := time.Now().Add(wait)
	return func() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// answersAlone reports whether a read of name on a device, whose version has been read, may be
// answered without another replica's word.
func (n *Node) answersAlone(dev string, part uint32, name meta.ObjectName) bool {
	l := n.leaseState()
	return l != nil && l.Refusal(n.leaseDevice(dev), part, LeaseName(name)) == readlease.Answers
}

var _ nodeclient.Leases = (*Node)(nil)

// RenewLease answers a holder's renewal for one of the node's devices.
func (n *Node) RenewLease(ctx context.Context, device string, r readlease.Renewal) (readlease.Grant, error) {
	l := n.leaseState()
	if l == nil {
		return readlease.Grant{}, nodeclient.ErrNoLeases
	}
	if r.Granter != n.leaseDevice(device) {
		return readlease.Grant{}, fmt.Errorf("a renewal for %q sent to %q: %w", r.Granter, n.leaseDevice(device), meta.ErrNotFound)
	}
	return l.Renew(ctx, r)
}

// RevokeLease revokes a holder's lease for a partition on one of the node's devices.
func (n *Node) RevokeLease(ctx context.Context, device string, part uint32, holder string) (time.Duration, error) {
	l := n.leaseState()
	if l == nil {
		return 0, nodeclient.ErrNoLeases
	}
	return l.Revoke(n.leaseDevice(device), holder, part)
}

// HoldsVersion reports whether a device (named as leases name it) holds a version of a name,
// for the leases' settling.
func (n *Node) HoldsVersion(ctx context.Context, device string, v readlease.Version) bool {
	dev := nodelease.LocalDevice(device)
	name, ok := parseLeaseName(v.Name)
	if !ok || device != n.leaseDevice(dev) {
		return false
	}
	o, err := n.HeadObject(ctx, dev, v.Part, name, nodeclient.HeadOptions{Brief: true})
	var gone *meta.DeletedError
	switch {
	case errors.As(err, &gone):
		return LeaseVersion(gone.At, true) == v.Version
	case err != nil:
		return false
	}
	return LeaseVersion(o.Timestamp, false) == v.Version
}
