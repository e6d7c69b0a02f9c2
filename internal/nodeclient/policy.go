package nodeclient

import "context"

// An object request's storage policy travels in its context rather than in each method's
// arguments. A Cairn node does not need it (each of its devices belongs to one policy's ring,
// so the device a request names says it), but Swift's object servers keep each policy's
// objects apart on a shared device and must be told (X-Backend-Storage-Policy-Index), and the
// HTTP client of the node protocol tells them. Carried this way, the contract's methods, which
// every node implements, stay as they are.

type policyKey struct{}

// WithPolicy returns ctx for requests about objects of storage policy index.
func WithPolicy(ctx context.Context, index int) context.Context {
	if index == 0 && ctx.Value(policyKey{}) == nil {
		return ctx // policy 0 is what a request without one means
	}
	return context.WithValue(ctx, policyKey{}, index)
}

// Policy returns the storage policy of ctx's object requests (0 when none was given).
func Policy(ctx context.Context) int {
	n, _ := ctx.Value(policyKey{}).(int)
	return n
}

type leaseReadKey struct{}

// WithLeaseRead returns ctx for a GET that asks the node whether it may answer alone under its
// read lease (ObjectReader.Alone). A node without leases ignores it.
func WithLeaseRead(ctx context.Context) context.Context {
	return context.WithValue(ctx, leaseReadKey{}, true)
}

// LeaseRead reports whether ctx's GET asks about the node's read lease.
func LeaseRead(ctx context.Context) bool {
	v, _ := ctx.Value(leaseReadKey{}).(bool)
	return v
}

type ringsKey struct{}

// WithRings returns ctx for object requests from a proxy that places them by the rings of
// these placement ids (ring.PlacementID: the ring's, and the previous one's while its last
// change is under way). A node with read leases revokes the leases its own ring's first
// primary holds when its ring is not among them (readlease.Granter.CrossRing); others ignore
// it.
func WithRings(ctx context.Context, ids ...string) context.Context {
	return context.WithValue(ctx, ringsKey{}, ids)
}

// Rings returns the placement ids of ctx's rings (nil when not given).
func Rings(ctx context.Context) []string {
	ids, _ := ctx.Value(ringsKey{}).([]string)
	return ids
}
