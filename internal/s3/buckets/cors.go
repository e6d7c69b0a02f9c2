package buckets

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/s3/cors"
	"github.com/cairn-store/cairn/internal/s3/s3core"
)

// S3 bucket CORS: GET, PUT and DELETE ?cors, preflight OPTIONS on a bucket or object, and the
// CORS headers of actual requests. The configuration (package cors) is kept in the bucket's
// container metadata under cors.MetaKey and cached with its access state; it is S3's own
// setting, apart from the Swift API's container CORS (X-Container-Meta-Access-Control-*).
//
// A preflight carries no credentials, so it finds the bucket as an anonymous request does:
// through the shared name index. Setting a CORS configuration therefore claims the bucket's
// name there, as sharing it does (s3core/registry.go); access to the bucket is still decided by
// its ACL and policy, as in S3 ("The ACLs and policies continue to apply when you enable CORS").

// GetBucketCors serves the S3 operation of that name.
func (h *Handler) GetBucketCors(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if rq.Cors == nil {
		return s3core.ErrNoSuchCORS
	}
	s3core.WriteXML(w, http.StatusOK, rq.Cors.Document())
	return nil
}

// PutBucketCors serves the S3 operation of that name.
func (h *Handler) PutBucketCors(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	// S3 requires an integrity header on PutBucketCors (SDKs send one).
	body, err := h.ReadSmallBody(r, rq, cors.MaxDocument, true)
	if err != nil {
		return err
	}
	cfg, err := cors.Parse(body)
	if err != nil {
		return corsConfigError(err)
	}
	if err := h.ClaimForSharing(ctx, rq, true); err != nil {
		return err
	}
	if err := h.SetBucketMeta(ctx, rq, map[string]string{cors.MetaKey: cfg.Encode()}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}

// DeleteBucketCors serves the S3 operation of that name.
func (h *Handler) DeleteBucketCors(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{cors.MetaKey: ""}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// corsConfigError is the S3 error for a refused configuration.
func corsConfigError(err error) error {
	var ce *cors.Error
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Kind {
	case cors.InvalidRequest:
		return s3core.ErrInvalidRequest.WithMessage("%s", ce.Message)
	case cors.InvalidArgument:
		return s3core.ErrInvalidArgument.WithMessage("%s", ce.Message)
	}
	return fmt.Errorf("%w: %v", s3core.ErrMalformedXML, ce)
}
