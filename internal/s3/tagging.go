package s3

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/tagging"
)

// Object and bucket tagging (GET, PUT and DELETE ?tagging; x-amz-tagging on writes). The rules
// are package tagging's. An object's tags live in its SysMeta (tagging.ObjectSysMetaKey), so
// that they go wherever the object goes; changing them rewrites the object's metadata through
// the proxy's POST, which keeps its bytes, ETag, checksums, content type, headers and user
// metadata, and (like PutObjectAcl) moves its Last-Modified. A bucket's tags are container
// metadata (tagging.BucketMetaKey), as its ACL and policy are.

// maxTaggingBodyBytes bounds a Tagging document: 50 tags of 128 + 256 characters of up to 4
// bytes each, escaped, fit well within it.
const MaxTaggingBodyBytes = 256 << 10

// tagsOf reads an object's tags. A stored set that does not decode was damaged after it was
// validated: that is an internal error, not the client's.
func tagsOf(obj *meta.Object) (tagging.Set, error) {
	s, err := tagging.Decode(obj.SysMeta[tagging.ObjectSysMetaKey])
	if err != nil {
		return nil, fmt.Errorf("tags of the object: %w", err)
	}
	return s, nil
}

// setsTags reports whether a write sets tags by header, which takes s3:PutObjectTagging
// besides s3:PutObject. A copy sets them only with x-amz-tagging-directive: REPLACE; with COPY
// (the default) it keeps the source's.
func setsTags(op string, hdr http.Header) bool {
	if hdr.Get("X-Amz-Tagging") == "" {
		return false
	}
	if op == OpCopyObject {
		return strings.EqualFold(hdr.Get("X-Amz-Tagging-Directive"), "REPLACE")
	}
	return true
}

// tagsFromHeader reads the x-amz-tagging of a write in its stored form ("" for none).
func tagsFromHeader(hdr http.Header) (string, error) {
	s, err := tagging.ParseHeader(hdr.Get("X-Amz-Tagging"))
	if err != nil {
		return "", err
	}
	return s.Encode(), nil
}

// setTags puts a stored tag set into a new object's SysMeta (nothing for no tags).
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

func (h *objectsHandler) GetObjectTagging(w http.ResponseWriter, r *http.Request, rq *Request) error {
	ctx := r.Context()
	if err := h.LocateVersion(ctx, w, rq); err != nil {
		return err
	}
	WriteVersionID(w, rq)
	obj, err := h.Proxy.HeadObjectBrief(ctx, rq.ReadName())
	if err != nil {
		return h.NotFound(ctx, rq, fmt.Errorf("tags of %q: %w", rq.Key, err))
	}
	s, err := tagsOf(&obj)
	if err != nil {
		return err
	}
	WriteXML(w, http.StatusOK, s.Document())
	return nil
}

func (h *objectsHandler) PutObjectTagging(w http.ResponseWriter, r *http.Request, rq *Request) error {
	body, err := h.ReadSmallBody(r, rq, MaxTaggingBodyBytes, false)
	if err != nil {
		return err
	}
	s, err := tagging.ParseXML(body, tagging.Object)
	if err != nil {
		return err
	}
	if DeferredTaggingDecision(rq) {
		// The policy tests the tags this request sets, which are known only now (authorize
		// left the decision to here).
		t := *rq
		t.Cond = WithRequestTags(rq.Cond, s)
		if err := h.Allowed(r.Context(), &t, access.PutObjectTagging, rq.Key, r.Header.Get("Referer")); err != nil {
			return err
		}
	}
	if err := h.replaceObjectTags(r.Context(), w, rq, s.Encode()); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusOK)
	return nil
}

func (h *objectsHandler) DeleteObjectTagging(w http.ResponseWriter, r *http.Request, rq *Request) error {
	if err := h.replaceObjectTags(r.Context(), w, rq, ""); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusNoContent)
	return nil
}

// replaceObjectTags makes stored the object's tag set, rewriting only its metadata. A set equal
// to the one it has changes nothing, so that it does not move the object's Last-Modified. As
// with PutObjectAcl, a PUT of the object racing with this can lose its content type and user
// metadata to the ones read here.
func (h *objectsHandler) replaceObjectTags(ctx context.Context, w http.ResponseWriter, rq *Request, stored string) error {
	if err := h.LocateVersion(ctx, w, rq); err != nil {
		return err
	}
	WriteVersionID(w, rq)
	obj, err := h.Proxy.HeadObjectBrief(ctx, rq.ReadName())
	if err != nil {
		return h.NotFound(ctx, rq, fmt.Errorf("tags of %q: %w", rq.Key, err))
	}
	if obj.SysMeta[tagging.ObjectSysMetaKey] == stored {
		return nil
	}
	update := ObjectMetaOf(&obj)
	update.SysMeta = map[string]string{tagging.ObjectSysMetaKey: stored}
	if _, err := h.Proxy.PostObject(ctx, rq.ReadName(), update); err != nil {
		return h.NotFound(ctx, rq, fmt.Errorf("set the tags of %q: %w", rq.Key, err))
	}
	return nil
}

func (h *bucketsHandler) GetBucketTagging(w http.ResponseWriter, r *http.Request, rq *Request) error {
	c, err := h.RequireBucket(r.Context(), rq)
	if err != nil {
		return err
	}
	stored := c.Meta[tagging.BucketMetaKey]
	if stored == "" {
		return ErrNoSuchTagSet
	}
	s, err := tagging.Decode(stored)
	if err != nil {
		return fmt.Errorf("tags of bucket %q: %w", rq.Bucket, err)
	}
	WriteXML(w, http.StatusOK, s.Document())
	return nil
}

// putBucketTagging replaces the bucket's tag set. An empty TagSet removes it, as
// DeleteBucketTagging does.
func (h *bucketsHandler) PutBucketTagging(w http.ResponseWriter, r *http.Request, rq *Request) error {
	body, err := h.ReadSmallBody(r, rq, MaxTaggingBodyBytes, false)
	if err != nil {
		return err
	}
	s, err := tagging.ParseXML(body, tagging.Bucket)
	if err != nil {
		return err
	}
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{tagging.BucketMetaKey: s.Encode()}); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusNoContent)
	return nil
}

func (h *bucketsHandler) DeleteBucketTagging(w http.ResponseWriter, r *http.Request, rq *Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{tagging.BucketMetaKey: ""}); err != nil {
		return err
	}
	WriteEmpty(w, http.StatusNoContent)
	return nil
}
