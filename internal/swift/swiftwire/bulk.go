package swiftwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// BulkBody formats the answer of a bulk delete or upload (Swift's bulk middleware) for the
// client's Accept header: the counters in fields and the failed paths with their statuses.
func BulkBody(accept string, root string, fields map[string]any, failed [][2]string) (body []byte, ctype string) {
	keys := slices.Sorted(maps.Keys(fields))
	switch ct, _ := Negotiate(accept); ct {
	case "application/json":
		errs := make([][]string, 0, len(failed))
		for _, f := range failed {
			errs = append(errs, []string{f[0], f[1]})
		}
		out := maps.Clone(fields)
		out["Errors"] = errs
		body, _ = json.Marshal(out)
		ctype = "application/json; charset=utf-8"
	case "application/xml", "text/xml":
		var b bytes.Buffer
		fmt.Fprintf(&b, "<%s>\n", root)
		for _, k := range keys {
			XMLElem(&b, strings.ToLower(strings.ReplaceAll(k, " ", "_")), fmt.Sprint(fields[k]))
			b.WriteByte('\n')
		}
		b.WriteString("<errors>\n")
		for _, f := range failed {
			b.WriteString("<object>")
			XMLElem(&b, "name", f[0])
			XMLElem(&b, "status", f[1])
			b.WriteString("</object>\n")
		}
		fmt.Fprintf(&b, "</errors>\n</%s>\n", root)
		body = b.Bytes()
		ctype = ct + "; charset=utf-8"
	default:
		var sb strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&sb, "%s: %v\n", k, fields[k])
		}
		sb.WriteString("Errors:\n")
		for _, f := range failed {
			fmt.Fprintf(&sb, "%s, %s\n", f[0], f[1])
		}
		body = []byte(sb.String())
		ctype = "text/plain"
	}
	return body, ctype
}

// PaxHeader maps a tar PAX record to the header Swift derives from it: extended attributes
// user.mime_type and user.meta.* (as GNU tar and bsdtar record them).
func PaxHeader(key string) string {
	for _, p := range []string{"SCHILY.xattr.user.", "LIBARCHIVE.xattr.user."} {
		rest, ok := strings.CutPrefix(key, p)
		if !ok {
			continue
		}
		if rest == "mime_type" {
			return "Content-Type"
		}
		if name, ok := strings.CutPrefix(rest, "meta."); ok && name != "" {
			return "X-Object-Meta-" + name
		}
	}
	return ""
}
