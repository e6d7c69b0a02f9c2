package swift

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
)

// The same RFC 9110 rules live in internal/s3/conditions.go with S3's error values; a front end
// may not import another, so the few lines are repeated here with Swift's.

// checkConditions applies If-Match, If-None-Match, If-Modified-Since and If-Unmodified-Since
// with RFC 9110's precedence (§13.2.2): If-Match decides alone when present, otherwise
// If-Unmodified-Since (412 on failure); then If-None-Match decides alone when present,
// otherwise If-Modified-Since (304 for GET and HEAD, 412 for other methods). Unparseable dates
// are ignored. lm is the Last-Modified sent, at one-second resolution.
func checkConditions(r *http.Request, etag string, lm time.Time) error {
	hdr := r.Header
	if im := hdr.Get("If-Match"); im != "" {
		if !etagListMatches(im, etag) {
			return errPreconditionFailed
		}
	} else if t, ok := parseHTTPDate(hdr.Get("If-Unmodified-Since")); ok && lm.After(t) {
		return errPreconditionFailed
	}
	notModified := errNotModified
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		notModified = errPreconditionFailed
	}
	if inm := hdr.Get("If-None-Match"); inm != "" {
		if etagListMatches(inm, etag) {
			return notModified
		}
	} else if t, ok := parseHTTPDate(hdr.Get("If-Modified-Since")); ok && !lm.After(t) {
		return notModified
	}
	return nil
}

// etagListMatches reports whether a comma-separated If-Match/If-None-Match list names etag (or
// is "*"). Quotes and weak prefixes are ignored: Swift sends its ETags bare.
func etagListMatches(list, etag string) bool {
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "*" || trimETag(e) == trimETag(etag) {
			return true
		}
	}
	return false
}

func trimETag(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "W/")
	return strings.Trim(s, `"`)
}

func parseHTTPDate(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := http.ParseTime(s)
	return t, err == nil
}

// parseRange parses a Range header. One byte range is honoured; a header that is malformed,
// not in bytes, or lists several ranges is ignored and the whole object served (which RFC 9110
// allows; Swift would answer several ranges as multipart/byteranges, which Cairn does not).
func parseRange(h string) *meta.Range {
	spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return nil
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return nil
	}
	first, last = strings.TrimSpace(first), strings.TrimSpace(last)
	if first == "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return nil
		}
		// bytes=-0 selects nothing: Resolve refuses a zero suffix with ErrInvalidRange.
		return &meta.Range{Suffix: n, End: -1, Start: -1}
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return nil
	}
	if last == "" {
		return &meta.Range{Start: start, End: -1}
	}
	end, err := strconv.ParseInt(last, 10, 64)
	if err != nil || end < start {
		return nil
	}
	return &meta.Range{Start: start, End: end}
}
