package swiftcore

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
)

// CheckConditions applies If-Match, If-None-Match, If-Unmodified-Since and If-Modified-Since
// the way Swift's swob does: each is checked on its own, in that order (RFC 9110 would let an
// If-None-Match silence If-Modified-Since; Swift does not, and clients of Swift expect its
// answers). A failed If-Match or If-Unmodified-Since is 412; a matching If-None-Match or an
// unmodified If-Modified-Since is 304 for GET and HEAD, 412 for other methods. Unparseable dates
// are ignored. lm is the Last-Modified sent, at one-second resolution. (internal/s3 has its own
// evaluation with S3's precedence and errors.)
func CheckConditions(r *http.Request, etag string, lm time.Time) error {
	hdr := r.Header
	notModified := errNotModified
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		notModified = ErrPreconditionFailed
	}
	if im := hdr.Get("If-Match"); im != "" && !httpwire.ETagListMatches(im, etag) {
		return ErrPreconditionFailed
	}
	if inm := hdr.Get("If-None-Match"); inm != "" && httpwire.ETagListMatches(inm, etag) {
		return notModified
	}
	if t, ok := httpwire.ParseDate(hdr.Get("If-Unmodified-Since")); ok && lm.After(t) {
		return ErrPreconditionFailed
	}
	if t, ok := httpwire.ParseDate(hdr.Get("If-Modified-Since")); ok && !lm.After(t) {
		return notModified
	}
	return nil
}

// PutIfNoneMatch applies a PUT's If-None-Match: Swift supports only "*" (store only if no
// object of that name exists; 412 otherwise) and refuses other values (400). An existing object
// is refused at once, before the body is read, as Swift's object servers refuse it when the PUT
// arrives; the condition it returns is evaluated again in the commit, so that of two racing
// creates exactly one succeeds (an expired object counts as none).
func (h *Server) PutIfNoneMatch(r *http.Request, rq *Request) (meta.Precondition, error) {
	v, ok := r.Header["If-None-Match"]
	if !ok {
		return meta.Precondition{}, nil
	}
	if strings.TrimSpace(strings.Join(v, ",")) != "*" {
		return meta.Precondition{}, ErrBadRequest.WithText("If-None-Match only supports *")
	}
	cond := meta.Precondition{IfNoneMatch: true, ExpiredAt: h.Now().Unix()}
	o, err := h.Proxy.HeadObject(r.Context(), rq.ObjectName())
	switch {
	case errors.Is(err, meta.ErrNotFound):
		return cond, nil
	case err != nil:
		return cond, fmt.Errorf("If-None-Match: head %q: %w", rq.Object, err)
	case Expired(&o, h.Now()):
		return cond, nil
	}
	return cond, ErrPreconditionFailed
}
