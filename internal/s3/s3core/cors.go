package s3core

import (
	"context"
	"errors"
	"net/http"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/cors"
)

// S3's messages for a refused preflight.
const (
	corsNotEnabled     = "CORSResponse: CORS is not enabled for this bucket."
	corsBucketNotFound = "CORSResponse: Bucket not found"
)

// Preflight answers OPTIONS on a bucket or object (S3's "OPTIONS object"), without
// authentication: browsers send preflights without credentials, and one made for a presigned
// URL carries that URL's query, signed for another method. As S3 does: no Origin is 400; a
// bucket not found, or without a CORS configuration, is 403; then no
// Access-Control-Request-Method is 400; no rule that allows the origin, the method and every
// requested header is 403; else 200 with the rule's CORS headers.
func (h *Front) Preflight(w http.ResponseWriter, r *http.Request, rq *Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return errBadRequest.WithMessage("Insufficient information. Origin request header needed.")
	}
	method := r.Header.Get("Access-Control-Request-Method")
	shown := method
	if shown == "" {
		shown = http.MethodOptions
	}
	refused := func(msg, resourceType string) error {
		return withFields(errAccessForbidden.WithMessage("%s", msg), errorFields{method: shown, resourceType: resourceType})
	}
	if rq.Bucket == "" {
		return refused(corsNotEnabled, "BUCKET")
	}
	if CheckBucketNameForAccess(rq.Bucket) != nil {
		return refused(corsBucketNotFound, "BUCKET")
	}
	b, err := h.ResolveBucket(r.Context(), access.Identity{Anonymous: true}, rq.Bucket)
	switch {
	case errors.Is(err, ErrNoSuchBucket) || errors.Is(err, errInvalidBucketName):
		return refused(corsBucketNotFound, "BUCKET")
	case err != nil:
		return err
	}
	rq.Account = b.Owner
	if b.cors == nil {
		return refused(corsNotEnabled, "BUCKET")
	}
	if method == "" {
		return errBadRequest.WithMessage("Invalid Access-Control-Request-Method: null")
	}
	requested := cors.RequestHeaders(r.Header.Values("Access-Control-Request-Headers"))
	rule := b.cors.Match(origin, method, requested)
	if rule == nil {
		resourceType := "BUCKET"
		if rq.Key != "" {
			resourceType = "OBJECT"
		}
		return refused(errAccessForbidden.Message, resourceType)
	}
	rule.SetHeaders(w.Header(), origin, requested)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// SetCORSHeaders adds the CORS headers of an actual request (one with Origin) that a rule of
// the bucket allows: its origin, and its method, or Access-Control-Request-Method when the
// request carries one, as S3 matches. They go on the answer whatever it is, errors included.
func SetCORSHeaders(w http.ResponseWriter, r *http.Request, cfg *cors.Config) {
	origin := r.Header.Get("Origin")
	if cfg == nil || origin == "" {
		return
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if method == "" {
		method = r.Method
	}
	if rule := cfg.Match(origin, method, nil); rule != nil {
		rule.SetHeaders(w.Header(), origin, nil)
	}
}

// CorsForRefused adds the CORS headers to the answer of a request refused before its bucket
// was resolved (its credentials failed), as S3 does: the bucket is found as an anonymous
// request finds it, and nothing is said when it is not found.
func (h *Front) CorsForRefused(ctx context.Context, w http.ResponseWriter, r *http.Request, rq *Request) {
	if rq.Bucket == "" || r.Header.Get("Origin") == "" || CheckBucketNameForAccess(rq.Bucket) != nil {
		return
	}
	if b, err := h.ResolveBucket(ctx, access.Identity{Anonymous: true}, rq.Bucket); err == nil {
		SetCORSHeaders(w, r, b.cors)
	}
}
