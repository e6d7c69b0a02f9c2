package objects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/versions"
)

var errInvalidPartNumber = &s3core.APIError{Code: "InvalidPartNumber", Status: http.StatusRequestedRangeNotSatisfiable, Message: "The requested partnumber is not satisfiable"}

// CheckWriteHeaders refuses request headers that ask for features Cairn does not have, rather
// than silently storing an object without them. (ACL headers are read by aclFromHeaders.)
func CheckWriteHeaders(hdr http.Header) error {
	for _, k := range []string{"X-Amz-Website-Redirect-Location"} {
		if hdr.Get(k) != "" {
			return s3core.ErrNotImplemented.WithMessage("The %s header is not implemented.", strings.ToLower(k))
		}
	}
	return nil
}

// ConditionalWrite applies If-None-Match: * and If-Match to a PUT. It refuses at once what
// the current version already fails (before the body is read), and returns the condition for
// the storage engine to evaluate again in the commit, where it is atomic: of two racing
// conditional PUTs, one gets PreconditionFailed.
func (h *Handler) ConditionalWrite(ctx context.Context, r *http.Request, rq *s3core.Request) (meta.Precondition, error) {
	var cond meta.Precondition
	inm, im := r.Header.Get("If-None-Match"), r.Header.Get("If-Match")
	if inm == "" && im == "" {
		return cond, nil
	}
	if inm != "" && strings.TrimSpace(inm) != "*" {
		return cond, s3core.ErrNotImplemented.WithMessage("If-None-Match on a write accepts only *.")
	}
	cond.IfNoneMatch = inm != ""
	if im != "" {
		cond.IfMatch = httpwire.ETagList(im)
	}
	cur, err := h.Proxy.HeadObject(ctx, rq.ObjectName())
	exists := err == nil
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return cond, fmt.Errorf("conditional write: %w", err)
	}
	if inm != "" && exists {
		return cond, s3core.ErrPreconditionFailed.WithMessage("At least one of the pre-conditions you specified did not hold: If-None-Match")
	}
	if exists && versions.IsLink(&cur) {
		cur.ETag = cur.SysMeta[meta.SysSymlinkETag] // the version's, not the link's
	}
	stored := cur.ETag
	if exists && !versions.IsLink(&cur) && sse.Encrypted(&cur) {
		cur = sse.Served(cur) // the ETag the client was given
	}
	if im != "" {
		if !exists {
			return cond, h.NotFound(ctx, rq, err)
		}
		if !httpwire.ETagListMatches(im, cur.ETag) {
			return cond, s3core.ErrPreconditionFailed.WithMessage("At least one of the pre-conditions you specified did not hold: If-Match")
		}
		if cur.ETag != stored {
			// The commit compares the stored object's ETag: it must still be the one matched.
			cond.IfMatch = []string{stored}
		}
	}
	return cond, nil
}

// PutObject serves the S3 operation of that name.
func (h *Handler) PutObject(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	if err := CheckWriteHeaders(r.Header); err != nil {
		return err
	}
	obj, err := s3core.ObjectMetaFromRequest(r.Header)
	if err != nil {
		return err
	}
	if err := h.ObjectSettings(r, rq, &obj); err != nil {
		return err
	}
	ssew, err := h.SSEForWrite(r, rq)
	if err != nil {
		return err
	}
	body, size, err := h.OpenBody(r, rq, "")
	if err != nil {
		return err
	}
	cond, err := h.ConditionalWrite(ctx, r, rq)
	if err != nil {
		return err
	}
	if err := h.CheckQuota(ctx, rq, access.Usage{Bytes: size, Objects: 1}); err != nil {
		return err
	}
	obj.Size = size
	var putBody io.Reader = body
	opts := proxy.PutOptions{BeforeCommit: body.BeforeCommit, If: cond}
	var enc *encryptingBody
	if ssew != nil {
		if enc, err = h.encrypt(ctx, ssew, rq.Binding(), body, size, ""); err != nil {
			return err
		}
		putBody, obj.Size = enc, enc.StoredSize
		opts.BeforeCommit = enc.BeforeCommit(body.BeforeCommit, size, true)
		SetBucketKey(&obj, ssew)
	}
	stored, versionID, err := h.Versions.Put(ctx, rq.Versioning(), rq.ObjectName(), obj, putBody, opts)
	if err != nil {
		return s3core.VersionError(fmt.Errorf("put object %q: %w", rq.Key, err))
	}
	hdr := w.Header()
	hdr.Set("ETag", s3core.QuoteETag(stored.ETag))
	if enc != nil {
		hdr.Set("ETag", s3core.QuoteETag(enc.servedETag(stored.ETag)))
		WriteSSEHeaders(hdr, enc.env, ssew.KeyMD5, ssew.BucketKey)
	}
	if versionID != "" {
		hdr.Set("x-amz-version-id", versionID)
	}
	if body.Checksum != "" {
		hdr.Set(body.Spec.Algorithm.HeaderName(), body.Checksum)
		hdr.Set("X-Amz-Checksum-Type", s3core.ChecksumFullObject)
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}

// readSelection is the part of an object a GET or HEAD asks for.
type readSelection struct {
	rng        *meta.Range
	partNumber int // 0: none asked
}

func parseReadSelection(r *http.Request, q map[string][]string) (readSelection, error) {
	var sel readSelection
	rng, err := parseRange(r.Header.Get("Range"))
	if err != nil {
		return sel, err
	}
	sel.rng = rng
	if vs, ok := q["partNumber"]; ok {
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < 1 || n > s3core.MaxPartNumber {
			return sel, s3core.ErrInvalidArgument.WithMessage("Part number must be an integer between 1 and %d, inclusive", s3core.MaxPartNumber)
		}
		if r.Header.Get("Range") != "" {
			return sel, s3core.ErrInvalidRequest.WithMessage("Cannot specify both Range header and partNumber query parameter")
		}
		sel.partNumber = n
	}
	return sel, nil
}

// partRange resolves ?partNumber=n: the byte range of that part of a multipart object (whose
// manifest lists the parts in order), or the whole of a plain object for part 1.
func partRange(obj *meta.Object, n int) (*meta.Range, error) {
	if obj.Manifest == nil {
		if n == 1 {
			return nil, nil
		}
		return nil, errInvalidPartNumber
	}
	if n > len(obj.Manifest) {
		return nil, errInvalidPartNumber
	}
	var start int64
	for _, s := range obj.Manifest[:n-1] {
		start += s.Len() // a Swift SLO's segment may be a range or inline bytes
	}
	size := obj.Manifest[n-1].Len()
	if size == 0 {
		return nil, errInvalidPartNumber
	}
	return &meta.Range{Start: start, End: start + size - 1}, nil
}

// responseOverrides are the query parameters that replace response headers of a GET.
var responseOverrides = map[string]string{
	"response-content-type":        "Content-Type",
	"response-content-language":    "Content-Language",
	"response-expires":             "Expires",
	"response-cache-control":       "Cache-Control",
	"response-content-disposition": "Content-Disposition",
	"response-content-encoding":    "Content-Encoding",
}

// writeReadHeaders sets every header of a GET or HEAD answer except the length and range.
func (h *Handler) writeReadHeaders(w http.ResponseWriter, r *http.Request, rq *s3core.Request, obj *meta.Object, whole bool) {
	hdr := w.Header()
	s3core.WriteObjectMeta(hdr, obj)
	hdr.Set("Accept-Ranges", "bytes")
	s3core.WriteVersionID(w, rq)
	writeLockHeaders(hdr, obj)
	if obj.IsManifest() {
		hdr.Set("X-Amz-Mp-Parts-Count", strconv.Itoa(obj.SegmentCount()))
	}
	writeTagCount(hdr, obj)
	// The stored checksum describes the whole object, so it goes out only with the whole.
	if whole && strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") {
		if alg, v, typ := s3core.StoredChecksum(obj); alg != "" {
			hdr.Set(alg.HeaderName(), v)
			hdr.Set("X-Amz-Checksum-Type", typ)
		}
	}
	for q, k := range responseOverrides {
		if v := rq.Query.Get(q); v != "" {
			hdr.Set(k, v)
		}
	}
}

// GetObject serves the S3 operation of that name.
func (h *Handler) GetObject(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	sel, err := parseReadSelection(r, rq.Query)
	if err != nil {
		return err
	}
	if rq.SymlinkHops == 0 {
		if err := h.SelectVersion(ctx, w, rq); err != nil {
			return err
		}
	}
	rng := sel.rng
	if sel.partNumber > 0 {
		obj, err := h.Proxy.HeadObject(ctx, rq.ReadName())
		if err != nil {
			return h.NotFound(ctx, rq, err)
		}
		obj = sse.Served(obj)
		if rng, err = partRange(&obj, sel.partNumber); err != nil {
			return err
		}
	}
	rd, err := h.Proxy.GetObject(ctx, rq.ReadName(), rng)
	if errors.Is(err, meta.ErrInvalidRange) {
		// A range of a symlink is a range of its target (the link itself has no bytes).
		if link, herr := h.Proxy.HeadObject(ctx, rq.ReadName()); herr == nil && link.SysMeta[meta.SysSymlinkTarget] != "" {
			target, ferr := h.followSymlink(ctx, r, rq, &link)
			if ferr != nil {
				return ferr
			}
			return h.GetObject(w, r, target)
		}
		return h.invalidRange(ctx, rq, err)
	}
	if err != nil {
		h.MarkDeleted(ctx, w, rq, err)
		return h.NotFound(ctx, rq, fmt.Errorf("get object %q: %w", rq.Key, err))
	}
	defer rd.Close()
	obj := &rd.Object
	if obj.SysMeta[meta.SysSymlinkTarget] != "" {
		target, err := h.followSymlink(ctx, r, rq, obj)
		if err != nil {
			return err
		}
		rd.Close()
		return h.GetObject(w, r, target)
	}
	plain, env, keyMD5, err := h.decrypted(ctx, r, s3core.HdrSSECPrefix, rq.Binding(), rq.ReadName(), rd, rng)
	if err != nil {
		return err
	}
	if plain != rd {
		defer plain.Close()
		rd = plain
		obj = &rd.Object
	}
	if err := checkSymlinkETag(rq, obj); err != nil {
		return err
	}
	if err := readConditions(r.Header).evaluate(obj.ETag, obj.LastModified(), s3core.ErrNotModified); err != nil {
		w.Header().Set("ETag", s3core.QuoteETag(obj.ETag))
		w.Header().Set("Last-Modified", obj.LastModified().Format(http.TimeFormat))
		return err
	}
	partial := rng != nil
	h.writeReadHeaders(w, r, rq, obj, !partial)
	hdr := w.Header()
	WriteSSEHeaders(hdr, env, keyMD5, obj.SysMeta[SSEBucketKey] != "")
	hdr.Set("Content-Length", strconv.FormatInt(rd.Length, 10))
	status := http.StatusOK
	if partial {
		hdr.Set("Content-Range", contentRange(rd.Offset, rd.Length, obj.Size))
		status = http.StatusPartialContent
	}
	w.WriteHeader(status)
	if n, err := io.Copy(w, rd); err != nil {
		h.Log.WarnContext(ctx, "s3 GET broke off", "request_id", rq.ID, "bucket", rq.Bucket, "key", rq.Key, "sent", n, "of", rd.Length, "err", err)
		return s3core.ErrAbortResponse
	}
	return nil
}

// invalidRange builds InvalidRange with the object's size, as S3 reports it.
func (h *Handler) invalidRange(ctx context.Context, rq *s3core.Request, err error) error {
	obj, herr := h.Proxy.HeadObject(ctx, rq.ReadName())
	if herr != nil {
		return h.NotFound(ctx, rq, herr)
	}
	w := s3core.ErrInvalidRange.WithMessage("The requested range is not satisfiable (object size %d)", sse.Served(obj).Size)
	return fmt.Errorf("%w: %w", w, err)
}

// HeadObject serves the S3 operation of that name.
func (h *Handler) HeadObject(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	sel, err := parseReadSelection(r, rq.Query)
	if err != nil {
		return err
	}
	if rq.SymlinkHops == 0 {
		if err := h.SelectVersion(ctx, w, rq); err != nil {
			return err
		}
	}
	// Brief: a long manifest's segment list is read only to find a part's range.
	obj, err := h.Proxy.HeadObjectBrief(ctx, rq.ReadName())
	if err == nil && obj.Manifest == nil && obj.Summary != nil && sel.partNumber > 0 {
		obj, err = h.Proxy.HeadObject(ctx, rq.ReadName())
	}
	if err != nil {
		h.MarkDeleted(ctx, w, rq, err)
		return h.NotFound(ctx, rq, fmt.Errorf("head object %q: %w", rq.Key, err))
	}
	if obj.SysMeta[meta.SysSymlinkTarget] != "" {
		target, err := h.followSymlink(ctx, r, rq, &obj)
		if err != nil {
			return err
		}
		return h.HeadObject(w, r, target)
	}
	_, keyMD5, env, err := h.CheckReadKey(ctx, r, s3core.HdrSSECPrefix, &obj, rq.Binding())
	if err != nil {
		return err
	}
	if env != nil && sel.partNumber > 0 && obj.Manifest == nil && obj.Summary != nil {
		if obj, err = h.Proxy.HeadObject(ctx, rq.ReadName()); err != nil {
			return h.NotFound(ctx, rq, err)
		}
	}
	obj = sse.Served(obj)
	if err := checkSymlinkETag(rq, &obj); err != nil {
		return err
	}
	if err := readConditions(r.Header).evaluate(obj.ETag, obj.LastModified(), s3core.ErrNotModified); err != nil {
		w.Header().Set("ETag", s3core.QuoteETag(obj.ETag))
		w.Header().Set("Last-Modified", obj.LastModified().Format(http.TimeFormat))
		return err
	}
	rng := sel.rng
	if sel.partNumber > 0 {
		if rng, err = partRange(&obj, sel.partNumber); err != nil {
			return err
		}
	}
	offset, length := int64(0), obj.Size
	if rng != nil {
		if offset, length, err = rng.Resolve(obj.Size); err != nil {
			return s3core.ErrInvalidRange
		}
	}
	h.writeReadHeaders(w, r, rq, &obj, rng == nil)
	hdr := w.Header()
	WriteSSEHeaders(hdr, env, keyMD5, obj.SysMeta[SSEBucketKey] != "")
	hdr.Set("Content-Length", strconv.FormatInt(length, 10))
	if rng != nil {
		hdr.Set("Content-Range", contentRange(offset, length, obj.Size))
		w.WriteHeader(http.StatusPartialContent)
		return nil
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// DeleteObject serves the S3 operation of that name.
func (h *Handler) DeleteObject(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	if rq.Query.Has("versionId") {
		opts := versions.DeleteOptions{BypassGovernance: h.bypassGovernance(ctx, r, rq, rq.Key)}
		v, err := h.Versions.DeleteVersion(ctx, rq.Versioning(), rq.ObjectName(), rq.Query.Get("versionId"), opts)
		if err != nil {
			return s3core.VersionError(fmt.Errorf("delete version %q of %q: %w", rq.Query.Get("versionId"), rq.Key, err))
		}
		w.Header().Set("x-amz-version-id", v.ID)
		if v.DeleteMarker {
			w.Header().Set("x-amz-delete-marker", "true")
		}
		s3core.WriteEmpty(w, http.StatusNoContent)
		return nil
	}
	markerID, err := h.Versions.Delete(ctx, rq.Versioning(), rq.ObjectName())
	if markerID != "" {
		w.Header().Set("x-amz-version-id", markerID)
		w.Header().Set("x-amz-delete-marker", "true")
	}
	if errors.Is(err, meta.ErrNotFound) {
		// Deleting what is not there succeeds in S3, unless the bucket itself is missing.
		if err := h.NotFound(ctx, rq, err); errors.Is(err, s3core.ErrNoSuchBucket) {
			return err
		}
		err = nil
	}
	if err != nil {
		return s3core.VersionError(fmt.Errorf("delete object %q: %w", rq.Key, err))
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// ObjectSettings puts what a write's headers set besides the metadata into the new object's
// SysMeta: its ACL, its Object Lock (or the bucket's default retention) and its tags.
func (h *Handler) ObjectSettings(r *http.Request, rq *s3core.Request, obj *meta.Object) error {
	if err := h.setObjectACL(r, rq, obj); err != nil {
		return err
	}
	if err := h.lockFromHeaders(r.Context(), r, rq, obj); err != nil {
		return err
	}
	tags, err := tagsFromHeader(r.Header)
	if err != nil {
		return err
	}
	SetTags(obj, tags)
	return nil
}

// setObjectACL puts the ACL a write sets by header (x-amz-acl, x-amz-grant-*) into the new
// object's SysMeta; without one the object is private. An ACL that grants anything shares the
// bucket's name (s3core/registry.go), so that the grantees can address the object.
func (h *Handler) setObjectACL(r *http.Request, rq *s3core.Request, obj *meta.Object) error {
	acl, set, err := h.ACLFromHeaders(r, true)
	if err != nil || !set {
		return err
	}
	if enc := acl.Encode(); enc != "" {
		if err := h.ClaimForSharing(r.Context(), rq, true); err != nil {
			return err
		}
		if obj.SysMeta == nil {
			obj.SysMeta = map[string]string{}
		}
		obj.SysMeta[access.ObjectMetaACL] = enc
	}
	return nil
}
