package objects

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3core"
)

// conditions are the preconditions of a read (If-*) or of a copy's source
// (x-amz-copy-source-if-*).
type conditions struct {
	ifMatch, ifNoneMatch, ifModifiedSince, ifUnmodifiedSince string
}

func readConditions(hdr http.Header) conditions {
	return conditions{
		ifMatch: hdr.Get("If-Match"), ifNoneMatch: hdr.Get("If-None-Match"),
		ifModifiedSince: hdr.Get("If-Modified-Since"), ifUnmodifiedSince: hdr.Get("If-Unmodified-Since"),
	}
}

func readCopySourceConditions(hdr http.Header) conditions {
	return conditions{
		ifMatch: hdr.Get("X-Amz-Copy-Source-If-Match"), ifNoneMatch: hdr.Get("X-Amz-Copy-Source-If-None-Match"),
		ifModifiedSince:   hdr.Get("X-Amz-Copy-Source-If-Modified-Since"),
		ifUnmodifiedSince: hdr.Get("X-Amz-Copy-Source-If-Unmodified-Since"),
	}
}

// evaluate applies S3's precedence (that of RFC 9110 §13.2.2): If-Match decides alone when
// present, otherwise If-Unmodified-Since; then If-None-Match decides alone when present,
// otherwise If-Modified-Since. A failed If-Match/If-Unmodified-Since is PreconditionFailed; a
// failed If-None-Match/If-Modified-Since is notModified (304 for GET and HEAD,
// PreconditionFailed for a copy source). Unparseable dates are ignored, as S3 does. Times
// compare at one-second resolution, that of HTTP dates.
func (c conditions) evaluate(etag string, lastModified time.Time, notModified *s3core.APIError) error {
	lm := lastModified.Truncate(time.Second)
	if c.ifMatch != "" {
		if !httpwire.ETagListMatches(c.ifMatch, etag) {
			return s3core.ErrPreconditionFailed.WithMessage("At least one of the pre-conditions you specified did not hold: If-Match")
		}
	} else if t, ok := httpwire.ParseDate(c.ifUnmodifiedSince); ok && lm.After(t) {
		return s3core.ErrPreconditionFailed.WithMessage("At least one of the pre-conditions you specified did not hold: If-Unmodified-Since")
	}
	if c.ifNoneMatch != "" {
		if httpwire.ETagListMatches(c.ifNoneMatch, etag) {
			return notModified
		}
	} else if t, ok := httpwire.ParseDate(c.ifModifiedSince); ok && !lm.After(t) {
		return notModified
	}
	return nil
}

// parseRange parses a Range header the way S3 does: one range of bytes is honoured; a header
// that is absent, malformed, not in bytes, or lists several ranges is ignored (the whole object
// is served). "bytes=-0" selects nothing and is InvalidRange.
func parseRange(h string) (*meta.Range, error) {
	spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return nil, nil
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return nil, nil
	}
	if first == "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return nil, nil
		}
		if n == 0 {
			return nil, s3core.ErrInvalidRange
		}
		return &meta.Range{Suffix: n}, nil
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return nil, nil
	}
	if last == "" {
		return &meta.Range{Start: start, End: -1}, nil
	}
	end, err := strconv.ParseInt(last, 10, 64)
	if err != nil || end < start {
		return nil, nil
	}
	return &meta.Range{Start: start, End: end}, nil
}

// contentRange is the Content-Range of a partial response.
func contentRange(offset, length, size int64) string {
	return "bytes " + strconv.FormatInt(offset, 10) + "-" + strconv.FormatInt(offset+length-1, 10) + "/" + strconv.FormatInt(size, 10)
}
