// Package backend is the node protocol: OpenStack Swift's backend API between proxies and
// storage nodes (/<device>/<partition>/<account>[/<container>[/<object>]], X-Timestamp,
// X-Backend-* headers, metadata footers), spoken over HTTP. It owns the wire format (paths,
// timestamps, metadata headers, listings, the status of each error), the HTTP client that
// implements nodeclient.Client for a remote node, and the handler that serves a
// nodeclient.Client (a storage node) over HTTP. Requests carry an HMAC of the cluster secret:
// Swift trusts its backend network, Cairn does not. What Swift's servers lack is carried in
// X-Backend-Cairn-* headers and X-Object-Sysmeta-Cairn-* metadata, which Swift's servers
// ignore or store as they are, so that a Cairn proxy also works over Swift's storage servers.
package backend

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// ErrBadRequest reports a request that does not follow the node protocol.
var ErrBadRequest = errors.New("backend: bad request")

// ErrUnauthorized reports a request without a valid cluster signature.
var ErrUnauthorized = errors.New("backend: request not signed with the cluster secret")

// Headers of the protocol. Swift's own first, then Cairn's extensions.
const (
	hdrTimestamp       = "X-Timestamp"
	hdrBackendTS       = "X-Backend-Timestamp"
	hdrFooter          = "X-Backend-Obj-Metadata-Footer"
	hdrMimeBoundary    = "X-Backend-Obj-Multipart-Mime-Boundary"
	hdrObjLength       = "X-Backend-Obj-Content-Length"
	hdrIfDeleteAt      = "X-If-Delete-At"
	hdrContainerHost   = "X-Container-Host"
	hdrContainerDevice = "X-Container-Device"
	hdrContainerPart   = "X-Container-Partition"
	hdrAccountHost     = "X-Account-Host"
	hdrAccountDevice   = "X-Account-Device"
	hdrAccountPart     = "X-Account-Partition"
	// The account row a container server sends its account server (Swift's account_update
	// and container-updater): PUT /<dev>/<part>/<account>/<container> with these.
	hdrPutTimestamp    = "X-Put-Timestamp"
	hdrDeleteTimestamp = "X-Delete-Timestamp"
	hdrObjectCount     = "X-Object-Count"
	hdrBytesUsed       = "X-Bytes-Used"
	hdrPolicyIndex     = "X-Backend-Storage-Policy-Index"
	hdrOverrideDeleted = "X-Account-Override-Deleted"
	objMetaPrefix      = "X-Object-Meta-"
	objSysPrefix       = "X-Object-Sysmeta-Cairn-"
	// objPostedPrefix carries the system metadata POSTs change, to Swift's object servers,
	// which keep X-Object-Sysmeta-* as the PUT wrote it and replace this with each POST.
	objPostedPrefix    = "X-Object-Transient-Sysmeta-Cairn-"
	containerSysPrefix = "X-Container-Sysmeta-Cairn-"
	accountSysPrefix   = "X-Account-Sysmeta-Cairn-"

	hdrAuth        = "X-Backend-Cairn-Auth"
	hdrNode        = "X-Backend-Cairn-Node" // on every answer of a Cairn node
	hdrError       = "X-Backend-Cairn-Error"
	hdrBrief       = "X-Backend-Cairn-Brief"
	hdrIfMatch     = "X-Backend-Cairn-If-Match"
	hdrIfTimestamp = "X-Backend-Cairn-If-Timestamp"
	// hdrDecidedGen carries nodeclient.PutOptions.DecidedGen (and DeleteOptions').
	hdrDecidedGen = "X-Backend-Cairn-Decided-Gen"
	// hdrUndecided carries nodeclient.PutOptions.Undecided (and DeleteOptions', PostOptions').
	hdrUndecided = "X-Backend-Cairn-Undecided"
	hdrExpiredAt = "X-Backend-Cairn-Expired-At"
	// hdrLease asks on a GET whether the node may answer alone under its read lease
	// (nodeclient.WithLeaseRead), and answers "alone" when it did.
	hdrLease = "X-Backend-Cairn-Lease"
	// hdrRings carries nodeclient.WithRings: the placement ids of the proxy's rings.
	hdrRings     = "X-Backend-Cairn-Rings"
	hdrTruncated = "X-Backend-Cairn-Truncated"
	// hdrRow marks a row update on the port that serves the object, container and account
	// services alike (Swift tells them apart by port instead): "object" for a container
	// server's object row (an object path), "container" for an account server's container row
	// (a container path, which would otherwise be a container create).
	hdrRow = "X-Backend-Cairn-Row"
	// hdrModified is an object row's Last-Modified when it is not the row's timestamp
	// (meta.ListEntry.Modified).
	hdrModified = "X-Backend-Cairn-Modified"
	// hdrManifest marks a manifest object: its stored body is its segment list in JSON, and the
	// value is "SEGMENTS SIZE" (the summary a brief HEAD needs).
	hdrManifest = objSysPrefix + "Manifest"
	// resultType is the content type of the JSON answers Cairn's nodes add to writes (the
	// version a write replaced); Swift's servers answer plain text, which the client ignores.
	resultType = "application/x-cairn-result+json"
)

// Path is a parsed node request path.
type Path struct {
	Device    string
	Part      uint32
	Account   string
	Container string // "" for an account request
	Object    string // "" for an account or container request
}

// String returns the path escaped for a request line.
func (p Path) String() string {
	var b strings.Builder
	b.WriteByte('/')
	b.WriteString(url.PathEscape(p.Device))
	b.WriteByte('/')
	b.WriteString(strconv.FormatUint(uint64(p.Part), 10))
	b.WriteByte('/')
	b.WriteString(url.PathEscape(p.Account))
	if p.Container != "" {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p.Container))
		if p.Object != "" {
			b.WriteByte('/')
			// Object names keep their slashes, as Swift's paths do.
			b.WriteString(strings.ReplaceAll(url.PathEscape(p.Object), "%2F", "/"))
		}
	}
	return b.String()
}

// ParsePath parses an escaped request path of the node protocol.
func ParsePath(escaped string) (Path, error) {
	rest, ok := strings.CutPrefix(escaped, "/")
	if !ok {
		return Path{}, fmt.Errorf("%w: path %q does not start with /", ErrBadRequest, escaped)
	}
	parts := strings.SplitN(rest, "/", 5)
	if len(parts) < 3 {
		return Path{}, fmt.Errorf("%w: path %q names no account", ErrBadRequest, escaped)
	}
	var p Path
	var err error
	unescape := func(s, what string) string {
		if err != nil {
			return ""
		}
		var u string
		u, err = url.PathUnescape(s)
		if err == nil && u == "" {
			err = fmt.Errorf("empty %s", what)
		}
		if err == nil && strings.ContainsRune(u, '/') && what != "object" {
			err = fmt.Errorf("%s %q holds a slash", what, u)
		}
		return u
	}
	p.Device = unescape(parts[0], "device")
	part := unescape(parts[1], "partition")
	p.Account = unescape(parts[2], "account")
	if len(parts) > 3 {
		p.Container = unescape(parts[3], "container")
	}
	if len(parts) > 4 {
		p.Object = unescape(parts[4], "object")
	}
	if err != nil {
		return Path{}, fmt.Errorf("%w: path %q: %v", ErrBadRequest, escaped, err)
	}
	n, perr := strconv.ParseUint(part, 10, 32)
	if perr != nil {
		return Path{}, fmt.Errorf("%w: partition %q", ErrBadRequest, part)
	}
	p.Part = uint32(n)
	if p.Device == "." || p.Device == ".." {
		return Path{}, fmt.Errorf("%w: device %q", ErrBadRequest, p.Device)
	}
	return p, nil
}

// FormatTimestamp writes a timestamp as Swift does (seconds with five decimals), with the
// nanoseconds below Swift's 10 µs in its offset field ("_" and 16 hex digits), so that Cairn's
// timestamps cross Swift's servers exactly and in order.
func FormatTimestamp(ts meta.Timestamp) string {
	if ts < 0 {
		ts = 0
	}
	units, rest := int64(ts)/10_000, int64(ts)%10_000
	s := fmt.Sprintf("%010d.%05d", units/100_000, units%100_000)
	if rest != 0 {
		s += fmt.Sprintf("_%016x", rest)
	}
	return s
}

// maxTimestampSeconds keeps a parsed timestamp within meta.Timestamp's nanoseconds (the year
// 2262); Swift's timestamps have ten digits of seconds, which stay far below it.
const maxTimestampSeconds = 9_000_000_000

// ParseTimestamp reads a timestamp in Swift's forms: "1700000000", "1700000000.12345" and
// either followed by "_" and a hex offset.
func ParseTimestamp(s string) (meta.Timestamp, error) {
	bad := func() (meta.Timestamp, error) {
		return 0, fmt.Errorf("%w: timestamp %q", ErrBadRequest, s)
	}
	num, off, hasOff := strings.Cut(s, "_")
	secs, frac, _ := strings.Cut(num, ".")
	if secs == "" || len(secs) > 11 || len(frac) > 9 {
		return bad()
	}
	sec, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || sec < 0 || sec >= maxTimestampSeconds {
		return bad()
	}
	var fracNS int64
	if frac != "" {
		f, err := strconv.ParseInt(frac, 10, 64)
		if err != nil || f < 0 {
			return bad()
		}
		for i := len(frac); i < 9; i++ {
			f *= 10
		}
		fracNS = f / 10_000 * 10_000 // Swift's resolution; finer parts travel in the offset
	}
	ts := sec*1_000_000_000 + fracNS
	if hasOff {
		o, err := strconv.ParseUint(off, 16, 64)
		if err != nil || len(off) > 16 {
			return bad()
		}
		ts += int64(min(o, 9_999))
	}
	return meta.Timestamp(ts), nil
}

// encodeKey makes a metadata key (any string) into a header name suffix that round-trips
// through HTTP's case folding: everything but lower-case letters, digits, '-' and '.' is
// percent-escaped, so upper case travels as an escape too. So does '_', which WSGI servers
// (Swift's) take for '-' in header names.
func encodeKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	return b.String()
}

// decodeKey is the inverse of encodeKey for a header name suffix in any case.
func decodeKey(s string) (string, bool) {
	k, err := url.PathUnescape(strings.ToLower(s))
	return k, err == nil && k != ""
}

// encodeValue escapes what an HTTP header value cannot hold as it is: '%', control bytes and
// spaces at either end (which HTTP trims).
func encodeValue(v string) string { return escapeValue(v, false) }

// encodeSysValue escapes like encodeValue, and bytes past ASCII too: for the system metadata
// only Cairn reads. Swift's servers keep a header's bytes as they came, but a value in a
// metadata footer (JSON) becomes text that Swift 2.30 cannot send back in a header when it is
// not Latin-1: its object server drops the connection of every GET and HEAD of that object.
func encodeSysValue(v string) string { return escapeValue(v, true) }

func escapeValue(v string, ascii bool) string {
	escape := func(c byte) bool { return c == '%' || c < 0x20 || c == 0x7f || ascii && c >= 0x80 }
	if !strings.ContainsFunc(v, func(r rune) bool { return r < utf8.RuneSelf && escape(byte(r)) || ascii && r >= utf8.RuneSelf }) &&
		strings.TrimSpace(v) == v {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if escape(c) || (c == ' ' || c == '\t') && (i == 0 || i == len(v)-1) {
			fmt.Fprintf(&b, "%%%02x", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// decodeValue undoes encodeValue; a value that is no valid escape (written by another client
// of a Swift server) is kept as it is.
func decodeValue(v string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

// putMeta writes a system metadata map as headers under prefix.
func putMeta(h http.Header, prefix string, m map[string]string) {
	for k, v := range m {
		h.Set(prefix+encodeKey(k), encodeSysValue(v))
	}
}

// readMeta reads the metadata map written under prefix (nil when there is none).
func readMeta(h http.Header, prefix string) map[string]string {
	var m map[string]string
	canon := http.CanonicalHeaderKey(prefix)
	for name, vs := range h {
		rest, ok := strings.CutPrefix(http.CanonicalHeaderKey(name), canon)
		if !ok || len(vs) == 0 {
			continue
		}
		k, ok := decodeKey(rest)
		if !ok {
			continue
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = decodeValue(vs[0])
	}
	return m
}

// userMetaKey maps a user metadata key onto the header Swift's servers keep it under.
// User metadata keys are stored as the front ends give them; keys that Swift's header would
// not carry exactly (upper case, odd bytes) are escaped like system metadata keys.
func userMetaHeader(k string) string { return objMetaPrefix + encodeKey(k) }

// errorCodes maps each error a node answers with onto its status and a name that the client
// turns back into the same error; Swift's servers send only the status, which the client
// reads through statusErrors.
var errorCodes = []struct {
	err    error
	status int
	name   string
}{
	{meta.ErrPreconditionFailed, http.StatusPreconditionFailed, "precondition-failed"},
	{meta.ErrNoContainer, http.StatusNotFound, "no-container"},
	{meta.ErrNotFound, http.StatusNotFound, "not-found"},
	{meta.ErrExists, http.StatusAccepted, "exists"},
	{meta.ErrNotEmpty, http.StatusConflict, "not-empty"},
	{meta.ErrDecidedAbove, http.StatusConflict, "decided-above"},
	{meta.ErrConflict, http.StatusConflict, "conflict"},
	{meta.ErrInsufficientStorage, http.StatusInsufficientStorage, "insufficient-storage"},
	{meta.ErrCorrupt, http.StatusInternalServerError, "corrupt"},
	{meta.ErrIncompleteBody, 499, "incomplete-body"},
	{meta.ErrBodyTooLong, http.StatusBadRequest, "body-too-long"},
	{meta.ErrInvalidRange, http.StatusRequestedRangeNotSatisfiable, "invalid-range"},
	{meta.ErrInvalidName, http.StatusBadRequest, "invalid-name"},
	{meta.ErrUnavailable, http.StatusServiceUnavailable, "unavailable"},
	{nodeclient.ErrNoRegisters, http.StatusNotImplemented, "no-registers"},
	{nodeclient.ErrNoLeases, http.StatusNotImplemented, "no-leases"},
	{ErrUnauthorized, http.StatusUnauthorized, "unauthorized"},
	{ErrBadRequest, http.StatusBadRequest, "bad-request"},
}

// errorStatus returns the status and name of an error (500 and "" when it is none of the
// protocol's).
func errorStatus(err error) (int, string) {
	for _, c := range errorCodes {
		if errors.Is(err, c.err) {
			return c.status, c.name
		}
	}
	return http.StatusInternalServerError, ""
}

// errorFromResponse turns a failed answer back into an error: by name from a Cairn node, by
// status from any other (Swift's servers).
func errorFromResponse(what string, status int, name, text string) error {
	for _, c := range errorCodes {
		if name != "" && c.name == name {
			return fmt.Errorf("%s: %s: %w", what, text, c.err)
		}
	}
	var base error
	switch status {
	case http.StatusNotFound:
		base = meta.ErrNotFound
	case http.StatusConflict:
		base = meta.ErrConflict
	case http.StatusPreconditionFailed:
		base = meta.ErrPreconditionFailed
	case http.StatusInsufficientStorage:
		base = meta.ErrInsufficientStorage
	case http.StatusRequestedRangeNotSatisfiable:
		base = meta.ErrInvalidRange
	case http.StatusUnprocessableEntity:
		base = meta.ErrCorrupt
	case http.StatusUnauthorized, http.StatusForbidden:
		base = ErrUnauthorized
	case http.StatusBadRequest:
		base = ErrBadRequest
	default:
		base = meta.ErrUnavailable
	}
	return fmt.Errorf("%s: status %d %s: %w", what, status, text, base)
}
