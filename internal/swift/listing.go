package swift

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// listFormat is the body format of a listing.
type listFormat int

const (
	formatPlain listFormat = iota
	formatJSON
	formatXML
)

// listRequest is a parsed listing query.
type listRequest struct {
	opts meta.ListOptions
	// empty: limit=0 asks for no entries (meta.ListOptions would read 0 as the default).
	empty bool
	// dirOnly: path=P lists the direct children of P only (Swift's old pseudo-directory
	// query), read as prefix P/ with delimiter /: objects, and the subdirectories that have a
	// directory marker object ("P/sub/"), listed as that object.
	dirOnly bool
	// vary: the format came from Accept, so the answer varies with it.
	vary        bool
	format      listFormat
	contentType string
}

// parseListing reads a listing's query (prefix, delimiter, marker, end_marker, limit, reverse,
// format) and Accept header, with Swift's rules: a limit above 10000 is 412, a non-numeric one is
// ignored; format= overrides Accept; an Accept that allows none
// of the formats is 406.
func parseListing(q url.Values, accept string) (listRequest, error) {
	lr := listRequest{opts: meta.ListOptions{
		Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), Marker: q.Get("marker"),
		EndMarker: q.Get("end_marker"), Limit: listingLimit, Reverse: swiftwire.Truthy(q.Get("reverse")),
	}}
	// Swift 2.30 asks only that each parameter be UTF-8: a delimiter may be several characters
	// long, and a marker may hold a NUL (clients use "name\x00" as "just after name").
	for _, name := range []string{"prefix", "delimiter", "marker", "end_marker", "path"} {
		if !utf8.ValidString(q.Get(name)) {
			return lr, errBadRequest.withText("%q parameter not valid UTF-8", name)
		}
	}
	if v := q.Get("limit"); v != "" && swiftwire.IsDigits(v) {
		n, err := strconv.Atoi(v)
		if err != nil || n > listingLimit {
			return lr, errPreconditionFailed.withText("Maximum limit is %d", listingLimit)
		}
		lr.opts.Limit = n
		lr.empty = n == 0
	}
	if p, ok := q["path"]; ok {
		// As Swift: "dir", "dir/" and "dir//" all name the directory "dir/"; "/" is the
		// directory of names that start with a slash.
		prefix := p[0]
		if prefix != "" {
			prefix = strings.TrimRight(prefix, "/") + "/"
		}
		lr.opts.Prefix, lr.opts.Delimiter, lr.dirOnly = prefix, "/", true
	}
	lr.vary = true
	if f := q.Get("format"); f != "" {
		lr.vary = false
		switch strings.ToLower(f) {
		case "json":
			accept = "application/json"
		case "xml":
			accept = "application/xml"
		default:
			accept = "text/plain"
		}
	}
	ct, ok := negotiate(accept)
	if !ok {
		return lr, errNotAcceptable
	}
	lr.contentType = ct
	switch ct {
	case "application/json":
		lr.format = formatJSON
	case "application/xml", "text/xml":
		lr.format = formatXML
	}
	return lr, nil
}

// offered are the listing media types, in Swift's order of preference.
var offered = []string{"text/plain", "application/json", "application/xml", "text/xml"}

// negotiate picks the listing media type an Accept header prefers (RFC 9110 §12.5.1: highest
// q wins, then the more specific range, then the server's order). No header means text/plain.
func negotiate(accept string) (string, bool) {
	if strings.TrimSpace(accept) == "" {
		return offered[0], true
	}
	best, bestQ, bestSpec := "", 0.0, -1
	for _, part := range strings.Split(accept, ",") {
		mr, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		mr = strings.ToLower(strings.TrimSpace(mr))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.TrimSpace(k) == "q" {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0
				}
				q = f
			}
		}
		if q == 0 {
			continue
		}
		typ, sub, ok := strings.Cut(mr, "/")
		if !ok {
			continue
		}
		for _, o := range offered {
			ot, os, _ := strings.Cut(o, "/")
			spec := 0
			switch {
			case typ == "*" && sub == "*":
			case typ == ot && sub == "*":
				spec = 1
			case typ == ot && sub == os:
				spec = 2
			default:
				continue
			}
			if q > bestQ || q == bestQ && spec > bestSpec {
				best, bestQ, bestSpec = o, q, spec
			}
			break // offered is in preference order: the first match of a range is its pick
		}
	}
	return best, best != ""
}

// listItem is one line of a listing: an entry or a subdir (common prefix).
type listItem struct {
	name   string
	subdir bool
	obj    *meta.ListEntry
	ctr    *meta.Container
}

// merge interleaves entries and subdirs in listing order, as Swift returns them.
func merge(items []listItem, reverse bool) []listItem {
	sort.SliceStable(items, func(i, j int) bool {
		if reverse {
			return items[i].name > items[j].name
		}
		return items[i].name < items[j].name
	})
	return items
}

// Wire shapes of JSON listings (Swift's field names).
type (
	jsonObject struct {
		Name         string `json:"name"`
		Hash         string `json:"hash"`
		Bytes        int64  `json:"bytes"`
		ContentType  string `json:"content_type"`
		LastModified string `json:"last_modified"`
		SLOETag      string `json:"slo_etag,omitempty"`
		SymlinkPath  string `json:"symlink_path,omitempty"`
		SymlinkETag  string `json:"symlink_etag,omitempty"`
		SymlinkBytes *int64 `json:"symlink_bytes,omitempty"`
	}
	jsonContainer struct {
		Name         string `json:"name"`
		Count        int64  `json:"count"`
		Bytes        int64  `json:"bytes"`
		LastModified string `json:"last_modified"`
	}
	jsonSubdir struct {
		Subdir string `json:"subdir"`
	}
)

// renderListing writes the body of a listing. kind is "account" or "container", name the
// account or container listed (the XML root's name attribute), account the listed account's
// AUTH_ name (symlinks' paths start there).
func renderListing(format listFormat, kind, name, account string, items []listItem) []byte {
	var b bytes.Buffer
	switch format {
	case formatPlain:
		for _, it := range items {
			b.WriteString(it.name)
			b.WriteByte('\n')
		}
	case formatJSON:
		out := make([]any, 0, len(items))
		for _, it := range items {
			switch {
			case it.subdir:
				out = append(out, jsonSubdir{it.name})
			case it.obj != nil:
				hash, params := parseListingETag(it.obj.ETag)
				o := jsonObject{Name: it.name, Hash: hash, Bytes: it.obj.Size,
					ContentType: it.obj.ContentType, LastModified: swiftwire.ListingTime(it.obj.Timestamp), SLOETag: params["slo_etag"]}
				o.SymlinkPath, o.SymlinkETag, o.SymlinkBytes = symlinkListingFields(params, account)
				out = append(out, o)
			default:
				out = append(out, jsonContainer{Name: it.name, Count: it.ctr.ObjectCount, Bytes: it.ctr.BytesUsed,
					LastModified: swiftwire.ListingTime(it.ctr.Created)})
			}
		}
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // names as they are ("a&b"), as Swift writes them
		enc.Encode(out)          // plain structs of strings and numbers cannot fail
		b.Truncate(b.Len() - 1)  // Encode's newline
	case formatXML:
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
		b.WriteString("<" + kind + ` name="`)
		xmlEscape(&b, name)
		if len(items) == 0 {
			b.WriteString(`" />`) // Swift's serializer closes an empty root element this way
			break
		}
		b.WriteString(`">`)
		for _, it := range items {
			switch {
			case it.subdir:
				b.WriteString(`<subdir name="`)
				xmlEscape(&b, it.name)
				b.WriteString(`"><name>`)
				xmlEscape(&b, it.name)
				b.WriteString("</name></subdir>")
			case it.obj != nil:
				b.WriteString("<object>")
				xmlElem(&b, "name", it.name)
				hash, params := parseListingETag(it.obj.ETag)
				slo := params["slo_etag"]
				xmlElem(&b, "hash", hash)
				xmlElem(&b, "bytes", strconv.FormatInt(it.obj.Size, 10))
				xmlElem(&b, "content_type", it.obj.ContentType)
				xmlElem(&b, "last_modified", swiftwire.ListingTime(it.obj.Timestamp))
				if slo != "" {
					xmlElem(&b, "slo_etag", slo)
				}
				b.WriteString("</object>")
			default:
				b.WriteString("<container>")
				xmlElem(&b, "name", it.name)
				xmlElem(&b, "count", strconv.FormatInt(it.ctr.ObjectCount, 10))
				xmlElem(&b, "bytes", strconv.FormatInt(it.ctr.BytesUsed, 10))
				xmlElem(&b, "last_modified", swiftwire.ListingTime(it.ctr.Created))
				b.WriteString("</container>")
			}
		}
		b.WriteString("</" + kind + ">")
	}
	return b.Bytes()
}

func xmlEscape(b *bytes.Buffer, s string) { xml.EscapeText(b, []byte(s)) }

func xmlElem(b *bytes.Buffer, name, value string) {
	b.WriteString("<" + name + ">")
	xmlEscape(b, value)
	b.WriteString("</" + name + ">")
}

// writeListing answers a listing GET or HEAD. An empty plain-text listing is 204, as in Swift;
// JSON and XML always have a body.
func writeListing(w http.ResponseWriter, r *http.Request, lr listRequest, kind, name, account string, items []listItem) {
	body := renderListing(lr.format, kind, name, account, items)
	hdr := w.Header()
	hdr.Set("Content-Type", lr.contentType+"; charset=utf-8")
	hdr.Set("Accept-Ranges", "bytes")
	if lr.vary {
		hdr.Set("Vary", "Accept") // the format came from Accept: caches must key on it
	}
	status := http.StatusOK
	if len(body) == 0 {
		status = http.StatusNoContent
		hdr.Set("Content-Length", "0")
	} else {
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if r.Method == http.MethodHead {
		// Swift answers HEAD with 204 and no body.
		hdr.Set("Content-Length", "0")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(status)
	w.Write(body)
}

// parseListingETag splits a listing ETag into the hash and its parameters: a static large
// object's slo_etag, a symlink's symlink_target and the rest (see meta.SysListingETag), as
// "hash; key=value; ..." with optionally quoted values.
func parseListingETag(e string) (hash string, params map[string]string) {
	parts := strings.Split(e, ";")
	hash = strings.TrimSpace(parts[0])
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			continue
		}
		if params == nil {
			params = map[string]string{}
		}
		params[k] = v
	}
	return hash, params
}
