package swiftwire

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairn-store/cairn/internal/meta"
)

// ListFormat is the body format of a listing.
type ListFormat int

const (
	FormatPlain ListFormat = iota
	FormatJSON
	FormatXML
)

// ListRequest is a parsed listing query.
type ListRequest struct {
	Opts meta.ListOptions
	// empty: limit=0 asks for no entries (meta.ListOptions would read 0 as the default).
	Empty bool
	// dirOnly: path=P lists the direct children of P only (Swift's old pseudo-directory
	// query), read as prefix P/ with delimiter /: objects, and the subdirectories that have a
	// directory marker object ("P/sub/"), listed as that object.
	DirOnly bool
	// vary: the format came from Accept, so the answer varies with it.
	Vary        bool
	Format      ListFormat
	ContentType string
}

// ParseListing reads a listing's query (prefix, delimiter, marker, end_marker, limit, reverse,
// format) and Accept header, with Swift's rules: a limit above 10000 is 412, a non-numeric one is
// ignored; format= overrides Accept; an Accept that allows none
// of the formats is 406.
func ParseListing(q url.Values, accept string) (ListRequest, error) {
	lr := ListRequest{Opts: meta.ListOptions{
		Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), Marker: q.Get("marker"),
		EndMarker: q.Get("end_marker"), Limit: ListingLimit, Reverse: Truthy(q.Get("reverse")),
	}}
	// Swift 2.30 asks only that each parameter be UTF-8: a delimiter may be several characters
	// long, and a marker may hold a NUL (clients use "name\x00" as "just after name").
	for _, name := range []string{"prefix", "delimiter", "marker", "end_marker", "path"} {
		if !utf8.ValidString(q.Get(name)) {
			return lr, BadRequest("%q parameter not valid UTF-8", name)
		}
	}
	if v := q.Get("limit"); v != "" && IsDigits(v) {
		n, err := strconv.Atoi(v)
		if err != nil || n > ListingLimit {
			return lr, PreconditionFailed("Maximum limit is %d", ListingLimit)
		}
		lr.Opts.Limit = n
		lr.Empty = n == 0
	}
	if p, ok := q["path"]; ok {
		// As Swift: "dir", "dir/" and "dir//" all name the directory "dir/"; "/" is the
		// directory of names that start with a slash.
		prefix := p[0]
		if prefix != "" {
			prefix = strings.TrimRight(prefix, "/") + "/"
		}
		lr.Opts.Prefix, lr.Opts.Delimiter, lr.DirOnly = prefix, "/", true
	}
	lr.Vary = true
	if f := q.Get("format"); f != "" {
		lr.Vary = false
		switch strings.ToLower(f) {
		case "json":
			accept = "application/json"
		case "xml":
			accept = "application/xml"
		default:
			accept = "text/plain"
		}
	}
	ct, ok := Negotiate(accept)
	if !ok {
		return lr, ErrNotAcceptable
	}
	lr.ContentType = ct
	switch ct {
	case "application/json":
		lr.Format = FormatJSON
	case "application/xml", "text/xml":
		lr.Format = FormatXML
	}
	return lr, nil
}

// offered are the listing media types, in Swift's order of preference.
var offered = []string{"text/plain", "application/json", "application/xml", "text/xml"}

// Negotiate picks the listing media type an Accept header prefers (RFC 9110 §12.5.1: highest
// q wins, then the more specific range, then the server's order). No header means text/plain.
func Negotiate(accept string) (string, bool) {
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

// ListItem is one line of a listing: an entry or a subdir (common prefix).
type ListItem struct {
	Name   string
	Subdir bool
	Obj    *meta.ListEntry
	Ctr    *meta.Container
	// VersionID: the entry is a versioned object's link to its current version, this one
	// (Obj has the version's bytes and ETag); JSON lists it as Swift's object versioning does.
	VersionID string
}

// Merge interleaves entries and subdirs in listing order, as Swift returns them.
func Merge(items []ListItem, reverse bool) []ListItem {
	sort.SliceStable(items, func(i, j int) bool {
		if reverse {
			return items[i].Name > items[j].Name
		}
		return items[i].Name < items[j].Name
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
		// VersionSymlink marks a version link (its SymlinkPath names the version).
		VersionSymlink bool `json:"version_symlink,omitempty"`
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

// RenderListing writes the body of a listing. kind is "account" or "container", name the
// account or container listed (the XML root's name attribute), account the listed account's
// AUTH_ name (symlinks' paths start there).
func RenderListing(format ListFormat, kind, name, account string, items []ListItem) []byte {
	var b bytes.Buffer
	switch format {
	case FormatPlain:
		for _, it := range items {
			b.WriteString(it.Name)
			b.WriteByte('\n')
		}
	case FormatJSON:
		out := make([]any, 0, len(items))
		for _, it := range items {
			switch {
			case it.Subdir:
				out = append(out, jsonSubdir{it.Name})
			case it.Obj != nil:
				hash, params := ParseListingETag(it.Obj.ETag)
				o := jsonObject{Name: it.Name, Hash: hash, Bytes: it.Obj.Size,
					ContentType: it.Obj.ContentType, LastModified: ListingTime(it.Obj.ModifiedTimestamp()), SLOETag: params["slo_etag"]}
				o.SymlinkPath, o.SymlinkETag, o.SymlinkBytes = symlinkListingFields(params, account)
				if it.VersionID != "" {
					o.SymlinkPath = PyQuote("/v1/"+account+"/"+name+"/"+it.Name) + "?version-id=" + it.VersionID
					o.VersionSymlink = true
				}
				out = append(out, o)
			default:
				out = append(out, jsonContainer{Name: it.Name, Count: it.Ctr.ObjectCount, Bytes: it.Ctr.BytesUsed,
					LastModified: ListingTime(it.Ctr.Created)})
			}
		}
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // names as they are ("a&b"), as Swift writes them
		enc.Encode(out)          // plain structs of strings and numbers cannot fail
		b.Truncate(b.Len() - 1)  // Encode's newline
	case FormatXML:
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
			case it.Subdir:
				b.WriteString(`<subdir name="`)
				xmlEscape(&b, it.Name)
				b.WriteString(`"><name>`)
				xmlEscape(&b, it.Name)
				b.WriteString("</name></subdir>")
			case it.Obj != nil:
				b.WriteString("<object>")
				XMLElem(&b, "name", it.Name)
				hash, params := ParseListingETag(it.Obj.ETag)
				slo := params["slo_etag"]
				XMLElem(&b, "hash", hash)
				XMLElem(&b, "bytes", strconv.FormatInt(it.Obj.Size, 10))
				XMLElem(&b, "content_type", it.Obj.ContentType)
				XMLElem(&b, "last_modified", ListingTime(it.Obj.ModifiedTimestamp()))
				if slo != "" {
					XMLElem(&b, "slo_etag", slo)
				}
				b.WriteString("</object>")
			default:
				b.WriteString("<container>")
				XMLElem(&b, "name", it.Name)
				XMLElem(&b, "count", strconv.FormatInt(it.Ctr.ObjectCount, 10))
				XMLElem(&b, "bytes", strconv.FormatInt(it.Ctr.BytesUsed, 10))
				XMLElem(&b, "last_modified", ListingTime(it.Ctr.Created))
				b.WriteString("</container>")
			}
		}
		b.WriteString("</" + kind + ">")
	}
	return b.Bytes()
}

func xmlEscape(b *bytes.Buffer, s string) { xml.EscapeText(b, []byte(s)) }

func XMLElem(b *bytes.Buffer, name, value string) {
	b.WriteString("<" + name + ">")
	xmlEscape(b, value)
	b.WriteString("</" + name + ">")
}

// ParseListingETag splits a listing ETag into the hash and its parameters: a static large
// object's slo_etag, a symlink's symlink_target and the rest (see meta.SysListingETag), as
// "hash; key=value; ..." with optionally quoted values.
func ParseListingETag(e string) (hash string, params map[string]string) {
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

// symlinkListingFields are the JSON listing's fields for a symlink, from its listing ETag's
// parameters (symlink_target, symlink_target_account, _etag, _bytes).
func symlinkListingFields(params map[string]string, account string) (path, etag string, bytes *int64) {
	target := params["symlink_target"]
	if target == "" {
		return "", "", nil
	}
	if a := params["symlink_target_account"]; a != "" {
		account = a
	}
	if v := params["symlink_target_bytes"]; v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			bytes = &n
		}
	}
	return "/v1/" + account + "/" + target, params["symlink_target_etag"], bytes
}

// ErrNotAcceptable: a listing's Accept header allows none of the formats (Swift: 406).
var ErrNotAcceptable = errors.New("swiftwire: no acceptable listing format")
