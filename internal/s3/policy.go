package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

// Bucket policies (GET, PUT and DELETE ?policy, GET ?policyStatus) and quotas.

func (h *bucketsHandler) GetBucketPolicy(w http.ResponseWriter, r *http.Request, rq *Request) error {
	if rq.State.Policy == nil {
		return ErrNoSuchBucketPolicy
	}
	doc := []byte(rq.State.Policy.Raw)
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	w.Write(doc)
	return nil
}

func (h *bucketsHandler) PutBucketPolicy(w http.ResponseWriter, r *http.Request, rq *Request) error {
	ctx := r.Context()
	body, err := h.ReadSmallBody(r, rq, MaxPolicyBodyBytes, false)
	if errors.Is(err, ErrMaxMessageLength) {
		return ErrMalformedPolicy.WithMessage("Policy exceeds the maximum allowed document size (%d bytes).", access.MaxPolicySize)
	}
	if err != nil {
		return err
	}
	p, err := access.ParsePolicy(body, rq.Bucket)
	if err != nil {
		return policyError(err)
	}
	if b := rq.State.PublicAccessBlock; b != nil && b.BlockPublicPolicy && p.Public() {
		return fmt.Errorf("public policy under BlockPublicPolicy: %w", ErrAccessDenied)
	}
	if err := h.ClaimForSharing(ctx, rq, hasAllow(p)); err != nil {
		return err
	}
	if err := h.SetBucketMeta(ctx, rq, map[string]string{access.MetaPolicy: p.Raw}); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusNoContent)
	return nil
}

func hasAllow(p *access.Policy) bool {
	for _, s := range p.Statements {
		if s.Effect == access.EffectAllow {
			return true
		}
	}
	return false
}

// policyError is the S3 error for a policy access refused.
func policyError(err error) error {
	if errors.Is(err, access.ErrMalformedPolicy) {
		return ErrMalformedPolicy.WithMessage("%s", err.Error())
	}
	return err
}

func (h *bucketsHandler) DeleteBucketPolicy(w http.ResponseWriter, r *http.Request, rq *Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{access.MetaPolicy: ""}); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusNoContent)
	return nil
}

func (h *bucketsHandler) GetBucketPolicyStatus(w http.ResponseWriter, r *http.Request, rq *Request) error {
	if rq.State.Policy == nil {
		return ErrNoSuchBucketPolicy
	}
	WriteXML(w, http.StatusOK, s3xml.PolicyStatus{Xmlns: s3xml.Namespace, IsPublic: rq.State.Policy.Public()})
	return nil
}

// checkQuota refuses a write that would take the bucket's account, or the bucket itself (a
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
