package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cairn-store/cairn/internal/daemon"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
)

// Leases of the daemons that run once per cluster (the expirer, the upload sweeper), kept as
// small objects beside the tenant store in the reserved account: a holder writes its name and
// an expiry with a compare-and-swap on the version it read, in ring order
// (PutObjectInOrder), so that of proxies racing for a free lease one wins.
const LeasesContainer = "leases"

// leaseDoc is a lease object's content.
type leaseDoc struct {
	Holder  string `json:"holder"`
	Expires int64  `json:"expires"` // unix nanoseconds
}

// clusterLease returns a daemon.Lease named name for holder, held for ttl from each renewal.
// The ttl must exceed the time between the daemon's passes (renewals), or the lease moves to
// another proxy between them.
func clusterLease(px *proxy.Proxy, name, holder string, ttl time.Duration, now func() time.Time) daemon.Lease {
	obj := meta.ObjectName{Account: TenantsAccount, Container: LeasesContainer, Object: name}
	return func(ctx context.Context) (bool, error) {
		cond := meta.Precondition{IfNoneMatch: true}
		r, err := px.GetObject(ctx, obj, nil)
		switch {
		case errors.Is(err, meta.ErrNotFound):
		case err != nil:
			return false, fmt.Errorf("lease %s: %w", name, err)
		default:
			var cur leaseDoc
			data, err := io.ReadAll(io.LimitReader(r, 4096))
			r.Close()
			if err != nil {
				return false, fmt.Errorf("lease %s: %w", name, err)
			}
			if json.Unmarshal(data, &cur) == nil && cur.Holder != holder && cur.Expires > now().UnixNano() {
				return false, nil // someone else's, and current
			}
			cond = meta.Precondition{IfMatch: []string{r.Object.ETag}}
		}
		doc, _ := json.Marshal(leaseDoc{Holder: holder, Expires: now().Add(ttl).UnixNano()})
		put := func() error {
			_, err := px.PutObjectInOrder(ctx, obj, meta.Object{ContentType: "application/json"}, doc, proxy.PutOptions{If: cond})
			return err
		}
		err = put()
		if errors.Is(err, meta.ErrNoContainer) {
			if cerr := px.CreateContainer(ctx, TenantsAccount, LeasesContainer, nil); cerr != nil && !errors.Is(cerr, meta.ErrExists) {
				return false, fmt.Errorf("lease %s: container: %w", name, cerr)
			}
			err = put()
		}
		switch {
		case errors.Is(err, meta.ErrPreconditionFailed), errors.Is(err, meta.ErrConflict), errors.Is(err, meta.ErrConditionalConflict):
			return false, nil // another proxy took or renewed it first (or is doing so)
		case err != nil:
			return false, fmt.Errorf("lease %s: %w", name, err)
		}
		return true, nil
	}
}

// leaseHolder names this process among the cluster's proxies: its host and listen address,
// which a proxy restarted in its place keeps, so that it takes its lease back at once rather
// than wait for it to expire.
func leaseHolder(listen string) string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return host + "/" + listen
}
