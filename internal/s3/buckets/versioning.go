package buckets

import (
	"encoding/xml"
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/versions"
)

// GetBucketVersioning serves the S3 operation of that name.
func (h *Handler) GetBucketVersioning(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	c, err := h.RequireBucket(r.Context(), rq)
	if err != nil {
		return err
	}
	res := s3xml.VersioningConfiguration{Xmlns: s3xml.Namespace}
	switch st := versions.StateOf(c); {
	case st.Enabled:
		res.Status = "Enabled"
	case st.Suspended(), c.Meta[versions.KeyEnabled] == "false":
		// Suspended, also when versioning was never on (as S3 and Swift's s3api answer).
		res.Status = "Suspended"
	}
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}

// PutBucketVersioning serves the S3 operation of that name.
func (h *Handler) PutBucketVersioning(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	body, err := h.ReadSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var v s3xml.VersioningRequest
	if err := xml.Unmarshal(body, &v); err != nil {
		return s3core.ErrMalformedXML
	}
	if v.MfaDelete == "Enabled" {
		return s3core.ErrNotImplemented.WithMessage("MFA Delete is not supported.")
	}
	c, err := h.RequireBucket(ctx, rq)
	if err != nil {
		return err
	}
	var changes map[string]string
	switch v.Status {
	case "Enabled":
		if changes, err = h.Versions.Enable(ctx, rq.Account, c); err != nil {
			return fmt.Errorf("enable versioning of %q: %w", rq.Bucket, err)
		}
	case "Suspended":
		// Also on a bucket that never kept versions: it shows Suspended (as S3 and Swift's
		// s3api answer); a bucket with Object Lock keeps versioning on.
		if changes, err = versions.Suspend(c); err != nil {
			return s3core.VersionError(err)
		}
	default:
		return s3core.ErrMalformedXML
	}
	if _, err := h.Proxy.PostContainer(ctx, rq.Account, rq.Bucket, changes); err != nil {
		return s3core.BucketError(fmt.Errorf("versioning of %q: %w", rq.Bucket, err))
	}
	h.ForgetAccessState(rq.Account, rq.Bucket)
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}
