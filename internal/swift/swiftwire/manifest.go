package swiftwire

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
)

// ManifestEntry is one validated entry of a manifest PUT body: an object-backed segment (path, with
// optional etag, size_bytes and range) or an inline data segment.
type ManifestEntry struct {
	Path      string
	ETag      *string
	SizeBytes *int64
	Range     *meta.Range // nil: the whole segment object
	Data      []byte      // not nil: an inline data segment
}

// ParseManifest reads a manifest PUT body, Swift's JSON list of segments, checked as Swift's
// parse_and_validate_input does; self is the manifest's own "container/object". Every problem
// found is reported, one "Index N: ..." line each.
func ParseManifest(body []byte, self string) ([]ManifestEntry, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		var v any
		if json.Unmarshal(body, &v) == nil {
			return nil, BadRequest("Manifest must be a list.\n")
		}
		return nil, BadRequest("Manifest must be valid JSON.\n")
	}
	if raw == nil {
		return nil, BadRequest("Manifest must be a list.\n")
	}
	var problems []string
	out := make([]ManifestEntry, 0, len(raw))
	for i, m := range raw {
		e, problem := parseEntry(m, i, i == len(raw)-1, self)
		if problem != "" {
			problems = append(problems, fmt.Sprintf("Index %d: %s", i, problem))
			continue
		}
		out = append(out, e)
	}
	if len(raw) > 0 && !slices.ContainsFunc(raw, func(m json.RawMessage) bool {
		var keys map[string]json.RawMessage
		if json.Unmarshal(m, &keys) != nil {
			return true
		}
		_, data := keys["data"]
		return !data
	}) {
		problems = append(problems, "Inline data segments require at least one object-backed segment.")
	}
	if len(problems) > 0 {
		return nil, BadRequest("%s", strings.Join(problems, "\n")+"\n")
	}
	return out, nil
}

// parseEntry checks one manifest entry; a non-empty problem is its error text.
func parseEntry(m json.RawMessage, i int, last bool, self string) (ManifestEntry, string) {
	var e ManifestEntry
	var keys map[string]json.RawMessage
	if json.Unmarshal(m, &keys) != nil || keys == nil {
		return e, "not a JSON object"
	}
	kind := ""
	for _, k := range []string{"data", "path"} { // Swift's SLO_KEYS, in its order
		if _, ok := keys[k]; ok {
			kind = k
			break
		}
	}
	if kind == "" {
		return e, `expected keys to include one of 'data' or 'path'`
	}
	allowed := []string{"data"}
	if kind == "path" {
		allowed = []string{"path", "range", "etag", "size_bytes"}
	}
	var extra []string
	for k := range keys {
		if !slices.Contains(allowed, k) {
			q, _ := json.Marshal(k)
			extra = append(extra, PyJSONString(string(q)))
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return e, "extraneous keys " + strings.Join(extra, ", ")
	}
	if kind == "data" {
		var s string
		if json.Unmarshal(keys["data"], &s) != nil {
			return e, "data must be valid base64"
		}
		data, ok := StrictB64(s)
		if !ok {
			return e, "data must be valid base64"
		}
		if len(data) < 1 {
			return e, "too small; each segment must be at least 1 byte."
		}
		e.Data = data
		return e, ""
	}
	if json.Unmarshal(keys["path"], &e.Path) != nil {
		return e, `"path" must be a string`
	}
	if v, ok := keys["etag"]; ok && string(v) != "null" {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return e, `"etag" must be a string or null (if provided)`
		}
		e.ETag = &s
	}
	if !strings.Contains(strings.Trim(e.Path, "/"), "/") {
		return e, "path does not refer to an object. Path must be of the form /container/object."
	}
	if v, ok := keys["size_bytes"]; ok && string(v) != "null" {
		n, ok := pyInt(v)
		if !ok {
			return e, "invalid size_bytes"
		}
		if n < 1 && !last {
			return e, "too small; each segment must be at least 1 byte."
		}
		e.SizeBytes = &n
	}
	if strings.TrimLeft(e.Path, "/") == self {
		return e, "manifest must not include itself as a segment"
	}
	if v, ok := keys["range"]; ok && !falsy(v) {
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		rs, err := ParseSegmentRange(s)
		if err != nil {
			return e, "invalid range"
		}
		if len(rs) > 1 {
			return e, "multiple ranges (only one allowed)"
		}
		if e.SizeBytes != nil {
			if _, _, err := rs[0].Resolve(*e.SizeBytes); err != nil {
				return e, "unsatisfiable range"
			}
		}
		e.Range = &rs[0]
	}
	return e, ""
}

// falsy reports whether a JSON value is false in Python's sense (Swift tests seg_dict.get).
func falsy(v json.RawMessage) bool {
	switch strings.TrimSpace(string(v)) {
	case "null", "false", `""`, "0", "[]", "{}":
		return true
	}
	return false
}

// pyInt converts a size_bytes value as Python's int() does: an integer, a float (truncated),
// a boolean, or a string holding a decimal integer.
func pyInt(v json.RawMessage) (int64, bool) {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return 0, false
	}
	switch x := x.(type) {
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1<<62 {
			return 0, false
		}
		return int64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// ParseSegmentRange parses a segment's "range" as Swift's Range("bytes=" + s) does: spaces are
// ignored, ranges are comma-separated, each "a-b", "a-" or "-n".
func ParseSegmentRange(s string) ([]meta.Range, error) {
	s = strings.ReplaceAll(s, " ", "")
	var out []meta.Range
	for _, part := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(part, "-")
		if !ok || (a == "" && b == "") {
			return nil, fmt.Errorf("range %q: %w", s, meta.ErrInvalidRange)
		}
		r := meta.Range{End: -1}
		if a != "" {
			n, err := strconv.ParseInt(a, 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("range %q: %w", s, meta.ErrInvalidRange)
			}
			r.Start = n
		}
		if b != "" {
			if strings.Trim(b, "0123456789") != "" || len(b) > 18 {
				return nil, fmt.Errorf("range %q: %w", s, meta.ErrInvalidRange)
			}
			n, _ := strconv.ParseInt(b, 10, 64)
			switch {
			case a == "":
				r.Suffix = n
				if n == 0 {
					r = meta.Range{Start: 1, End: 0} // "-0" selects nothing
				}
			case n < r.Start:
				return nil, fmt.Errorf("range %q: %w", s, meta.ErrInvalidRange)
			default:
				r.End = n
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// StrictB64 decodes standard base64 as Swift's strict_b64decode does: only the base64
// alphabet, with '=' padding that may be longer than needed but not missing.
func StrictB64(s string) ([]byte, bool) {
	core := strings.Trim(s, "=")
	if strings.Trim(core, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") != "" {
		return nil, false
	}
	if strings.HasPrefix(s, "=") && core != "" {
		return nil, false
	}
	pad := len(s) - len(strings.TrimRight(s, "="))
	if len(core)%4 == 1 || pad < (4-len(core)%4)%4 {
		return nil, false
	}
	b, err := base64.RawStdEncoding.DecodeString(core) // not Strict: spare bits ignored, as Python
	return b, err == nil
}

// PyJSONString returns Go's JSON string as Python's json.dumps writes it (non-ASCII escaped).
func PyJSONString(q string) string {
	var sb strings.Builder
	for _, r := range q {
		switch {
		case r < 0x80:
			sb.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&sb, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(&sb, `\u%04x`, r)
		}
	}
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(sb.String())
}

// RangeText is a ranged segment's range as Swift stores it: "first-last".
func RangeText(s meta.Segment) string {
	return strconv.FormatInt(s.Offset, 10) + "-" + strconv.FormatInt(s.Offset+s.Length-1, 10)
}

// SLOETag is Swift's ETag of a static large object: the MD5 of its segments' contributions,
// the segment's ETag, "etag:first-last;" for a ranged one, the MD5 of an inline one's bytes.
func SLOETag(segs []meta.Segment) string {
	h := md5.New()
	for _, s := range segs {
		switch {
		case s.Data != nil:
			io.WriteString(h, MD5Hex(s.Data))
		case s.Ranged:
			io.WriteString(h, s.ETag+":"+RangeText(s)+";")
		default:
			io.WriteString(h, s.ETag)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ManifestJSON is a static large object's manifest as Swift stores it (and answers
// ?multipart-manifest=get), written as Python's json.dumps does, so that its MD5 (the
// X-Manifest-Etag) is Swift's.
func ManifestJSON(segs []meta.Segment) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range segs {
		if i > 0 {
			b.WriteString(", ")
		}
		if s.Data != nil {
			b.WriteString(`{"data": ` + PyJSON(base64.StdEncoding.EncodeToString(s.Data)) + "}")
			continue
		}
		fmt.Fprintf(&b, `{"name": %s, "bytes": %d, "hash": %s, "content_type": %s, "last_modified": %s`,
			PyJSON("/"+s.Container+"/"+s.Object), s.Size, PyJSON(s.ETag), PyJSON(s.ContentType),
			PyJSON(LastModified(s.Timestamp).UTC().Format("2006-01-02T15:04:05.000000")))
		if s.Ranged {
			b.WriteString(`, "range": ` + PyJSON(RangeText(s)))
		}
		if s.SubManifest {
			b.WriteString(`, "sub_slo": true`)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// RawManifestJSON is the manifest in the form PUT accepts (format=raw), keys sorted as Swift's.
func RawManifestJSON(segs []meta.Segment) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range segs {
		if i > 0 {
			b.WriteString(", ")
		}
		if s.Data != nil {
			b.WriteString(`{"data": ` + PyJSON(base64.StdEncoding.EncodeToString(s.Data)) + "}")
			continue
		}
		b.WriteString(`{"etag": ` + PyJSON(s.ETag) + `, "path": ` + PyJSON("/"+s.Container+"/"+s.Object))
		if s.Ranged {
			b.WriteString(`, "range": ` + PyJSON(RangeText(s)))
		}
		fmt.Fprintf(&b, `, "size_bytes": %d}`, s.Size)
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// PyJSON is a JSON string as Python's json.dumps writes it.
func PyJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x7f && r <= 0xffff):
			if r == 0x7f {
				b.WriteRune(r)
				continue
			}
			fmt.Fprintf(&b, `\u%04x`, r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func MD5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}
