package buckets

import (
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/versions"
)

// GetObjectLockConfiguration serves the S3 operation of that name.
func (h *Handler) GetObjectLockConfiguration(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	c, err := h.RequireBucket(r.Context(), rq)
	if err != nil {
		return err
	}
	if !versions.LockEnabled(c) {
		return s3core.ErrNoObjectLockConfig
	}
	res := s3xml.ObjectLockConfiguration{Xmlns: s3xml.Namespace, ObjectLockEnabled: "Enabled"}
	if d := versions.DefaultRetentionOf(c); !d.IsZero() {
		dr := &s3xml.DefaultRetention{Mode: d.Mode}
		if d.Years > 0 {
			dr.Years = &d.Years
		} else {
			dr.Days = &d.Days
		}
		res.Rule = &s3xml.ObjectLockRule{DefaultRetention: dr}
	}
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}

// PutObjectLockConfiguration serves the S3 operation of that name.
func (h *Handler) PutObjectLockConfiguration(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	body, err := h.ReadSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var cfg s3xml.ObjectLockConfiguration
	if err := s3core.DecodeXML(body, &cfg); err != nil {
		return err
	}
	if cfg.ObjectLockEnabled != "Enabled" {
		return s3core.ErrMalformedXML
	}
	var def versions.DefaultRetention
	if cfg.Rule != nil {
		d := cfg.Rule.DefaultRetention
		if d == nil || (d.Mode != versions.Governance && d.Mode != versions.Compliance) || (d.Days == nil) == (d.Years == nil) {
			return s3core.ErrMalformedXML
		}
		def.Mode = d.Mode
		switch {
		case d.Days != nil && *d.Days > 0 && *d.Days <= 36500:
			def.Days = *d.Days
		case d.Years != nil && *d.Years > 0 && *d.Years <= 100:
			def.Years = *d.Years
		default:
			return s3core.ErrInvalidArgument.WithMessage("Default retention period must be a positive integer value.")
		}
	}
	c, err := h.RequireBucket(ctx, rq)
	if err != nil {
		return err
	}
	if !versions.LockEnabled(c) && !versions.StateOf(c).Enabled {
		return &s3core.APIError{Code: "InvalidBucketState", Status: http.StatusConflict, Message: "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration"}
	}
	changes := map[string]string{versions.KeyLockEnabled: "Enabled", versions.KeyLockDefault: def.Encode()}
	if _, err := h.Proxy.PostContainer(ctx, rq.Account, rq.Bucket, changes); err != nil {
		return s3core.BucketError(fmt.Errorf("object lock of %q: %w", rq.Bucket, err))
	}
	h.ForgetAccessState(rq.Account, rq.Bucket)
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}
