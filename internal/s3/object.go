package s3

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
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/versions"
)

var errInvalidPartNumber = &apiError{"InvalidPartNumber", http.StatusRequestedRangeNotSatisfiable, "The requested partnumber is not satisfiable"}

func (rq *request) objectName() meta.ObjectName {
	return meta.ObjectName{Account: rq.account, Container: rq.bucket, Object: rq.key}
}

// notFound tells NoSuchKey from NoSuchBucket after an object operation found nothing (the
// proxy does not look at the container on reads). A caller who may not list the bucket gets
// AccessDenied rather than NoSuchKey, as in S3, so that it cannot probe for keys.
func (h *Handler) notFound(ctx context.Context, rq *request, err error) error {
	if !errors.Is(err, meta.ErrNotFound) || errors.Is(err, meta.ErrNoContainer) {
		return err
	}
	if _, cerr := h.proxy.HeadContainer(ctx, rq.account, rq.bucket); errors.Is(cerr, meta.ErrNotFound) {
		return fmt.Errorf("%w: %w", errNoSuchBucket, err)
	}
	if !h.mayList(rq) {
		return fmt.Errorf("%w: %w", errAccessDenied, err)
	}
	return fmt.Errorf("%w: %w", errNoSuchKey, err)
}

// checkWriteHeaders refuses request headers that ask for features Cairn does not have, rather
// than silently storing an object without them. (ACL headers are read by aclFromHeaders.)
func checkWriteHeaders(hdr http.Header) error {
	for _, k := range []string{"X-Amz-Website-Redirect-Location"} {
		if hdr.Get(k) != "" {
			return errNotImplemented.withMessage("The %s header is not implemented.", strings.ToLower(k))
		}
	}
	return nil
}

// conditionalWrite applies If-None-Match: * and If-Match to a PUT. It refuses at once what
// the current version already fails (before the body is read), and returns the condition for
// the storage engine to evaluate again in the commit, where it is atomic: of two racing
// conditional PUTs, one gets PreconditionFailed.
func (h *Handler) conditionalWrite(ctx context.Context, r *http.Request, rq *request) (meta.Precondition, error) {
	var cond meta.Precondition
	inm, im := r.Header.Get("If-None-Match"), r.Header.Get("If-Match")
	if inm == "" && im == "" {
		return cond, nil
	}
	if inm != "" && strings.TrimSpace(inm) != "*" {
		return cond, errNotImplemented.withMessage("If-None-Match on a write accepts only *.")
	}
	cond.IfNoneMatch = inm != ""
	if im != "" {
		cond.IfMatch = httpwire.ETagList(im)
	}
	cur, err := h.proxy.HeadObject(ctx, rq.objectName())
	exists := err == nil
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return cond, fmt.Errorf("conditional write: %w", err)
	}
	if inm != "" && exists {
		return cond, errPreconditionFailed.withMessage("At least one of the pre-conditions you specified did not hold: If-None-Match")
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
			return cond, h.notFound(ctx, rq, err)
		}
		if !httpwire.ETagListMatches(im, cur.ETag) {
			return cond, errPreconditionFailed.withMessage("At least one of the pre-conditions you specified did not hold: If-Match")
		}
		if cur.ETag != stored {
			// The commit compares the stored object's ETag: it must still be the one matched.
			cond.IfMatch = []string{stored}
		}
	}
	return cond, nil
}

func (h *Handler) putObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	if err := checkWriteHeaders(r.Header); err != nil {
		return err
	}
	obj, err := objectMetaFromRequest(r.Header)
	if err != nil {
		return err
	}
	if err := h.objectSettings(r, rq, &obj); err != nil {
		return err
	}
	ssew, err := h.sseForWrite(r, rq)
	if err != nil {
		return err
	}
	body, size, err := h.openBody(r, rq, "")
	if err != nil {
		return err
	}
	cond, err := h.conditionalWrite(ctx, r, rq)
	if err != nil {
		return err
	}
	if err := h.checkQuota(ctx, rq, access.Usage{Bytes: size, Objects: 1}); err != nil {
		return err
	}
	obj.Size = size
	var putBody io.Reader = body
	opts := proxy.PutOptions{BeforeCommit: body.beforeCommit, If: cond}
	var enc *encryptingBody
	if ssew != nil {
		if enc, err = h.encrypt(ctx, ssew, rq.binding(), body, size, ""); err != nil {
			return err
		}
		putBody, obj.Size = enc, enc.storedSize
		opts.BeforeCommit = enc.beforeCommit(body.beforeCommit, size, true)
		setBucketKey(&obj, ssew)
	}
	stored, versionID, err := h.versions.Put(ctx, rq.versioning(), rq.objectName(), obj, putBody, opts)
	if err != nil {
		return versionError(fmt.Errorf("put object %q: %w", rq.key, err))
	}
	hdr := w.Header()
	hdr.Set("ETag", quoteETag(stored.ETag))
	if enc != nil {
		hdr.Set("ETag", quoteETag(enc.servedETag(stored.ETag)))
		writeSSEHeaders(hdr, enc.env, ssew.keyMD5, ssew.bucketKey)
	}
	if versionID != "" {
		hdr.Set("x-amz-version-id", versionID)
	}
	if body.checksum != "" {
		hdr.Set(body.spec.Algorithm.HeaderName(), body.checksum)
		hdr.Set("X-Amz-Checksum-Type", checksumFullObject)
	}
	writeEmpty(w, http.StatusOK)
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
		if err != nil || n < 1 || n > maxPartNumber {
			return sel, errInvalidArgument.withMessage("Part number must be an integer between 1 and %d, inclusive", maxPartNumber)
		}
		if r.Header.Get("Range") != "" {
			return sel, errInvalidRequest.withMessage("Cannot specify both Range header and partNumber query parameter")
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
func (h *Handler) writeReadHeaders(w http.ResponseWriter, r *http.Request, rq *request, obj *meta.Object, whole bool) {
	hdr := w.Header()
	writeObjectMeta(hdr, obj)
	hdr.Set("Accept-Ranges", "bytes")
	writeVersionID(w, rq)
	writeLockHeaders(hdr, obj)
	if obj.IsManifest() {
		hdr.Set("X-Amz-Mp-Parts-Count", strconv.Itoa(obj.SegmentCount()))
	}
	writeTagCount(hdr, obj)
	// The stored checksum describes the whole object, so it goes out only with the whole.
	if whole && strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") {
		if alg, v, typ := storedChecksum(obj); alg != "" {
			hdr.Set(alg.HeaderName(), v)
			hdr.Set("X-Amz-Checksum-Type", typ)
		}
	}
	for q, k := range responseOverrides {
		if v := rq.query.Get(q); v != "" {
			hdr.Set(k, v)
		}
	}
}

func (h *Handler) getObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	sel, err := parseReadSelection(r, rq.query)
	if err != nil {
		return err
	}
	if rq.symlinkHops == 0 {
		if err := h.selectVersion(ctx, w, rq); err != nil {
			return err
		}
	}
	rng := sel.rng
	if sel.partNumber > 0 {
		obj, err := h.proxy.HeadObject(ctx, rq.readName())
		if err != nil {
			return h.notFound(ctx, rq, err)
		}
		obj = sse.Served(obj)
		if rng, err = partRange(&obj, sel.partNumber); err != nil {
			return err
		}
	}
	rd, err := h.proxy.GetObject(ctx, rq.readName(), rng)
	if errors.Is(err, meta.ErrInvalidRange) {
		// A range of a symlink is a range of its target (the link itself has no bytes).
		if link, herr := h.proxy.HeadObject(ctx, rq.readName()); herr == nil && link.SysMeta[meta.SysSymlinkTarget] != "" {
			target, ferr := h.followSymlink(ctx, r, rq, &link)
			if ferr != nil {
				return ferr
			}
			return h.getObject(w, r, target)
		}
		return h.invalidRange(ctx, rq, err)
	}
	if err != nil {
		h.markDeleted(ctx, w, rq, err)
		return h.notFound(ctx, rq, fmt.Errorf("get object %q: %w", rq.key, err))
	}
	defer rd.Close()
	obj := &rd.Object
	if obj.SysMeta[meta.SysSymlinkTarget] != "" {
		target, err := h.followSymlink(ctx, r, rq, obj)
		if err != nil {
			return err
		}
		rd.Close()
		return h.getObject(w, r, target)
	}
	plain, env, keyMD5, err := h.decrypted(ctx, r, hdrSSECPrefix, rq.binding(), rq.readName(), rd, rng)
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
	if err := readConditions(r.Header).evaluate(obj.ETag, obj.LastModified(), errNotModified); err != nil {
		w.Header().Set("ETag", quoteETag(obj.ETag))
		w.Header().Set("Last-Modified", obj.LastModified().Format(http.TimeFormat))
		return err
	}
	partial := rng != nil
	h.writeReadHeaders(w, r, rq, obj, !partial)
	hdr := w.Header()
	writeSSEHeaders(hdr, env, keyMD5, obj.SysMeta[sseBucketKey] != "")
	hdr.Set("Content-Length", strconv.FormatInt(rd.Length, 10))
	status := http.StatusOK
	if partial {
		hdr.Set("Content-Range", contentRange(rd.Offset, rd.Length, obj.Size))
		status = http.StatusPartialContent
	}
	w.WriteHeader(status)
	if n, err := io.Copy(w, rd); err != nil {
		h.log.WarnContext(ctx, "s3 GET broke off", "request_id", rq.id, "bucket", rq.bucket, "key", rq.key, "sent", n, "of", rd.Length, "err", err)
		return errAbortResponse
	}
	return nil
}

// invalidRange builds InvalidRange with the object's size, as S3 reports it.
func (h *Handler) invalidRange(ctx context.Context, rq *request, err error) error {
	obj, herr := h.proxy.HeadObject(ctx, rq.readName())
	if herr != nil {
		return h.notFound(ctx, rq, herr)
	}
	w := errInvalidRange.withMessage("The requested range is not satisfiable (object size %d)", sse.Served(obj).Size)
	return fmt.Errorf("%w: %w", w, err)
}

func (h *Handler) headObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	sel, err := parseReadSelection(r, rq.query)
	if err != nil {
		return err
	}
	if rq.symlinkHops == 0 {
		if err := h.selectVersion(ctx, w, rq); err != nil {
			return err
		}
	}
	// Brief: a long manifest's segment list is read only to find a part's range.
	obj, err := h.proxy.HeadObjectBrief(ctx, rq.readName())
	if err == nil && obj.Manifest == nil && obj.Summary != nil && sel.partNumber > 0 {
		obj, err = h.proxy.HeadObject(ctx, rq.readName())
	}
	if err != nil {
		h.markDeleted(ctx, w, rq, err)
		return h.notFound(ctx, rq, fmt.Errorf("head object %q: %w", rq.key, err))
	}
	if obj.SysMeta[meta.SysSymlinkTarget] != "" {
		target, err := h.followSymlink(ctx, r, rq, &obj)
		if err != nil {
			return err
		}
		return h.headObject(w, r, target)
	}
	_, keyMD5, env, err := h.checkReadKey(ctx, r, hdrSSECPrefix, &obj, rq.binding())
	if err != nil {
		return err
	}
	if env != nil && sel.partNumber > 0 && obj.Manifest == nil && obj.Summary != nil {
		if obj, err = h.proxy.HeadObject(ctx, rq.readName()); err != nil {
			return h.notFound(ctx, rq, err)
		}
	}
	obj = sse.Served(obj)
	if err := checkSymlinkETag(rq, &obj); err != nil {
		return err
	}
	if err := readConditions(r.Header).evaluate(obj.ETag, obj.LastModified(), errNotModified); err != nil {
		w.Header().Set("ETag", quoteETag(obj.ETag))
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
			return errInvalidRange
		}
	}
	h.writeReadHeaders(w, r, rq, &obj, rng == nil)
	hdr := w.Header()
	writeSSEHeaders(hdr, env, keyMD5, obj.SysMeta[sseBucketKey] != "")
	hdr.Set("Content-Length", strconv.FormatInt(length, 10))
	if rng != nil {
		hdr.Set("Content-Range", contentRange(offset, length, obj.Size))
		w.WriteHeader(http.StatusPartialContent)
		return nil
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h *Handler) deleteObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	if rq.query.Has("versionId") {
		opts := versions.DeleteOptions{BypassGovernance: h.bypassGovernance(ctx, r, rq, rq.key)}
		v, err := h.versions.DeleteVersion(ctx, rq.versioning(), rq.objectName(), rq.query.Get("versionId"), opts)
		if err != nil {
			return versionError(fmt.Errorf("delete version %q of %q: %w", rq.query.Get("versionId"), rq.key, err))
		}
		w.Header().Set("x-amz-version-id", v.ID)
		if v.DeleteMarker {
			w.Header().Set("x-amz-delete-marker", "true")
		}
		writeEmpty(w, http.StatusNoContent)
		return nil
	}
	markerID, err := h.versions.Delete(ctx, rq.versioning(), rq.objectName())
	if markerID != "" {
		w.Header().Set("x-amz-version-id", markerID)
		w.Header().Set("x-amz-delete-marker", "true")
	}
	if errors.Is(err, meta.ErrNotFound) {
		// Deleting what is not there succeeds in S3, unless the bucket itself is missing.
		if err := h.notFound(ctx, rq, err); errors.Is(err, errNoSuchBucket) {
			return err
		}
		err = nil
	}
	if err != nil {
		return versionError(fmt.Errorf("delete object %q: %w", rq.key, err))
	}
	writeEmpty(w, http.StatusNoContent)
	return nil
}

// objectSettings puts what a write's headers set besides the metadata into the new object's
// SysMeta: its ACL, its Object Lock (or the bucket's default retention) and its tags.
func (h *Handler) objectSettings(r *http.Request, rq *request, obj *meta.Object) error {
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
	setTags(obj, tags)
	return nil
}

// setObjectACL puts the ACL a write sets by header (x-amz-acl, x-amz-grant-*) into the new
// object's SysMeta; without one the object is private. An ACL that grants anything shares the
// bucket's name (registry.go), so that the grantees can address the object.
func (h *Handler) setObjectACL(r *http.Request, rq *request, obj *meta.Object) error {
	acl, set, err := h.aclFromHeaders(r, true)
	if err != nil || !set {
		return err
	}
	if enc := acl.Encode(); enc != "" {
		if err := h.claimForSharing(r.Context(), rq, true); err != nil {
			return err
		}
		if obj.SysMeta == nil {
			obj.SysMeta = map[string]string{}
		}
		obj.SysMeta[access.ObjectMetaACL] = enc
	}
	return nil
}

// objectMetaOf is the client-visible metadata of an object, for a metadata rewrite.
func objectMetaOf(obj *meta.Object) meta.Object {
	return meta.Object{ContentType: obj.ContentType, Headers: obj.Headers, UserMeta: obj.UserMeta}
}
