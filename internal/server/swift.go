package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3"
	"github.com/cairn-store/cairn/internal/swift"
)

// swiftAuth lets the Swift front end check v1 credentials against the tenant store.
type swiftAuth struct{ store *auth.Store }

func (a swiftAuth) AuthenticateSwift(ctx context.Context, account, user, key string) (swift.Identity, error) {
	id, err := a.store.AuthenticateSwift(ctx, account, user, key)
	if errors.Is(err, auth.ErrBadSwiftKey) {
		return swift.Identity{}, fmt.Errorf("%w: %w", swift.ErrBadCredentials, err)
	}
	if err != nil {
		return swift.Identity{}, err
	}
	return swift.Identity{Account: id.Account, User: id.User, Admin: id.Admin, Root: id.Root}, nil
}

func (a swiftAuth) SwiftKeyFingerprint(ctx context.Context, account, user string) (swift.Identity, []byte, error) {
	id, fp, err := a.store.SwiftKeyFingerprint(ctx, account, user)
	if errors.Is(err, auth.ErrNoUser) {
		return swift.Identity{}, nil, fmt.Errorf("%w: %w", swift.ErrBadCredentials, err)
	}
	if err != nil {
		return swift.Identity{}, nil, err
	}
	return swift.Identity{Account: id.Account, User: id.User, Admin: id.Admin, Root: id.Root}, fp, nil
}

// newSwift makes the Swift front end. Its tokens are signed with the tenant store's token key,
// so that they survive a restart (and, in a cluster, are good at every proxy).
func newSwift(cfg Config, px *proxy.Proxy, keys *auth.Store, reg *prometheus.Registry, changed func(account, container string)) (*swift.Handler, error) {
	h, err := swift.New(swift.Config{Proxy: px, Auth: swiftAuth{keys}, TokenKey: keys.SwiftTokenKey(), Accounts: swiftAccounts{keys}, Quotas: accountQuotas{keys}, ContainerChanged: changed,
		Capabilities: map[string]any{"s3api": s3.Capabilities()}, StorageDomains: cfg.SwiftDomains, Logger: cfg.Logger, Registry: reg,
		Keys: cfg.sseKeys, Workload: cfg.workload})
	if err != nil {
		return nil, fmt.Errorf("server: Swift front end: %w", err)
	}
	return h, nil
}

// swiftRequest reports whether a request goes to the Swift front end: one without S3
// credentials, for the v1 auth endpoint, /info or the /v1 tree. Everything else stays S3's.
func swiftRequest(r *http.Request) bool {
	return !signed(r) && swift.IsSwiftPath(r.URL.Path)
}

// swiftAccounts keeps the Swift front end's account metadata in the tenant store.
type swiftAccounts struct{ store *auth.Store }

func (a swiftAccounts) AccountMetadata(ctx context.Context, account string) (map[string]string, error) {
	acct, err := a.store.Account(ctx, account)
	if errors.Is(err, auth.ErrNoAccount) {
		return nil, fmt.Errorf("%w: %w", swift.ErrNoAccount, err)
	}
	return acct.Metadata, err
}

func (a swiftAccounts) UpdateAccountMetadata(ctx context.Context, account string, changes map[string]string) (map[string]string, error) {
	acct, err := a.store.UpdateMetadata(ctx, account, changes)
	if errors.Is(err, auth.ErrNoAccount) {
		return nil, fmt.Errorf("%w: %w", swift.ErrNoAccount, err)
	}
	return acct.Metadata, err
}
