package s3core

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/versions"
)

// Versioning, as S3 has it, kept by internal/versions in the layout OpenStack Swift's
// object_versioning middleware uses (its s3api maps S3 onto it the same way): a bucket's
// versioning is its container's, so that Swift's X-Versions-Enabled and S3's
// PutBucketVersioning are one setting, and a version written through one API is the same
// version through the other. Version IDs are the versions' timestamps as Swift writes them;
// "null" is an object written while versioning was never on or suspended.

var (
	ErrNoSuchVersion       = &APIError{"NoSuchVersion", http.StatusNotFound, "The specified version does not exist."}
	errInvalidVersionID    = ErrInvalidArgument.WithMessage("Invalid version id specified")
	errNoVersionsContainer = &APIError{"InternalError", http.StatusInternalServerError, "The bucket's versions are missing: suspend and enable versioning again."}
)

// Versioning is the versioning of the request's bucket (from its cached state).
func (rq *Request) Versioning() versions.State {
	if rq.State == nil {
		return versions.State{}
	}
	return versions.StateOf(meta.Container{Meta: rq.State.Meta})
}

// CheckVersionID refuses a versionId that cannot name a version, before anything else is done.
func CheckVersionID(q map[string][]string) error {
	v, ok := q["versionId"]
	if !ok {
		return nil
	}
	if len(v) != 1 || v[0] == "" {
		return errInvalidVersionID
	}
	if !ValidVersionID(v[0]) {
		return errInvalidVersionID
	}
	return nil
}

// ValidVersionID reports whether id is "null" or a version ID as Cairn gives them (ten digits,
// a point, five digits): S3's version IDs are opaque, and one Cairn never gave is malformed.
func ValidVersionID(id string) bool {
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

// VersionError maps the version store's errors onto S3's.
func VersionError(err error) error {
	switch {
	case errors.Is(err, versions.ErrNoSuchVersion):
		return fmt.Errorf("%w: %w", ErrNoSuchVersion, err)
	case errors.Is(err, versions.ErrInvalidID):
		return fmt.Errorf("%w: %w", errInvalidVersionID, err)
	case errors.Is(err, versions.ErrNoVersionsContainer):
		return fmt.Errorf("%w: %w", errNoVersionsContainer, err)
	case errors.Is(err, versions.ErrLocked), errors.Is(err, versions.ErrRetentionChange):
		return fmt.Errorf("%w: %w", ErrObjectLocked, err)
	case errors.Is(err, versions.ErrLockedConfig):
		return fmt.Errorf("%w: %w", errInvalidBucketState, err)
	}
	return err
}

// SelectVersion points a read with ?versionId at that version: where it is stored and the ID
// answered. A delete marker cannot be read: 405 with x-amz-delete-marker, as S3 answers.
func (h *Front) SelectVersion(ctx context.Context, w http.ResponseWriter, rq *Request) error {
	if !rq.Query.Has("versionId") {
		return nil
	}
	id := rq.Query.Get("versionId")
	st := rq.Versioning()
	v, err := h.Versions.Resolve(ctx, st, rq.ObjectName(), id)
	if errors.Is(err, versions.ErrNoSuchVersion) && id == versions.Null && !st.Versioned() {
		return h.NotFound(ctx, rq, fmt.Errorf("%w: %w", meta.ErrNotFound, err))
	}
	if err != nil {
		return VersionError(err)
	}
	if v.DeleteMarker {
		w.Header().Set("x-amz-delete-marker", "true")
		w.Header().Set("x-amz-version-id", v.ID)
		w.Header().Set("Last-Modified", v.Object.LastModified().Format(http.TimeFormat))
		return ErrMethodNotAllowed
	}
	rq.Stored, rq.VersionID = &v.Name, v.ID
	return nil
}

// LocateVersion points a request on an object's settings (its tags) at the version it
// addresses: ?versionId's, else the current version, through its link in a versioned bucket.
func (h *Front) LocateVersion(ctx context.Context, w http.ResponseWriter, rq *Request) error {
	if rq.Query.Has("versionId") {
		return h.SelectVersion(ctx, w, rq)
	}
	cur, err := h.Proxy.HeadObjectBrief(ctx, rq.ObjectName())
	if err != nil {
		return nil // the operation itself says what is missing
	}
	if vobj, id, ok := versions.LinkedVersion(&cur); ok {
		rq.Stored = &meta.ObjectName{Account: rq.Account, Container: versions.ContainerFor(rq.Bucket), Object: vobj}
		rq.VersionID = id
	}
	return nil
}

// WriteVersionID answers the version a request addressed (x-amz-version-id).
func WriteVersionID(w http.ResponseWriter, rq *Request) {
	if id := rq.VersionID; id != "" {
		w.Header().Set("x-amz-version-id", id)
	} else if id := rq.nullVersionID(); id != "" {
		w.Header().Set("x-amz-version-id", id)
	}
}

// nullVersionID is the version ID of an object read in place: "null" in a bucket that was
// ever versioned, none otherwise.
func (rq *Request) nullVersionID() string {
	if rq.Versioning().Versioned() {
		return versions.Null
	}
	return ""
}

// MarkDeleted answers, on a read of a key found missing in a versioned bucket, that its
// current version is a delete marker when it is (x-amz-delete-marker, x-amz-version-id), as S3
// does.
func (h *Front) MarkDeleted(ctx context.Context, w http.ResponseWriter, rq *Request, err error) {
	if !errors.Is(err, meta.ErrNotFound) || rq.Stored != nil || rq.Query.Has("versionId") {
		return
	}
	if id, ok := h.Versions.DeleteMarkerCurrent(ctx, rq.Versioning(), rq.ObjectName()); ok {
		w.Header().Set("x-amz-delete-marker", "true")
		w.Header().Set("x-amz-version-id", id)
	}
}
