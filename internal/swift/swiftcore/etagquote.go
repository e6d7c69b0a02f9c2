package swiftcore

import (
	"context"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// Swift's etag_quoter: an account or container may ask for RFC 9110 ETags (quoted) on its
// objects' answers, with X-Account-Rfc-Compliant-Etags / X-Container-Rfc-Compliant-Etags; a
// container's setting wins over its account's. Off by default, as in Swift.
const rfcEtagsKey = "sys:rfc-compliant-etags"

// ReadRFCEtags reads the setting from a PUT or POST of kind ("Account" or "Container") into
// changes: "true"/"false", or "" to remove it (an empty value or X-Remove-...).
func ReadRFCEtags(hdr http.Header, kind string, changes map[string]string) {
	name := "X-" + kind + "-Rfc-Compliant-Etags"
	if v, ok := hdr[http.CanonicalHeaderKey(name)]; ok {
		changes[rfcEtagsKey] = ""
		if s := strings.Join(v, ","); s != "" {
			changes[rfcEtagsKey] = boolString(swiftwire.Truthy(s))
		}
	}
	if hdr.Get("X-Remove-"+kind+"-Rfc-Compliant-Etags") != "" {
		changes[rfcEtagsKey] = ""
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// WriteRFCEtags shows a stored setting on an account or container answer, as Swift does.
func WriteRFCEtags(hdr http.Header, kind string, m map[string]string) {
	switch m[rfcEtagsKey] {
	case "true":
		hdr.Set("X-"+kind+"-Rfc-Compliant-Etags", "True")
	case "false":
		hdr.Set("X-"+kind+"-Rfc-Compliant-Etags", "False")
	}
}

// QuoteEtags reports whether answers about objects of the request's container carry quoted
// ETags: the container's setting, else the account's, else no.
func (h *Server) QuoteEtags(ctx context.Context, rq *Request) bool {
	if c, err := h.HeadContainer(ctx, rq.Tenant, rq.Container); err == nil {
		if v := c.Meta[rfcEtagsKey]; v != "" {
			return v == "true"
		}
	}
	m, err := h.Accounts.AccountMetadata(ctx, rq.Tenant)
	return err == nil && m[rfcEtagsKey] == "true"
}

// EtagQuoter quotes a bare ETag header when the response's header is written.
type EtagQuoter struct {
	http.ResponseWriter
	done bool
}

func (q *EtagQuoter) quote() {
	if q.done {
		return
	}
	q.done = true
	hdr := q.Header()
	if e := hdr.Get("Etag"); e != "" && !(strings.HasSuffix(e, `"`) && (strings.HasPrefix(e, `"`) || strings.HasPrefix(e, `W/"`))) {
		hdr.Set("Etag", `"`+e+`"`)
	}
}

func (q *EtagQuoter) WriteHeader(status int) {
	q.quote()
	q.ResponseWriter.WriteHeader(status)
}

func (q *EtagQuoter) Write(b []byte) (int, error) {
	q.quote()
	return q.ResponseWriter.Write(b)
}

// Flush lets streamed answers through the wrapper.
func (q *EtagQuoter) Flush() {
	q.quote()
	if f, ok := q.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (q *EtagQuoter) Unwrap() http.ResponseWriter { return q.ResponseWriter }
