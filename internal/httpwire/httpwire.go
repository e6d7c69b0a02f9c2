// Package httpwire owns the details of HTTP requests that both front ends read the same way:
// the dates clients send in If-Modified-Since and its kin, entity-tag lists, and the lenient
// percent-decoding of names in headers, and the error of a request body that stopped arriving
// (ErrBodyTimeout). The front ends keep their own precedence and errors (S3's and Swift's
// differ); this package only parses and compares.
package httpwire

import (
	"net/http"
	"strings"
	"time"
)

// dateLayouts are the forms accepted beyond net/http's three (RFC 1123 with GMT, RFC 850, ANSI
// C): Python's email.utils.formatdate writes a numeric zone ("... 15:30:52 -0000"), and some
// clients send another zone name ("UTC"). Swift's and S3's servers accept both.
var dateLayouts = []string{time.RFC1123Z, time.RFC1123, "Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST"}

// ParseDate parses an HTTP date header value. ok is false for an empty or unparseable value,
// which callers ignore, as HTTP says a recipient must.
func ParseDate(s string) (t time.Time, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	if t, err := http.ParseTime(s); err == nil {
		return t, true
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// ETagListMatches reports whether a comma-separated If-Match/If-None-Match list names etag or is
// "*". Quotes and weak prefixes are ignored on both sides: Swift sends its ETags bare, S3 quoted.
func ETagListMatches(list, etag string) bool {
	etag = TrimETag(etag)
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "*" || TrimETag(e) == etag {
			return true
		}
	}
	return false
}

// ETagList splits an If-Match/If-None-Match list into bare entity tags ("*" kept as is), the
// form meta.Precondition compares.
func ETagList(list string) []string {
	var out []string
	for _, e := range strings.Split(list, ",") {
		if e = strings.TrimSpace(e); e == "*" {
			out = append(out, e)
		} else if e != "" {
			out = append(out, TrimETag(e))
		}
	}
	return out
}

// TrimETag strips the weak prefix and quotes from an entity tag.
func TrimETag(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "W/")
	return strings.Trim(s, `"`)
}

// UnescapeLenient decodes %XX escapes and keeps a '%' that does not start one as it is, as
// Python's urllib.parse.unquote does. Clients are meant to URL-encode a copy source
// (x-amz-copy-source, X-Copy-From) or a DLO prefix, but many send a name as it is, '%' and all
// ("50% off.txt"); S3 and Swift accept both, and so must we.
func UnescapeLenient(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
