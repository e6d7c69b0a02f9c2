package swift

import (
	"context"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// checkRequest applies the checks every /v1 request gets: header sizes and the names in its
// path.
func checkRequest(r *http.Request, rq *request) error {
	for k, vs := range r.Header {
		for _, v := range vs {
			if len(v) > swiftwire.MaxHeaderSize {
				return errBadRequest.withText("Header value too long: %s", truncate(k, swiftwire.MaxMetaNameLength))
			}
		}
	}
	if len(rq.account) > swiftwire.MaxAccountNameLength {
		return errBadRequest.withText("Account name length of %d longer than %d", len(rq.account), swiftwire.MaxAccountNameLength).asHTML()
	}
	if rq.container != "" {
		if err := checkContainerName(rq.container); err != nil {
			return err
		}
	}
	if rq.object != "" {
		if err := checkObjectName(rq.object); err != nil {
			return err
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// errBadName is Swift's answer to a name that is not UTF-8 or holds NUL.
var errBadName = errPreconditionFailed.withText("Invalid UTF8 or contains NULL")

// checkContainerName applies Swift's container name rules. Names starting with NUL are also
// Cairn's reserved containers, which clients must never reach.
func checkContainerName(name string) error {
	if len(name) > swiftwire.MaxContainerNameLength {
		return errBadRequest.withText("Container name length of %d longer than %d", len(name), swiftwire.MaxContainerNameLength).asHTML()
	}
	if strings.Contains(name, "/") {
		return errBadRequest.withText("Container name cannot contain slashes")
	}
	if !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return errBadName
	}
	return nil
}

// checkObjectName applies Swift's object name rules (NUL is also refused by S3 multipart's
// bookkeeping, which uses it as a separator).
func checkObjectName(name string) error {
	if len(name) > swiftwire.MaxObjectNameLength {
		return errBadRequest.withText("Object name length of %d longer than %d", len(name), swiftwire.MaxObjectNameLength)
	}
	if !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return errBadName
	}
	return nil
}

// metaUpdate is the metadata a request sets: names lower-cased without the prefix; an empty
// value (X-Remove-*-Meta-Name, or an empty X-*-Meta-Name) removes a name.
type metaUpdate map[string]string

// readMeta collects the X-<kind>-Meta-* (and X-Remove-<kind>-Meta-*) headers of a request and
// applies Swift's limits to them: name length, value length, count and overall size.
func readMeta(hdr http.Header, kind string) (metaUpdate, error) {
	prefix := "X-" + kind + "-Meta-"
	removePrefix := "X-Remove-" + kind + "-Meta-"
	// Swift's messages name the header by its lower-case prefix and the name as sent.
	shown := strings.ToLower(prefix)
	var out metaUpdate
	count, size := 0, 0
	for k, vs := range hdr {
		name, value := "", strings.Join(vs, ",")
		if n, ok := cutPrefixFold(k, prefix); ok {
			name = n
		} else if n, ok := cutPrefixFold(k, removePrefix); ok {
			name, value = n, ""
		} else {
			continue
		}
		if name == "" {
			return nil, errBadRequest.withText("Metadata name cannot be empty")
		}
		count++
		size += len(name) + len(value)
		if len(name) > swiftwire.MaxMetaNameLength {
			return nil, errBadRequest.withText("Metadata name too long: %s%s", shown, name)
		}
		if len(value) > swiftwire.MaxMetaValueLength {
			return nil, errBadRequest.withText("Metadata value longer than %d: %s%s", swiftwire.MaxMetaValueLength, shown, name)
		}
		if count > swiftwire.MaxMetaCount {
			return nil, errBadRequest.withText("Too many metadata items; max %d", swiftwire.MaxMetaCount)
		}
		if size > swiftwire.MaxMetaOverallSize {
			return nil, errBadRequest.withText("Total metadata too large; max %d", swiftwire.MaxMetaOverallSize)
		}
		if out == nil {
			out = metaUpdate{}
		}
		out[strings.ToLower(name)] = value
	}
	return out, nil
}

// checkMergedMeta applies Swift's count and overall-size limits to the user metadata an account
// or container would have after an update: stored holds it under prefix (with other settings
// beside it, which do not count), changes are the update's names and values ("" removes). Swift's
// account and container servers check the merged metadata the same way, so a POST that is
// within the limits on its own can still be refused.
func checkMergedMeta(stored map[string]string, prefix string, changes metaUpdate) error {
	merged := map[string]string{}
	for k, v := range stored {
		if name, ok := strings.CutPrefix(k, prefix); ok && v != "" {
			merged[name] = v
		}
	}
	for k, v := range changes {
		if v == "" {
			delete(merged, k)
		} else {
			merged[k] = v
		}
	}
	size := 0
	for k, v := range merged {
		size += len(k) + len(v)
	}
	if len(merged) > swiftwire.MaxMetaCount {
		return errBadRequest.withText("Too many metadata items; max %d", swiftwire.MaxMetaCount)
	}
	if size > swiftwire.MaxMetaOverallSize {
		return errBadRequest.withText("Total metadata too large; max %d", swiftwire.MaxMetaOverallSize)
	}
	return nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return "", false
}

// metaHeader is the response header of a metadata name: canonical case, as Swift's WSGI
// layer title-cases the names it stores.
func metaHeader(kind, name string) string {
	return http.CanonicalHeaderKey("X-" + kind + "-Meta-" + name)
}

// storedHeaders are the content headers that round-trip with an object (those of meta.Object,
// shared with S3).
var storedHeaders = []string{"Content-Encoding", "Content-Disposition", "Content-Language", "Cache-Control", "Expires", "X-Robots-Tag"}

// maxDeleteAt is the latest expiry Swift keeps (its timestamps have ten digits).
const maxDeleteAt = 9999999999

// sysDeleteAt is the SysMeta key of an object's expiry (Unix seconds), X-Delete-At.
const sysDeleteAt = meta.SysDeleteAt

// readDeleteAt reads X-Delete-At / X-Delete-After: the Unix second the object expires, 0 for
// none. Times in the past are refused, as Swift does.
func readDeleteAt(hdr http.Header, now time.Time) (int64, error) {
	if v := hdr.Get("X-Delete-After"); v != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, errBadRequest.withText("Non-integer X-Delete-After")
		}
		if n < 0 {
			return 0, errBadRequest.withText("X-Delete-After in past")
		}
		return min(now.Unix()+n, maxDeleteAt), nil
	}
	if v := hdr.Get("X-Delete-At"); v != "" {
		// Swift reads the value as an integer of any size and clamps it to ten digits, so
		// that a time past 2286 (or a hundred-digit number) means "as late as can be".
		digits := strings.TrimSpace(v)
		neg := strings.HasPrefix(digits, "-")
		digits = strings.TrimLeft(digits, "+-")
		if digits == "" || len(digits) < len(strings.TrimSpace(v))-1 || !swiftwire.IsDigits(digits) {
			return 0, errBadRequest.withText("Non-integer X-Delete-At")
		}
		at, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || at > maxDeleteAt {
			at = maxDeleteAt
		}
		if neg {
			at = 0
		}
		if at <= now.Unix() {
			return 0, errBadRequest.withText("X-Delete-At in past")
		}
		return at, nil
	}
	return 0, nil
}

// deleteAt returns an object's expiry (0: none).
func deleteAt(obj *meta.Object) int64 {
	n, _ := strconv.ParseInt(obj.SysMeta[sysDeleteAt], 10, 64)
	return n
}

// queueExpiry records an object's expiry in the proxy's expiry queue before the write that
// sets it, so that an acknowledged expiry is always carried out by the expirer.
func (h *Handler) queueExpiry(ctx context.Context, name meta.ObjectName, sys map[string]string) error {
	at, _ := strconv.ParseInt(sys[sysDeleteAt], 10, 64)
	if at <= 0 {
		return nil
	}
	return h.proxy.QueueExpiry(ctx, name, at)
}

// expired reports whether an object's X-Delete-At has passed: Swift answers 404 for it even
// before the expirer removes it.
func expired(obj *meta.Object, now time.Time) bool {
	at := deleteAt(obj)
	return at > 0 && now.Unix() >= at
}

// objectMetaFromRequest reads what a PUT (or a POST, which replaces it) gives an object:
// content type, content headers, user metadata and expiry.
func objectMetaFromRequest(hdr http.Header, objectName string, now time.Time) (meta.Object, error) {
	var obj meta.Object
	um, err := readMeta(hdr, "Object")
	if err != nil {
		return obj, err
	}
	for k, v := range um {
		// An empty value is kept (Swift answers it back as an empty header); only
		// X-Remove-Object-Meta-* stores nothing.
		if v == "" && len(hdr.Values("X-Object-Meta-"+k)) == 0 {
			continue
		}
		if obj.UserMeta == nil {
			obj.UserMeta = map[string]string{}
		}
		obj.UserMeta[k] = v
	}
	for _, k := range storedHeaders {
		if v := hdr.Get(k); v != "" {
			if obj.Headers == nil {
				obj.Headers = map[string]string{}
			}
			obj.Headers[k] = v
		}
	}
	obj.ContentType = hdr.Get("Content-Type")
	if obj.ContentType == "" || swiftwire.Truthy(hdr.Get("X-Detect-Content-Type")) {
		obj.ContentType = guessContentType(objectName)
	}
	at, err := readDeleteAt(hdr, now)
	if err != nil {
		return obj, err
	}
	if at > 0 {
		obj.SysMeta = map[string]string{sysDeleteAt: strconv.FormatInt(at, 10)}
	}
	if err := readDLOHeader(hdr, &obj); err != nil {
		return obj, err
	}
	return obj, nil
}

// pythonTypes are the extensions whose type in Go's built-in table differs from the one in
// Python's (which Swift uses); Go's built-in table wins over the system's mime.types, Python's
// does not, so these are pinned to what Swift answers on a Debian host.
var pythonTypes = map[string]string{
	".wav": "audio/x-wav",
}

// guessContentType guesses from the name's extension, as Swift does with Python's mimetypes,
// falling back to application/octet-stream. Parameters Go adds (charset) are dropped, because
// Swift's guess has none.
func guessContentType(name string) string {
	ext := path.Ext(name)
	if t, ok := pythonTypes[strings.ToLower(ext)]; ok {
		return t
	}
	t := mime.TypeByExtension(ext)
	if t == "" {
		return "application/octet-stream"
	}
	t, _, _ = strings.Cut(t, ";")
	return t
}
