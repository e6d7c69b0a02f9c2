package buckets

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

// Bucket policies (GET, PUT and DELETE ?policy, GET ?policyStatus) and quotas.

// GetBucketPolicy serves the S3 operation of that name.
func (h *Handler) GetBucketPolicy(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if rq.State.Policy == nil {
		return s3core.ErrNoSuchBucketPolicy
	}
	doc := []byte(rq.State.Policy.Raw)
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	w.Write(doc)
	return nil
}

// PutBucketPolicy serves the S3 operation of that name.
func (h *Handler) PutBucketPolicy(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	body, err := h.ReadSmallBody(r, rq, s3core.MaxPolicyBodyBytes, false)
	if errors.Is(err, s3core.ErrMaxMessageLength) {
		return s3core.ErrMalformedPolicy.WithMessage("Policy exceeds the maximum allowed document size (%d bytes).", access.MaxPolicySize)
	}
	if err != nil {
		return err
	}
	p, err := access.ParsePolicy(body, rq.Bucket)
	if err != nil {
		return policyError(err)
	}
	if b := rq.State.PublicAccessBlock; b != nil && b.BlockPublicPolicy && p.Public() {
		return fmt.Errorf("public policy under BlockPublicPolicy: %w", s3core.ErrAccessDenied)
	}
	if err := h.ClaimForSharing(ctx, rq, hasAllow(p)); err != nil {
		return err
	}
	if err := h.SetBucketMeta(ctx, rq, map[string]string{access.MetaPolicy: p.Raw}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
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
		return s3core.ErrMalformedPolicy.WithMessage("%s", err.Error())
	}
	return err
}

// DeleteBucketPolicy serves the S3 operation of that name.
func (h *Handler) DeleteBucketPolicy(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{access.MetaPolicy: ""}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// GetBucketPolicyStatus serves the S3 operation of that name.
func (h *Handler) GetBucketPolicyStatus(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if rq.State.Policy == nil {
		return s3core.ErrNoSuchBucketPolicy
	}
	s3core.WriteXML(w, http.StatusOK, s3xml.PolicyStatus{Xmlns: s3xml.Namespace, IsPublic: rq.State.Policy.Public()})
	return nil
}
