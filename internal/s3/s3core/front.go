// Package s3core is the core of Cairn's S3 front end: what every S3 handler needs. It owns the
// configuration (Config) and the state the handlers share (Front: the proxy, the access-state
// cache, the versions store, the logger, the claims of multipart completes running in this
// process), the per-request state (Request), the error table and S3's XML answers,
// authentication glue and body verification (packages sigv4 and checksum), bucket resolution
// and access decisions (ACLs, bucket policies and their conditions, public access blocks,
// quotas; package access), the bucket-name registry, validation of names and limits, the
// operation names, CORS preflights and headers, and the helpers of versions, Object Lock, tagging
// and encryption that bucket and object handlers share. It serves no operation but preflights;
// packages buckets, objects and multipart do, and package s3 routes requests to them. It imports
// none of them.
//
// Files: front.go (Config, Front), ops.go (operation names, request targets), errors.go (the
// error table), xml.go (wire documents), auth.go (body verification, checksums), access.go
// (bucket resolution, access decisions, the access-state cache), condctx.go (policy condition
// keys), acl.go (ACL headers and documents), publicaccess.go (ACL checks of public access
// blocks and ownership), quota.go (quotas), registry.go (the global bucket-name index),
// validate.go (names, limits, metadata), bucket.go, object.go (request names, NoSuchKey versus
// NoSuchBucket), list.go (listing parameters), versions.go (version selection), objectlock.go
// (lock errors and state), tagging.go, sse.go (encryption headers and errors), sse_bucket.go
// (default encryption), cors.go (preflights, CORS headers), uploads.go (the uploads container).
package s3core

import (
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/cors"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/versions"
	"github.com/cairn-store/cairn/internal/workload"
)

// Config configures the S3 front end.
type Config struct {
	Proxy       *proxy.Proxy
	Credentials sigv4.CredentialStore
	// Region is the region requests must be signed for and GetBucketLocation reports
	// (default us-east-1).
	Region string
	// AcceptAnyRegion accepts signatures for any region, for clients that cannot be told the
	// region (the signature still covers it).
	AcceptAnyRegion bool
	// Domains enable virtual-hosted-style requests: a Host "bucket.<domain>" addresses bucket.
	// Empty: path-style only.
	Domains []string
	// MaxObjectSize bounds a single PUT and a part (default and S3's limit: 5 GiB).
	MaxObjectSize int64
	// ServerName is the Server response header (default "Cairn").
	ServerName string
	Logger     *slog.Logger
	// Registry receives the front end's metrics; nil registers none.
	Registry prometheus.Registerer
	// Workload is told of every request served (nil: no workload monitor).
	Workload *workload.Monitor
	// Now is the clock used for signature checks (default time.Now); tests set it.
	Now func() time.Time
	// Quotas gives accounts' quotas (the server wires the tenant store). Nil: no account
	// quota is enforced, and grants to accounts are not checked for the account's existence.
	Quotas access.Quotas
	// AccessCacheTTL is how long a bucket's access state (ACL, policy, Swift ACLs) is trusted
	// before it is read again (default DefaultAccessCacheTTL; negative: never cached). Changes
	// made through this handler apply at once regardless.
	AccessCacheTTL time.Duration
	// Keys encrypts and decrypts objects at rest (package sse). Nil: requests that ask for
	// server-side encryption are answered NotImplemented.
	Keys *sse.Keyring
	// SSECAllowHTTP accepts SSE-C keys over plain HTTP, which S3 refuses (the key would cross
	// the network in the clear): for deployments where TLS ends in front of Cairn, and tests.
	SSECAllowHTTP bool
}

// DefaultMaxObjectSize is S3's limit for one PUT or one part.
const DefaultMaxObjectSize = 5 << 30

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.Proxy == nil {
		return errors.New("s3: no proxy")
	}
	if c.Credentials == nil {
		return errors.New("s3: no credential store")
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.MaxObjectSize == 0 {
		c.MaxObjectSize = DefaultMaxObjectSize
	}
	if c.MaxObjectSize < 0 {
		return errors.New("s3: negative MaxObjectSize")
	}
	for i, d := range c.Domains {
		d = strings.ToLower(strings.Trim(d, "."))
		if d == "" {
			return errors.New("s3: empty virtual-host domain")
		}
		c.Domains[i] = d
	}
	if c.ServerName == "" {
		c.ServerName = "Cairn"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.AccessCacheTTL == 0 {
		c.AccessCacheTTL = DefaultAccessCacheTTL
	}
	return nil
}

// Front is the state every handler of the front end shares: the configuration, the proxy,
// the access state cache, the versions store, and the completes of multipart uploads running in
// this process.
type Front struct {
	Cfg    Config
	Proxy  *proxy.Proxy
	Log    *slog.Logger
	Verify sigv4.Options
	states *stateCache
	// Versions keeps versioned buckets' versions (versions.go).
	Versions *versions.Store

	// Completes of multipart uploads running in this process, by claim (package multipart,
	// multipart_state.go).
	ClaimsMu sync.Mutex
	Claims   map[string]bool
	ClaimSeq uint64
}

// ErrAbortResponse reports that a response failed after its header was sent: the connection is
// cut so the client cannot mistake a short body for a whole one.
var ErrAbortResponse = errors.New("s3: response aborted after its header was sent")

// Request is what the front end knows about a request once it is routed and authenticated.
type Request struct {
	ID     string // x-amz-request-id
	HostID string // x-amz-id-2
	Op     string
	Bucket string
	Key    string
	Query  url.Values
	Auth   *sigv4.Auth
	// Who is who asks (anonymous without credentials).
	Who access.Identity
	// Account is the account whose containers the request works on: the bucket's owner (see
	// Authorize), or the caller's own for ListBuckets and CreateBucket.
	Account string
	// State is the bucket's access state, once Authorize resolved the bucket.
	State *access.BucketState
	// Cors is the bucket's CORS configuration (nil: none), once Authorize resolved the bucket.
	Cors *cors.Config
	// Encryption is the bucket's default encryption (nil: none), once Authorize resolved it.
	Encryption *BucketEncryption
	// Cond is what the request offers to bucket policy conditions (condctx.go), set by
	// Authorize.
	Cond access.Context
	// While a read follows Swift symlinks (package objects, symlink.go): links followed, and
	// the ETag a static link requires of what comes next.
	SymlinkHops int
	SymlinkETag string
	// Stored, when set, is where a read finds what it serves: a version of the object
	// (?versionId, or the current version a version link names); VersionID is its ID, which
	// answers carry as x-amz-version-id.
	Stored    *meta.ObjectName
	VersionID string
	// CopySourceVersionID is the version a copy read (x-amz-copy-source-version-id).
	CopySourceVersionID string
}

// ReadName is where a read of the request's object finds it.
func (rq *Request) ReadName() meta.ObjectName {
	if rq.Stored != nil {
		return *rq.Stored
	}
	return rq.ObjectName()
}

// Owner returns the s3xml.Owner element of the request's account: the bucket's owner (or the
// caller's own account, for ListBuckets).
func (rq *Request) Owner() s3xml.Owner { return s3xml.Owner{ID: rq.Account, DisplayName: rq.Account} }

// NewFront returns the shared state of a front end configured by cfg, which Validate has
// checked.
func NewFront(cfg Config) *Front {
	f := &Front{Cfg: cfg, Proxy: cfg.Proxy, Log: cfg.Logger, states: newStateCache(cfg.AccessCacheTTL), Versions: versions.New(cfg.Proxy)}
	if !cfg.AcceptAnyRegion {
		f.Verify.Region = cfg.Region
	}
	return f
}
