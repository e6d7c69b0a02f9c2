package s3core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/cors"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/versions"
)

// Access control. Every request is decided by internal/access from who asks (an authenticated
// user of an account, the root key, or nobody), the operation's S3 action and the bucket's
// access state (ACL, policy, Swift container ACLs) kept in its container's metadata.
//
// The bucket namespace: a bucket is a container of its owner's account, and names are per
// account. A request names a bucket by its name alone, so the front end resolves the name to
// an account: the caller's own account first, otherwise the account holding the name in the
// proxy's name index, which an owner claims when it shares a bucket (registry.go).

// AnonymousAuth stands in for the SigV4 result of a request without credentials: its body is
// taken as it comes (checked against x-amz-content-sha256 if that is a hash).
func AnonymousAuth(r *http.Request) (*sigv4.Auth, error) {
	a := &sigv4.Auth{Payload: sigv4.PayloadUnsigned, DecodedContentLength: -1}
	switch v := r.Header.Get("X-Amz-Content-Sha256"); {
	case v == "" || v == "UNSIGNED-PAYLOAD":
	case strings.HasPrefix(v, "STREAMING-"):
		return nil, ErrNotImplemented.WithMessage("Anonymous aws-chunked uploads are not supported.")
	case len(v) == 64 && isLowerHex(v):
		a.Payload, a.PayloadSHA256 = sigv4.PayloadSigned, v
	default:
		return nil, fmt.Errorf("x-amz-content-sha256 %.70q: %w", v, sigv4.ErrInvalidContentSHA256)
	}
	return a, nil
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// IdentityOf is who a verified credential is.
func IdentityOf(c sigv4.Credential) access.Identity {
	return access.Identity{Account: c.Account, User: c.User, Admin: c.Admin, Root: c.Root}
}

// opActions maps operations to the action a decision is made on. Operations missing here are
// decided elsewhere: ListBuckets and CreateBucket act on the caller's own account,
// GetBucketUnconfigured by its subresource, DeleteObjects key by key.
var opActions = map[string]access.Action{
	OpHeadBucket:              access.ListBucket,
	OpListObjects:             access.ListBucket,
	OpListObjectsV2:           access.ListBucket,
	OpListMultipartUploads:    access.ListBucketMultipartUploads,
	OpDeleteBucket:            access.DeleteBucket,
	OpGetBucketLocation:       access.GetBucketLocation,
	OpGetBucketVersioning:     access.GetBucketVersioning,
	OpPutBucketVersioning:     access.PutBucketVersioning,
	OpListObjectVersions:      access.ListBucketVersions,
	OpGetBucketACL:            access.GetBucketAcl,
	OpPutBucketACL:            access.PutBucketAcl,
	OpGetBucketPolicy:         access.GetBucketPolicy,
	OpPutBucketPolicy:         access.PutBucketPolicy,
	OpDeleteBucketPolicy:      access.DeleteBucketPolicy,
	OpGetBucketPolicyStatus:   access.GetBucketPolicyStatus,
	OpGetBucketRequestPayment: access.GetBucketRequestPayment,
	OpGetBucketLogging:        access.GetBucketLogging,
	OpGetBucketTagging:        access.GetBucketTagging,
	OpPutBucketTagging:        access.PutBucketTagging,
	OpDeleteBucketTagging:     access.PutBucketTagging, // as AWS decides it
	OpGetBucketCors:           access.GetBucketCORS,
	OpGetObjectLockConfig:     access.GetBucketObjectLockConfiguration,
	OpPutObjectLockConfig:     access.PutBucketObjectLockConfiguration,
	OpGetObjectRetention:      access.GetObjectRetention,
	OpPutObjectRetention:      access.PutObjectRetention,
	OpGetObjectLegalHold:      access.GetObjectLegalHold,
	OpPutObjectLegalHold:      access.PutObjectLegalHold,
	OpPutBucketCors:           access.PutBucketCORS,
	OpDeleteBucketCors:        access.PutBucketCORS, // as in S3: no permission of its own
	OpGetBucketEncryption:     access.GetEncryptionConfiguration,
	OpPutBucketEncryption:     access.PutEncryptionConfiguration,
	OpDeleteBucketEncryption:  access.PutEncryptionConfiguration, // as in S3
	OpGetBucketLifecycle:      access.GetLifecycleConfiguration,
	OpPutBucketLifecycle:      access.PutLifecycleConfiguration,
	OpDeleteBucketLifecycle:   access.PutLifecycleConfiguration, // as in S3: no permission of its own
	OpPutObject:               access.PutObject,
	OpPostObject:              access.PutObject,
	OpCopyObject:              access.PutObject,
	OpGetObject:               access.GetObject,
	OpHeadObject:              access.GetObject,
	OpDeleteObject:            access.DeleteObject,
	OpGetObjectACL:            access.GetObjectAcl,
	OpPutObjectACL:            access.PutObjectAcl,
	OpGetObjectTagging:        access.GetObjectTagging,
	OpPutObjectTagging:        access.PutObjectTagging,
	OpDeleteObjectTagging:     access.DeleteObjectTagging,
	// AWS asks for s3:GetObjectAttributes besides s3:GetObject; Cairn decides on s3:GetObject
	// alone, as HeadObject, which tells the same size, ETag and checksum.
	OpGetObjectAttributes:     access.GetObject,
	OpCreateMultipartUpload:   access.PutObject,
	OpUploadPart:              access.PutObject,
	OpUploadPartCopy:          access.PutObject,
	OpCompleteMultipartUpload: access.PutObject,
	OpAbortMultipartUpload:    access.AbortMultipartUpload,
	OpListParts:               access.ListMultipartUploadParts,
	OpGetPublicAccessBlock:    access.GetBucketPublicAccessBlock,
	OpPutPublicAccessBlock:    access.PutBucketPublicAccessBlock,
	OpDeletePublicAccessBlock: access.PutBucketPublicAccessBlock, // as AWS decides it
	OpGetOwnershipControls:    access.GetBucketOwnershipControls,
	OpPutOwnershipControls:    access.PutBucketOwnershipControls,
	OpDeleteOwnershipControls: access.PutBucketOwnershipControls, // as AWS decides it
}

// unconfiguredActions are the actions of the GET subresources answered "not configured".
var unconfiguredActions = map[string]access.Action{
	"website":     access.GetBucketWebsite,
	"replication": access.GetReplicationConfiguration,
}

// ActionOf is the action of a routed request.
func ActionOf(op string, q map[string][]string) access.Action {
	if op == OpGetBucketUnconfigured {
		for sub, a := range unconfiguredActions {
			if _, ok := q[sub]; ok {
				return a
			}
		}
		return 0
	}
	return opActions[op]
}

// Authorize resolves the request's bucket to its owner (rq.account) and access state, and
// decides whether the caller may do the operation. Copy sources and the keys of a
// multi-object delete are decided where they are read.
func (h *Front) Authorize(ctx context.Context, r *http.Request, rq *Request) error {
	switch rq.Op {
	case OpListBuckets, OpCreateBucket:
		a := access.ListAllMyBuckets
		if rq.Op == OpCreateBucket {
			a = access.CreateBucket
		}
		if d := access.Decide(access.Request{Identity: rq.Who, Action: a}); !d.Allowed {
			return fmt.Errorf("%s: %s: %w", rq.Op, d.Reason, ErrAccessDenied)
		}
		rq.Account = rq.Who.Account
		return nil
	}
	b, err := h.ResolveBucket(ctx, rq.Who, rq.Bucket)
	if err != nil {
		if rq.Who.Anonymous && errors.Is(err, ErrNoSuchBucket) {
			return fmt.Errorf("anonymous request: %w: %w", ErrAccessDenied, err) // nothing learnt
		}
		return err
	}
	rq.Account, rq.State, rq.Cors, rq.Encryption = b.Owner, b.State, b.cors, b.encryption
	if want := r.Header.Get("X-Amz-Expected-Bucket-Owner"); want != "" && want != rq.Account {
		return fmt.Errorf("x-amz-expected-bucket-owner %.80q: %w", want, ErrAccessDenied)
	}
	rq.Cond = conditionContext(r, rq, h.Cfg.Now())
	if rq.Op == OpDeleteObjects {
		return nil
	}
	action := ActionOf(rq.Op, rq.Query)
	if DeferredTaggingDecision(rq) {
		return nil // decided by putObjectTagging once it has read the tags (a small body)
	}
	if err := h.Allowed(ctx, rq, action, rq.Key, r.Header.Get("Referer")); err != nil {
		return err
	}
	// Setting an ACL that grants anything while writing an object takes the right to set it,
	// as in S3. (private and bucket-owner-* grant nothing in Cairn, where the bucket's account
	// owns every object: writers with WRITE may send them, as cross-account uploaders do.)
	switch rq.Op {
	case OpPutObject, OpPostObject, OpCopyObject, OpCreateMultipartUpload:
		if aclHeadersGrant(r.Header) {
			if !rq.State.ACLsEnabled() {
				// BucketOwnerEnforced: only ACLs that grant nothing (private,
				// bucket-owner-full-control) may be sent.
				return fmt.Errorf("ACL headers on %q: %w", rq.Key, errACLNotSupported)
			}
			d := h.decide(rq, access.PutObjectAcl, rq.Key, &access.ACL{}, r.Header.Get("Referer"))
			if !d.Allowed {
				return fmt.Errorf("setting the ACL of %q: %s: %w", rq.Key, d.Reason, ErrAccessDenied)
			}
			if acl, _, err := h.ACLFromHeaders(r, true); err == nil {
				if err := checkPublicACL(rq, acl); err != nil {
					return err
				}
			}
		}
		// So does tagging it (x-amz-tagging), as in S3; a copy sets tags only with REPLACE.
		if setsTags(rq.Op, r.Header) {
			d := h.decide(rq, access.PutObjectTagging, rq.Key, nil, r.Header.Get("Referer"))
			if !d.Allowed {
				return fmt.Errorf("tagging %q: %s: %w", rq.Key, d.Reason, ErrAccessDenied)
			}
		}
	}
	return nil
}

// DeferredTaggingDecision reports whether a PutObjectTagging is decided in its handler, after
// its document is read: when the bucket policy tests the request's tags
// (s3:RequestObjectTag/..., s3:RequestObjectTagKeys), which only the document carries.
func DeferredTaggingDecision(rq *Request) bool {
	return rq.Op == OpPutObjectTagging && rq.State != nil && rq.State.Policy.UsesRequestObjectTags()
}

func (h *Front) decide(rq *Request, a access.Action, key string, objACL *access.ACL, referer string) access.Decision {
	return access.Decide(access.Request{
		Identity: rq.Who, Action: a,
		Resource: access.Resource{Owner: rq.Account, Bucket: rq.Bucket, Key: key},
		Bucket:   rq.State, Object: objACL, Referer: referer, Context: rq.Cond,
	})
}

// addressedVersion reads the version of name a decision is about: the one the request's
// versionId names (for the request's own key), else the current one, through its link in a
// versioned bucket (the link itself carries neither the ACL nor the tags).
func (h *Front) addressedVersion(ctx context.Context, rq *Request, name meta.ObjectName) (meta.Object, error) {
	if id := rq.Query.Get("versionId"); id != "" && name.Object == rq.Key && ValidVersionID(id) {
		v, err := h.Versions.Resolve(ctx, rq.Versioning(), name, id)
		if errors.Is(err, versions.ErrNoSuchVersion) || err == nil && v.DeleteMarker {
			return meta.Object{}, fmt.Errorf("version %s of %q: %w", id, name.Object, meta.ErrNotFound)
		}
		return v.Object, err
	}
	return h.Versions.Current(ctx, name)
}

// Allowed decides one action on the request's bucket (rq.account and rq.state resolved),
// loading the object's ACL only when the decision needs it. A refusal is AccessDenied; for an
// object that does not exist it is NoSuchKey instead when the caller may list the bucket (and
// so could learn that anyway), as in S3.
func (h *Front) Allowed(ctx context.Context, rq *Request, a access.Action, key, referer string) error {
	name := meta.ObjectName{Account: rq.Account, Container: rq.Bucket, Object: key}
	var obj meta.Object
	var objErr error
	headed := false
	if a.ObjectLevel() && key != "" && rq.State != nil && rq.State.Policy.UsesExistingObjectTags() {
		// The policy tests the object's tags (s3:ExistingObjectTag/...): read them into the
		// context. An object that does not exist has none.
		obj, objErr = h.addressedVersion(ctx, rq, name)
		headed = true
		switch {
		case objErr == nil:
			t := *rq
			t.Cond = rq.Cond.WithExistingTags(obj.SysMeta)
			rq = &t
		case !errors.Is(objErr, meta.ErrNotFound):
			return fmt.Errorf("object tags of %q: %w", key, objErr)
		}
	}
	d := h.decide(rq, a, key, nil, referer)
	if d.NeedObjectACL {
		if !headed {
			obj, objErr = h.addressedVersion(ctx, rq, name)
		}
		err := objErr
		switch {
		case err == nil:
			d = h.decide(rq, a, key, access.ObjectACLFromSysMeta(obj.SysMeta), referer)
		case errors.Is(err, meta.ErrNotFound):
			if h.decide(rq, access.ListBucket, "", nil, referer).Allowed {
				return fmt.Errorf("%s %q: %w", a, key, ErrNoSuchKey)
			}
		default:
			return fmt.Errorf("object ACL of %q: %w", key, err)
		}
	}
	if !d.Allowed {
		h.Log.DebugContext(ctx, "s3 access denied", "request_id", rq.ID, "account", rq.Who.Account, "user", rq.Who.User,
			"anonymous", rq.Who.Anonymous, "action", a.String(), "owner", rq.Account, "bucket", rq.Bucket, "key", key, "reason", d.Reason)
		return fmt.Errorf("%s on %s/%s: %s: %w", a, rq.Bucket, key, d.Reason, ErrAccessDenied)
	}
	return nil
}

// mayList reports whether the caller may list the request's bucket.
func (h *Front) mayList(rq *Request) bool {
	if rq.State == nil {
		return true // not resolved: the caller's own bucket
	}
	return h.decide(rq, access.ListBucket, "", nil, "").Allowed
}

// bucketRef is a resolved bucket: its owning account, access state and CORS configuration.
type bucketRef struct {
	Owner string
	bucketMeta
}

// bucketMeta is what the front end reads from a bucket's container metadata and caches: its
// access state and its CORS configuration (nil: none).
type bucketMeta struct {
	State      *access.BucketState
	cors       *cors.Config
	encryption *BucketEncryption // sse_bucket.go
}

// ResolveBucket finds the account that owns a bucket name for a caller: the caller's own
// account when it has such a bucket, otherwise the owner the name index names (a shared
// bucket). NoSuchBucket when neither has it.
func (h *Front) ResolveBucket(ctx context.Context, id access.Identity, bucket string) (bucketRef, error) {
	if !id.Anonymous && id.Account != "" {
		bm, err := h.bucketMeta(ctx, id.Account, bucket)
		if err == nil {
			return bucketRef{Owner: id.Account, bucketMeta: bm}, nil
		}
		if !errors.Is(err, meta.ErrNotFound) {
			return bucketRef{}, fmt.Errorf("bucket %q: %w", bucket, err)
		}
	}
	owner, err := h.bucketOwner(ctx, bucket)
	if err != nil {
		if errors.Is(err, meta.ErrNotFound) && CheckBucketNameForCreate(bucket) != nil {
			// A name no bucket could be created under: say so, as S3 does, rather than
			// NoSuchBucket (a Swift container of that name is still found above).
			return bucketRef{}, fmt.Errorf("bucket %q: %w", bucket, errInvalidBucketName)
		}
		return bucketRef{}, BucketError(fmt.Errorf("bucket %q: %w", bucket, err))
	}
	if owner == id.Account && !id.Anonymous {
		return bucketRef{}, fmt.Errorf("bucket %q: the index names the caller, who has no such bucket: %w", bucket, ErrNoSuchBucket)
	}
	bm, err := h.bucketMeta(ctx, owner, bucket)
	if err != nil {
		return bucketRef{}, BucketError(fmt.Errorf("bucket %q of %q: %w", bucket, owner, err))
	}
	return bucketRef{Owner: owner, bucketMeta: bm}, nil
}

// BucketState returns the access state of an account's bucket, from the cache when it is
// fresh; meta.ErrNotFound when the bucket does not exist.
func (h *Front) BucketState(ctx context.Context, account, bucket string) (*access.BucketState, error) {
	bm, err := h.bucketMeta(ctx, account, bucket)
	return bm.State, err
}

// bucketMeta returns the access state and CORS configuration of an account's bucket, from the
// cache when it is fresh; meta.ErrNotFound when the bucket does not exist.
func (h *Front) bucketMeta(ctx context.Context, account, bucket string) (bucketMeta, error) {
	now := time.Now()
	if bm, ok := h.states.get(account, bucket, now); ok {
		return bm, nil
	}
	gen := h.states.generation()
	c, err := h.Proxy.HeadContainer(ctx, account, bucket)
	if err != nil {
		return bucketMeta{}, err
	}
	bm := bucketMeta{State: access.StateFromMeta(bucket, c.Meta)}
	if bm.State.Broken != nil {
		h.Log.WarnContext(ctx, "s3 bucket access state does not parse; only its owner gets in", "account", account, "bucket", bucket, "err", bm.State.Broken)
	}
	if bm.cors, err = cors.Decode(c.Meta[cors.MetaKey]); err != nil {
		// It was validated when it was set: this is damage, or a newer writer. Without a
		// configuration that can be read, the bucket answers as one without CORS.
		h.Log.WarnContext(ctx, "s3 bucket CORS configuration does not parse; ignored", "account", account, "bucket", bucket, "err", err)
	}
	if bm.encryption, err = decodeBucketEncryption(c.Meta[BucketEncryptionKey]); err != nil {
		h.Log.WarnContext(ctx, "s3 bucket default encryption does not parse; ignored", "account", account, "bucket", bucket, "err", err)
	}
	h.states.put(account, bucket, bm, now, gen)
	return bm, nil
}

// stateCache keeps buckets' access states (and CORS configurations) for a short while, so that an object request does
// not read the container record (and usage counters) every time, as the proxy's container
// cache does for existence. This front end forgets an entry whenever it changes the state
// (ACL, policy, create, delete), and the Swift front end of the same process tells it of its
// changes (ForgetAccessState), so both apply at once; changes made by another process apply
// within the TTL.
type stateCache struct {
	ttl time.Duration
	mu  sync.RWMutex
	m   map[stateKey]cachedState
	gen uint64 // counts forgets: a state read before one must not be cached after it
}

type stateKey struct{ account, bucket string }

type cachedState struct {
	bucketMeta
	exp time.Time
}

// maxCachedStates bounds the cache's memory; when full it is simply emptied.
const maxCachedStates = 100_000

// DefaultAccessCacheTTL is how long a bucket's access state is trusted (Config.AccessCacheTTL).
const DefaultAccessCacheTTL = 5 * time.Second

// newStateCache returns an empty access-state cache trusting entries for ttl.
func newStateCache(ttl time.Duration) *stateCache {
	return &stateCache{ttl: ttl, m: map[stateKey]cachedState{}}
}

func (c *stateCache) get(account, bucket string, now time.Time) (bucketMeta, bool) {
	if c.ttl <= 0 {
		return bucketMeta{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.m[stateKey{account, bucket}]
	if !ok || !now.Before(e.exp) {
		return bucketMeta{}, false
	}
	return e.bucketMeta, true
}

func (c *stateCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

func (c *stateCache) put(account, bucket string, bm bucketMeta, now time.Time, gen uint64) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.m) >= maxCachedStates {
		clear(c.m)
	}
	c.m[stateKey{account, bucket}] = cachedState{bucketMeta: bm, exp: now.Add(c.ttl)}
}

// ForgetAccessState drops the cached access state of a bucket whose state has just changed,
// through a handler of this front end or through another front end (Swift), so that the
// change applies through S3 at once in this process.
func (h *Front) ForgetAccessState(account, bucket string) { h.states.forget(account, bucket) }

func (c *stateCache) forget(account, bucket string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, stateKey{account, bucket})
	c.gen++
}

// aclHeadersGrant reports whether a request's ACL headers may grant anything: any grant
// header, or a canned ACL other than those that mean private.
func aclHeadersGrant(hdr http.Header) bool {
	switch hdr.Get("X-Amz-Acl") {
	case "", access.CannedPrivate, access.CannedBucketOwnerRead, access.CannedBucketOwnerFullControl:
	default:
		return true
	}
	for _, g := range grantHeaders {
		if hdr.Get(g.header) != "" {
			return true
		}
	}
	return false
}
