package backend

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Storage policies on the wire, as Swift carries them. A container's policy
// (meta.ContainerPolicyKey) crosses as X-Backend-Storage-Policy-Index, never as Cairn's system
// metadata, so that Swift's container servers record it as their own and Cairn reads theirs,
// whoever made the container. A create that did not ask for a policy sends the cluster's
// default as X-Backend-Storage-Policy-Default instead: a Swift container server applies it to
// a new container only, and keeps an existing container's own (a policy asked for and
// different from an existing container's is Swift's 409). An object request of a policy other
// than 0 carries X-Backend-Storage-Policy-Index, which Swift's object servers need to find the
// policy's objects on a device that several policies share (nodeclient.WithPolicy).

const hdrPolicyDefault = "X-Backend-Storage-Policy-Default"

// withoutPolicy returns a container's metadata without its policy, which travels apart.
func withoutPolicy(m map[string]string) map[string]string {
	if _, ok := m[meta.ContainerPolicyKey]; !ok {
		return m
	}
	m = maps.Clone(m)
	delete(m, meta.ContainerPolicyKey)
	return m
}

// writeContainerPolicy sets the policy headers of a container create.
func writeContainerPolicy(h http.Header, c meta.Container, opts nodeclient.ContainerOptions) {
	v, ok := c.Meta[meta.ContainerPolicyKey]
	if !ok {
		return
	}
	if opts.DefaultPolicy {
		h.Set(hdrPolicyDefault, v)
	} else {
		h.Set(hdrPolicyIndex, v)
	}
}

// readContainerPolicy reads the policy of a container create (what it asked for, else the
// default it was given) into its metadata.
func readContainerPolicy(h http.Header, c *meta.Container) error {
	v := h.Get(hdrPolicyIndex)
	if v == "" {
		v = h.Get(hdrPolicyDefault)
	}
	if v == "" {
		return nil
	}
	if n, err := strconv.Atoi(v); err != nil || n < 0 {
		return fmt.Errorf("%w: storage policy index %q", ErrBadRequest, v)
	}
	if c.Meta == nil {
		c.Meta = map[string]string{}
	}
	c.Meta[meta.ContainerPolicyKey] = v
	return nil
}

// setObjectPolicy marks an object request with its policy, when not 0.
func setObjectPolicy(ctx context.Context, h http.Header) {
	if n := nodeclient.Policy(ctx); n != 0 {
		h.Set(hdrPolicyIndex, strconv.Itoa(n))
	}
	if ids := nodeclient.Rings(ctx); len(ids) > 0 {
		h.Set(hdrRings, strings.Join(ids, ","))
	}
}

// withRings is the handler's side of setObjectPolicy's rings.
func withRings(ctx context.Context, h http.Header) context.Context {
	if v := h.Get(hdrRings); v != "" {
		return nodeclient.WithRings(ctx, strings.Split(v, ",")...)
	}
	return ctx
}
