package swiftcore

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// Quotas, as Swift's container_quotas and account_quotas middlewares keep them: a container's
// X-Container-Meta-Quota-Bytes / -Count (user metadata, so any writer of the container's
// metadata sets them) and the account's limits, which Cairn's tenant store holds (set with
// `cairn admin account quota`). A write that would pass one is 413 "Upload exceeds quota." and
// stores nothing. The S3 front end enforces the same limits (internal/access CheckQuota).

var errQuotaExceeded = &Error{Status: http.StatusRequestEntityTooLarge, Body: "Upload exceeds quota.", ContentType: ContentTypeHTML}

// CheckQuotaHeaders refuses quota metadata that is not a non-negative integer, as Swift does.
func CheckQuotaHeaders(hdr http.Header) error {
	if v := hdr.Get("X-Container-Meta-Quota-Bytes"); v != "" && !swiftwire.IsDigits(v) {
		return ErrBadRequest.WithText("Invalid bytes quota.").AsHTML()
	}
	if v := hdr.Get("X-Container-Meta-Quota-Count"); v != "" && !swiftwire.IsDigits(v) {
		return ErrBadRequest.WithText("Invalid count quota.").AsHTML()
	}
	return nil
}

// CheckQuota refuses a write that adds add (the declared size, one object) to a container of
// account when it would pass the container's or the account's quota. It runs before anything
// is stored and is not atomic with the write (as in Swift).
func (h *Server) CheckQuota(ctx context.Context, account, container string, add access.Usage) error {
	c, err := h.HeadContainer(ctx, account, container)
	if errors.Is(err, meta.ErrNotFound) {
		return nil // the write answers 404 itself
	}
	if err != nil {
		return fmt.Errorf("quota: container %q: %w", container, err)
	}
	st := access.StateFromMeta(container, c.Meta)
	// A container's versions count toward its bytes, as Swift counts them.
	used := access.Usage{Bytes: c.BytesUsed + h.VersionsBytes(ctx, account, c), Objects: c.ObjectCount}
	if err := access.CheckQuota("container", st.Quota, used, add); err != nil {
		return fmt.Errorf("%w: %w", errQuotaExceeded, err)
	}
	err = access.CheckAccountQuota(ctx, h.Quotas, account, h.Proxy.AccountUsage(account), add)
	if errors.Is(err, access.ErrQuotaExceeded) {
		return fmt.Errorf("%w: %w", errQuotaExceeded, err)
	}
	return err
}
