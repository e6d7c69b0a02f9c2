package objects

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/versions"
)

// bypassGovernance reports whether a request asks to bypass GOVERNANCE retentions and may.
func (h *Handler) bypassGovernance(ctx context.Context, r *http.Request, rq *s3core.Request, key string) bool {
	if !strings.EqualFold(r.Header.Get("X-Amz-Bypass-Governance-Retention"), "true") {
		return false
	}
	return h.Allowed(ctx, rq, access.BypassGovernanceRetention, key, r.Header.Get("Referer")) == nil
}

// lockFromHeaders puts the lock a write asks for (x-amz-object-lock-mode and
// -retain-until-date, -legal-hold), or else the bucket's default retention, into the new
// version's SysMeta.
func (h *Handler) lockFromHeaders(ctx context.Context, r *http.Request, rq *s3core.Request, obj *meta.Object) error {
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
		return s3core.ErrLockNotEnabled
	}
	obj.SysMeta = withSys(obj.SysMeta)
	if mode != "" || until != "" {
		if mode == "" || until == "" {
			return s3core.ErrInvalidArgument.WithMessage("x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied")
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
			return s3core.ErrInvalidArgument.WithMessage("Legal Hold must be either of 'ON' or 'OFF'")
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
		return versions.Retention{}, s3core.ErrInvalidArgument.WithMessage("Unknown wormMode directive.")
	}
	t, err := time.Parse(time.RFC3339Nano, until)
	if err != nil {
		return versions.Retention{}, s3core.ErrInvalidArgument.WithMessage("The retain until date must be provided in ISO 8601 format")
	}
	if !t.After(time.Now()) {
		return versions.Retention{}, s3core.ErrRetainUntilPast
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

// lockedVersion reads the version an object-lock request addresses (?versionId, else the
// current one), in a bucket with Object Lock.
func (h *Handler) lockedVersion(ctx context.Context, w http.ResponseWriter, rq *s3core.Request) (meta.Object, error) {
	if !rq.LockEnabled() {
		return meta.Object{}, s3core.ErrLockNotEnabled
	}
	if err := h.LocateVersion(ctx, w, rq); err != nil {
		return meta.Object{}, err
	}
	s3core.WriteVersionID(w, rq)
	obj, err := h.Proxy.HeadObjectBrief(ctx, rq.ReadName())
	if err != nil {
		return meta.Object{}, h.NotFound(ctx, rq, fmt.Errorf("lock of %q: %w", rq.Key, err))
	}
	if obj.ContentType == versions.DeleteMarkerType {
		return meta.Object{}, s3core.ErrMethodNotAllowed
	}
	return obj, nil
}

// updateLock rewrites a version's lock (its SysMeta) and nothing else of it, as it was read
// (obj): a change made meanwhile (another retention or legal hold) fails it, rather than
// either passing its check against what was there before.
func (h *Handler) updateLock(ctx context.Context, rq *s3core.Request, obj *meta.Object, sys map[string]string) error {
	update := s3core.SubresourceChange(obj, sys)
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
var errLockChanged = &s3core.APIError{Code: "ConditionalRequestConflict", Status: http.StatusConflict, Message: "A conflicting operation occurred on the object's Object Lock settings. Please try again."}

// GetObjectRetention serves the S3 operation of that name.
func (h *Handler) GetObjectRetention(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	obj, err := h.lockedVersion(r.Context(), w, rq)
	if err != nil {
		return err
	}
	ret := versions.RetentionOf(&obj)
	if ret.IsZero() {
		return s3core.ErrNoSuchObjectLockConfig
	}
	s3core.WriteXML(w, http.StatusOK, s3xml.ObjectRetention{Xmlns: s3xml.Namespace, Mode: ret.Mode, RetainUntilDate: ret.Until.UTC().Format(time.RFC3339Nano)})
	return nil
}

// PutObjectRetention serves the S3 operation of that name.
func (h *Handler) PutObjectRetention(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	body, err := h.ReadSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var doc s3xml.ObjectRetention
	if err := s3core.DecodeXML(body, &doc); err != nil {
		return err
	}
	var ret versions.Retention
	if doc.Mode != "" || doc.RetainUntilDate != "" {
		// The document's schema: a mode of its two values (no other spelling) and a date,
		// together; S3 refuses anything else as MalformedXML, where the headers' forms of the
		// same are InvalidArgument.
		if (doc.Mode != versions.Governance && doc.Mode != versions.Compliance) || doc.RetainUntilDate == "" {
			return s3core.ErrMalformedXML
		}
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
		return fmt.Errorf("%w: %w", s3core.ErrObjectLocked, err)
	}
	sys := map[string]string{}
	versions.SetRetention(sys, ret)
	if err := h.updateLock(ctx, rq, &obj, sys); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}

// GetObjectLegalHold serves the S3 operation of that name.
func (h *Handler) GetObjectLegalHold(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	obj, err := h.lockedVersion(r.Context(), w, rq)
	if err != nil {
		return err
	}
	status := obj.SysMeta[versions.SysLockLegalHold]
	if status == "" {
		return s3core.ErrNoSuchObjectLockConfig
	}
	s3core.WriteXML(w, http.StatusOK, s3xml.ObjectLegalHold{Xmlns: s3xml.Namespace, Status: status})
	return nil
}

// PutObjectLegalHold serves the S3 operation of that name.
func (h *Handler) PutObjectLegalHold(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	body, err := h.ReadSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var doc s3xml.ObjectLegalHold
	if err := s3core.DecodeXML(body, &doc); err != nil {
		return err
	}
	if doc.Status != "ON" && doc.Status != "OFF" {
		return s3core.ErrMalformedXML
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
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}
