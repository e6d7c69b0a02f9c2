package objects

import (
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/s3core"
)

// GetObjectACL serves the S3 operation of that name.
func (h *Handler) GetObjectACL(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	if err := h.LocateVersion(ctx, w, rq); err != nil {
		return err
	}
	s3core.WriteVersionID(w, rq)
	obj, err := h.Proxy.HeadObject(ctx, rq.ReadName())
	if err != nil {
		return h.NotFound(ctx, rq, err)
	}
	// The object's grants (none under BucketOwnerEnforced) and the object reads the bucket's
	// Swift read ACL (or an ACL of the old meaning) gives every object.
	acl := rq.State.ObjectACLShown(*access.ObjectACLFromSysMeta(obj.SysMeta))
	s3core.WriteXML(w, http.StatusOK, s3core.ACLDocument(rq.Account, acl))
	return nil
}

// PutObjectACL rewrites the object's metadata with the new ACL (keeping its bytes), under a new
// timestamp but with the Last-Modified it had, as S3 keeps it; a PUT of the object racing with
// it can lose its content type and user metadata to the ones read here.
func (h *Handler) PutObjectACL(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	acl, err := h.ReadACLRequest(r, rq, true)
	if err != nil {
		return err
	}
	if err := h.LocateVersion(ctx, w, rq); err != nil {
		return err
	}
	s3core.WriteVersionID(w, rq)
	obj, err := h.Proxy.HeadObject(ctx, rq.ReadName())
	if err != nil {
		return h.NotFound(ctx, rq, err)
	}
	// The object reads the bucket gives every object, sent back, stay the bucket's.
	acl = rq.State.WithoutShownOnly(acl, *access.ObjectACLFromSysMeta(obj.SysMeta), true)
	if err := s3core.CheckACLWrite(rq, acl); err != nil {
		return err
	}
	if err := h.ClaimForSharing(ctx, rq, len(acl.Grants) > 0); err != nil {
		return err
	}
	update := s3core.SubresourceChange(&obj, map[string]string{access.ObjectMetaACL: acl.Encode()})
	if _, err := h.Proxy.PostObject(ctx, rq.ReadName(), update); err != nil {
		return h.NotFound(ctx, rq, fmt.Errorf("set the ACL of %q: %w", rq.Key, err))
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}
