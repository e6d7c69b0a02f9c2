// Package tempurl is Swift's tempurl middleware: a request carrying temp_url_sig and
// temp_url_expires is let in without a token when the signature is the HMAC, under one of the
// account's or the container's Temp-URL keys (X-Account-Meta-Temp-URL-Key[-2],
// X-Container-Meta-Temp-URL-Key[-2]), of "METHOD\nEXPIRES\nPATH" (or "prefix:PATH-PREFIX" with
// temp_url_prefix, and "ip=RANGE\n" first with temp_url_ip_range), before it expires. It allows
// that method on that object (or objects under the prefix) only; segments of a large object it
// reads stay within the key's scope (the container for a container key, the account for an
// account key: swiftcore.TempURLScope, which authorization consults). Answers go out through
// Writer, which applies the middleware's outgoing rules.
//
// Files: tempurl.go (checking a temp URL, the request and answer rules).
package tempurl

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

var errTempURLInvalid = &swiftcore.Error{Status: http.StatusUnauthorized, Body: "401 Unauthorized: Temp URL invalid\n", ContentType: swiftcore.ContentTypePlain}

// tempURLParams are a request's temp URL query parameters.
type tempURLParams struct {
	sig, prefix, ipRange, filename string
	hasSig, hasExpires, hasPrefix  bool
	expires                        int64 // 0: unparsable
	inline                         bool
}

func readTempURLParams(q url.Values) tempURLParams {
	p := tempURLParams{sig: q.Get("temp_url_sig"), prefix: q.Get("temp_url_prefix"), ipRange: q.Get("temp_url_ip_range"),
		filename: q.Get("filename"), hasSig: q.Has("temp_url_sig"), hasExpires: q.Has("temp_url_expires"),
		hasPrefix: q.Has("temp_url_prefix"), inline: q.Has("inline")}
	if v := q.Get("temp_url_expires"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			p.expires = n
		} else if t, err := time.Parse("2006-01-02T15:04:05Z", v); err == nil {
			p.expires = t.Unix()
		}
	}
	return p
}

// CheckTempURL validates a temp URL request for an object of account/container; nil scope and
// nil error when the request carries no temp URL parameters at all.
func (h *Handler) Check(r *http.Request, rq *swiftcore.Request) (*swiftcore.TempURLScope, error) {
	p := readTempURLParams(r.URL.Query())
	if !p.hasSig && !p.hasExpires {
		return nil, nil
	}
	invalid := fmt.Errorf("temp URL for %s: %w", r.URL.Path, errTempURLInvalid)
	if p.sig == "" || p.expires == 0 || p.expires < h.Now().Unix() {
		return nil, invalid
	}
	alg, mac, ok := swiftwire.ParseTempURLSig(p.sig)
	newHash := swiftwire.TempURLDigests[alg]
	if !ok || newHash == nil || rq.Object == "" || strings.Trim(rq.Object, "/") == "" || !isTempURLMethod(r.Method) {
		return nil, invalid
	}
	if p.ipRange != "" && !swiftwire.IPInRange(r.RemoteAddr, p.ipRange) {
		return nil, invalid
	}
	signedPath := "/v1/" + rq.Account + "/" + rq.Container + "/" + rq.Object
	if p.hasPrefix {
		if !strings.HasPrefix(rq.Object, p.prefix) {
			return nil, invalid
		}
		signedPath = "prefix:/v1/" + rq.Account + "/" + rq.Container + "/" + p.prefix
	}
	methods := []string{r.Method}
	if r.Method == http.MethodHead {
		methods = []string{"HEAD", "GET", "POST", "PUT"} // a HEAD may use any of these signatures
	}
	keys := h.tempURLKeys(r.Context(), rq)
	for _, k := range keys {
		for _, m := range methods {
			if subtle.ConstantTimeCompare(swiftwire.TempURLMAC(newHash, k.key, m, p.expires, signedPath, p.ipRange), mac) == 1 {
				scope := &swiftcore.TempURLScope{Account: rq.Tenant, Expires: p.expires, Filename: p.filename, Inline: p.inline}
				if k.container {
					scope.Container = rq.Container
				}
				return scope, nil
			}
		}
	}
	return nil, invalid
}

func isTempURLMethod(m string) bool {
	for _, x := range swiftwire.TempURLMethods {
		if x == m {
			return true
		}
	}
	return false
}

type tempURLKey struct {
	key       string
	container bool
}

// tempURLKeys are the account's and the container's keys.
func (h *Handler) tempURLKeys(ctx context.Context, rq *swiftcore.Request) []tempURLKey {
	var keys []tempURLKey
	if m, err := h.Accounts.AccountMetadata(ctx, rq.Tenant); err == nil {
		for _, k := range []string{"temp-url-key", "temp-url-key-2"} {
			if v := m[swiftcore.AccountMetaPrefix+k]; v != "" {
				keys = append(keys, tempURLKey{key: v})
			}
		}
	}
	if c, err := h.HeadContainer(ctx, rq.Tenant, rq.Container); err == nil {
		for _, k := range []string{"temp-url-key", "temp-url-key-2"} {
			if v := c.Meta[swiftcore.ContainerMetaPrefix+k]; v != "" {
				keys = append(keys, tempURLKey{key: v, container: true})
			}
		}
	}
	return keys
}

// tempURLRefusedHeaders are headers a temp URL write may not carry: they would point the new
// object at data the URL does not give access to.
var tempURLRefusedHeaders = []string{"X-Object-Manifest", "X-Symlink-Target", "X-Copy-From"}

// PrepareTempURLRequest applies Swift's incoming header rules to an allowed temp URL request.
func PrepareRequest(r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		for _, hname := range tempURLRefusedHeaders {
			if _, ok := r.Header[hname]; ok {
				return swiftcore.ErrBadRequest.WithText("The header %q is not allowed in this tempurl", hname)
			}
		}
		if r.URL.Query().Has("multipart-manifest") {
			return swiftcore.ErrBadRequest.WithText("multipart-manifest is not allowed in this tempurl")
		}
	}
	r.Header.Del("X-Timestamp")
	return nil
}

// Writer applies Swift's outgoing rules to a temp URL answer: user metadata is hidden
// (but X-Object-Meta-Public-*), and a successful GET or HEAD says how to save it
// (Content-Disposition) and until when it may be cached (Expires).
type Writer struct {
	http.ResponseWriter
	r     *http.Request
	scope *swiftcore.TempURLScope
	name  string
	done  bool
}

// NewWriter wraps w for the answer to r, a request a temp URL of scope let in for object name.
func NewWriter(w http.ResponseWriter, r *http.Request, scope *swiftcore.TempURLScope, name string) *Writer {
	return &Writer{ResponseWriter: w, r: r, scope: scope, name: name}
}

// dispositionValue is Swift's disposition_format.
func dispositionValue(kind, filename string) string {
	return fmt.Sprintf(`%s; filename="%s"; filename*=UTF-8''%s`, kind, swiftwire.PyQuoteSafe(filename, " /"), swiftwire.PyQuote(filename))
}

func (tw *Writer) fix(status int) {
	if tw.done {
		return
	}
	tw.done = true
	hdr := tw.Header()
	for k := range hdr {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-object-meta-") && !strings.HasPrefix(lk, "x-object-meta-public-") {
			hdr.Del(k)
		}
	}
	if (tw.r.Method != http.MethodGet && tw.r.Method != http.MethodHead) || status/100 != 2 {
		return
	}
	existing := hdr.Get("Content-Disposition")
	var v string
	switch {
	case tw.scope.Inline && tw.scope.Filename != "":
		v = dispositionValue("inline", tw.scope.Filename)
	case tw.scope.Inline:
		v = "inline"
	case tw.scope.Filename != "":
		v = dispositionValue("attachment", tw.scope.Filename)
	case existing != "":
		v = existing
	default:
		v = dispositionValue("attachment", path.Base(strings.TrimRight(tw.name, "/")))
	}
	hdr.Set("Content-Disposition", strings.ReplaceAll(v, "\n", "%0A"))
	hdr.Set("Expires", time.Unix(tw.scope.Expires, 0).UTC().Format(http.TimeFormat))
}

func (tw *Writer) WriteHeader(status int) {
	tw.fix(status)
	tw.ResponseWriter.WriteHeader(status)
}

func (tw *Writer) Write(b []byte) (int, error) {
	tw.fix(http.StatusOK)
	return tw.ResponseWriter.Write(b)
}

// Flush lets streamed answers through the wrapper.
func (tw *Writer) Flush() {
	tw.fix(http.StatusOK)
	if f, ok := tw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (tw *Writer) Unwrap() http.ResponseWriter { return tw.ResponseWriter }

// Handler checks temp URLs; it shares the front end's state.
type Handler struct {
	*swiftcore.Server
}

// New returns the feature's handler over the shared state.
func New(s *swiftcore.Server) *Handler {
	return &Handler{Server: s}
}
