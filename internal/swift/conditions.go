package swift

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
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

// maxRanges is Swift's limit on the ranges of one request; beyond it the header is ignored.
const maxRanges = 50

// parseRanges parses a Range header as Swift's swob does: "bytes=" and a comma-separated list
// of "first-last", "first-" or "-suffix". A header that is malformed in any part, not in bytes,
// or lists more than maxRanges ranges is ignored (nil: the whole object is served).
func parseRanges(h string) []meta.Range {
	// Swift accepts any case and whitespace around the unit and the '=' ("BYTES = 0 - 999").
	unit, spec, ok := strings.Cut(h, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return nil
	}
	parts := strings.Split(spec, ",")
	if len(parts) > maxRanges {
		return nil
	}
	out := make([]meta.Range, 0, len(parts))
	for _, p := range parts {
		first, last, ok := strings.Cut(strings.TrimSpace(p), "-")
		if !ok {
			return nil
		}
		first, last = strings.TrimSpace(first), strings.TrimSpace(last)
		switch {
		case first == "":
			n, err := strconv.ParseInt(last, 10, 64)
			if err != nil || n < 0 {
				return nil
			}
			// bytes=-0 selects nothing: Resolve refuses a range starting at -1.
			out = append(out, meta.Range{Suffix: n, Start: -1, End: -1})
		default:
			start, err := strconv.ParseInt(first, 10, 64)
			if err != nil || start < 0 {
				return nil
			}
			end := int64(-1)
			if last != "" {
				if end, err = strconv.ParseInt(last, 10, 64); err != nil || end < start {
					return nil
				}
			}
			out = append(out, meta.Range{Start: start, End: end})
		}
	}
	return out
}

// parseRange is parseRanges for a header of one range (nil otherwise).
func parseRange(h string) *meta.Range {
	rs := parseRanges(h)
	if len(rs) != 1 {
		return nil
	}
	return &rs[0]
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
