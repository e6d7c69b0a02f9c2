// Package swift is Cairn's OpenStack Swift front end. It owns the Swift protocol (API v1, as
// Swift 2.30 speaks it): v1 token authentication (/auth/v1.0, self-verifying tokens), the
// /info document, account, container and object operations with Swift's listings (plain, JSON,
// XML), metadata headers and limits, conditional and ranged reads, server-side copies, object
// expiry headers, CORS, domain remapping, and Swift's error answers from one table.
// It maps the Swift account AUTH_<a> onto Cairn's account <a>, so that a Swift container is the
// S3 bucket of the same account and an object reads back through either API with the same bytes
// and metadata. It reaches storage only through the proxy and never touches disks.
//
// It is laid out as Swift's proxy is: this package is the entry point and the core operations
// (the proxy server's controllers), the features are packages of their own (the middlewares of
// Swift's pipeline), and what they all share is swiftcore's:
//
//   - swiftcore: the shared state (Server) and per-request state (Request), the error table,
//     authorization and ACLs, validation, conditions, listings, quotas, the object write path;
//   - largeobj: static and dynamic large objects (slo, dlo);
//   - versioning: versioned writes and object versioning (versioned_writes, object_versioning);
//   - symlink: symlinks (symlink);
//   - bulk: bulk delete and bulk upload (bulk);
//   - tempurl: temp URLs (tempurl);
//   - staticweb: static web sites (staticweb);
//   - swiftwire: Swift's pure wire rules (names, listings, manifests, ranges, signatures).
//
// The dependencies run one way: swift → features → swiftcore → swiftwire. Features import each
// other only where Swift's do: largeobj resolves symlinked segments (symlink) and answers
// manifest deletes in bulk's format, versioning deletes versions that are manifests (largeobj).
// Features call back into this package's operations only through swiftcore.Server's hooks
// (GetObject, Serve), as a middleware calls the application it wraps. internal/layers_test.go
// holds these rules.
//
// Files: swift.go (configuration, request life cycle, domain remapping), router.go (path and
// method to an operation), auth.go (v1 auth), token.go (tokens), info.go (/info), account.go,
// container.go, object.go (object GET, HEAD, PUT, POST, DELETE), copy.go (server-side copies),
// ranges.go (multi-range answers), cors.go (CORS).
package swift

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/reqmetrics"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/swift/bulk"
	"github.com/cairn-store/cairn/internal/swift/largeobj"
	"github.com/cairn-store/cairn/internal/swift/staticweb"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/swift/symlink"
	"github.com/cairn-store/cairn/internal/swift/tempurl"
	"github.com/cairn-store/cairn/internal/swift/versioning"
	"github.com/cairn-store/cairn/internal/versions"
	"github.com/cairn-store/cairn/internal/workload"
)

// Config configures the Swift front end.
type Config struct {
	Proxy *proxy.Proxy
	// Keys decrypts objects encrypted at rest through the S3 API (swiftcore/sse.go); nil: none can be
	// read.
	Keys *sse.Keyring
	// Auth checks the credentials of /auth/v1.0.
	Auth Authenticator
	// Accounts keeps each account's metadata (X-Account-Meta-* and the front end's own
	// account settings).
	Accounts swiftcore.AccountStore
	// TokenTTL is how long an issued token is valid (default 24 h, as tempauth's token_life).
	TokenTTL time.Duration
	// TokenKey signs tokens (at least MinTokenKey bytes): handlers with the same key accept
	// each other's tokens, across restarts and across the proxies of a cluster. Nil: a random
	// key, so that tokens are good for this handler only, until it stops.
	TokenKey []byte
	// ContainerChanged, when set, is told of every container this front end creates, deletes
	// or changes the metadata of (the server tells the S3 front end, which caches access state).
	ContainerChanged func(account, container string)
	// Quotas gives accounts' quotas (the tenant store's); nil: only container quotas apply.
	Quotas access.Quotas
	// Capabilities are other front ends' entries in /info (e.g. "s3api": the S3 front end's
	// limits), listed beside the Swift front end's own.
	Capabilities map[string]any
	// MaxObjectSize bounds one object PUT (default Swift's max_file_size: 5 GiB + 2 bytes).
	MaxObjectSize int64
	Logger        *slog.Logger
	// Registry receives the front end's metrics; nil registers none.
	Registry prometheus.Registerer
	// Workload is told of every request served (nil: no workload monitor).
	Workload *workload.Monitor
	// Now is the clock of tokens and expiry (default time.Now); tests set it.
	Now func() time.Time
	// StorageDomains turn on domain remapping (Swift's domain_remap): requests for
	// <account>.<domain> and <container>.<account>.<domain> are served by ServeDomain.
	StorageDomains []string
}

// DefaultMaxObjectSize is Swift's default max_file_size.
const DefaultMaxObjectSize = 5<<30 + 2

// DefaultTokenTTL is tempauth's default token life.
const DefaultTokenTTL = 24 * time.Hour

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.Proxy == nil {
		return errors.New("swift: no proxy")
	}
	if c.Auth == nil {
		return errors.New("swift: no authenticator")
	}
	if c.Accounts == nil {
		return errors.New("swift: no account store")
	}
	if c.TokenTTL == 0 {
		c.TokenTTL = DefaultTokenTTL
	}
	if c.TokenTTL < 0 {
		return errors.New("swift: negative token TTL")
	}
	if len(c.TokenKey) > 0 && len(c.TokenKey) < MinTokenKey {
		return fmt.Errorf("swift: a token key of %d bytes, want at least %d", len(c.TokenKey), MinTokenKey)
	}
	if c.MaxObjectSize == 0 {
		c.MaxObjectSize = DefaultMaxObjectSize
	}
	if c.MaxObjectSize < 0 {
		return errors.New("swift: negative MaxObjectSize")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Handler serves the Swift API: /auth/v1.0, /info and /v1/....
type Handler struct {
	*swiftcore.Server
	cfg     Config
	metrics *reqmetrics.Metrics
	tokens  *tokenSigner

	// The features, as Swift's proxy middlewares (each in its package).
	sym  *symlink.Handler
	bulk *bulk.Handler
	lo   *largeobj.Handler
	ver  *versioning.Handler
	tu   *tempurl.Handler
	web  *staticweb.Handler
}

// New returns the Swift handler.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := reqmetrics.New(cfg.Registry, "swift", "Swift")
	if err != nil {
		return nil, fmt.Errorf("swift: metrics: %w", err)
	}
	srv := &swiftcore.Server{Proxy: cfg.Proxy, Keys: cfg.Keys, Accounts: cfg.Accounts, Quotas: cfg.Quotas,
		MaxObjectSize: cfg.MaxObjectSize, ContainerChanged: cfg.ContainerChanged, Log: cfg.Logger,
		Now: cfg.Now, Versions: versions.New(cfg.Proxy)}
	h := &Handler{Server: srv, cfg: cfg, metrics: m,
		tokens: newTokenSigner(cfg.TokenKey, cfg.TokenTTL, cfg.Now)}
	srv.GetObject, srv.Serve = h.getObject, h.serve
	h.sym = symlink.New(srv)
	h.bulk = bulk.New(srv)
	h.lo = largeobj.New(srv, h.sym)
	h.ver = versioning.New(srv, h.lo)
	h.tu = tempurl.New(srv)
	h.web = staticweb.New(srv)
	return h, nil
}

// IsSwiftPath reports whether an unsigned request for path belongs to the Swift front end: the
// v1 auth endpoint, /info, and the /v1 tree.
func IsSwiftPath(path string) bool {
	switch path {
	case authPath, authPath + "/", infoPath, "/v1":
		return true
	}
	// "//v1/..." is a client's doubled slash: Swift answers it (404), S3 has no such bucket.
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "//v1/")
}

// ServeHTTP routes, authenticates and serves one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.serveRemapped(w, r, nil) }

// ServeOverloaded answers a request the server will not serve now, because too many are in
// flight, with Swift's 503 (its proxy's answer when it cannot take a request). The body is not
// read: net/http discards a small one and closes the connection on a large one.
func (h *Handler) ServeOverloaded(w http.ResponseWriter, r *http.Request) {
	h.serveRemapped(w, r, swiftcore.ErrOverloaded)
}

// serveRemapped serves a request, or answers refused when that is set (a host name that
// domain remapping refuses).
func (h *Handler) serveRemapped(w http.ResponseWriter, r *http.Request, refused error) {
	start := time.Now()
	rq := &swiftcore.Request{TransID: newTransID(start), Op: swiftcore.OpUnknown}
	rec := &reqmetrics.StatusRecorder{ResponseWriter: w}
	hdr := w.Header()
	hdr.Set("X-Trans-Id", rq.TransID)
	hdr.Set("X-Openstack-Request-Id", rq.TransID)
	// Swift's servers answer a client's "Connection: keep-alive" in kind (Go's server keeps
	// HTTP/1.1 connections open anyway, but says nothing).
	if strings.EqualFold(strings.TrimSpace(r.Header.Get("Connection")), "keep-alive") {
		hdr.Set("Connection", "keep-alive")
	}

	err := refused
	if err == nil {
		err = h.serve(rec, r, rq)
	}
	if err != nil && !errors.Is(err, swiftcore.ErrAbortResponse) {
		if rec.WroteHeader {
			h.Log.WarnContext(r.Context(), "swift response failed after its header", "trans_id", rq.TransID, "op", rq.Op, "err", err)
			err = swiftcore.ErrAbortResponse
		} else {
			h.WriteError(rec, r, rq, err)
		}
	}
	status := rec.Status
	if status == 0 {
		status = http.StatusOK
	}
	took := time.Since(start)
	h.metrics.Observe(rq.Op, status, took)
	reqmetrics.ObserveWorkload(h.cfg.Workload, rq.Tenant, rq.Container, workloadKinds[rq.Op], r, rec, took)
	if errors.Is(err, swiftcore.ErrAbortResponse) {
		panic(http.ErrAbortHandler) // net/http cuts the connection without logging a stack
	}
}

// workloadKinds says what each operation does to a container's data, for the workload monitor
// (the others are workload.Other; account operations name no container and are not counted).
var workloadKinds = map[string]workload.Kind{
	swiftcore.OpGetObject: workload.Read, swiftcore.OpHeadObject: workload.Read,
	swiftcore.OpPutObject: workload.Write, swiftcore.OpCopyObject: workload.Write, swiftcore.OpPostObject: workload.Write,
	swiftcore.OpDeleteObject: workload.Delete, swiftcore.OpGetContainer: workload.List,
}

// newTransID returns a transaction ID in Swift's form: "tx", 21 random hex digits, "-", the
// request time in hex.
func newTransID(t time.Time) string {
	var b [11]byte
	rand.Read(b[:])
	return "tx" + hex.EncodeToString(b[:])[:21] + "-" + fmt.Sprintf("%010x", t.Unix())
}

// ServeDomain serves a request addressed by host name (Swift's domain_remap), when Config's
// StorageDomains name its host: <account>.<domain> or <container>.<account>.<domain>, the path
// inside. It reports whether it served the request; the server routes the others as usual.
// Location headers that name the rewritten path are written back in the host's terms, as
// Swift's middleware writes them.
func (h *Handler) ServeDomain(w http.ResponseWriter, r *http.Request) bool {
	if len(h.cfg.StorageDomains) == 0 {
		return false
	}
	newPath, remapped, err := swiftwire.RemapDomain(r.Host, r.URL.Path, h.cfg.StorageDomains)
	if err == nil && !remapped {
		return false
	}
	r2 := r.Clone(r.Context())
	if err == nil {
		r2.URL.Path, r2.URL.RawPath = newPath, ""
		r2.RequestURI = r2.URL.RequestURI()
		w = &locationRewriter{ResponseWriter: w, from: r2.URL.EscapedPath(), to: r.URL.EscapedPath()}
	} else {
		r2.URL.Path = "/v1/" // answered below with the host's error
	}
	h.serveRemapped(w, r2, err)
	return true
}

// IsDomainRequest reports whether ServeDomain takes r (a host name under a storage domain).
func (h *Handler) IsDomainRequest(r *http.Request) bool {
	if len(h.cfg.StorageDomains) == 0 {
		return false
	}
	_, remapped, err := swiftwire.RemapDomain(r.Host, r.URL.Path, h.cfg.StorageDomains)
	return remapped || err != nil
}

// locationRewriter writes Location back from a remapped path to the one the client asked for.
type locationRewriter struct {
	http.ResponseWriter
	from, to    string
	wroteHeader bool
}

func (lw *locationRewriter) WriteHeader(status int) {
	if !lw.wroteHeader {
		lw.wroteHeader = true
		hdr := lw.Header()
		for _, k := range []string{"Location", "Content-Location"} {
			v := hdr.Get(k)
			scheme, rest, ok := strings.Cut(v, "://")
			if !ok || (scheme != "http" && scheme != "https") {
				continue
			}
			host, path, _ := strings.Cut(rest, "/")
			if p, ok := strings.CutPrefix("/"+path, lw.from); ok {
				hdr.Set(k, scheme+"://"+host+lw.to+p)
			}
		}
	}
	lw.ResponseWriter.WriteHeader(status)
}

func (lw *locationRewriter) Write(b []byte) (int, error) {
	if !lw.wroteHeader {
		lw.WriteHeader(http.StatusOK)
	}
	return lw.ResponseWriter.Write(b)
}

func (lw *locationRewriter) Unwrap() http.ResponseWriter { return lw.ResponseWriter }
