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
	errObjectLocked           = &apiError{"AccessDenied", http.StatusForbidden, "Access Denied because object protected by object lock."}
	errInvalidBucketState     = &apiError{"InvalidBucketState", http.StatusConflict, "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed."}
	errLockNotEnabled         = errInvalidRequest.withMessage("Bucket is missing Object Lock Configuration")
	errNoSuchObjectLockConfig = &apiError{"NoSuchObjectLockConfiguration", http.StatusNotFound, "The specified object does not have a ObjectLock configuration"}
	errRetainUntilPast        = errInvalidArgument.withMessage("The retain until date must be in the future!")
)

// lockEnabled reports the Object Lock setting of the request's bucket (from its cached state).
func (rq *request) lockEnabled() bool {
	return rq.state != nil && versions.LockEnabled(meta.Container{Meta: rq.state.Meta})
}

// bypassGovernance reports whether a request asks to bypass GOVERNANCE retentions and may.
func (h *Handler) bypassGovernance(ctx context.Context, r *http.Request, rq *request, key string) bool {
	if !strings.EqualFold(r.Header.Get("X-Amz-Bypass-Governance-Retention"), "true") {
		return false
	}
	return h.allowed(ctx, rq, access.BypassGovernanceRetention, key, r.Header.Get("Referer")) == nil
}

// lockFromHeaders puts the lock a write asks for (x-amz-object-lock-mode and
// -retain-until-date, -legal-hold), or else the bucket's default retention, into the new
// version's SysMeta.
func (h *Handler) lockFromHeaders(ctx context.Context, r *http.Request, rq *request, obj *meta.Object) error {
	mode, until, hold := r.Header.Get("X-Amz-Object-Lock-Mode"), r.Header.Get("X-Amz-Object-Lock-Retain-Until-Date"), r.Header.Get("X-Amz-Object-Lock-Legal-Hold")
	if mode == "" && until == "" && hold == "" {
		if !rq.lockEnabled() {
			return nil
		}
		def := versions.DefaultRetentionOf(meta.Container{Meta: rq.state.Meta})
		if def.IsZero() {
			return nil
		}
		obj.SysMeta = withSys(obj.SysMeta)
		versions.SetRetention(obj.SysMeta, def.From(time.Now()))
		return nil
	}
	if !rq.lockEnabled() {
		return errLockNotEnabled
	}
	obj.SysMeta = withSys(obj.SysMeta)
	if mode != "" || until != "" {
		if mode == "" || until == "" {
			return errInvalidArgument.withMessage("x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied")
		}
		ret, err := parseRetention(mode, until)
		if err != nil {
			return err
		}
		if err := h.allowed(ctx, rq, access.PutObjectRetention, rq.key, r.Header.Get("Referer")); err != nil {
			return err
		}
		versions.SetRetention(obj.SysMeta, ret)
	}
	if hold != "" {
		if hold != "ON" && hold != "OFF" {
			return errInvalidArgument.withMessage("Legal Hold must be either of 'ON' or 'OFF'")
		}
		if err := h.allowed(ctx, rq, access.PutObjectLegalHold, rq.key, r.Header.Get("Referer")); err != nil {
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
		return versions.Retention{}, errInvalidArgument.withMessage("Unknown wormMode directive.")
	}
	t, err := time.Parse(time.RFC3339Nano, until)
	if err != nil {
		return versions.Retention{}, errInvalidArgument.withMessage("The retain until date must be provided in ISO 8601 format")
	}
	if !t.After(time.Now()) {
		return versions.Retention{}, errRetainUntilPast
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

func (h *Handler) getObjectLockConfiguration(w http.ResponseWriter, r *http.Request, rq *request) error {
	c, err := h.requireBucket(r.Context(), rq)
	if err != nil {
		return err
	}
	if !versions.LockEnabled(c) {
		return errNoObjectLockConfig
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
	writeXML(w, http.StatusOK, res)
	return nil
}

func (h *Handler) putObjectLockConfiguration(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	body, err := h.readSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var cfg s3xml.ObjectLockConfiguration
	if err := decodeXML(body, &cfg); err != nil {
		return err
	}
	if cfg.ObjectLockEnabled != "Enabled" {
		return errMalformedXML
	}
	var def versions.DefaultRetention
	if cfg.Rule != nil {
		d := cfg.Rule.DefaultRetention
		if d == nil || (d.Mode != versions.Governance && d.Mode != versions.Compliance) || (d.Days == nil) == (d.Years == nil) {
			return errMalformedXML
		}
		def.Mode = d.Mode
		switch {
		case d.Days != nil && *d.Days > 0 && *d.Days <= 36500:
			def.Days = *d.Days
		case d.Years != nil && *d.Years > 0 && *d.Years <= 100:
			def.Years = *d.Years
		default:
			return errInvalidArgument.withMessage("Default retention period must be a positive integer value.")
		}
	}
	c, err := h.requireBucket(ctx, rq)
	if err != nil {
		return err
	}
	if !versions.LockEnabled(c) && !versions.StateOf(c).Enabled {
		return &apiError{"InvalidBucketState", http.StatusConflict, "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration"}
	}
	changes := map[string]string{versions.KeyLockEnabled: "Enabled", versions.KeyLockDefault: def.Encode()}
	if _, err := h.proxy.PostContainer(ctx, rq.account, rq.bucket, changes); err != nil {
		return bucketError(fmt.Errorf("object lock of %q: %w", rq.bucket, err))
	}
	h.states.forget(rq.account, rq.bucket)
	writeEmpty(w, http.StatusOK)
	return nil
}

// lockedVersion reads the version an object-lock request addresses (?versionId, else the
// current one), in a bucket with Object Lock.
func (h *Handler) lockedVersion(ctx context.Context, w http.ResponseWriter, rq *request) (meta.Object, error) {
	if !rq.lockEnabled() {
		return meta.Object{}, errLockNotEnabled
	}
	if err := h.locateVersion(ctx, w, rq); err != nil {
		return meta.Object{}, err
	}
	writeVersionID(w, rq)
	obj, err := h.proxy.HeadObjectBrief(ctx, rq.readName())
	if err != nil {
		return meta.Object{}, h.notFound(ctx, rq, fmt.Errorf("lock of %q: %w", rq.key, err))
	}
	if obj.ContentType == versions.DeleteMarkerType {
		return meta.Object{}, errMethodNotAllowed
	}
	return obj, nil
}

// updateLock rewrites a version's lock (its SysMeta) and nothing else of it, as it was read
// (obj): a change made meanwhile (another retention or legal hold) fails it, rather than
// either passing its check against what was there before.
func (h *Handler) updateLock(ctx context.Context, rq *request, obj *meta.Object, sys map[string]string) error {
	update := objectMetaOf(obj)
	update.SysMeta = sys
	_, err := h.proxy.PostObjectIf(ctx, rq.readName(), update, obj.Timestamp)
	if errors.Is(err, meta.ErrPreconditionFailed) {
		return fmt.Errorf("set the lock of %q: %w: %w", rq.key, errLockChanged, err)
	}
	if err != nil {
		return h.notFound(ctx, rq, fmt.Errorf("set the lock of %q: %w", rq.key, err))
	}
	return nil
}

// errLockChanged: the version's lock changed between the read and the write (S3 answers
// racing conditional changes 409 ConditionalRequestConflict; the client tries again).
var errLockChanged = &apiError{"ConditionalRequestConflict", http.StatusConflict, "A conflicting operation occurred on the object's Object Lock settings. Please try again."}

func (h *Handler) getObjectRetention(w http.ResponseWriter, r *http.Request, rq *request) error {
	obj, err := h.lockedVersion(r.Context(), w, rq)
	if err != nil {
		return err
	}
	ret := versions.RetentionOf(&obj)
	if ret.IsZero() {
		return errNoSuchObjectLockConfig
	}
	writeXML(w, http.StatusOK, s3xml.ObjectRetention{Xmlns: s3xml.Namespace, Mode: ret.Mode, RetainUntilDate: ret.Until.UTC().Format(time.RFC3339Nano)})
	return nil
}

func (h *Handler) putObjectRetention(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	body, err := h.readSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var doc s3xml.ObjectRetention
	if err := decodeXML(body, &doc); err != nil {
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
	bypass := h.bypassGovernance(ctx, r, rq, rq.key)
	if err := versions.CheckRetentionChange(versions.RetentionOf(&obj), ret, time.Now(), bypass); err != nil {
		return fmt.Errorf("%w: %w", errObjectLocked, err)
	}
	sys := map[string]string{}
	versions.SetRetention(sys, ret)
	if err := h.updateLock(ctx, rq, &obj, sys); err != nil {
		return err
	}
	writeEmpty(w, http.StatusOK)
	return nil
}

func (h *Handler) getObjectLegalHold(w http.ResponseWriter, r *http.Request, rq *request) error {
	obj, err := h.lockedVersion(r.Context(), w, rq)
	if err != nil {
		return err
	}
	status := obj.SysMeta[versions.SysLockLegalHold]
	if status == "" {
		return errNoSuchObjectLockConfig
	}
	writeXML(w, http.StatusOK, s3xml.ObjectLegalHold{Xmlns: s3xml.Namespace, Status: status})
	return nil
}

func (h *Handler) putObjectLegalHold(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	body, err := h.readSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var doc s3xml.ObjectLegalHold
	if err := decodeXML(body, &doc); err != nil {
		return err
	}
	if doc.Status != "ON" && doc.Status != "OFF" {
		return errMalformedXML
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
	writeEmpty(w, http.StatusOK)
	return nil
}
