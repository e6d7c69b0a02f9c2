package swiftwire

import (
	"github.com/cairn-store/cairn/internal/meta"

	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func Truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// ErrBadName is Swift's answer to a name that is not UTF-8 or holds NUL.
var ErrBadName = PreconditionFailed("Invalid UTF8 or contains NULL")

// CheckContainerName applies Swift's container name rules. Names starting with NUL are also
// Cairn's reserved containers, which clients must never reach.
func CheckContainerName(name string) error {
	if len(name) > MaxContainerNameLength {
		return BadRequest("Container name length of %d longer than %d", len(name), MaxContainerNameLength).asHTML()
	}
	if strings.Contains(name, "/") {
		return BadRequest("Container name cannot contain slashes")
	}
	if !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return ErrBadName
	}
	return nil
}

// CheckObjectName applies Swift's object name rules (NUL is also refused by S3 multipart's
// bookkeeping, which uses it as a separator).
func CheckObjectName(name string) error {
	if len(name) > MaxObjectNameLength {
		return BadRequest("Object name length of %d longer than %d", len(name), MaxObjectNameLength)
	}
	if !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return ErrBadName
	}
	return nil
}

// MetaUpdate is the metadata a request sets: names lower-cased without the prefix; an empty
// value (X-Remove-*-Meta-Name, or an empty X-*-Meta-Name) removes a name.
type MetaUpdate map[string]string

// ReadMeta collects the X-<kind>-Meta-* (and X-Remove-<kind>-Meta-*) headers of a request and
// applies Swift's limits to them: name length, value length, count and overall size.
func ReadMeta(hdr http.Header, kind string) (MetaUpdate, error) {
	prefix := "X-" + kind + "-Meta-"
	removePrefix := "X-Remove-" + kind + "-Meta-"
	// Swift's messages name the header by its lower-case prefix and the name as sent.
	shown := strings.ToLower(prefix)
	var out MetaUpdate
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
			return nil, BadRequest("Metadata name cannot be empty")
		}
		count++
		size += len(name) + len(value)
		if len(name) > MaxMetaNameLength {
			return nil, BadRequest("Metadata name too long: %s%s", shown, name)
		}
		if len(value) > MaxMetaValueLength {
			return nil, BadRequest("Metadata value longer than %d: %s%s", MaxMetaValueLength, shown, name)
		}
		if count > MaxMetaCount {
			return nil, BadRequest("Too many metadata items; max %d", MaxMetaCount)
		}
		if size > MaxMetaOverallSize {
			return nil, BadRequest("Total metadata too large; max %d", MaxMetaOverallSize)
		}
		if out == nil {
			out = MetaUpdate{}
		}
		out[strings.ToLower(name)] = value
	}
	return out, nil
}

// CheckMergedMeta applies Swift's count and overall-size limits to the user metadata an account
// or container would have after an update: stored holds it under prefix (with other settings
// beside it, which do not count), changes are the update's names and values ("" removes). Swift's
// account and container servers check the merged metadata the same way, so a POST that is
// within the limits on its own can still be refused.
func CheckMergedMeta(stored map[string]string, prefix string, changes MetaUpdate) error {
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
	if len(merged) > MaxMetaCount {
		return BadRequest("Too many metadata items; max %d", MaxMetaCount)
	}
	if size > MaxMetaOverallSize {
		return BadRequest("Total metadata too large; max %d", MaxMetaOverallSize)
	}
	return nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return "", false
}

// MetaHeader is the response header of a metadata name: canonical case, as Swift's WSGI
// layer title-cases the names it stores.
func MetaHeader(kind, name string) string {
	return http.CanonicalHeaderKey("X-" + kind + "-Meta-" + name)
}

// StoredHeaders are the content headers that round-trip with an object.
var StoredHeaders = meta.StoredHeaders

// MaxDeleteAt is the latest expiry Swift keeps (its timestamps have ten digits).
const MaxDeleteAt = 9999999999

// ReadDeleteAt reads X-Delete-At / X-Delete-After: the Unix second the object expires, 0 for
// none. Times in the past are refused, as Swift does.
func ReadDeleteAt(hdr http.Header, now time.Time) (int64, error) {
	if v := hdr.Get("X-Delete-After"); v != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, BadRequest("Non-integer X-Delete-After")
		}
		if n < 0 {
			return 0, BadRequest("X-Delete-After in past")
		}
		return min(now.Unix()+n, MaxDeleteAt), nil
	}
	if v := hdr.Get("X-Delete-At"); v != "" {
		// Swift reads the value as an integer of any size and clamps it to ten digits, so
		// that a time past 2286 (or a hundred-digit number) means "as late as can be".
		digits := strings.TrimSpace(v)
		neg := strings.HasPrefix(digits, "-")
		digits = strings.TrimLeft(digits, "+-")
		if digits == "" || len(digits) < len(strings.TrimSpace(v))-1 || !IsDigits(digits) {
			return 0, BadRequest("Non-integer X-Delete-At")
		}
		at, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || at > MaxDeleteAt {
			at = MaxDeleteAt
		}
		if neg {
			at = 0
		}
		if at <= now.Unix() {
			return 0, BadRequest("X-Delete-At in past")
		}
		return at, nil
	}
	return 0, nil
}

// pythonTypes are the extensions whose type in Go's built-in table differs from the one in
// Python's (which Swift uses); Go's built-in table wins over the system's mime.types, Python's
// does not, so these are pinned to what Swift answers on a Debian host.
var pythonTypes = map[string]string{
	".wav": "audio/x-wav",
}

// GuessContentType guesses from the name's extension, as Swift does with Python's mimetypes,
// falling back to application/octet-stream. Parameters Go adds (charset) are dropped, because
// Swift's guess has none.
func GuessContentType(name string) string {
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
