package access

import (
	"context"
	"errors"
	"fmt"
)

// Quota is a set of limits; a zero field is no limit.
type Quota struct {
	Bytes   int64
	Objects int64
}

// None reports whether the quota limits nothing, so that a caller can skip reading usage.
func (q Quota) None() bool { return q.Bytes <= 0 && q.Objects <= 0 }

// Usage is what an account or container stores, or what a write adds to it.
type Usage struct {
	Bytes   int64
	Objects int64
}

// ErrQuotaExceeded is wrapped by every QuotaError. S3 answers it 413 QuotaExceeded; Swift 413
// "Upload exceeds quota."
var ErrQuotaExceeded = errors.New("quota exceeded")

// QuotaError says which limit a write would pass.
type QuotaError struct {
	Scope    string // "account" or "container"
	Resource string // "bytes" or "objects"
	Limit    int64
	Used     int64
	Adding   int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("%s quota exceeded: %d %s used + %d > %d", e.Scope, e.Used, e.Resource, e.Adding, e.Limit)
}

func (e *QuotaError) Unwrap() error { return ErrQuotaExceeded }

// CheckQuota decides whether a write that adds add to what is used fits the quota q; scope
// ("account", "container") names the quota in the error. A write that adds nothing to a
// dimension is never refused for it, so that an account over its quota (lowered after the
// fact) can still delete and overwrite in place. Nothing here is atomic with the write: two
// writes racing past the same check can together pass the limit by one write each.
//
// How the front ends count (Swift's account_quotas and container_quotas count the same way):
// add.Bytes is the declared length of the new object (Content-Length, or the decoded length
// of an aws-chunked body), add.Objects is 1, even when the write replaces an object (as
// Swift's middlewares, which do not look first).
func CheckQuota(scope string, q Quota, used, add Usage) error {
	if q.Bytes > 0 && add.Bytes > 0 && used.Bytes+add.Bytes > q.Bytes {
		return &QuotaError{Scope: scope, Resource: "bytes", Limit: q.Bytes, Used: used.Bytes, Adding: add.Bytes}
	}
	if q.Objects > 0 && add.Objects > 0 && used.Objects+add.Objects > q.Objects {
		return &QuotaError{Scope: scope, Resource: "objects", Limit: q.Objects, Used: used.Objects, Adding: add.Objects}
	}
	return nil
}

// ErrNoAccount is what Quotas answers for an account that does not exist.
var ErrNoAccount = errors.New("no such account")

// Quotas is where a front end reads an account's limits; the server wires it to the tenant
// store (internal/auth). The usage to compare them with comes from the proxy (HeadAccount).
type Quotas interface {
	// AccountQuota returns the account's limits, or an error wrapping ErrNoAccount.
	AccountQuota(ctx context.Context, account string) (Quota, error)
}

// CheckAccountQuota applies an account's quota to a write that adds add: it reads the limits
// from quotas (nil, or an account quotas does not know: no limits) and, only when there are
// some, the account's usage with usage (the caller's I/O). A refusal wraps a *QuotaError.
func CheckAccountQuota(ctx context.Context, quotas Quotas, account string, usage func(context.Context) (Usage, error), add Usage) error {
	if quotas == nil {
		return nil
	}
	q, err := quotas.AccountQuota(ctx, account)
	if errors.Is(err, ErrNoAccount) {
		return nil // an account the tenant store does not know has no limits to keep
	}
	if err != nil {
		return fmt.Errorf("quota of account %q: %w", account, err)
	}
	if q.None() {
		return nil
	}
	used, err := usage(ctx)
	if err != nil {
		return fmt.Errorf("usage of account %q: %w", account, err)
	}
	return CheckQuota("account", q, used, add)
}
