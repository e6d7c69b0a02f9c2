package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// s3Keys lets the S3 front end look keys up in the credential store.
type s3Keys struct{ store *auth.Store }

func (k s3Keys) Lookup(ctx context.Context, accessKey string) (sigv4.Credential, error) {
	key, err := k.store.Lookup(ctx, accessKey)
	if errors.Is(err, auth.ErrUnknownKey) {
		return sigv4.Credential{}, fmt.Errorf("%w", sigv4.ErrUnknownAccessKey)
	}
	if err != nil {
		return sigv4.Credential{}, err
	}
	return sigv4.Credential{AccessKey: key.AccessKey, SecretKey: key.SecretKey, Account: key.Account,
		User: key.User, Admin: key.Admin, Root: key.Root}, nil
}

// accountQuotas gives the front ends accounts' quotas from the tenant store (access.Quotas).
type accountQuotas struct{ store *auth.Store }

func (q accountQuotas) AccountQuota(ctx context.Context, account string) (access.Quota, error) {
	a, err := q.store.Account(ctx, account)
	if errors.Is(err, auth.ErrNoAccount) {
		return access.Quota{}, fmt.Errorf("%w: %w", access.ErrNoAccount, err)
	}
	if err != nil {
		return access.Quota{}, err
	}
	return access.Quota{Bytes: a.QuotaBytes, Objects: a.QuotaObjects}, nil
}

func newS3(cfg Config, px *proxy.Proxy, keys *auth.Store, reg *prometheus.Registry) (*s3.Handler, error) {
	h, err := s3.New(s3.Config{Proxy: px, Credentials: s3Keys{keys}, Quotas: accountQuotas{keys}, Region: cfg.Region, Domains: cfg.Domains, Logger: cfg.Logger, Registry: reg,
		Keys: cfg.sseKeys, SSECAllowHTTP: cfg.SSECAllowHTTP, Workload: cfg.workload})
	if err != nil {
		return nil, fmt.Errorf("server: S3 front end: %w", err)
	}
	return h, nil
}
