package swift

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/cairn-store/cairn/internal/swift/swiftcore"
)

// Swift's container CORS settings are user metadata (X-Container-Meta-Access-Control-*), kept
// like any other under swiftcore.ContainerMetaPrefix with lower-cased names.
const (
	corsAllowOrigin   = swiftcore.ContainerMetaPrefix + "access-control-allow-origin"
	corsMaxAge        = swiftcore.ContainerMetaPrefix + "access-control-max-age"
	corsExposeHeaders = swiftcore.ContainerMetaPrefix + "access-control-expose-headers"
)

// corsRules are a container's CORS settings.
type corsRules struct {
	allowOrigin, maxAge, exposeHeaders string
}

// corsOf reads the CORS settings of the request's container; none for account requests or a
// container that cannot be read.
func (h *Handler) corsOf(ctx context.Context, rq *swiftcore.Request) corsRules {
	if rq.Container == "" || rq.Tenant == "" {
		return corsRules{}
	}
	c, err := h.HeadContainer(ctx, rq.Tenant, rq.Container)
	if err != nil {
		return corsRules{}
	}
	return corsRules{allowOrigin: c.Meta[corsAllowOrigin], maxAge: c.Meta[corsMaxAge], exposeHeaders: c.Meta[corsExposeHeaders]}
}

// allows reports whether origin may make requests (Swift has no operator-wide list here).
func (c corsRules) allows(origin string) bool {
	for _, o := range strings.Fields(c.allowOrigin) {
		if o == origin || o == "*" {
			return true
		}
	}
	return false
}

// allowOriginHeader sets Access-Control-Allow-Origin: "*" when the container allows any origin,
// else the request's origin (and Vary: Origin, since the answer then depends on it).
func (c corsRules) allowOriginHeader(hdr http.Header, origin string) {
	if strings.TrimSpace(c.allowOrigin) == "*" {
		hdr.Set("Access-Control-Allow-Origin", "*")
		return
	}
	hdr.Set("Access-Control-Allow-Origin", origin)
	hdr.Add("Vary", "Origin")
}

// preflight answers a CORS preflight (OPTIONS with Origin) as Swift does: 401 unless the
// container allows the origin and the requested method, else 200 with the CORS headers.
// Account-level preflights get the plain OPTIONS answer (Swift has no account CORS).
func (h *Handler) preflight(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, allow []string) error {
	origin := r.Header.Get("Origin")
	hdr := w.Header()
	if rq.Container == "" {
		swiftcore.WriteStatus(w, r, http.StatusOK)
		return nil
	}
	rules := h.corsOf(r.Context(), rq)
	if !rules.allows(origin) || !slices.Contains(allow, r.Header.Get("Access-Control-Request-Method")) {
		swiftcore.WriteStatus(w, r, http.StatusUnauthorized)
		return nil
	}
	rules.allowOriginHeader(hdr, origin)
	if rules.maxAge != "" {
		hdr.Set("Access-Control-Max-Age", rules.maxAge)
	}
	hdr.Set("Access-Control-Allow-Methods", strings.Join(allow, ", "))
	var asked []string
	for _, v := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(asked, v) {
			asked = append(asked, v)
		}
	}
	if len(asked) > 0 {
		hdr.Set("Access-Control-Allow-Headers", strings.Join(asked, ", "))
	}
	swiftcore.WriteStatus(w, r, http.StatusOK)
	return nil
}

// corsWriter adds the CORS headers of an actual cross-origin request (one with Origin) to its
// response, once the response's own headers are known (user metadata is exposed too). As Swift
// in strict mode, an origin the container does not allow gets no CORS headers at all.
type corsWriter struct {
	http.ResponseWriter
	rules  corsRules
	origin string
	done   bool
}

// simpleExposed are the headers Swift always exposes to cross-origin scripts.
var simpleExposed = []string{"cache-control", "content-language", "content-type", "expires", "last-modified",
	"pragma", "etag", "x-timestamp", "x-trans-id", "x-openstack-request-id"}

func (cw *corsWriter) addHeaders() {
	if cw.done {
		return
	}
	cw.done = true
	if !cw.rules.allows(cw.origin) {
		return
	}
	hdr := cw.Header()
	if hdr.Get("Access-Control-Expose-Headers") == "" {
		expose := slices.Clone(simpleExposed)
		for k := range hdr {
			lk := strings.ToLower(k)
			if strings.HasPrefix(lk, "x-container-meta") || strings.HasPrefix(lk, "x-object-meta") {
				expose = append(expose, lk)
			}
		}
		for _, e := range strings.Fields(cw.rules.exposeHeaders) {
			expose = append(expose, strings.ToLower(e))
		}
		slices.Sort(expose)
		hdr.Set("Access-Control-Expose-Headers", strings.Join(slices.Compact(expose), ", "))
	}
	if hdr.Get("Access-Control-Allow-Origin") == "" {
		cw.rules.allowOriginHeader(hdr, cw.origin)
	}
}

func (cw *corsWriter) WriteHeader(status int) {
	cw.addHeaders()
	cw.ResponseWriter.WriteHeader(status)
}

func (cw *corsWriter) Write(b []byte) (int, error) {
	cw.addHeaders()
	return cw.ResponseWriter.Write(b)
}

// Flush lets streamed answers (bulk delete, SLO heartbeats) through the wrapper.
func (cw *corsWriter) Flush() {
	cw.addHeaders()
	if f, ok := cw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (cw *corsWriter) Unwrap() http.ResponseWriter { return cw.ResponseWriter }
