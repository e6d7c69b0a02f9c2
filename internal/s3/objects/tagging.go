package objects

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/tagging"
)

// Object and bucket tagging (GET, PUT and DELETE ?tagging; x-amz-tagging on writes). The rules
// are package tagging's. An object's tags live in its SysMeta (tagging.ObjectSysMetaKey), so
// that they go wherever the object goes; changing them rewrites the object's metadata through
// the proxy's POST, which keeps its bytes, ETag, checksums, content type, headers and user
// metadata, and (like PutObjectAcl) its Last-Modified. A bucket's tags are container
// metadata (tagging.BucketMetaKey), as its ACL and policy are.

// tagsOf reads an object's tags. A stored set that does not decode was damaged after it was
// validated: that is an internal error, not the client's.
func tagsOf(obj *meta.Object) (tagging.Set, error) {
	s, err := tagging.Decode(obj.SysMeta[tagging.ObjectSysMetaKey])
	if err != nil {
		return nil, fmt.Errorf("tags of the object: %w", err)
	}
	return s, nil
}

// tagsFromHeader reads the x-amz-tagging of a write in its stored form ("" for none).
func tagsFromHeader(hdr http.Header) (string, error) {
	s, err := tagging.ParseHeader(hdr.Get("X-Amz-Tagging"))
	if err != nil {
		return "", err
	}
	return s.Encode(), nil
}

// SetTags puts a stored tag set into a new object's SysMeta (nothing for no tags).
func SetTags(obj *meta.Object, stored string) {
	if stored == "" {
		return
	}
	if obj.SysMeta == nil {
		obj.SysMeta = map[string]string{}
	}
	obj.SysMeta[tagging.ObjectSysMetaKey] = stored
}

// writeTagCount sets x-amz-tagging-count on a GET or HEAD of an object that has tags, as S3 does.
func writeTagCount(hdr http.Header, obj *meta.Object) {
	if obj.SysMeta[tagging.ObjectSysMetaKey] == "" {
		return
	}
	if s, err := tagsOf(obj); err == nil && len(s) > 0 {
		hdr.Set("X-Amz-Tagging-Count", strconv.Itoa(len(s)))
	}
}

// GetObjectTagging serves the S3 operation of that name.
func (h *Handler) GetObjectTagging(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	if err := h.LocateVersion(ctx, w, rq); err != nil {
		return err
	}
	s3core.WriteVersionID(w, rq)
	obj, err := h.Proxy.HeadObjectBrief(ctx, rq.ReadName())
	if err != nil {
		return h.NotFound(ctx, rq, fmt.Errorf("tags of %q: %w", rq.Key, err))
	}
	s, err := tagsOf(&obj)
	if err != nil {
		return err
	}
	s3core.WriteXML(w, http.StatusOK, s.Document())
	return nil
}

// PutObjectTagging serves the S3 operation of that name.
func (h *Handler) PutObjectTagging(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	body, err := h.ReadSmallBody(r, rq, s3core.MaxTaggingBodyBytes, false)
	if err != nil {
		return err
	}
	s, err := tagging.ParseXML(body, tagging.Object)
	if err != nil {
		return err
	}
	if s3core.DeferredTaggingDecision(rq) {
		// The policy tests the tags this request sets, which are known only now (authorize
		// left the decision to here).
		t := *rq
		t.Cond = s3core.WithRequestTags(rq.Cond, s)
		if err := h.Allowed(r.Context(), &t, access.PutObjectTagging, rq.Key, r.Header.Get("Referer")); err != nil {
			return err
		}
	}
	if err := h.replaceObjectTags(r.Context(), w, rq, s.Encode()); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}

// DeleteObjectTagging serves the S3 operation of that name.
func (h *Handler) DeleteObjectTagging(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if err := h.replaceObjectTags(r.Context(), w, rq, ""); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// replaceObjectTags makes stored the object's tag set, rewriting only its metadata. A set equal
// to the one it has changes nothing (not even the object's timestamp). As
// with PutObjectAcl, a PUT of the object racing with this can lose its content type and user
// metadata to the ones read here.
func (h *Handler) replaceObjectTags(ctx context.Context, w http.ResponseWriter, rq *s3core.Request, stored string) error {
	if err := h.LocateVersion(ctx, w, rq); err != nil {
		return err
	}
	s3core.WriteVersionID(w, rq)
	obj, err := h.Proxy.HeadObjectBrief(ctx, rq.ReadName())
	if err != nil {
		return h.NotFound(ctx, rq, fmt.Errorf("tags of %q: %w", rq.Key, err))
	}
	if obj.SysMeta[tagging.ObjectSysMetaKey] == stored {
		return nil
	}
	update := s3core.SubresourceChange(&obj, map[string]string{tagging.ObjectSysMetaKey: stored})
	if _, err := h.Proxy.PostObject(ctx, rq.ReadName(), update); err != nil {
		return h.NotFound(ctx, rq, fmt.Errorf("set the tags of %q: %w", rq.Key, err))
	}
	return nil
}
