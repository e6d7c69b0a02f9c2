package s3

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/versions"
)

// Versioning, as S3 has it, kept by internal/versions in the layout OpenStack Swift's
// object_versioning middleware uses (its s3api maps S3 onto it the same way): a bucket's
// versioning is its container's, so that Swift's X-Versions-Enabled and S3's
// PutBucketVersioning are one setting, and a version written through one API is the same
// version through the other. Version IDs are the versions' timestamps as Swift writes them;
// "null" is an object written while versioning was never on or suspended.

var (
	errNoSuchVersion       = &apiError{"NoSuchVersion", http.StatusNotFound, "The specified version does not exist."}
	errInvalidVersionID    = errInvalidArgument.withMessage("Invalid version id specified")
	errNoVersionsContainer = &apiError{"InternalError", http.StatusInternalServerError, "The bucket's versions are missing: suspend and enable versioning again."}
)

// versioning is the versioning of the request's bucket (from its cached state).
func (rq *request) versioning() versions.State {
	if rq.state == nil {
		return versions.State{}
	}
	return versions.StateOf(meta.Container{Meta: rq.state.Meta})
}

// checkVersionID refuses a versionId that cannot name a version, before anything else is done.
func checkVersionID(q map[string][]string) error {
	v, ok := q["versionId"]
	if !ok {
		return nil
	}
	if len(v) != 1 || v[0] == "" {
		return errInvalidVersionID
	}
	if !validVersionID(v[0]) {
		return errInvalidVersionID
	}
	return nil
}

// validVersionID reports whether id is "null" or a version ID as Cairn gives them (ten digits,
// a point, five digits): S3's version IDs are opaque, and one Cairn never gave is malformed.
func validVersionID(id string) bool {
	if id == versions.Null {
		return true
	}
	if len(id) != 16 || id[10] != '.' {
		return false
	}
	for i, c := range id {
		if i != 10 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// versionError maps the version store's errors onto S3's.
func versionError(err error) error {
	switch {
	case errors.Is(err, versions.ErrNoSuchVersion):
		return fmt.Errorf("%w: %w", errNoSuchVersion, err)
	case errors.Is(err, versions.ErrInvalidID):
		return fmt.Errorf("%w: %w", errInvalidVersionID, err)
	case errors.Is(err, versions.ErrNoVersionsContainer):
		return fmt.Errorf("%w: %w", errNoVersionsContainer, err)
	case errors.Is(err, versions.ErrLocked), errors.Is(err, versions.ErrRetentionChange):
		return fmt.Errorf("%w: %w", errObjectLocked, err)
	case errors.Is(err, versions.ErrLockedConfig):
		return fmt.Errorf("%w: %w", errInvalidBucketState, err)
	}
	return err
}

// selectVersion points a read with ?versionId at that version: where it is stored and the ID
// answered. A delete marker cannot be read: 405 with x-amz-delete-marker, as S3 answers.
func (h *Handler) selectVersion(ctx context.Context, w http.ResponseWriter, rq *request) error {
	if !rq.query.Has("versionId") {
		return nil
	}
	id := rq.query.Get("versionId")
	st := rq.versioning()
	v, err := h.versions.Resolve(ctx, st, rq.objectName(), id)
	if errors.Is(err, versions.ErrNoSuchVersion) && id == versions.Null && !st.Versioned() {
		return h.notFound(ctx, rq, fmt.Errorf("%w: %w", meta.ErrNotFound, err))
	}
	if err != nil {
		return versionError(err)
	}
	if v.DeleteMarker {
		w.Header().Set("x-amz-delete-marker", "true")
		w.Header().Set("x-amz-version-id", v.ID)
		w.Header().Set("Last-Modified", v.Object.LastModified().Format(http.TimeFormat))
		return errMethodNotAllowed
	}
	rq.stored, rq.versionID = &v.Name, v.ID
	return nil
}

// locateVersion points a request on an object's settings (its tags) at the version it
// addresses: ?versionId's, else the current version, through its link in a versioned bucket.
func (h *Handler) locateVersion(ctx context.Context, w http.ResponseWriter, rq *request) error {
	if rq.query.Has("versionId") {
		return h.selectVersion(ctx, w, rq)
	}
	cur, err := h.proxy.HeadObjectBrief(ctx, rq.objectName())
	if err != nil {
		return nil // the operation itself says what is missing
	}
	if vobj, id, ok := versions.LinkedVersion(&cur); ok {
		rq.stored = &meta.ObjectName{Account: rq.account, Container: versions.ContainerFor(rq.bucket), Object: vobj}
		rq.versionID = id
	}
	return nil
}

// writeVersionID answers the version a request addressed (x-amz-version-id).
func writeVersionID(w http.ResponseWriter, rq *request) {
	if id := rq.versionID; id != "" {
		w.Header().Set("x-amz-version-id", id)
	} else if id := rq.nullVersionID(); id != "" {
		w.Header().Set("x-amz-version-id", id)
	}
}

// nullVersionID is the version ID of an object read in place: "null" in a bucket that was
// ever versioned, none otherwise.
func (rq *request) nullVersionID() string {
	if rq.versioning().Versioned() {
		return versions.Null
	}
	return ""
}

func (h *Handler) getBucketVersioning(w http.ResponseWriter, r *http.Request, rq *request) error {
	c, err := h.requireBucket(r.Context(), rq)
	if err != nil {
		return err
	}
	res := s3xml.VersioningConfiguration{Xmlns: s3xml.Namespace}
	switch st := versions.StateOf(c); {
	case st.Enabled:
		res.Status = "Enabled"
	case st.Suspended(), c.Meta[versions.KeyEnabled] == "false":
		// Suspended, also when versioning was never on (as S3 and Swift's s3api answer).
		res.Status = "Suspended"
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

func (h *Handler) putBucketVersioning(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	body, err := h.readSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var v s3xml.VersioningRequest
	if err := xml.Unmarshal(body, &v); err != nil {
		return errMalformedXML
	}
	if v.MfaDelete == "Enabled" {
		return errNotImplemented.withMessage("MFA Delete is not supported.")
	}
	c, err := h.requireBucket(ctx, rq)
	if err != nil {
		return err
	}
	var changes map[string]string
	switch v.Status {
	case "Enabled":
		if changes, err = h.versions.Enable(ctx, rq.account, c); err != nil {
			return fmt.Errorf("enable versioning of %q: %w", rq.bucket, err)
		}
	case "Suspended":
		// Also on a bucket that never kept versions: it shows Suspended (as S3 and Swift's
		// s3api answer); a bucket with Object Lock keeps versioning on.
		if changes, err = versions.Suspend(c); err != nil {
			return versionError(err)
		}
	default:
		return errMalformedXML
	}
	if _, err := h.proxy.PostContainer(ctx, rq.account, rq.bucket, changes); err != nil {
		return bucketError(fmt.Errorf("versioning of %q: %w", rq.bucket, err))
	}
	h.states.forget(rq.account, rq.bucket)
	writeEmpty(w, http.StatusOK)
	return nil
}

func (h *Handler) listObjectVersions(w http.ResponseWriter, r *http.Request, rq *request) error {
	p, err := parseListParams(rq.query)
	if err != nil {
		return err
	}
	keyMarker, versionMarker := rq.query.Get("key-marker"), rq.query.Get("version-id-marker")
	// As Swift's s3api: a version marker needs the key-marker parameter (empty or not), and is
	// checked once it has one.
	if rq.query.Has("version-id-marker") && !rq.query.Has("key-marker") {
		return errInvalidArgument.withMessage("A version-id marker cannot be specified without a key marker.")
	}
	if versionMarker != "" && !validVersionID(versionMarker) {
		return errInvalidArgument.withMessage("Invalid version id specified")
	}
	res := s3xml.ListVersionsResult{Xmlns: s3xml.Namespace, Name: rq.bucket, Prefix: p.encode(p.prefix), KeyMarker: p.encode(keyMarker),
		VersionIDMarker: versionMarker, MaxKeys: p.maxKeys}
	if rq.query.Has("delimiter") {
		d := p.encode(p.delimiter)
		res.Delimiter = &d
	}
	if p.urlEncode {
		res.EncodingType = "url"
	}
	if p.maxKeys == 0 {
		if _, err := h.requireBucket(r.Context(), rq); err != nil {
			return err
		}
		writeXML(w, http.StatusOK, res)
		return nil
	}
	l, err := h.versions.List(r.Context(), rq.versioning(), rq.account, rq.bucket, versions.ListOptions{
		Prefix: p.prefix, Delimiter: p.delimiter, KeyMarker: keyMarker, VersionMarker: versionMarker, Limit: p.maxKeys})
	if err != nil {
		return bucketError(versionError(fmt.Errorf("list versions of %q: %w", rq.bucket, err)))
	}
	o := rq.owner()
	for _, v := range l.Versions {
		e := s3xml.ObjectVersion{XMLName: s3xml.VersionElement, Key: p.encode(v.Key), VersionID: v.ID, IsLatest: v.Latest,
			LastModified: s3xml.FormatISO(v.Entry.Timestamp.Time()), Owner: o}
		if v.DeleteMarker {
			e.XMLName = s3xml.DeleteMarkerElement
		} else {
			size := v.Entry.Size
			e.ETag, e.Size, e.StorageClass = quoteETag(v.Entry.ETag), &size, "STANDARD"
		}
		res.Versions = append(res.Versions, e)
	}
	for _, cp := range l.CommonPrefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, s3xml.CommonPrefix{Prefix: p.encode(cp)})
	}
	res.IsTruncated = l.Truncated
	if l.Truncated {
		res.NextKeyMarker, res.NextVersionIDMarker = p.encode(l.NextKeyMarker), l.NextVersionMarker
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

// markDeleted answers, on a read of a key found missing in a versioned bucket, that its
// current version is a delete marker when it is (x-amz-delete-marker, x-amz-version-id), as S3
// does.
func (h *Handler) markDeleted(ctx context.Context, w http.ResponseWriter, rq *request, err error) {
	if !errors.Is(err, meta.ErrNotFound) || rq.stored != nil || rq.query.Has("versionId") {
		return
	}
	if id, ok := h.versions.DeleteMarkerCurrent(ctx, rq.versioning(), rq.objectName()); ok {
		w.Header().Set("x-amz-delete-marker", "true")
		w.Header().Set("x-amz-version-id", id)
	}
}
