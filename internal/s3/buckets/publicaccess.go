package buckets

import (
	"net/http"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

// A bucket's public access block (GET, PUT, DELETE ?publicAccessBlock) and object ownership
// (GET, PUT, DELETE ?ownershipControls, x-amz-object-ownership on CreateBucket). Both are
// kept in the container's metadata (access.MetaPublicAccessBlock, access.MetaOwnership) and
// read with the rest of the access state; access applies IgnorePublicAcls,
// RestrictPublicBuckets and BucketOwnerEnforced in its decisions, and this front end refuses
// the writes BlockPublicAcls, BlockPublicPolicy and BucketOwnerEnforced forbid. There is no
// account-level public access block.

// GetPublicAccessBlock serves the S3 operation of that name.
func (h *Handler) GetPublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	b := rq.State.PublicAccessBlock
	if b == nil {
		return s3core.ErrNoPublicAccessBlock
	}
	s3core.WriteXML(w, http.StatusOK, s3xml.PublicAccessBlockConfiguration{Xmlns: s3xml.Namespace,
		BlockPublicAcls: b.BlockPublicAcls, IgnorePublicAcls: b.IgnorePublicAcls,
		BlockPublicPolicy: b.BlockPublicPolicy, RestrictPublicBuckets: b.RestrictPublicBuckets})
	return nil
}

// PutPublicAccessBlock serves the S3 operation of that name.
func (h *Handler) PutPublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	body, err := h.ReadSmallBody(r, rq, s3core.MaxACLBodyBytes, false)
	if err != nil {
		return err
	}
	var doc s3xml.PublicAccessBlockConfiguration
	if err := s3core.DecodeXML(body, &doc); err != nil {
		return err
	}
	b := access.PublicAccessBlock{BlockPublicAcls: doc.BlockPublicAcls, IgnorePublicAcls: doc.IgnorePublicAcls,
		BlockPublicPolicy: doc.BlockPublicPolicy, RestrictPublicBuckets: doc.RestrictPublicBuckets}
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{access.MetaPublicAccessBlock: b.Encode()}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}

// DeletePublicAccessBlock serves the S3 operation of that name.
func (h *Handler) DeletePublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{access.MetaPublicAccessBlock: ""}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// GetOwnershipControls serves the S3 operation of that name.
func (h *Handler) GetOwnershipControls(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if rq.State.Ownership == "" {
		return s3core.ErrNoOwnershipControls
	}
	s3core.WriteXML(w, http.StatusOK, s3xml.OwnershipControls{Xmlns: s3xml.Namespace,
		Rules: []s3xml.OwnershipControlsRule{{ObjectOwnership: string(rq.State.Ownership)}}})
	return nil
}

// PutOwnershipControls serves the S3 operation of that name.
func (h *Handler) PutOwnershipControls(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	body, err := h.ReadSmallBody(r, rq, s3core.MaxACLBodyBytes, false)
	if err != nil {
		return err
	}
	var doc s3xml.OwnershipControls
	if err := s3core.DecodeXML(body, &doc); err != nil {
		return err
	}
	if len(doc.Rules) != 1 {
		return s3core.ErrMalformedXML.WithMessage("OwnershipControls takes exactly one Rule.")
	}
	o := access.Ownership(doc.Rules[0].ObjectOwnership)
	if !o.Valid() {
		return s3core.ErrMalformedXML.WithMessage("Invalid ObjectOwnership %.60q (BucketOwnerEnforced, BucketOwnerPreferred or ObjectWriter).", o)
	}
	if o == access.OwnershipBucketOwnerEnforced && len(rq.State.ACL.Grants) > 0 {
		// As S3: turning ACLs off while the bucket's ACL grants something would silently
		// revoke it; the owner removes the grants first.
		return s3core.ErrInvalidBucketACLWithOwnership
	}
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{access.MetaOwnership: string(o)}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}

// DeleteOwnershipControls serves the S3 operation of that name.
func (h *Handler) DeleteOwnershipControls(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{access.MetaOwnership: ""}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}
