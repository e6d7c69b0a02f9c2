package swift

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
)

// checkConditions applies If-Match, If-None-Match, If-Unmodified-Since and If-Modified-Since
// the way Swift's swob does: each is checked on its own, in that order (RFC 9110 would let an
// If-None-Match silence If-Modified-Since; Swift does not, and clients of Swift expect its
// answers). A failed If-Match or If-Unmodified-Since is 412; a matching If-None-Match or an
// unmodified If-Modified-Since is 304 for GET and HEAD, 412 for other methods. Unparseable dates
// are ignored. lm is the Last-Modified sent, at one-second resolution. (internal/s3 has its own
// evaluation with S3's precedence and errors.)
func checkConditions(r *http.Request, etag string, lm time.Time) error {
	hdr := r.Header
	notModified := errNotModified
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		notModified = errPreconditionFailed
	}
	if im := hdr.Get("If-Match"); im != "" && !httpwire.ETagListMatches(im, etag) {
		return errPreconditionFailed
	}
	if inm := hdr.Get("If-None-Match"); inm != "" && httpwire.ETagListMatches(inm, etag) {
		return notModified
	}
	if t, ok := httpwire.ParseDate(hdr.Get("If-Unmodified-Since")); ok && lm.After(t) {
		return errPreconditionFailed
	}
	if t, ok := httpwire.ParseDate(hdr.Get("If-Modified-Since")); ok && !lm.After(t) {
		return notModified
	}
	return nil
}

// checkPutIfNoneMatch applies a PUT's If-None-Match: Swift supports only "*" (store only if no
// object of that name exists; 412 otherwise) and refuses other values (400). The check is made
// before the body is read, as Swift's object servers make it when the PUT arrives: two
// concurrent creates may both pass it, in Cairn as in Swift.
func (h *Handler) checkPutIfNoneMatch(r *http.Request, rq *request) error {
	v, ok := r.Header["If-None-Match"]
	if !ok {
		return nil
	}
	if strings.TrimSpace(strings.Join(v, ",")) != "*" {
		return errBadRequest.withText("If-None-Match only supports *")
	}
	o, err := h.proxy.HeadObject(r.Context(), rq.objectName())
	switch {
	case errors.Is(err, meta.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("If-None-Match: head %q: %w", rq.object, err)
	case expired(&o, h.cfg.Now()):
		return nil
	}
	return errPreconditionFailed
}
