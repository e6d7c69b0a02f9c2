package objects

import (
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/versions"
)

// deleteConcurrency bounds the deletes one DeleteObjects request runs at once.
const deleteConcurrency = 8

// DeleteObjects serves POST ?delete: up to 1000 keys, each deleted or reported on its own.
func (h *Handler) DeleteObjects(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	body, err := h.ReadSmallBody(r, rq, s3core.MaxDeleteBodyBytes, true)
	if errors.Is(err, s3core.ErrMaxMessageLength) {
		// A Delete document that long cannot be valid (1000 keys of 1024 bytes fit well
		// within it); S3 and Swift's s3api call it malformed.
		return s3core.ErrMalformedXML.WithMessage("The XML you provided was not well-formed or did not validate against our published schema: a Delete document is at most %d bytes.", s3core.MaxDeleteBodyBytes)
	}
	if err != nil {
		return err
	}
	var req s3xml.DeleteRequest
	if err := s3core.DecodeXML(body, &req); err != nil {
		return err
	}
	if len(req.Objects) == 0 || len(req.Objects) > s3core.MaxDeleteObjects {
		return s3core.ErrMalformedXML.WithMessage("The XML you provided was not well-formed or did not validate against our published schema: a Delete lists 1 to %d objects.", s3core.MaxDeleteObjects)
	}
	for _, o := range req.Objects {
		if o.Key == "" {
			// Swift's s3api refuses the whole request, as S3 does for a missing field.
			return s3core.ErrUserKeyMustBeSpecified
		}
	}
	if _, err := h.RequireBucket(ctx, rq); err != nil {
		return err
	}
	results := make([]error, len(req.Objects))
	deleted := make([]s3xml.DeletedEntry, len(req.Objects))
	st := rq.Versioning()
	bypass := func(key string) bool { return h.bypassGovernance(ctx, r, rq, key) }
	sem := make(chan struct{}, deleteConcurrency)
	var wg sync.WaitGroup
	for i, o := range req.Objects {
		if err := s3core.CheckKey(o.Key); err != nil {
			results[i] = err
			continue
		}
		if o.VersionID != "" && !s3core.ValidVersionID(o.VersionID) {
			results[i] = s3core.ErrNoSuchVersion // as S3 reports a version ID it never gave
			continue
		}
		// Each key is decided on its own: a policy may allow deleting some keys and not others.
		if err := h.Allowed(ctx, rq, access.DeleteObject, o.Key, r.Header.Get("Referer")); err != nil {
			results[i] = err
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			name := meta.ObjectName{Account: rq.Account, Container: rq.Bucket, Object: o.Key}
			d := s3xml.DeletedEntry{Key: o.Key, VersionID: o.VersionID}
			var err error
			if o.VersionID != "" {
				var v versions.Version
				v, err = h.Versions.DeleteVersion(ctx, st, name, o.VersionID, versions.DeleteOptions{BypassGovernance: bypass(o.Key)})
				if v.DeleteMarker {
					d.DeleteMarker, d.DeleteMarkerVersionID = true, v.ID
				}
			} else {
				var markerID string
				markerID, err = h.Versions.Delete(ctx, st, name)
				if markerID != "" {
					d.DeleteMarker, d.DeleteMarkerVersionID = true, markerID
				}
			}
			if errors.Is(err, meta.ErrNotFound) {
				err = nil // deleting what is not there succeeds, as in S3
			}
			if err != nil {
				err = s3core.VersionError(fmt.Errorf("delete %q: %w", o.Key, err))
			}
			results[i], deleted[i] = err, d
		}()
	}
	wg.Wait()
	res := s3xml.DeleteResult{Xmlns: s3xml.Namespace}
	for i, o := range req.Objects {
		if err := results[i]; err != nil {
			api := s3core.ToAPIError(err)
			if api.Status >= 500 {
				h.Log.ErrorContext(ctx, "s3 multi-delete entry failed", "request_id", rq.ID, "bucket", rq.Bucket, "key", o.Key, "err", err)
			}
			res.Errors = append(res.Errors, s3xml.DeleteError{Key: o.Key, VersionID: o.VersionID, Code: api.Code, Message: api.Message})
			continue
		}
		if !req.Quiet {
			res.Deleted = append(res.Deleted, deleted[i])
		}
	}
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}
