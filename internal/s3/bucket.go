package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/versions"
)

// Buckets are containers of their owner's account: each account has its own bucket namespace,
// as with Swift's s3api. A shared bucket's name is also held in the proxy's name index, so that
// other tenants can address it (registry.go).

// bucketError turns "not found" from a container operation into NoSuchBucket.
func bucketError(err error) error {
	if errors.Is(err, meta.ErrNotFound) {
		return fmt.Errorf("%w: %w", errNoSuchBucket, err)
	}
	return err
}

// requireBucket checks that the request's bucket exists.
func (h *Handler) requireBucket(ctx context.Context, rq *request) (meta.Container, error) {
	c, err := h.proxy.HeadContainer(ctx, rq.account, rq.bucket)
	if err != nil {
		return c, bucketError(fmt.Errorf("head bucket %q: %w", rq.bucket, err))
	}
	return c, nil
}

func (h *Handler) createBucket(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := checkBucketNameForCreate(rq.bucket); err != nil {
		return err
	}
	// The location constraint's region is accepted and ignored (Cairn has one region per
	// endpoint), but the document must be well formed; "REGION:POLICY" names a storage policy.
	body, err := h.readSmallBody(r, rq, maxCreateBucketBodyBytes, false)
	if err != nil {
		return err
	}
	var cfg s3xml.CreateBucketConfiguration
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeXML(body, &cfg); err != nil {
			return err
		}
	}
	pol, err := h.bucketPolicy(cfg.LocationConstraint)
	if err != nil {
		return err
	}
	acl, _, err := h.aclFromHeaders(r, false)
	if err != nil {
		return err
	}
	ctx := r.Context()
	m := map[string]string{}
	if pol >= 0 {
		m[meta.ContainerPolicyKey] = strconv.Itoa(pol)
	}
	// A bucket made with Object Lock keeps versioning on from the start, for good.
	withLock := strings.EqualFold(r.Header.Get("X-Amz-Bucket-Object-Lock-Enabled"), "true")
	if withLock {
		// Versioning is on from the container's first record, in the same write as the lock:
		// a bucket with Object Lock is never, even after a failure half-way, without it.
		m[versions.KeyLockEnabled] = "Enabled"
		changes, err := h.versions.Enable(ctx, rq.account, meta.Container{Name: rq.bucket, Meta: m})
		if err != nil {
			return fmt.Errorf("create bucket %q: versioning for Object Lock: %w", rq.bucket, err)
		}
		maps.Copy(m, changes)
	}
	if v := r.Header.Get("X-Amz-Object-Ownership"); v != "" {
		o := access.Ownership(v)
		if !o.Valid() {
			return errInvalidArgument.withMessage("Invalid x-amz-object-ownership %.60q.", v)
		}
		if o == access.OwnershipBucketOwnerEnforced && len(acl.Grants) > 0 {
			return errInvalidBucketACLWithOwnership
		}
		m[access.MetaOwnership] = v
	}
	shared := false
	if enc := acl.Encode(); enc != "" {
		// A bucket shared from its creation claims its name first (see registry.go).
		if _, err := h.proxy.HeadContainer(ctx, rq.account, rq.bucket); err == nil {
			return fmt.Errorf("create bucket %q: %w", rq.bucket, errBucketAlreadyOwnedByYou)
		}
		if err := h.claimForSharing(ctx, rq, true); err != nil {
			return err
		}
		m[access.MetaACL] = enc
		shared = true
	}
	err = h.proxy.CreateContainer(ctx, rq.account, rq.bucket, m)
	h.states.forget(rq.account, rq.bucket)
	if errors.Is(err, meta.ErrExists) || errors.Is(err, proxy.ErrPolicyConflict) {
		return fmt.Errorf("create bucket %q: %w", rq.bucket, errBucketAlreadyOwnedByYou)
	}
	if err != nil {
		if shared {
			h.releaseBucket(ctx, rq.bucket, rq.account)
		}
		return fmt.Errorf("create bucket %q: %w", rq.bucket, err)
	}
	w.Header().Set("Location", "/"+rq.bucket)
	writeEmpty(w, http.StatusOK)
	return nil
}

// bucketPolicy reads the storage policy a CreateBucketConfiguration's LocationConstraint names:
// "REGION:POLICY" (the form Ceph's RGW gives its placement targets), the policy by a name or
// alias of Swift's X-Storage-Policy, without case. It returns the policy's index, or -1 for the
// default (a constraint without a colon, or an empty policy).
func (h *Handler) bucketPolicy(constraint string) (int, error) {
	_, name, ok := strings.Cut(constraint, ":")
	if !ok || name == "" {
		return -1, nil
	}
	p, err := h.proxy.Policies().ForNewContainer(name)
	switch {
	case errors.Is(err, policy.ErrUnknown):
		return 0, errInvalidLocationConstraint.withMessage("The specified location-constraint is not valid: there is no storage policy %q.", name)
	case errors.Is(err, policy.ErrDeprecated):
		return 0, errInvalidLocationConstraint.withMessage("The specified location-constraint is not valid: storage policy %q is deprecated.", p.Name)
	case errors.Is(err, policy.ErrNotSupported):
		return 0, errNotImplemented.withMessage("Storage policy %q is erasure-coded with %s, a code Cairn does not serve (its own is %s).", p.Name, p.EC.Scheme, policy.CairnScheme)
	case err != nil:
		return 0, err
	}
	return p.Index, nil
}

func (h *Handler) headBucket(w http.ResponseWriter, r *http.Request, rq *request) error {
	c, err := h.requireBucket(r.Context(), rq)
	if err != nil {
		return err
	}
	w.Header().Set("X-Amz-Bucket-Region", h.cfg.Region)
	// Which storage policy holds the bucket's objects (as Swift's X-Storage-Policy says).
	if idx, ok := c.PolicyIndex(); ok {
		if p, ok := h.proxy.Policies().ByIndex(idx); ok {
			w.Header().Set("X-Cairn-Storage-Policy", p.Name)
		}
	}
	writeEmpty(w, http.StatusOK)
	return nil
}

func (h *Handler) deleteBucket(w http.ResponseWriter, r *http.Request, rq *request) error {
	err := h.versions.DeleteContainer(r.Context(), rq.account, rq.bucket)
	h.states.forget(rq.account, rq.bucket)
	if errors.Is(err, meta.ErrNotEmpty) {
		return fmt.Errorf("delete bucket %q: %w: %w", rq.bucket, errBucketNotEmpty, err)
	}
	if err != nil {
		return bucketError(fmt.Errorf("delete bucket %q: %w", rq.bucket, err))
	}
	// Uploads still in progress die with their bucket, as in S3.
	h.dropUploadsContainer(r.Context(), rq.account, rq.bucket)
	h.releaseBucket(r.Context(), rq.bucket, rq.account)
	writeEmpty(w, http.StatusNoContent)
	return nil
}

func (h *Handler) getBucketLocation(w http.ResponseWriter, r *http.Request, rq *request) error {
	if _, err := h.requireBucket(r.Context(), rq); err != nil {
		return err
	}
	// S3 reports us-east-1 as an empty constraint; clients depend on that.
	region := h.cfg.Region
	if region == "us-east-1" {
		region = ""
	}
	writeXML(w, http.StatusOK, s3xml.LocationConstraint{Xmlns: s3xml.Namespace, Region: region})
	return nil
}

func (h *Handler) getBucketRequestPayment(w http.ResponseWriter, r *http.Request, rq *request) error {
	if _, err := h.requireBucket(r.Context(), rq); err != nil {
		return err
	}
	writeXML(w, http.StatusOK, s3xml.RequestPaymentConfiguration{Xmlns: s3xml.Namespace, Payer: "BucketOwner"})
	return nil
}

func (h *Handler) getBucketLogging(w http.ResponseWriter, r *http.Request, rq *request) error {
	if _, err := h.requireBucket(r.Context(), rq); err != nil {
		return err
	}
	writeXML(w, http.StatusOK, s3xml.BucketLoggingStatus{Xmlns: s3xml.Namespace})
	return nil
}

// getBucketUnconfigured answers GET ?policy, ?cors, ... with S3's "no such configuration".
func (h *Handler) getBucketUnconfigured(w http.ResponseWriter, r *http.Request, rq *request) error {
	if _, err := h.requireBucket(r.Context(), rq); err != nil {
		return err
	}
	for sub, e := range bucketGetUnconfigured {
		if rq.query.Has(sub) {
			return e
		}
	}
	return errNotImplemented
}

func (h *Handler) listBuckets(w http.ResponseWriter, r *http.Request, rq *request) error {
	res := s3xml.ListAllMyBucketsResult{Xmlns: s3xml.Namespace, Owner: rq.owner(), Buckets: []s3xml.BucketInfo{}}
	prefix := rq.query.Get("prefix")
	maxBuckets := 0
	if v := rq.query.Get("max-buckets"); v != "" {
		n, err := parseMaxKeys(v, 10000)
		if err != nil || n < 1 {
			return errInvalidArgument.withMessage("max-buckets must be an integer from 1 to 10000.")
		}
		maxBuckets = n
	}
	opts := meta.ListOptions{Prefix: prefix}
	if tok := rq.query.Get("continuation-token"); tok != "" {
		m, err := decodeContinuationToken(tok)
		if err != nil {
			return err
		}
		opts.Marker = m
	}
	// Gather one bucket more than a page holds: only a bucket beyond the page earns a
	// continuation token (S3 sends none when the page ends exactly at the last bucket).
	for {
		l, err := h.proxy.ListContainers(r.Context(), rq.account, opts)
		if err != nil && !errors.Is(err, meta.ErrNotFound) { // an account with no container yet
			return fmt.Errorf("list buckets: %w", err)
		}
		for _, c := range l.Containers {
			res.Buckets = append(res.Buckets, s3xml.BucketInfo{Name: c.Name, CreationDate: s3xml.FormatISO(c.Created.Time()), BucketRegion: h.cfg.Region})
		}
		if err != nil || !l.Truncated || (maxBuckets > 0 && len(res.Buckets) > maxBuckets) {
			break
		}
		opts.Marker = l.NextMarker
	}
	if maxBuckets > 0 && len(res.Buckets) > maxBuckets {
		res.Buckets = res.Buckets[:maxBuckets]
		res.ContinuationToken = encodeContinuationToken(res.Buckets[maxBuckets-1].Name)
	}
	res.Prefix = prefix
	writeXML(w, http.StatusOK, res)
	return nil
}

// drainBody discards what is left of a request body so the connection can be reused.
func drainBody(r *http.Request) {
	io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10))
}

// bucketOfCopySource splits "bucket/key" of an x-amz-copy-source.
func splitBucketKey(s string) (string, string, bool) {
	s = strings.TrimPrefix(s, "/")
	b, k, ok := strings.Cut(s, "/")
	return b, k, ok && b != "" && k != ""
}
