// Package s3 is Cairn's S3 front end. It owns the S3 protocol: routing a request (path-style or
// virtual-hosted-style) to an operation, authenticating it with SigV4 (package sigv4),
// verifying request bodies (x-amz-content-sha256, aws-chunked, Content-MD5 and
// x-amz-checksum-*, package checksum) before anything is committed, deciding access (ACLs,
// bucket policies, quotas; package access), mapping buckets to containers of their owners'
// accounts and keys to objects through the proxy, building multipart
// uploads out of ordinary objects in a hidden per-bucket container joined by a manifest, and
// writing S3's XML answers and errors from one error table. It never touches disks.
//
// Files: s3.go (configuration, request life cycle), router.go (operation selection),
// auth.go (authentication, body verification), access.go (bucket resolution and access
// decisions through internal/access), registry.go (the global bucket-name index), acl.go
// (bucket and object ACLs), policy.go (bucket policies, quotas), tagging.go (object and bucket
// tags; their rules are package tagging's), attributes.go (GetObjectAttributes; its parsing
// is package objattr's), errors.go (the error table), cors.go (bucket CORS: ?cors, preflights,
// headers of actual requests; rules in package cors),
// xml.go (wire documents), bucket.go, object.go (PUT/GET/HEAD/DELETE, conditionals, ranges),
// copy.go, list.go, multipart.go, delete_multi.go, postobject.go (browser form uploads, with
// package postpolicy), validate.go (names, limits).
package s3

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/reqmetrics"
	"github.com/cairn-store/cairn/internal/s3/cors"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/versions"
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

// Handler serves the S3 API. Mount it at "/".
type Handler struct {
	*Front
	metrics *reqmetrics.Metrics
	ops     map[string]opFunc
	buckets *bucketsHandler
	objects *objectsHandler
	uploads *multipartHandler
}

// Front is the state every handler of the front end shares: the configuration, the proxy,
// the access state cache, the versions store, and the completes of multipart uploads running in
// this process.
type Front struct {
	Cfg    Config
	Proxy  *proxy.Proxy
	Log    *slog.Logger
	Verify sigv4.Options
	States *stateCache
	// versions keeps versioned buckets' versions (versions.go).
	Versions *versions.Store

	// Completes of multipart uploads running in this process, by claim (multipart_state.go).
	ClaimsMu sync.Mutex
	Claims   map[string]bool
	ClaimSeq uint64
}

type bucketsHandler struct{ *Front }

type objectsHandler struct{ *Front }

type multipartHandler struct{ *objectsHandler }

// opFunc serves one operation. It returns an error instead of writing one, so that every error
// goes through the one table; once it has written a response it must return nil, or
// errAbortResponse when the response broke off midway.
type opFunc func(w http.ResponseWriter, r *http.Request, rq *Request) error

// errAbortResponse reports that a response failed after its header was sent: the connection is
// cut so the client cannot mistake a short body for a whole one.
var ErrAbortResponse = errors.New("s3: response aborted after its header was sent")

// New returns the S3 handler.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := reqmetrics.New(cfg.Registry, "s3", "S3")
	if err != nil {
		return nil, fmt.Errorf("s3: metrics: %w", err)
	}
	f := &Front{Cfg: cfg, Proxy: cfg.Proxy, Log: cfg.Logger, States: NewStateCache(cfg.AccessCacheTTL), Versions: versions.New(cfg.Proxy)}
	if !cfg.AcceptAnyRegion {
		f.Verify.Region = cfg.Region
	}
	objs := &objectsHandler{Front: f}
	h := &Handler{Front: f, metrics: m, buckets: &bucketsHandler{Front: f}, objects: objs, uploads: &multipartHandler{objectsHandler: objs}}
	h.ops = map[string]opFunc{
		OpListBuckets:             h.buckets.ListBuckets,
		OpCreateBucket:            h.buckets.CreateBucket,
		OpHeadBucket:              h.buckets.HeadBucket,
		OpDeleteBucket:            h.buckets.DeleteBucket,
		OpGetBucketLocation:       h.buckets.GetBucketLocation,
		OpGetBucketVersioning:     h.buckets.GetBucketVersioning,
		OpPutBucketVersioning:     h.buckets.PutBucketVersioning,
		OpListObjectVersions:      h.objects.ListObjectVersions,
		OpGetBucketACL:            h.buckets.GetBucketACL,
		OpPutBucketACL:            h.buckets.PutBucketACL,
		OpGetBucketPolicy:         h.buckets.GetBucketPolicy,
		OpPutBucketPolicy:         h.buckets.PutBucketPolicy,
		OpDeleteBucketPolicy:      h.buckets.DeleteBucketPolicy,
		OpGetBucketPolicyStatus:   h.buckets.GetBucketPolicyStatus,
		OpGetBucketRequestPayment: h.buckets.GetBucketRequestPayment,
		OpGetBucketLogging:        h.buckets.GetBucketLogging,
		OpGetBucketTagging:        h.buckets.GetBucketTagging,
		OpPutBucketTagging:        h.buckets.PutBucketTagging,
		OpDeleteBucketTagging:     h.buckets.DeleteBucketTagging,
		OpGetBucketCors:           h.buckets.GetBucketCors,
		OpGetObjectLockConfig:     h.buckets.GetObjectLockConfiguration,
		OpPutObjectLockConfig:     h.buckets.PutObjectLockConfiguration,
		OpGetObjectRetention:      h.objects.GetObjectRetention,
		OpPutObjectRetention:      h.objects.PutObjectRetention,
		OpGetObjectLegalHold:      h.objects.GetObjectLegalHold,
		OpPutObjectLegalHold:      h.objects.PutObjectLegalHold,
		OpPutBucketCors:           h.buckets.PutBucketCors,
		OpDeleteBucketCors:        h.buckets.DeleteBucketCors,
		OpGetBucketEncryption:     h.buckets.GetBucketEncryption,
		OpPutBucketEncryption:     h.buckets.PutBucketEncryption,
		OpDeleteBucketEncryption:  h.buckets.DeleteBucketEncryption,
		OpGetBucketLifecycle:      h.buckets.GetBucketLifecycle,
		OpPutBucketLifecycle:      h.buckets.PutBucketLifecycle,
		OpDeleteBucketLifecycle:   h.buckets.DeleteBucketLifecycle,
		OpGetBucketUnconfigured:   h.buckets.GetBucketUnconfigured,
		OpGetPublicAccessBlock:    h.buckets.GetPublicAccessBlock,
		OpPutPublicAccessBlock:    h.buckets.PutPublicAccessBlock,
		OpDeletePublicAccessBlock: h.buckets.DeletePublicAccessBlock,
		OpGetOwnershipControls:    h.buckets.GetOwnershipControls,
		OpPutOwnershipControls:    h.buckets.PutOwnershipControls,
		OpDeleteOwnershipControls: h.buckets.DeleteOwnershipControls,
		OpListObjects:             h.objects.ListObjectsV1,
		OpListObjectsV2:           h.objects.ListObjectsV2,
		OpListMultipartUploads:    h.uploads.ListMultipartUploads,
		OpDeleteObjects:           h.objects.DeleteObjects,
		OpPutObject:               h.objects.PutObject,
		OpPostObject:              h.objects.PostObject,
		OpCopyObject:              h.objects.CopyObject,
		OpGetObject:               h.objects.GetObject,
		OpHeadObject:              h.objects.HeadObject,
		OpDeleteObject:            h.objects.DeleteObject,
		OpGetObjectACL:            h.objects.GetObjectACL,
		OpPutObjectACL:            h.objects.PutObjectACL,
		OpGetObjectTagging:        h.objects.GetObjectTagging,
		OpPutObjectTagging:        h.objects.PutObjectTagging,
		OpDeleteObjectTagging:     h.objects.DeleteObjectTagging,
		OpGetObjectAttributes:     h.objects.GetObjectAttributes,
		OpCreateMultipartUpload:   h.uploads.CreateMultipartUpload,
		OpUploadPart:              h.uploads.UploadPart,
		OpUploadPartCopy:          h.uploads.UploadPartCopy,
		OpCompleteMultipartUpload: h.uploads.CompleteMultipartUpload,
		OpAbortMultipartUpload:    h.uploads.AbortMultipartUpload,
		OpListParts:               h.uploads.ListParts,
	}
	return h, nil
}

// request is what the front end knows about a request once it is routed and authenticated.
type Request struct {
	ID     string // x-amz-request-id
	HostID string // x-amz-id-2
	Op     string
	Bucket string
	Key    string
	Query  url.Values
	Auth   *sigv4.Auth
	// who is who asks (anonymous without credentials).
	Who access.Identity
	// account is the account whose containers the request works on: the bucket's owner (see
	// authorize), or the caller's own for ListBuckets and CreateBucket.
	Account string
	// state is the bucket's access state, once authorize resolved the bucket.
	State *access.BucketState
	// cors is the bucket's CORS configuration (nil: none), once authorize resolved the bucket.
	Cors *cors.Config
	// encryption is the bucket's default encryption (nil: none), once authorize resolved it.
	Encryption *BucketEncryption
	// cond is what the request offers to bucket policy conditions (condctx.go), set by
	// authorize.
	Cond access.Context
	// While a read follows Swift symlinks (symlink.go): links followed, and the ETag a static
	// link requires of what comes next.
	SymlinkHops int
	SymlinkETag string
	// stored, when set, is where a read finds what it serves: a version of the object
	// (?versionId, or the current version a version link names); versionID is its ID, which
	// answers carry as x-amz-version-id.
	Stored    *meta.ObjectName
	VersionID string
	// copySourceVersionID is the version a copy read (x-amz-copy-source-version-id).
	CopySourceVersionID string
}

// readName is where a read of the request's object finds it.
func (rq *Request) ReadName() meta.ObjectName {
	if rq.Stored != nil {
		return *rq.Stored
	}
	return rq.ObjectName()
}

// ServeHTTP routes, authenticates and serves one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.ContentLength == 0 && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		// net/http sends 100 Continue only when a handler reads a body, so an empty PUT gets
		// its final answer straight away. That is allowed, but botocore then keeps the final
		// status on the connection and misreads the next 100-continue request on it, which
		// hangs until its read timeout (aws s3 sync with an empty file shows it). S3 answers
		// 100 Continue here; so do we.
		w.WriteHeader(http.StatusContinue)
	}
	rq := &Request{ID: newRequestID(), HostID: newHostID(), Op: OpUnknown}
	rec := &reqmetrics.StatusRecorder{ResponseWriter: w}
	hdr := w.Header()
	hdr.Set("X-Amz-Request-Id", rq.ID)
	hdr.Set("X-Amz-Id-2", rq.HostID)
	hdr.Set("Server", h.Cfg.ServerName)

	err := h.serve(rec, r, rq)
	if err != nil && !errors.Is(err, ErrAbortResponse) {
		if rec.WroteHeader {
			h.Log.WarnContext(r.Context(), "s3 response failed after its header", "request_id", rq.ID, "op", rq.Op, "err", err)
			err = ErrAbortResponse
		} else {
			h.WriteError(rec, r, rq, err)
			drainRefusedBody(w, r)
		}
	}
	status := rec.Status
	if status == 0 {
		status = http.StatusOK
	}
	h.metrics.Observe(rq.Op, status, time.Since(start))
	if errors.Is(err, ErrAbortResponse) {
		panic(http.ErrAbortHandler) // net/http cuts the connection without logging a stack
	}
}

// ServeSlowDown answers a request the server will not serve now, because too many are in flight,
// with S3's 503 SlowDown (as S3 answers a request rate it cannot take). The body is not read:
// net/http discards a small one and closes the connection on a large one.
func (h *Handler) ServeSlowDown(w http.ResponseWriter, r *http.Request) {
	rq := &Request{ID: newRequestID(), HostID: newHostID(), Op: OpUnknown}
	hdr := w.Header()
	hdr.Set("X-Amz-Request-Id", rq.ID)
	hdr.Set("X-Amz-Id-2", rq.HostID)
	hdr.Set("Server", h.Cfg.ServerName)
	h.WriteError(w, r, rq, ErrSlowDown)
	h.metrics.Observe(rq.Op, ErrSlowDown.Status, 0)
}

// maxRefusedBodyDrain bounds how much of a refused request's body is read and discarded, and
// refusedBodyDrainTime how long that may take.
const (
	maxRefusedBodyDrain  = 256 << 20
	refusedBodyDrainTime = 30 * time.Second
)

// drainRefusedBody sends the error already written, then reads what is left of the refused
// request's body. A client that does not wait for 100 Continue (boto2, Python's http.client)
// sends its whole body before it reads the answer; if net/http closed the connection with more
// than 256 KiB unread, such a client would see a broken pipe instead of the error. Swift's server
// reads on, and so do we, within bounds no larger than an upload we would accept anyway.
// Also when the client asked for 100 Continue: the answer is already out, so reading sends no
// 100 Continue (net/http stops that once a response is written), and the response says
// Connection: close, on which a client that waited closes and the read ends. The AWS SDK for
// Go sends its body without waiting, and saw a broken pipe instead of the 507 of a full disk.
func drainRefusedBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	rc.SetReadDeadline(time.Now().Add(refusedBodyDrainTime))
	io.Copy(io.Discard, io.LimitReader(r.Body, maxRefusedBodyDrain))
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, rq *Request) error {
	t := ParseTarget(r, h.Cfg.Domains)
	rq.Bucket, rq.Key = t.Bucket, t.Key
	rq.Query = r.URL.Query()
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodOptions:
	default:
		// A method S3 does not have is refused before anything else, as S3 does: there is
		// nothing to authenticate it for.
		return fmt.Errorf("method %.40q: %w", r.Method, ErrMethodNotAllowed)
	}
	if r.Method == http.MethodOptions {
		// A CORS preflight: answered from the bucket's CORS configuration alone, without
		// authentication (cors.go).
		rq.Op, rq.Who = OpPreflight, access.Identity{Anonymous: true}
		return h.Preflight(w, r, rq)
	}
	op, routeErr := resolveOperation(r.Method, t, rq.Query, r.Header)
	rq.Op = op
	if op == OpPostObject {
		// A form upload carries its credentials in the form (postobject.go authenticates and
		// authorizes it once it has read the fields); headers and query play no part.
		rq.Who = access.Identity{Anonymous: true}
		rq.Auth = &sigv4.Auth{Payload: sigv4.PayloadUnsigned, DecodedContentLength: -1}
		if err := CheckBucketNameForAccess(rq.Bucket); err != nil {
			return err
		}
		return h.ops[op](w, r, rq)
	}
	// Authenticate before anything else. A request without credentials goes on as anonymous,
	// to be served only where an ACL or policy lets everyone in; it learns nothing else, not
	// even which operations exist.
	vopts := h.Verify
	if t.VirtualHost {
		vopts.VirtualHostBucket = t.Bucket // SigV2 signs "/bucket" + path
	}
	a, err := sigv4.Verify(r.Context(), r, h.Cfg.Credentials, h.Cfg.Now(), &vopts)
	switch {
	case errors.Is(err, sigv4.ErrAnonymous):
		rq.Who = access.Identity{Anonymous: true}
		if routeErr != nil {
			h.CorsForRefused(r.Context(), w, r, rq)
			return fmt.Errorf("anonymous: %w: %w", ErrAccessDenied, routeErr)
		}
		if a, err = AnonymousAuth(r); err != nil {
			return err
		}
	case err != nil:
		h.CorsForRefused(r.Context(), w, r, rq)
		return AuthError(r, err)
	case a.Credential.Account == "":
		return fmt.Errorf("access key %q has no account: %w", a.Credential.AccessKey, ErrAccessDenied)
	default:
		rq.Who = IdentityOf(a.Credential)
	}
	rq.Auth = a
	if routeErr != nil {
		return routeErr
	}
	if rq.Bucket != "" && op != OpCreateBucket {
		if err := CheckBucketNameForAccess(rq.Bucket); err != nil {
			return err
		}
	}
	if rq.Key != "" {
		if err := CheckKey(rq.Key); err != nil {
			return err
		}
	}
	if err := CheckVersionID(rq.Query); err != nil {
		return err
	}
	err = h.Authorize(r.Context(), r, rq)
	// A cross-origin request that a CORS rule of the bucket allows gets its headers whatever
	// the answer, a refusal included, as in S3.
	SetCORSHeaders(w, r, rq.Cors)
	if err != nil {
		return err
	}
	return h.ops[op](w, r, rq)
}

// newRequestID returns a request ID in S3's style: 16 upper-case hex digits.
func newRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

func newHostID() string {
	var b [24]byte
	rand.Read(b[:])
	return base64.StdEncoding.EncodeToString(b[:])
}

// owner returns the s3xml.Owner element of the request's account: the bucket's owner (or the
// caller's own account, for ListBuckets).
func (rq *Request) Owner() s3xml.Owner { return s3xml.Owner{ID: rq.Account, DisplayName: rq.Account} }

// EachUpload calls fn with every incomplete upload of a bucket: its key, ID and start (the
// lifecycle daemon's view of multipart uploads, lifecycled.Uploads).
func (h *Handler) EachUpload(ctx context.Context, account, bucket string, fn func(key, id string, initiated time.Time) error) error {
	return h.uploads.EachUpload(ctx, account, bucket, fn)
}

// AbortUpload aborts an upload as AbortMultipartUpload does; false when it ended meanwhile or
// a completion holds it.
func (h *Handler) AbortUpload(ctx context.Context, account, bucket, key, id string) (bool, error) {
	return h.uploads.AbortUpload(ctx, account, bucket, key, id)
}

// NewUploadSweeper returns the handler's upload sweeper; Start runs it.
func (h *Handler) NewUploadSweeper(cfg UploadSweeperConfig) (*UploadSweeper, error) {
	return h.uploads.NewUploadSweeper(cfg)
}
