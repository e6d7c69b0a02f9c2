package buckets

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/versions"
)

// CreateBucket serves the S3 operation of that name.
func (h *Handler) CreateBucket(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if err := s3core.CheckBucketNameForCreate(rq.Bucket); err != nil {
		return err
	}
	// The location constraint's region is accepted and ignored (Cairn has one region per
	// endpoint), but the document must be well formed; "REGION:POLICY" names a storage policy.
	body, err := h.ReadSmallBody(r, rq, s3core.MaxCreateBucketBodyBytes, false)
	if err != nil {
		return err
	}
	var cfg s3xml.CreateBucketConfiguration
	if len(bytes.TrimSpace(body)) > 0 {
		if err := s3core.DecodeXML(body, &cfg); err != nil {
			return err
		}
	}
	pol, err := h.bucketPolicy(cfg.LocationConstraint)
	if err != nil {
		return err
	}
	acl, _, err := h.ACLFromHeaders(r, false)
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
		changes, err := h.Versions.Enable(ctx, rq.Account, meta.Container{Name: rq.Bucket, Meta: m})
		if err != nil {
			return fmt.Errorf("create bucket %q: versioning for Object Lock: %w", rq.Bucket, err)
		}
		maps.Copy(m, changes)
	}
	if v := r.Header.Get("X-Amz-Object-Ownership"); v != "" {
		o := access.Ownership(v)
		if !o.Valid() {
			return s3core.ErrInvalidArgument.WithMessage("Invalid x-amz-object-ownership %.60q.", v)
		}
		if o == access.OwnershipBucketOwnerEnforced && len(acl.Grants) > 0 {
			return s3core.ErrInvalidBucketACLWithOwnership
		}
		m[access.MetaOwnership] = v
	}
	shared := false
	if enc := acl.Encode(); enc != "" {
		// A bucket shared from its creation claims its name first (see s3core/registry.go).
		if _, err := h.Proxy.HeadContainer(ctx, rq.Account, rq.Bucket); err == nil {
			return fmt.Errorf("create bucket %q: %w", rq.Bucket, s3core.ErrBucketAlreadyOwnedByYou)
		}
		if err := h.ClaimForSharing(ctx, rq, true); err != nil {
			return err
		}
		m[access.MetaACL] = enc
		shared = true
	}
	err = h.Proxy.CreateContainer(ctx, rq.Account, rq.Bucket, m)
	h.ForgetAccessState(rq.Account, rq.Bucket)
	if errors.Is(err, meta.ErrExists) || errors.Is(err, proxy.ErrPolicyConflict) {
		return fmt.Errorf("create bucket %q: %w", rq.Bucket, s3core.ErrBucketAlreadyOwnedByYou)
	}
	if err != nil {
		if shared {
			h.ReleaseBucket(ctx, rq.Bucket, rq.Account)
		}
		return fmt.Errorf("create bucket %q: %w", rq.Bucket, err)
	}
	w.Header().Set("Location", "/"+rq.Bucket)
	s3core.WriteEmpty(w, http.StatusOK)
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
	p, err := h.Proxy.Policies().ForNewContainer(name)
	switch {
	case errors.Is(err, policy.ErrUnknown):
		return 0, s3core.ErrInvalidLocationConstraint.WithMessage("The specified location-constraint is not valid: there is no storage policy %q.", name)
	case errors.Is(err, policy.ErrDeprecated):
		return 0, s3core.ErrInvalidLocationConstraint.WithMessage("The specified location-constraint is not valid: storage policy %q is deprecated.", p.Name)
	case errors.Is(err, policy.ErrNotSupported):
		return 0, s3core.ErrNotImplemented.WithMessage("Storage policy %q is erasure-coded with %s, a code Cairn does not serve (its own is %s).", p.Name, p.EC.Scheme, policy.CairnScheme)
	case err != nil:
		return 0, err
	}
	return p.Index, nil
}

// HeadBucket serves the S3 operation of that name.
func (h *Handler) HeadBucket(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	c, err := h.RequireBucket(r.Context(), rq)
	if err != nil {
		return err
	}
	w.Header().Set("X-Amz-Bucket-Region", h.Cfg.Region)
	// Which storage policy holds the bucket's objects (as Swift's X-Storage-Policy says).
	if idx, ok := c.PolicyIndex(); ok {
		if p, ok := h.Proxy.Policies().ByIndex(idx); ok {
			w.Header().Set("X-Cairn-Storage-Policy", p.Name)
		}
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}

// DeleteBucket serves the S3 operation of that name.
func (h *Handler) DeleteBucket(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	err := h.Versions.DeleteContainer(r.Context(), rq.Account, rq.Bucket)
	h.ForgetAccessState(rq.Account, rq.Bucket)
	if errors.Is(err, meta.ErrNotEmpty) {
		return fmt.Errorf("delete bucket %q: %w: %w", rq.Bucket, s3core.ErrBucketNotEmpty, err)
	}
	if err != nil {
		return s3core.BucketError(fmt.Errorf("delete bucket %q: %w", rq.Bucket, err))
	}
	// Uploads still in progress die with their bucket, as in S3.
	h.DropUploadsContainer(r.Context(), rq.Account, rq.Bucket)
	h.ReleaseBucket(r.Context(), rq.Bucket, rq.Account)
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// GetBucketLocation serves the S3 operation of that name.
func (h *Handler) GetBucketLocation(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if _, err := h.RequireBucket(r.Context(), rq); err != nil {
		return err
	}
	// S3 reports us-east-1 as an empty constraint; clients depend on that.
	region := h.Cfg.Region
	if region == "us-east-1" {
		region = ""
	}
	s3core.WriteXML(w, http.StatusOK, s3xml.LocationConstraint{Xmlns: s3xml.Namespace, Region: region})
	return nil
}

// GetBucketRequestPayment serves the S3 operation of that name.
func (h *Handler) GetBucketRequestPayment(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if _, err := h.RequireBucket(r.Context(), rq); err != nil {
		return err
	}
	s3core.WriteXML(w, http.StatusOK, s3xml.RequestPaymentConfiguration{Xmlns: s3xml.Namespace, Payer: "BucketOwner"})
	return nil
}

// GetBucketLogging serves the S3 operation of that name.
func (h *Handler) GetBucketLogging(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if _, err := h.RequireBucket(r.Context(), rq); err != nil {
		return err
	}
	s3core.WriteXML(w, http.StatusOK, s3xml.BucketLoggingStatus{Xmlns: s3xml.Namespace})
	return nil
}

// GetBucketUnconfigured answers GET ?policy, ?cors, ... with S3's "no such configuration".
func (h *Handler) GetBucketUnconfigured(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if _, err := h.RequireBucket(r.Context(), rq); err != nil {
		return err
	}
	for sub, e := range s3core.BucketGetUnconfigured {
		if rq.Query.Has(sub) {
			return e
		}
	}
	return s3core.ErrNotImplemented
}

// ListBuckets serves the S3 operation of that name.
func (h *Handler) ListBuckets(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	res := s3xml.ListAllMyBucketsResult{Xmlns: s3xml.Namespace, Owner: rq.Owner(), Buckets: []s3xml.BucketInfo{}}
	prefix := rq.Query.Get("prefix")
	maxBuckets := 0
	if v := rq.Query.Get("max-buckets"); v != "" {
		n, err := s3core.ParseMaxKeys(v, 10000)
		if err != nil || n < 1 {
			return s3core.ErrInvalidArgument.WithMessage("max-buckets must be an integer from 1 to 10000.")
		}
		maxBuckets = n
	}
	opts := meta.ListOptions{Prefix: prefix}
	if tok := rq.Query.Get("continuation-token"); tok != "" {
		m, err := s3core.DecodeContinuationToken(tok)
		if err != nil {
			return err
		}
		opts.Marker = m
	}
	// Gather one bucket more than a page holds: only a bucket beyond the page earns a
	// continuation token (S3 sends none when the page ends exactly at the last bucket).
	for {
		l, err := h.Proxy.ListContainers(r.Context(), rq.Account, opts)
		if err != nil && !errors.Is(err, meta.ErrNotFound) { // an account with no container yet
			return fmt.Errorf("list buckets: %w", err)
		}
		for _, c := range l.Containers {
			res.Buckets = append(res.Buckets, s3xml.BucketInfo{Name: c.Name, CreationDate: s3xml.FormatISO(c.Created.Time()), BucketRegion: h.Cfg.Region})
		}
		if err != nil || !l.Truncated || (maxBuckets > 0 && len(res.Buckets) > maxBuckets) {
			break
		}
		opts.Marker = l.NextMarker
	}
	if maxBuckets > 0 && len(res.Buckets) > maxBuckets {
		res.Buckets = res.Buckets[:maxBuckets]
		res.ContinuationToken = s3core.EncodeContinuationToken(res.Buckets[maxBuckets-1].Name)
	}
	res.Prefix = prefix
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}
