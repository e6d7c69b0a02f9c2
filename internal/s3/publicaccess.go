package s3

import (
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

// A bucket's public access block (GET, PUT, DELETE ?publicAccessBlock) and object ownership
// (GET, PUT, DELETE ?ownershipControls, x-amz-object-ownership on CreateBucket). Both are
// kept in the container's metadata (access.MetaPublicAccessBlock, access.MetaOwnership) and
// read with the rest of the access state; access applies IgnorePublicAcls,
// RestrictPublicBuckets and BucketOwnerEnforced in its decisions, and this front end refuses
// the writes BlockPublicAcls, BlockPublicPolicy and BucketOwnerEnforced forbid. There is no
// account-level public access block.

func (h *bucketsHandler) GetPublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *Request) error {
	b := rq.State.PublicAccessBlock
	if b == nil {
		return ErrNoPublicAccessBlock
	}
	WriteXML(w, http.StatusOK, s3xml.PublicAccessBlockConfiguration{Xmlns: s3xml.Namespace,
		BlockPublicAcls: b.BlockPublicAcls, IgnorePublicAcls: b.IgnorePublicAcls,
		BlockPublicPolicy: b.BlockPublicPolicy, RestrictPublicBuckets: b.RestrictPublicBuckets})
	return nil
}

func (h *bucketsHandler) PutPublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *Request) error {
	body, err := h.ReadSmallBody(r, rq, MaxACLBodyBytes, false)
	if err != nil {
		return err
	}
	var doc s3xml.PublicAccessBlockConfiguration
	if err := DecodeXML(body, &doc); err != nil {
		return err
	}
	b := access.PublicAccessBlock{BlockPublicAcls: doc.BlockPublicAcls, IgnorePublicAcls: doc.IgnorePublicAcls,
		BlockPublicPolicy: doc.BlockPublicPolicy, RestrictPublicBuckets: doc.RestrictPublicBuckets}
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{access.MetaPublicAccessBlock: b.Encode()}); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusOK)
	return nil
}

func (h *bucketsHandler) DeletePublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{access.MetaPublicAccessBlock: ""}); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusNoContent)
	return nil
}

func (h *bucketsHandler) GetOwnershipControls(w http.ResponseWriter, r *http.Request, rq *Request) error {
	if rq.State.Ownership == "" {
		return ErrNoOwnershipControls
	}
	WriteXML(w, http.StatusOK, s3xml.OwnershipControls{Xmlns: s3xml.Namespace,
		Rules: []s3xml.OwnershipControlsRule{{ObjectOwnership: string(rq.State.Ownership)}}})
	return nil
}

func (h *bucketsHandler) PutOwnershipControls(w http.ResponseWriter, r *http.Request, rq *Request) error {
	body, err := h.ReadSmallBody(r, rq, MaxACLBodyBytes, false)
	if err != nil {
		return err
	}
	var doc s3xml.OwnershipControls
	if err := DecodeXML(body, &doc); err != nil {
		return err
	}
	if len(doc.Rules) != 1 {
		return ErrMalformedXML.WithMessage("OwnershipControls takes exactly one Rule.")
	}
	o := access.Ownership(doc.Rules[0].ObjectOwnership)
	if !o.Valid() {
		return ErrMalformedXML.WithMessage("Invalid ObjectOwnership %.60q (BucketOwnerEnforced, BucketOwnerPreferred or ObjectWriter).", o)
	}
	if o == access.OwnershipBucketOwnerEnforced && len(rq.State.ACL.Grants) > 0 {
		// As S3: turning ACLs off while the bucket's ACL grants something would silently
		// revoke it; the owner removes the grants first.
		return ErrInvalidBucketACLWithOwnership
	}
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{access.MetaOwnership: string(o)}); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusOK)
	return nil
}

func (h *bucketsHandler) DeleteOwnershipControls(w http.ResponseWriter, r *http.Request, rq *Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{access.MetaOwnership: ""}); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusNoContent)
	return nil
}

// checkACLWrite refuses an ACL a request sets on the bucket or an object when the bucket's
// settings forbid it: any grant while BucketOwnerEnforced turns ACLs off
// (AccessControlListNotSupported), a public grant under BlockPublicAcls (AccessDenied).
func CheckACLWrite(rq *Request, acl access.ACL) error {
	if !rq.State.ACLsEnabled() && len(acl.Grants) > 0 {
		return fmt.Errorf("ACL on %s/%s: %w", rq.Bucket, rq.Key, errACLNotSupported)
	}
	return checkPublicACL(rq, acl)
}

// checkPublicACL refuses a public ACL (grants to AllUsers or AuthenticatedUsers) on a bucket
// whose public access block has BlockPublicAcls.
func checkPublicACL(rq *Request, acl access.ACL) error {
	if b := rq.State.PublicAccessBlock; b != nil && b.BlockPublicAcls && acl.GrantsPublic() {
		return fmt.Errorf("public ACL on %s/%s under BlockPublicAcls: %w", rq.Bucket, rq.Key, ErrAccessDenied)
	}
	return nil
}
