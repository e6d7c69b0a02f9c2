package buckets

import (
	"net/http"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/s3core"
)

// GetBucketACL serves the S3 operation of that name.
func (h *Handler) GetBucketACL(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	// The bucket's grants (none under BucketOwnerEnforced) and those Swift's ACLs make.
	s3core.WriteXML(w, http.StatusOK, s3core.ACLDocument(rq.Account, rq.State.BucketACLShown()))
	return nil
}

// PutBucketACL serves the S3 operation of that name.
func (h *Handler) PutBucketACL(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	acl, err := h.ReadACLRequest(r, rq, false)
	if err != nil {
		return err
	}
	acl = rq.State.WithoutShownOnly(acl, rq.State.ACL, false) // Swift's grants, sent back, stay Swift's
	if err := s3core.CheckACLWrite(rq, acl); err != nil {
		return err
	}
	if err := h.ClaimForSharing(ctx, rq, len(acl.Grants) > 0); err != nil {
		return err
	}
	if err := h.SetBucketMeta(ctx, rq, access.BucketACLChanges(acl)); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}
