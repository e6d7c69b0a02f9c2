// Package staticweb is Swift's staticweb middleware: a container whose X-Container-Meta-Web-*
// settings ask for it is served as a web site to anonymous requests (and to authenticated ones
// that send X-Web-Mode: true). A path that names no object serves its index object (Web-Index),
// else an HTML listing (Web-Listings, styled by Web-Listings-CSS, titled by Web-Listings-Label);
// a 404 (or a refused anonymous request) serves the <status><Web-Error> object as its body;
// zero-byte objects of the directory type (Web-Directory-Type, default application/directory)
// count as missing. Access is decided as for any request: the container's read ACL must let
// the caller in (and .rlistings for a listing). Objects are served through the GetObject hook.
//
// Files: staticweb.go (web mode, index objects, listings and error pages).
package staticweb

import (
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// webSettings are a container's static web settings (its X-Container-Meta-Web-* values).
type webSettings struct {
	index, errorSuffix, listingsCSS, listingsLabel, dirType string
	listings                                                bool
}

func (s webSettings) active() bool { return s.index != "" || s.listings }

func webSettingsOf(c meta.Container) webSettings {
	get := func(name string) string { return strings.TrimSpace(c.Meta[swiftcore.ContainerMetaPrefix+name]) }
	s := webSettings{
		index: get("web-index"), errorSuffix: get("web-error"), listingsCSS: get("web-listings-css"),
		listingsLabel: get("web-listings-label"), dirType: get("web-directory-type"), listings: swiftwire.Truthy(get("web-listings")),
	}
	if s.dirType == "" {
		s.dirType = "application/directory"
	}
	return s
}

// WebMode reports whether a request is one static web serves: a GET or HEAD inside a container,
// anonymous or asking for it with X-Web-Mode.
func WebMode(r *http.Request, rq *swiftcore.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && rq.Container != "" && rq.TempURL == nil &&
		(rq.Anonymous || swiftwire.Truthy(r.Header.Get("X-Web-Mode")))
}

// ServeWeb serves a static web request for a container or an object; handled is false when
// the container is no web site and the request goes on as a plain one.
func (h *Handler) ServeWeb(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) (handled bool, err error) {
	ctx := r.Context()
	c, err := h.HeadContainer(ctx, rq.Tenant, rq.Container)
	if err != nil {
		return false, nil // the plain request answers for the container
	}
	s := webSettingsOf(c)
	if rq.Object == "" {
		if !s.active() {
			if swiftwire.Truthy(r.Header.Get("X-Web-Mode")) {
				return true, h.webError(w, r, rq, s, swiftcore.ErrNotFound)
			}
			return false, nil
		}
		if !strings.HasSuffix(r.URL.Path, "/") {
			return true, redirectWithSlash(w, r)
		}
		if s.index != "" {
			if served, err := h.serveWebObject(w, r, rq, rq.Object+s.index, s); served || err != nil {
				return true, err
			}
		}
		return true, h.webListing(w, r, rq, s, "")
	}
	if !s.active() {
		return false, nil // no web site: a plain request (Swift's staticweb passes it through)
	}
	obj, err := h.Proxy.HeadObject(ctx, rq.ObjectName())
	found := err == nil && !swiftcore.Expired(&obj, h.Now())
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return false, nil // the plain request answers the error
	}
	if found && !(obj.ContentType == s.dirType && obj.Size <= 1) {
		return false, nil // an object: served as it is
	}
	if s.index != "" {
		index := strings.TrimSuffix(rq.Object, "/") + "/" + s.index
		if _, err := h.Proxy.HeadObject(ctx, meta.ObjectName{Account: rq.Tenant, Container: rq.Container, Object: index}); err == nil {
			if !strings.HasSuffix(r.URL.Path, "/") {
				return true, redirectWithSlash(w, r)
			}
			if served, err := h.serveWebObject(w, r, rq, index, s); served || err != nil {
				return true, err
			}
		}
	}
	if !strings.HasSuffix(rq.Object, "/") {
		// A pseudo-directory without its slash is redirected to it, if there is one.
		page, err := h.Proxy.ListObjects(ctx, rq.Tenant, rq.Container, meta.ListOptions{Prefix: rq.Object + "/", Delimiter: "/", Limit: 1})
		if err != nil || len(page.Objects)+len(page.CommonPrefixes) == 0 {
			return true, h.webError(w, r, rq, s, swiftcore.ErrNotFound)
		}
		return true, redirectWithSlash(w, r)
	}
	return true, h.webListing(w, r, rq, s, rq.Object)
}

// serveWebObject serves another object of the container (an index page) for the request.
// served is false when it does not exist.
func (h *Handler) serveWebObject(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, object string, s webSettings) (served bool, err error) {
	sub := *rq
	sub.Object = object
	err = h.GetObject(w, r, &sub)
	if errors.Is(err, meta.ErrNotFound) || errors.Is(err, swiftcore.ErrNotFound) {
		return false, nil
	}
	return true, err
}

// redirectWithSlash answers 301 to the same path with a slash added, as an absolute URL.
func redirectWithSlash(w http.ResponseWriter, r *http.Request) error {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	w.Header().Set("Location", scheme+"://"+r.Host+r.URL.EscapedPath()+"/")
	swiftcore.WriteStatus(w, r, http.StatusMovedPermanently)
	return nil
}

// webError answers err, with the container's <status><Web-Error> object as its body when the
// container names one and it exists (only for 401 and 404, as Swift does).
func (h *Handler) webError(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, s webSettings, err error) error {
	se := swiftcore.ToError(err)
	if s.errorSuffix == "" || (se.Status != http.StatusNotFound && se.Status != http.StatusUnauthorized) {
		return err
	}
	page := meta.ObjectName{Account: rq.Tenant, Container: rq.Container, Object: strconv.Itoa(se.Status) + s.errorSuffix}
	rd, gerr := h.Proxy.GetObject(r.Context(), page, nil)
	if gerr != nil {
		return err
	}
	defer rd.Close()
	if sse.Encrypted(&rd.Object) {
		prq := *rq
		prq.Object = page.Object
		plain, perr := h.Plaintext(r.Context(), &prq, rd.Object, rd, nil)
		if perr != nil {
			return err
		}
		defer plain.Close()
		rd = plain
	}
	swiftcore.WriteObjectHeaders(w.Header(), &rd.Object)
	w.Header().Set("Content-Length", strconv.FormatInt(rd.Length, 10))
	w.WriteHeader(se.Status)
	if r.Method != http.MethodHead {
		io.Copy(w, rd)
	}
	return nil
}

// webListing serves the HTML listing of a container's pseudo-directory prefix ("" for the top).
func (h *Handler) webListing(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, s webSettings, prefix string) error {
	label := r.URL.Path
	if s.listingsLabel != "" {
		parts := strings.SplitN(r.URL.Path, "/", 5)
		rest := ""
		if len(parts) == 5 {
			rest = parts[4]
		}
		label = s.listingsLabel + "/" + rest
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\" \"http://www.w3.org/TR/html4/loose.dtd\">\n<html>\n")
	if !s.listings {
		fmt.Fprintf(&b, "<head>\n<title>Listing of %s</title>\n", html.EscapeString(label))
		if s.listingsCSS != "" {
			fmt.Fprintf(&b, "  <link rel=\"stylesheet\" type=\"text/css\" href=\"%s\" />\n", cssPath(s.listingsCSS, prefix))
		} else {
			b.WriteString("  <style type=\"text/css\">\n   h1 {font-size: 1em; font-weight: bold;}\n   p {font-size: 2}\n  </style>\n")
		}
		b.WriteString("</head>\n<body>  <h1>Web Listing Disabled</h1>   <p>The owner of this web site has disabled web listing.   <p>If you are the owner of this web site, you can enable   web listing by setting X-Container-Meta-Web-Listings.</p>")
		if s.index != "" {
			fmt.Fprintf(&b, "<h1>Index File Not Found</h1> <p>The owner of this web site has set  <b>X-Container-Meta-Web-Index: %s</b>.  However, this file is not found.</p>", html.EscapeString(s.index))
		}
		b.WriteString(" </body>\n</html>\n")
		if s.errorSuffix != "" {
			return h.webError(w, r, rq, s, swiftcore.ErrNotFound)
		}
		return writeWebPage(w, r, http.StatusNotFound, b.String())
	}
	page, err := h.Proxy.ListObjects(r.Context(), rq.Tenant, rq.Container, meta.ListOptions{Prefix: prefix, Delimiter: "/"})
	if err != nil {
		return h.webError(w, r, rq, s, fmt.Errorf("web listing of %q: %w", rq.Container, err))
	}
	if prefix != "" && len(page.Objects)+len(page.CommonPrefixes) == 0 {
		return h.webError(w, r, rq, s, swiftcore.ErrNotFound)
	}
	fmt.Fprintf(&b, " <head>\n  <title>Listing of %s</title>\n", html.EscapeString(label))
	if s.listingsCSS != "" {
		fmt.Fprintf(&b, "  <link rel=\"stylesheet\" type=\"text/css\" href=\"%s\" />\n", cssPath(s.listingsCSS, prefix))
	} else {
		b.WriteString("  <style type=\"text/css\">\n   h1 {font-size: 1em; font-weight: bold;}\n   th {text-align: left; padding: 0px 1em 0px 1em;}\n   td {padding: 0px 1em 0px 1em;}\n   a {text-decoration: none;}\n  </style>\n")
	}
	fmt.Fprintf(&b, " </head>\n <body>\n  <h1 id=\"title\">Listing of %s</h1>\n  <table id=\"listing\">\n   <tr id=\"heading\">\n    <th class=\"colname\">Name</th>\n    <th class=\"colsize\">Size</th>\n    <th class=\"coldate\">Date</th>\n   </tr>\n", html.EscapeString(label))
	if prefix != "" {
		b.WriteString("   <tr id=\"parent\" class=\"item\">\n    <td class=\"colname\"><a href=\"../\">../</a></td>\n    <td class=\"colsize\">&nbsp;</td>\n    <td class=\"coldate\">&nbsp;</td>\n   </tr>\n")
	}
	for _, sub := range page.CommonPrefixes {
		sub = strings.TrimPrefix(sub, prefix)
		fmt.Fprintf(&b, "   <tr class=\"item subdir\">\n    <td class=\"colname\"><a href=\"%s\">%s</a></td>\n    <td class=\"colsize\">&nbsp;</td>\n    <td class=\"coldate\">&nbsp;</td>\n   </tr>\n",
			swiftwire.PyQuote(sub), html.EscapeString(sub))
	}
	for _, o := range page.Objects {
		name := strings.TrimPrefix(o.Name, prefix)
		var types []string
		for _, t := range strings.Split(o.ContentType, "/") {
			types = append(types, "type-"+html.EscapeString(strings.ToLower(t)))
		}
		date := o.LastModified().UTC().Format("2006-01-02 15:04:05")
		fmt.Fprintf(&b, "   <tr class=\"item %s\">\n    <td class=\"colname\"><a href=\"%s\">%s</a></td>\n    <td class=\"colsize\">%s</td>\n    <td class=\"coldate\">%s</td>\n   </tr>\n",
			strings.Join(types, " "), swiftwire.PyQuote(name), html.EscapeString(name), swiftwire.HumanReadable(o.Size), date)
	}
	b.WriteString("  </table>\n </body>\n</html>\n")
	return writeWebPage(w, r, http.StatusOK, b.String())
}

func writeWebPage(w http.ResponseWriter, r *http.Request, status int, body string) error {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=UTF-8")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		io.WriteString(w, body)
	}
	return nil
}

// cssPath is the listing's style sheet link: absolute paths and URLs as they are, a name
// relative to the container's top, from the listed pseudo-directory.
func cssPath(css, prefix string) string {
	if strings.HasPrefix(css, "/") || strings.HasPrefix(css, "http://") || strings.HasPrefix(css, "https://") {
		return swiftwire.PyQuoteSafe(css, ":/")
	}
	return strings.Repeat("../", strings.Count(prefix, "/")) + swiftwire.PyQuote(css)
}

// Handler serves static web requests; it shares the front end's state.
type Handler struct {
	*swiftcore.Server
}

// New returns the feature's handler over the shared state.
func New(s *swiftcore.Server) *Handler {
	return &Handler{Server: s}
}
