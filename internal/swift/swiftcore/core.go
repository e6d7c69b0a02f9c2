// Package swiftcore is what every part of Cairn's Swift front end shares, as the core of Swift's
// proxy is what its middlewares share: the Server state (proxy, keys, account store, quotas,
// clock, version store) and the hooks through which features call back into the entry package's
// operations, the per-request state (Request) and the operation names, Swift's error table,
// authorization (tempauth's rules and ACLs through internal/access, account ACLs), request
// validation and object expiry, If-* conditions, listing answers, ETag quoting, quotas, the
// reading of objects encrypted through S3, the object write path (with object versioning's
// version state) and the marks of the kinds of object (SLO, DLO, symlink). It imports no feature
// package and not internal/swift.
//
// Files: core.go (Server, Request, operations, object headers), errors.go (the error table),
// authz.go (authorization), accountacl.go (account ACLs), validate.go (names, metadata, limits,
// expiry), conditions.go (If-* and If-None-Match on PUT), listing.go (listing answers),
// etagquote.go (RFC-compliant ETags), quota.go (container and account quotas), memo.go (one
// read of a container's record per request), sse.go (objects encrypted through S3), store.go
// (the object write path and container version state), kinds.go (SLO, DLO and symlink marks).
package swiftcore

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/versions"
)

// Server is the state every part of the front end shares.
type Server struct {
	Proxy *proxy.Proxy
	// Keys decrypts objects encrypted at rest through the S3 API; nil: none can be read.
	Keys *sse.Keyring
	// Accounts keeps each account's metadata.
	Accounts AccountStore
	// Quotas gives accounts' quotas; nil: only container quotas apply.
	Quotas access.Quotas
	// MaxObjectSize bounds one object PUT.
	MaxObjectSize int64
	// ContainerChanged, when set, is told of every container the front end creates, deletes
	// or changes the metadata of.
	ContainerChanged func(account, container string)
	Log              *slog.Logger
	// Now is the clock of tokens and expiry.
	Now func() time.Time
	// Versions keeps the versions of objects in versioned containers (package versioning).
	Versions *versions.Store

	// The entry package's operations, which features call back into as Swift's middlewares
	// call the application they wrap (set by swift.New):
	// GetObject serves an object's GET or HEAD, every feature's handling included (a symlink's
	// target, a version, a static web page).
	GetObject OpFunc
	// Serve serves a whole request as if it came from the client, routing and authorization
	// included (bulk upload's subrequests).
	Serve OpFunc
}

// Request is what the front end knows about a request once it is routed.
type Request struct {
	TransID   string
	Op        string
	Account   string // the URL's account, AUTH_<cairn account>
	Tenant    string // the Cairn account: account without AUTH_
	Container string
	Object    string
	ID        Identity
	Anonymous bool          // no token: ACLs alone decide
	TempURL   *TempURLScope // a valid temp URL let the request in (package tempurl)

	// While a GET or HEAD follows symlinks (package symlink): links followed so far, the ETag a
	// static link requires of what comes next, and where the last link pointed.
	SymlinkHops     int
	SymlinkETag     string
	SymlinkLocation string

	// VersionID is the request's ?version-id, once checked (package versioning).
	VersionID string
	// SSEBucket and SSEKey, when set, are the container and object an encrypted object's key
	// is bound to, where its bytes are read from elsewhere (a version: sse.go).
	SSEBucket, SSEKey string
}

// ErrAbortResponse reports that a response failed after its header was sent: the connection is
// cut so the client cannot mistake a short body for a whole one.
var ErrAbortResponse = errors.New("swift: response aborted after its header was sent")

// WriteStatus answers with a status and Swift's short body for it (201 and 204 have none).
func WriteStatus(w http.ResponseWriter, r *http.Request, status int) {
	hdr := w.Header()
	body := ""
	switch status {
	case http.StatusAccepted:
		body = "<html><h1>Accepted</h1><p>The request is accepted for processing.</p></html>"
	}
	if status != http.StatusNoContent {
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if hdr.Get("Content-Type") == "" {
		hdr.Set("Content-Type", "text/html; charset=UTF-8")
	}
	w.WriteHeader(status)
	if body != "" && r.Method != http.MethodHead {
		w.Write([]byte(body))
	}
}

// Identity is whom a set of credentials belongs to.
type Identity struct {
	Account, User string
	// Admin: the user administers its account. Root: the operator, who may act on any account.
	Admin, Root bool
}

// AccountStore keeps the metadata of accounts, which Cairn's tenant store holds (the listing
// index has usage, not settings). Keys are the front end's own: user metadata under
// AccountMetaPrefix, settings (such as ACLs) under other prefixes.
type AccountStore interface {
	// AccountMetadata returns an account's metadata; the map is the caller's.
	AccountMetadata(ctx context.Context, account string) (map[string]string, error)
	// UpdateAccountMetadata sets each entry durably (an empty value removes the key) and
	// returns the metadata as changed.
	UpdateAccountMetadata(ctx context.Context, account string, changes map[string]string) (map[string]string, error)
}

// ErrNoAccount is what an AccountStore returns (wrapped) for an account that does not exist.
var ErrNoAccount = errors.New("swift: no such account")

// OpFunc serves one operation. It returns an error instead of writing one, so that every error
// goes through the one table; once it has written a response it must return nil, or
// ErrAbortResponse when the response broke off midway.
type OpFunc func(w http.ResponseWriter, r *http.Request, rq *Request) error

// Target is what a /v1 path names.
type Target struct {
	Account, Container, Object string
}

func (rq *Request) ObjectName() meta.ObjectName {
	return meta.ObjectName{Account: rq.Tenant, Container: rq.Container, Object: rq.Object}
}

// servedETag is an object's ETag as Swift shows it: bare hex for plain objects, quoted for
// manifests (as Swift shows a static large object's).
func servedETag(obj *meta.Object) string {
	if obj.IsManifest() {
		return `"` + obj.ETag + `"`
	}
	return obj.ETag
}

// WriteObjectHeaders sets the headers that describe an object (all but length and range).
func WriteObjectHeaders(hdr http.Header, obj *meta.Object) {
	ct := obj.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	hdr.Set("Content-Type", ct)
	for k, v := range obj.Headers {
		hdr.Set(k, v)
	}
	for k, v := range obj.UserMeta {
		hdr.Set(swiftwire.MetaHeader("Object", k), v)
	}
	if IsSLO(obj) {
		hdr.Set("X-Static-Large-Object", "True")
		hdr.Set("X-Manifest-Etag", ManifestETag(obj))
	}
	if at := DeleteAt(obj); at > 0 {
		hdr.Set("X-Delete-At", strconv.FormatInt(at, 10))
	}
	writeSymlinkHeaders(hdr, obj)
	hdr.Set("Etag", servedETag(obj))
	hdr.Set("Last-Modified", swiftwire.LastModified(obj.Modified()).Format(http.TimeFormat))
	hdr.Set("X-Timestamp", swiftwire.Timestamp(obj.Timestamp))
	hdr.Set("Accept-Ranges", "bytes")
}

// CloneMap copies a metadata map (nil stays nil).
func CloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Overlay sets src's entries in dst, made when nil, and returns it.
func Overlay(dst, src map[string]string) map[string]string {
	for k, v := range src {
		if dst == nil {
			dst = map[string]string{}
		}
		dst[k] = v
	}
	return dst
}

// TempURLScope is what a valid temp URL lets in: its account, and its container when signed
// with a container key.
type TempURLScope struct {
	Account, Container string
	Expires            int64
	Filename           string
	Inline             bool
}

// covers reports whether the scope lets in a request on account/container.
func (s *TempURLScope) covers(account, container string) bool {
	return s != nil && account == s.Account && (s.Container == "" || container == s.Container)
}

// Operation names, the "operation" label of the metrics.
const (
	OpUnknown         = "Unknown"
	OpOptions         = "Options"
	OpAuth            = "Auth"
	OpInfo            = "Info"
	OpGetAccount      = "GetAccount"
	OpHeadAccount     = "HeadAccount"
	OpPostAccount     = "PostAccount"
	OpBulkDelete      = "BulkDelete"
	OpBulkUpload      = "BulkUpload"
	OpGetContainer    = "GetContainer"
	OpHeadContainer   = "HeadContainer"
	OpPutContainer    = "PutContainer"
	OpPostContainer   = "PostContainer"
	OpDeleteContainer = "DeleteContainer"
	OpGetObject       = "GetObject"
	OpHeadObject      = "HeadObject"
	OpPutObject       = "PutObject"
	OpCopyObject      = "CopyObject" // PUT with X-Copy-From, or COPY
	OpPostObject      = "PostObject"
	OpDeleteObject    = "DeleteObject"
)

// AccountMetaPrefix keeps user metadata (X-Account-Meta-*, lower-cased names) apart from the
// settings the front end keeps in an account's metadata.
const AccountMetaPrefix = "meta-"

// ContainerMetaPrefix keeps user metadata (X-Container-Meta-*) apart from the settings Cairn
// may keep in meta.Container.Meta (ACLs, quotas, policies).
const ContainerMetaPrefix = "meta-"
