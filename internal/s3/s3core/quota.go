package s3core

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-store/cairn/internal/access"
)

// CheckQuota refuses a write that would take the bucket's account, or the bucket itself (a
// Swift container quota), past its quota. add is what the write adds to the usage counters:
// the declared size and one object (a part, an upload marker and a completed multipart object
// are each an object there). It runs before anything is stored; it is not atomic with the
// write, so concurrent writes can each pass and together overshoot by what they add.
func (h *Front) CheckQuota(ctx context.Context, rq *Request, add access.Usage) error {
	if rq.State != nil && !rq.State.Quota.None() {
		c, err := h.Proxy.HeadContainer(ctx, rq.Account, rq.Bucket)
		if err != nil {
			return BucketError(fmt.Errorf("bucket usage: %w", err))
		}
		if err := access.CheckQuota("bucket", rq.State.Quota, access.Usage{Bytes: c.BytesUsed, Objects: c.ObjectCount}, add); err != nil {
			return quotaError(err)
		}
	}
	return quotaError(access.CheckAccountQuota(ctx, h.Cfg.Quotas, rq.Account, h.Proxy.AccountUsage(rq.Account), add))
}

func quotaError(err error) error {
	var qe *access.QuotaError
	if errors.As(err, &qe) {
		return fmt.Errorf("%w: %w", errQuotaExceeded.WithMessage("Your upload exceeds the %s's quota of %d %s (%d used, %d more asked).", qe.Scope, qe.Limit, qe.Resource, qe.Used, qe.Adding), err)
	}
	return err
}
