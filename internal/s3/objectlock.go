package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/versions"
)

// Object Lock, as S3 has it: a bucket created with it (or given it once versioning is on)
// keeps versioning on for good, may give new versions a default retention, and each version
// may carry a retention (GOVERNANCE or COMPLIANCE, until a date) and a legal hold. The rules of
// what a lock forbids are the version store's (internal/versions/lock.go), so that a version is
// protected whichever API asks to remove it.

var (
	ErrObjectLocked           = &APIError{"AccessDenied", http.StatusForbidden, "Access Denied because object protected by object lock."}
	errInvalidBucketState     = &APIError{"InvalidBucketState", http.StatusConflict, "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed."}
	ErrLockNotEnabled         = ErrInvalidRequest.WithMessage("Bucket is missing Object Lock Configuration")
	ErrNoSuchObjectLockConfig = &APIError{"NoSuchObjectLockConfiguration", http.StatusNotFound, "The specified object does not have a ObjectLock configuration"}
	ErrRetainUntilPast        = ErrInvalidArgument.WithMessage("The retain until date must be in the future!")
)

// lockEnabled reports the Object Lock setting of the request's bucket (from its cached state).
func (rq *Request) LockEnabled() bool {
	return rq.State != nil && versions.LockEnabled(meta.Container{Meta: rq.State.Meta})
}

// bypassGovernance reports whether a request asks to bypass GOVERNANCE retentions and may.
func (h *objectsHandler) bypassGovernance(ctx context.Context, r *http.Request, rq *Request, key string) bool {
	if !strings.EqualFold(r.Header.Get("X-Amz-Bypass-Governance-Retention"), "true") {
		return false
	}
	return h.Allowed(ctx, rq, access.BypassGovernanceRetention, key, r.Header.Get("Referer")) == nil
}

// lockFromHeaders puts the lock a write asks for (x-amz-object-lock-mode and
// -retain-until-date, -legal-hold), or else the bucket's default retention, into the new
// version's SysMeta.
func (h *objectsHandler) lockFromHeaders(ctx context.Context, r *http.Request, rq *Request, obj *meta.Object) error {
	mode, until, hold := r.Header.Get("X-Amz-Object-Lock-Mode"), r.Header.Get("X-Amz-Object-Lock-Retain-Until-Date"), r.Header.Get("X-Amz-Object-Lock-Legal-Hold")
	if mode == "" && until == "" && hold == "" {
		if !rq.LockEnabled() {
			return nil
		}
		def := versions.DefaultRetentionOf(meta.Container{Meta: rq.State.Meta})
		if def.IsZero() {
			return nil
		}
		obj.SysMeta = withSys(obj.SysMeta)
		versions.SetRetention(obj.SysMeta, def.From(time.Now()))
		return nil
	}
	if !rq.LockEnabled() {
		return ErrLockNotEnabled
	}
	obj.SysMeta = withSys(obj.SysMeta)
	if mode != "" || until != "" {
		if mode == "" || until == "" {
			return ErrInvalidArgument.WithMessage("x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied")
		}
		ret, err := parseRetention(mode, until)
		if err != nil {
			return err
		}
		if err := h.Allowed(ctx, rq, access.PutObjectRetention, rq.Key, r.Header.Get("Referer")); err != nil {
			return err
		}
		versions.SetRetention(obj.SysMeta, ret)
	}
	if hold != "" {
		if hold != "ON" && hold != "OFF" {
			return ErrInvalidArgument.WithMessage("Legal Hold must be either of 'ON' or 'OFF'")
		}
		if err := h.Allowed(ctx, rq, access.PutObjectLegalHold, rq.Key, r.Header.Get("Referer")); err != nil {
			return err
		}
		versions.SetLegalHold(obj.SysMeta, hold == "ON")
	}
	return nil
}

func withSys(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// parseRetention reads a retention's mode and date, which must be in the future.
func parseRetention(mode, until string) (versions.Retention, error) {
	if mode != versions.Governance && mode != versions.Compliance {
		return versions.Retention{}, ErrInvalidArgument.WithMessage("Unknown wormMode directive.")
	}
	t, err := time.Parse(time.RFC3339Nano, until)
	if err != nil {
		return versions.Retention{}, ErrInvalidArgument.WithMessage("The retain until date must be provided in ISO 8601 format")
	}
	if !t.After(time.Now()) {
		return versions.Retention{}, ErrRetainUntilPast
	}
	return versions.Retention{Mode: mode, Until: t}, nil
}

// writeLockHeaders answers a version's lock on GET and HEAD, as S3 does.
func writeLockHeaders(hdr http.Header, obj *meta.Object) {
	if r := versions.RetentionOf(obj); !r.IsZero() {
		hdr.Set("X-Amz-Object-Lock-Mode", r.Mode)
		hdr.Set("X-Amz-Object-Lock-Retain-Until-Date", r.Until.UTC().Format(time.RFC3339))
	}
	if v := obj.SysMeta[versions.SysLockLegalHold]; v != "" {
		hdr.Set("X-Amz-Object-Lock-Legal-Hold", v)
	}
}

func (h *bucketsHandler) GetObjectLockConfiguration(w http.ResponseWriter, r *http.Request, rq *Request) error {
	c, err := h.RequireBucket(r.Context(), rq)
	if err != nil {
		return err
	}
	if !versions.LockEnabled(c) {
		return ErrNoObjectLockConfig
	}
	res := s3xml.ObjectLockConfiguration{Xmlns: s3xml.Namespace, ObjectLockEnabled: "Enabled"}
	if d := versions.DefaultRetentionOf(c); !d.IsZero() {
		dr := &s3xml.DefaultRetention{Mode: d.Mode}
		if d.Years > 0 {
			dr.Years = &d.Years
		} else {
			dr.Days = &d.Days
		}
		res.Rule = &s3xml.ObjectLockRule{DefaultRetention: dr}
	}
	WriteXML(w, http.StatusOK, res)
	return nil
}

func (h *bucketsHandler) PutObjectLockConfiguration(w http.ResponseWriter, r *http.Request, rq *Request) error {
	ctx := r.Context()
	body, err := h.ReadSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var cfg s3xml.ObjectLockConfiguration
	if err := DecodeXML(body, &cfg); err != nil {
		return err
	}
	if cfg.ObjectLockEnabled != "Enabled" {
		return ErrMalformedXML
	}
	var def versions.DefaultRetention
	if cfg.Rule != nil {
		d := cfg.Rule.DefaultRetention
		if d == nil || (d.Mode != versions.Governance && d.Mode != versions.Compliance) || (d.Days == nil) == (d.Years == nil) {
			return ErrMalformedXML
		}
		def.Mode = d.Mode
		switch {
		case d.Days != nil && *d.Days > 0 && *d.Days <= 36500:
			def.Days = *d.Days
		case d.Years != nil && *d.Years > 0 && *d.Years <= 100:
			def.Years = *d.Years
		default:
			return ErrInvalidArgument.WithMessage("Default retention period must be a positive integer value.")
		}
	}
	c, err := h.RequireBucket(ctx, rq)
	if err != nil {
		return err
	}
	if !versions.LockEnabled(c) && !versions.StateOf(c).Enabled {
		return &APIError{"InvalidBucketState", http.StatusConflict, "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration"}
	}
	changes := map[string]string{versions.KeyLockEnabled: "Enabled", versions.KeyLockDefault: def.Encode()}
	if _, err := h.Proxy.PostContainer(ctx, rq.Account, rq.Bucket, changes); err != nil {
		return BucketError(fmt.Errorf("object lock of %q: %w", rq.Bucket, err))
	}
	h.States.Forget(rq.Account, rq.Bucket)
	WriteEmpty(w, http.StatusOK)
	return nil
}

// lockedVersion reads the version an object-lock request addresses (?versionId, else the
// current one), in a bucket with Object Lock.
func (h *objectsHandler) lockedVersion(ctx context.Context, w http.ResponseWriter, rq *Request) (meta.Object, error) {
	if !rq.LockEnabled() {
		return meta.Object{}, ErrLockNotEnabled
	}
	if err := h.LocateVersion(ctx, w, rq); err != nil {
		return meta.Object{}, err
	}
	WriteVersionID(w, rq)
	obj, err := h.Proxy.HeadObjectBrief(ctx, rq.ReadName())
	if err != nil {
		return meta.Object{}, h.NotFound(ctx, rq, fmt.Errorf("lock of %q: %w", rq.Key, err))
	}
	if obj.ContentType == versions.DeleteMarkerType {
		return meta.Object{}, ErrMethodNotAllowed
	}
	return obj, nil
}

// updateLock rewrites a version's lock (its SysMeta) and nothing else of it, as it was read
// (obj): a change made meanwhile (another retention or legal hold) fails it, rather than
// either passing its check against what was there before.
func (h *objectsHandler) updateLock(ctx context.Context, rq *Request, obj *meta.Object, sys map[string]string) error {
	update := ObjectMetaOf(obj)
	update.SysMeta = sys
	_, err := h.Proxy.PostObjectIf(ctx, rq.ReadName(), update, obj.Timestamp)
	if errors.Is(err, meta.ErrPreconditionFailed) {
		return fmt.Errorf("set the lock of %q: %w: %w", rq.Key, errLockChanged, err)
	}
	if err != nil {
		return h.NotFound(ctx, rq, fmt.Errorf("set the lock of %q: %w", rq.Key, err))
	}
	return nil
}

// errLockChanged: the version's lock changed between the read and the write (S3 answers
// racing conditional changes 409 ConditionalRequestConflict; the client tries again).
var errLockChanged = &APIError{"ConditionalRequestConflict", http.StatusConflict, "A conflicting operation occurred on the object's Object Lock settings. Please try again."}

func (h *objectsHandler) GetObjectRetention(w http.ResponseWriter, r *http.Request, rq *Request) error {
	obj, err := h.lockedVersion(r.Context(), w, rq)
	if err != nil {
		return err
	}
	ret := versions.RetentionOf(&obj)
	if ret.IsZero() {
		return ErrNoSuchObjectLockConfig
	}
	WriteXML(w, http.StatusOK, s3xml.ObjectRetention{Xmlns: s3xml.Namespace, Mode: ret.Mode, RetainUntilDate: ret.Until.UTC().Format(time.RFC3339Nano)})
	return nil
}

func (h *objectsHandler) PutObjectRetention(w http.ResponseWriter, r *http.Request, rq *Request) error {
	ctx := r.Context()
	body, err := h.ReadSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var doc s3xml.ObjectRetention
	if err := DecodeXML(body, &doc); err != nil {
		return err
	}
	var ret versions.Retention
	if doc.Mode != "" || doc.RetainUntilDate != "" {
		if ret, err = parseRetention(doc.Mode, doc.RetainUntilDate); err != nil {
			return err
		}
	}
	obj, err := h.lockedVersion(ctx, w, rq)
	if err != nil {
		return err
	}
	bypass := h.bypassGovernance(ctx, r, rq, rq.Key)
	if err := versions.CheckRetentionChange(versions.RetentionOf(&obj), ret, time.Now(), bypass); err != nil {
		return fmt.Errorf("%w: %w", ErrObjectLocked, err)
	}
	sys := map[string]string{}
	versions.SetRetention(sys, ret)
	if err := h.updateLock(ctx, rq, &obj, sys); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusOK)
	return nil
}

func (h *objectsHandler) GetObjectLegalHold(w http.ResponseWriter, r *http.Request, rq *Request) error {
	obj, err := h.lockedVersion(r.Context(), w, rq)
	if err != nil {
		return err
	}
	status := obj.SysMeta[versions.SysLockLegalHold]
	if status == "" {
		return ErrNoSuchObjectLockConfig
	}
	WriteXML(w, http.StatusOK, s3xml.ObjectLegalHold{Xmlns: s3xml.Namespace, Status: status})
	return nil
}

func (h *objectsHandler) PutObjectLegalHold(w http.ResponseWriter, r *http.Request, rq *Request) error {
	ctx := r.Context()
	body, err := h.ReadSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var doc s3xml.ObjectLegalHold
	if err := DecodeXML(body, &doc); err != nil {
		return err
	}
	if doc.Status != "ON" && doc.Status != "OFF" {
		return ErrMalformedXML
	}
	obj, err := h.lockedVersion(ctx, w, rq)
	if err != nil {
		return err
	}
	sys := map[string]string{}
	versions.SetLegalHold(sys, doc.Status == "ON")
	if err := h.updateLock(ctx, rq, &obj, sys); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusOK)
	return nil
}
