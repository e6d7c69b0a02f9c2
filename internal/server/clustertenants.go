package server

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
)

// Where a cluster keeps its tenant store (auth.OpenCluster): one object in a reserved account,
// which no client can address (both front ends refuse names starting with meta.ReservedPrefix)
// and no listing shows, and which the tenant store seals, so that nodes' disks hold no tenant's
// secret in clear.
const (
	TenantsAccount   = meta.ReservedPrefix + "cairn"
	TenantsContainer = "auth"
	TenantsObject    = "tenants"
)

// maxTenantsObject bounds what a proxy reads as the tenants object: some hundred thousand
// users, far more than one operator administers by hand, and a bound on memory if something
// else is ever written there.
const maxTenantsObject = 64 << 20

// clusterObject is a document the cluster keeps as one object in the reserved account (an
// auth.Blob): the tenants object, the microstores' description (microstores.go). The proxy's
// conditional writes are the compare-and-swap: a version is the object's ETag (a document's
// bytes are never the same twice: the tenants object is sealed afresh, a description carries
// its generation), replicas check If-Match or If-None-Match inside their commit, and they are
// written in ring order (PutObjectInOrder), so that of two proxies racing the first replica
// picks one and the other's version is left nowhere.
type clusterObject struct {
	px   *proxy.Proxy
	name meta.ObjectName
	what string // the document, for errors
	max  int    // the most bytes read as it
}

// NewTenantsBlob returns the tenants object of the cluster px reaches, for auth.OpenCluster;
// see OpenCluster's comment for the wiring of a proxy process.
func NewTenantsBlob(px *proxy.Proxy) auth.Blob {
	return &clusterObject{px: px, name: meta.ObjectName{Account: TenantsAccount, Container: TenantsContainer, Object: TenantsObject},
		what: "tenants object", max: maxTenantsObject}
}

func (b *clusterObject) Load(ctx context.Context) ([]byte, string, error) {
	r, err := b.px.GetObject(ctx, b.name, nil)
	if errors.Is(err, meta.ErrNotFound) {
		return nil, "", fmt.Errorf("%s: %w: %w", b.what, auth.ErrBlobNotFound, err)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", b.what, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, int64(b.max)+1))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", b.what, err)
	}
	if len(data) > b.max {
		return nil, "", fmt.Errorf("%s: larger than %d bytes", b.what, b.max)
	}
	return data, r.Object.ETag, nil
}

func (b *clusterObject) Version(ctx context.Context) (string, error) {
	o, err := b.px.HeadObject(ctx, b.name)
	if errors.Is(err, meta.ErrNotFound) {
		return "", fmt.Errorf("%s: %w: %w", b.what, auth.ErrBlobNotFound, err)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", b.what, err)
	}
	return o.ETag, nil
}

func (b *clusterObject) Store(ctx context.Context, data []byte, ifVersion string) (string, error) {
	cond := meta.Precondition{IfNoneMatch: true}
	if ifVersion != "" {
		cond = meta.Precondition{IfMatch: []string{ifVersion}}
	}
	put := func() (meta.Object, error) {
		return b.px.PutObjectInOrder(ctx, b.name, meta.Object{ContentType: "application/octet-stream"}, data, proxy.PutOptions{If: cond})
	}
	o, err := put()
	if errors.Is(err, meta.ErrNoContainer) && ifVersion == "" {
		// The first write in a new cluster makes the container; proxies racing to do so
		// all succeed or find it made, and the object's condition picks one writer.
		if cerr := b.px.CreateContainer(ctx, b.name.Account, b.name.Container, nil); cerr != nil && !errors.Is(cerr, meta.ErrExists) {
			return "", fmt.Errorf("%s's container: %w", b.what, cerr)
		}
		o, err = put()
	}
	switch {
	case errors.Is(err, meta.ErrPreconditionFailed), errors.Is(err, meta.ErrConflict), errors.Is(err, meta.ErrConditionalConflict):
		// ErrConditionalConflict: another proxy's write is on its way. ErrConflict: the version this write would replace is newer than its timestamp (a
		// clock behind another proxy's); read it and try again, later.
		return "", fmt.Errorf("%s: %w: %w", b.what, auth.ErrBlobConflict, err)
	case errors.Is(err, meta.ErrNoContainer):
		// The version this write expected is gone with its container.
		return "", fmt.Errorf("%s: %w: %w", b.what, auth.ErrBlobConflict, err)
	case errors.Is(err, meta.ErrUnavailable):
		// Not enough nodes answered, or proxies racing on the object's register left it
		// unable to tell: the write may have been made.
		return "", fmt.Errorf("%s: %w: %w", b.what, auth.ErrBlobUnknown, err)
	case err != nil:
		return "", fmt.Errorf("%s: %w", b.what, err)
	}
	return o.ETag, nil
}
