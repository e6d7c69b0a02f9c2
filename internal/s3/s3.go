// Package s3 is Cairn's S3 front end. It owns the S3 protocol: routing a request (path-style or
// virtual-hosted-style) to an operation, authenticating it with SigV4 (package sigv4),
// verifying request bodies (x-amz-content-sha256, aws-chunked, Content-MD5 and
// x-amz-checksum-*, package checksum) before anything is committed, deciding access (ACLs,
// bucket policies, quotas; package access), mapping buckets to containers of their owners'
// accounts and keys to objects through the proxy, building multipart
// uploads out of ordinary objects in a hidden per-bucket container joined by a manifest, and
// writing S3's XML answers and errors from one error table. It never touches disks.
//
// This package is the entry point: Config, New, Handler.ServeHTTP (the request life cycle),
// the router and the operation table. The work is done by its subpackages: s3core (what every
// handler needs: shared state, requests, errors, authentication, access decisions,
// validation), buckets (bucket operations and configuration), objects (the object data path)
// and multipart (multipart uploads, on top of objects). They depend on s3core, never on each
// other except multipart on objects, and never on this package.
//
// Files: s3.go (configuration, request life cycle, the operation table), router.go (operation
// selection), capabilities.go (the limits Swift's /info reports).
package s3

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/reqmetrics"
	"github.com/cairn-store/cairn/internal/s3/buckets"
	"github.com/cairn-store/cairn/internal/s3/multipart"
	"github.com/cairn-store/cairn/internal/s3/objects"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/workload"
)

// Config configures the S3 front end (package s3core owns it: every handler reads it).
type Config = s3core.Config

// DefaultMaxObjectSize is S3's limit for one PUT or one part.
const DefaultMaxObjectSize = s3core.DefaultMaxObjectSize

// DefaultAccessCacheTTL is how long a bucket's access state is trusted by default.
const DefaultAccessCacheTTL = s3core.DefaultAccessCacheTTL

// The multipart upload sweeper (package multipart).
type (
	UploadSweeper       = multipart.UploadSweeper
	UploadSweeperConfig = multipart.UploadSweeperConfig
	SweepStats          = multipart.SweepStats
)

// DefaultUploadSweepInterval is how often the upload sweeper passes by default.
const DefaultUploadSweepInterval = multipart.DefaultUploadSweepInterval

// Handler serves the S3 API. Mount it at "/".
type Handler struct {
	front   *s3core.Front
	metrics *reqmetrics.Metrics
	ops     map[string]opFunc
	buckets *buckets.Handler
	objects *objects.Handler
	uploads *multipart.Handler
}

// opFunc serves one operation. It returns an error instead of writing one, so that every error
// goes through the one table; once it has written a response it must return nil, or
// errAbortResponse when the response broke off midway.
type opFunc func(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error

// New returns the S3 handler.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := reqmetrics.New(cfg.Registry, "s3", "S3")
	if err != nil {
		return nil, fmt.Errorf("s3: metrics: %w", err)
	}
	f := s3core.NewFront(cfg)
	objs := &objects.Handler{Front: f}
	h := &Handler{front: f, metrics: m, buckets: &buckets.Handler{Front: f}, objects: objs, uploads: &multipart.Handler{Handler: objs}}
	h.ops = map[string]opFunc{
		s3core.OpListBuckets:             h.buckets.ListBuckets,
		s3core.OpCreateBucket:            h.buckets.CreateBucket,
		s3core.OpHeadBucket:              h.buckets.HeadBucket,
		s3core.OpDeleteBucket:            h.buckets.DeleteBucket,
		s3core.OpGetBucketLocation:       h.buckets.GetBucketLocation,
		s3core.OpGetBucketVersioning:     h.buckets.GetBucketVersioning,
		s3core.OpPutBucketVersioning:     h.buckets.PutBucketVersioning,
		s3core.OpListObjectVersions:      h.objects.ListObjectVersions,
		s3core.OpGetBucketACL:            h.buckets.GetBucketACL,
		s3core.OpPutBucketACL:            h.buckets.PutBucketACL,
		s3core.OpGetBucketPolicy:         h.buckets.GetBucketPolicy,
		s3core.OpPutBucketPolicy:         h.buckets.PutBucketPolicy,
		s3core.OpDeleteBucketPolicy:      h.buckets.DeleteBucketPolicy,
		s3core.OpGetBucketPolicyStatus:   h.buckets.GetBucketPolicyStatus,
		s3core.OpGetBucketRequestPayment: h.buckets.GetBucketRequestPayment,
		s3core.OpGetBucketLogging:        h.buckets.GetBucketLogging,
		s3core.OpGetBucketTagging:        h.buckets.GetBucketTagging,
		s3core.OpPutBucketTagging:        h.buckets.PutBucketTagging,
		s3core.OpDeleteBucketTagging:     h.buckets.DeleteBucketTagging,
		s3core.OpGetBucketCors:           h.buckets.GetBucketCors,
		s3core.OpGetObjectLockConfig:     h.buckets.GetObjectLockConfiguration,
		s3core.OpPutObjectLockConfig:     h.buckets.PutObjectLockConfiguration,
		s3core.OpGetObjectRetention:      h.objects.GetObjectRetention,
		s3core.OpPutObjectRetention:      h.objects.PutObjectRetention,
		s3core.OpGetObjectLegalHold:      h.objects.GetObjectLegalHold,
		s3core.OpPutObjectLegalHold:      h.objects.PutObjectLegalHold,
		s3core.OpPutBucketCors:           h.buckets.PutBucketCors,
		s3core.OpDeleteBucketCors:        h.buckets.DeleteBucketCors,
		s3core.OpGetBucketEncryption:     h.buckets.GetBucketEncryption,
		s3core.OpPutBucketEncryption:     h.buckets.PutBucketEncryption,
		s3core.OpDeleteBucketEncryption:  h.buckets.DeleteBucketEncryption,
		s3core.OpGetBucketLifecycle:      h.buckets.GetBucketLifecycle,
		s3core.OpPutBucketLifecycle:      h.buckets.PutBucketLifecycle,
		s3core.OpDeleteBucketLifecycle:   h.buckets.DeleteBucketLifecycle,
		s3core.OpGetBucketUnconfigured:   h.buckets.GetBucketUnconfigured,
		s3core.OpGetPublicAccessBlock:    h.buckets.GetPublicAccessBlock,
		s3core.OpPutPublicAccessBlock:    h.buckets.PutPublicAccessBlock,
		s3core.OpDeletePublicAccessBlock: h.buckets.DeletePublicAccessBlock,
		s3core.OpGetOwnershipControls:    h.buckets.GetOwnershipControls,
		s3core.OpPutOwnershipControls:    h.buckets.PutOwnershipControls,
		s3core.OpDeleteOwnershipControls: h.buckets.DeleteOwnershipControls,
		s3core.OpListObjects:             h.objects.ListObjectsV1,
		s3core.OpListObjectsV2:           h.objects.ListObjectsV2,
		s3core.OpListMultipartUploads:    h.uploads.ListMultipartUploads,
		s3core.OpDeleteObjects:           h.objects.DeleteObjects,
		s3core.OpPutObject:               h.objects.PutObject,
		s3core.OpPostObject:              h.objects.PostObject,
		s3core.OpCopyObject:              h.objects.CopyObject,
		s3core.OpGetObject:               h.objects.GetObject,
		s3core.OpHeadObject:              h.objects.HeadObject,
		s3core.OpDeleteObject:            h.objects.DeleteObject,
		s3core.OpGetObjectACL:            h.objects.GetObjectACL,
		s3core.OpPutObjectACL:            h.objects.PutObjectACL,
		s3core.OpGetObjectTagging:        h.objects.GetObjectTagging,
		s3core.OpPutObjectTagging:        h.objects.PutObjectTagging,
		s3core.OpDeleteObjectTagging:     h.objects.DeleteObjectTagging,
		s3core.OpGetObjectAttributes:     h.objects.GetObjectAttributes,
		s3core.OpCreateMultipartUpload:   h.uploads.CreateMultipartUpload,
		s3core.OpUploadPart:              h.uploads.UploadPart,
		s3core.OpUploadPartCopy:          h.uploads.UploadPartCopy,
		s3core.OpCompleteMultipartUpload: h.uploads.CompleteMultipartUpload,
		s3core.OpAbortMultipartUpload:    h.uploads.AbortMultipartUpload,
		s3core.OpListParts:               h.uploads.ListParts,
	}
	return h, nil
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
	rq := &s3core.Request{ID: newRequestID(), HostID: newHostID(), Op: s3core.OpUnknown}
	rec := &reqmetrics.StatusRecorder{ResponseWriter: w}
	hdr := w.Header()
	hdr.Set("X-Amz-Request-Id", rq.ID)
	hdr.Set("X-Amz-Id-2", rq.HostID)
	hdr.Set("Server", h.front.Cfg.ServerName)

	err := h.serve(rec, r, rq)
	if err != nil && !errors.Is(err, s3core.ErrAbortResponse) {
		if rec.WroteHeader {
			h.front.Log.WarnContext(r.Context(), "s3 response failed after its header", "request_id", rq.ID, "op", rq.Op, "err", err)
			err = s3core.ErrAbortResponse
		} else {
			h.front.WriteError(rec, r, rq, err)
			drainRefusedBody(w, r)
		}
	}
	status := rec.Status
	if status == 0 {
		status = http.StatusOK
	}
	took := time.Since(start)
	h.metrics.Observe(rq.Op, status, took)
	reqmetrics.ObserveWorkload(h.front.Cfg.Workload, rq.Account, rq.Bucket, workloadKinds[rq.Op], r, rec, took)
	if errors.Is(err, s3core.ErrAbortResponse) {
		panic(http.ErrAbortHandler) // net/http cuts the connection without logging a stack
	}
}

// workloadKinds says what each operation does to a bucket's data, for the workload monitor (the
// others are workload.Other: bucket settings, uploads begun and ended).
var workloadKinds = map[string]workload.Kind{
	s3core.OpGetObject: workload.Read, s3core.OpHeadObject: workload.Read, s3core.OpGetObjectAttributes: workload.Read,
	s3core.OpPutObject: workload.Write, s3core.OpPostObject: workload.Write, s3core.OpCopyObject: workload.Write,
	s3core.OpUploadPart: workload.Write, s3core.OpUploadPartCopy: workload.Write,
	s3core.OpDeleteObject: workload.Delete, s3core.OpDeleteObjects: workload.Delete,
	s3core.OpListObjects: workload.List, s3core.OpListObjectsV2: workload.List, s3core.OpListObjectVersions: workload.List,
	s3core.OpListMultipartUploads: workload.List, s3core.OpListParts: workload.List,
}

// ServeSlowDown answers a request the server will not serve now, because too many are in flight,
// with S3's 503 SlowDown (as S3 answers a request rate it cannot take). The body is not read:
// net/http discards a small one and closes the connection on a large one.
func (h *Handler) ServeSlowDown(w http.ResponseWriter, r *http.Request) {
	rq := &s3core.Request{ID: newRequestID(), HostID: newHostID(), Op: s3core.OpUnknown}
	hdr := w.Header()
	hdr.Set("X-Amz-Request-Id", rq.ID)
	hdr.Set("X-Amz-Id-2", rq.HostID)
	hdr.Set("Server", h.front.Cfg.ServerName)
	h.front.WriteError(w, r, rq, s3core.ErrSlowDown)
	h.metrics.Observe(rq.Op, s3core.ErrSlowDown.Status, 0)
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

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	t := s3core.ParseTarget(r, h.front.Cfg.Domains)
	rq.Bucket, rq.Key = t.Bucket, t.Key
	rq.Query = r.URL.Query()
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodOptions:
	default:
		// A method S3 does not have is refused before anything else, as S3 does: there is
		// nothing to authenticate it for.
		return fmt.Errorf("method %.40q: %w", r.Method, s3core.ErrMethodNotAllowed)
	}
	if r.Method == http.MethodOptions {
		// A CORS preflight: answered from the bucket's CORS configuration alone, without
		// authentication (s3core/cors.go).
		rq.Op, rq.Who = s3core.OpPreflight, access.Identity{Anonymous: true}
		return h.front.Preflight(w, r, rq)
	}
	op, routeErr := resolveOperation(r.Method, t, rq.Query, r.Header)
	rq.Op = op
	if op == s3core.OpPostObject {
		// A form upload carries its credentials in the form (objects/postobject.go
		// authenticates and authorizes it once it has read the fields); headers and query play
		// no part.
		rq.Who = access.Identity{Anonymous: true}
		rq.Auth = &sigv4.Auth{Payload: sigv4.PayloadUnsigned, DecodedContentLength: -1}
		if err := s3core.CheckBucketNameForAccess(rq.Bucket); err != nil {
			return err
		}
		return h.ops[op](w, r, rq)
	}
	// Authenticate before anything else. A request without credentials goes on as anonymous,
	// to be served only where an ACL or policy lets everyone in; it learns nothing else, not
	// even which operations exist.
	vopts := h.front.Verify
	if t.VirtualHost {
		vopts.VirtualHostBucket = t.Bucket // SigV2 signs "/bucket" + path
	}
	a, err := sigv4.Verify(r.Context(), r, h.front.Cfg.Credentials, h.front.Cfg.Now(), &vopts)
	switch {
	case errors.Is(err, sigv4.ErrAnonymous):
		rq.Who = access.Identity{Anonymous: true}
		if routeErr != nil {
			h.front.CorsForRefused(r.Context(), w, r, rq)
			return fmt.Errorf("anonymous: %w: %w", s3core.ErrAccessDenied, routeErr)
		}
		if a, err = s3core.AnonymousAuth(r); err != nil {
			return err
		}
	case err != nil:
		h.front.CorsForRefused(r.Context(), w, r, rq)
		return s3core.AuthError(r, err)
	case a.Credential.Account == "":
		return fmt.Errorf("access key %q has no account: %w", a.Credential.AccessKey, s3core.ErrAccessDenied)
	default:
		rq.Who = s3core.IdentityOf(a.Credential)
	}
	rq.Auth = a
	if routeErr != nil {
		return routeErr
	}
	if rq.Bucket != "" && op != s3core.OpCreateBucket {
		if err := s3core.CheckBucketNameForAccess(rq.Bucket); err != nil {
			return err
		}
	}
	if rq.Key != "" {
		if err := s3core.CheckKey(rq.Key); err != nil {
			return err
		}
	}
	if err := s3core.CheckVersionID(rq.Query); err != nil {
		return err
	}
	err = h.front.Authorize(r.Context(), r, rq)
	// A cross-origin request that a CORS rule of the bucket allows gets its headers whatever
	// the answer, a refusal included, as in S3.
	s3core.SetCORSHeaders(w, r, rq.Cors)
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

// ForgetAccessState drops the cached access state of a bucket that another front end (Swift)
// has just changed, so that the change applies through S3 at once in this process.
func (h *Handler) ForgetAccessState(account, bucket string) {
	h.front.ForgetAccessState(account, bucket)
}

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
