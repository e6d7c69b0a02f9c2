package swift

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/versions"
)

func (rq *request) objectName() meta.ObjectName {
	return meta.ObjectName{Account: rq.tenant, Container: rq.container, Object: rq.object}
}

// etagMatcher returns the BeforeCommit hook that compares a PUT's ETag header with the MD5 of
// what arrived: on a mismatch nothing is stored and the answer is 422.
func etagMatcher(want string) func(*meta.Object) error {
	want = strings.ToLower(httpwire.TrimETag(want))
	return func(o *meta.Object) error {
		if want != "" && o.ETag != want {
			return fmt.Errorf("body MD5 %s, ETag header %s: %w", o.ETag, want, errUnprocessable)
		}
		return nil
	}
}

// putObject stores an object (201). The body has a Content-Length or is chunked (then its size
// is checked as it arrives).
func (h *Handler) putObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	obj, err := objectMetaFromRequest(r.Header, rq.object, h.cfg.Now())
	if err != nil {
		return err
	}
	cond, err := h.putIfNoneMatch(r, rq)
	if err != nil {
		return err
	}
	if err := h.archiveBeforeWrite(ctx, rq.objectName()); err != nil {
		return err
	}
	if q := r.URL.Query(); q.Has("multipart-manifest") {
		if q.Get("multipart-manifest") != "put" {
			return errBadRequest.withText("multipart-manifest must be put on a PUT")
		}
		return h.putManifest(w, r, rq, obj)
	}
	if _, ok := r.Header["X-Symlink-Target"]; ok {
		return h.putSymlink(w, r, rq, obj)
	}
	chunked := len(r.TransferEncoding) > 0
	if !chunked && r.Header.Get("Content-Length") == "" {
		return errLengthRequired
	}
	body := io.Reader(r.Body)
	if chunked {
		obj.Size = -1
		body = http.MaxBytesReader(w, r.Body, h.cfg.MaxObjectSize)
	} else {
		obj.Size = r.ContentLength
		if obj.Size > h.cfg.MaxObjectSize {
			return errTooLarge
		}
	}
	if err := h.checkQuota(ctx, rq.tenant, rq.container, access.Usage{Bytes: max(obj.Size, 0), Objects: 1}); err != nil {
		return err
	}
	if err := h.queueExpiry(ctx, rq.objectName(), obj.SysMeta); err != nil {
		return err
	}
	stored, err := h.storeObject(ctx, w, rq.objectName(), obj, body, proxy.PutOptions{BeforeCommit: etagMatcher(r.Header.Get("ETag")), If: cond})
	if errors.Is(err, meta.ErrConflict) {
		// A newer write of the name won: Swift's proxy accepts the PUT that lost (202), since
		// newest-wins made it a no-op rather than a failure.
		writeStatus(w, r, http.StatusAccepted)
		return nil
	}
	if err != nil {
		return fmt.Errorf("put object %q: %w", rq.object, err)
	}
	hdr := w.Header()
	hdr.Set("Etag", stored.ETag)
	hdr.Set("Last-Modified", swiftwire.LastModified(stored.Timestamp).Format(http.TimeFormat))
	writeStatus(w, r, http.StatusCreated)
	return nil
}

// servedETag is an object's ETag as Swift shows it: bare hex for plain objects, quoted for
// manifests (as Swift shows a static large object's).
func servedETag(obj *meta.Object) string {
	if obj.IsManifest() {
		return `"` + obj.ETag + `"`
	}
	return obj.ETag
}

// writeObjectHeaders sets the headers that describe an object (all but length and range).
func writeObjectHeaders(hdr http.Header, obj *meta.Object) {
	ct := obj.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	hdr.Set("Content-Type", ct)
	for k, v := range obj.Headers {
		hdr.Set(k, v)
	}
	for k, v := range obj.UserMeta {
		hdr.Set(swiftwire.MetaHeader("Object", k), v)
	}
	if isSLO(obj) {
		hdr.Set("X-Static-Large-Object", "True")
		hdr.Set("X-Manifest-Etag", manifestETag(obj))
	}
	if at := deleteAt(obj); at > 0 {
		hdr.Set("X-Delete-At", strconv.FormatInt(at, 10))
	}
	writeSymlinkHeaders(hdr, obj)
	hdr.Set("Etag", servedETag(obj))
	hdr.Set("Last-Modified", swiftwire.LastModified(obj.Timestamp).Format(http.TimeFormat))
	hdr.Set("X-Timestamp", swiftwire.Timestamp(obj.Timestamp))
	hdr.Set("Accept-Ranges", "bytes")
}

// getObject serves GET (whole, one range, or several as multipart/byteranges) and HEAD (which
// ignores Range, as Swift does) on an object.
func (h *Handler) getObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	if r.Method == http.MethodHead {
		// Brief: a long manifest's segment list is not read, except for the answers that
		// show it.
		obj, err := h.proxy.HeadObjectBrief(ctx, rq.objectName())
		if err == nil && obj.Manifest == nil && obj.Summary != nil && r.URL.Query().Get("multipart-manifest") == "get" {
			obj, err = h.proxy.HeadObject(ctx, rq.objectName())
		}
		if err != nil {
			return fmt.Errorf("head object %q: %w", rq.object, err)
		}
		if expired(&obj, h.cfg.Now()) {
			return fmt.Errorf("object %q expired: %w", rq.object, errNotFound)
		}
		if followed, err := h.symlinkHop(w, r, rq, &obj); followed {
			return err
		}
		obj = sse.Served(obj)
		if r.URL.Query().Get("multipart-manifest") == "get" && isSLO(&obj) {
			return getManifest(w, r, &obj)
		}
		if isDLO(&obj) {
			if r.URL.Query().Get("multipart-manifest") == "get" {
				w.Header().Set("X-Object-Manifest", dloHeader(&obj))
			} else {
				return h.serveDLO(w, r, rq, &obj, nil)
			}
		}
		writeObjectHeaders(w.Header(), &obj)
		if err := checkConditions(r, obj.ETag, swiftwire.LastModified(obj.Timestamp)); err != nil {
			return err
		}
		w.Header().Set("Content-Length", strconv.FormatInt(obj.Size, 10))
		w.WriteHeader(http.StatusOK)
		return nil
	}
	if r.URL.Query().Get("multipart-manifest") == "get" {
		obj, err := h.proxy.HeadObject(ctx, rq.objectName())
		if err != nil {
			return fmt.Errorf("head object %q: %w", rq.object, err)
		}
		if isSLO(&obj) && !expired(&obj, h.cfg.Now()) {
			return getManifest(w, r, &obj)
		}
	}
	rs := swiftwire.ParseRanges(r.Header.Get("Range"))
	if len(rs) > 1 {
		// A DLO answers several ranges with the whole object, as Swift's does.
		if obj, err := h.proxy.HeadObject(ctx, rq.objectName()); err == nil && isDLO(&obj) && !expired(&obj, h.cfg.Now()) &&
			r.URL.Query().Get("multipart-manifest") != "get" {
			return h.serveDLO(w, r, rq, &obj, nil)
		}
		return h.getMultiRange(w, r, rq, rs)
	}
	var rng *meta.Range
	if len(rs) == 1 {
		rng = &rs[0]
	}
	return h.getSingle(w, r, rq, rng)
}

// getSingle serves a GET of the whole object (rng nil) or of one range.
func (h *Handler) getSingle(w http.ResponseWriter, r *http.Request, rq *request, rng *meta.Range) error {
	ctx := r.Context()
	rd, err := h.proxy.GetObject(ctx, rq.objectName(), rng)
	if errors.Is(err, meta.ErrInvalidRange) {
		obj, herr := h.proxy.HeadObject(ctx, rq.objectName())
		if herr != nil {
			return fmt.Errorf("head object %q: %w", rq.object, herr)
		}
		if expired(&obj, h.cfg.Now()) {
			return fmt.Errorf("object %q expired: %w", rq.object, errNotFound)
		}
		if followed, err := h.symlinkHop(w, r, rq, &obj); followed {
			return err
		}
		if isDLO(&obj) && r.URL.Query().Get("multipart-manifest") != "get" {
			return h.serveDLO(w, r, rq, &obj, rng)
		}
		obj = sse.Served(obj)
		writeObjectHeaders(w.Header(), &obj)
		if err := checkConditions(r, obj.ETag, swiftwire.LastModified(obj.Timestamp)); err != nil {
			return err
		}
		w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(obj.Size, 10))
		return fmt.Errorf("get object %q: %w", rq.object, err)
	}
	if err != nil {
		return fmt.Errorf("get object %q: %w", rq.object, err)
	}
	defer rd.Close()
	obj := &rd.Object
	if expired(obj, h.cfg.Now()) {
		return fmt.Errorf("object %q expired: %w", rq.object, errNotFound)
	}
	if isSymlink(obj) || rq.symlinkETag != "" {
		if followed, err := h.symlinkHop(w, r, rq, obj); followed {
			rd.Close()
			return err
		}
	}
	if sse.Encrypted(obj) {
		plain, err := h.plaintext(ctx, rq, *obj, rd, rng)
		if err != nil {
			return err
		}
		defer plain.Close()
		rd, obj = plain, &plain.Object
	}
	hdr := w.Header()
	if isDLO(obj) {
		if r.URL.Query().Get("multipart-manifest") != "get" {
			rd.Close()
			return h.serveDLO(w, r, rq, obj, rng)
		}
		hdr.Set("X-Object-Manifest", dloHeader(obj))
	}
	writeObjectHeaders(hdr, obj)
	if err := checkConditions(r, obj.ETag, swiftwire.LastModified(obj.Timestamp)); err != nil {
		return err
	}
	if isSLO(obj) && r.URL.Query().Get("multipart-manifest") != "get" {
		if err := h.checkSegmentAccess(r, rq, rq.objectName(), obj); err != nil {
			return err
		}
		if rd.Offset == 0 {
			if err := h.checkFirstSegment(r, rq, obj); err != nil {
				return err
			}
		}
	}
	hdr.Set("Content-Length", strconv.FormatInt(rd.Length, 10))
	status := http.StatusOK
	if rng != nil {
		hdr.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", rd.Offset, rd.Offset+rd.Length-1, obj.Size))
		status = http.StatusPartialContent
	}
	w.WriteHeader(status)
	if n, err := io.Copy(w, rd); err != nil {
		h.log.WarnContext(ctx, "swift GET broke off", "trans_id", rq.transID, "container", rq.container, "object", rq.object, "sent", n, "of", rd.Length, "err", err)
		return errAbortResponse
	}
	return nil
}

// postObject replaces an object's metadata (202): user metadata, content headers and expiry
// are those of the request; the content type changes only when the request has one.
func (h *Handler) postObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	if _, ok := r.Header["X-Symlink-Target"]; ok {
		return errBadRequest.withText("A PUT request is required to set a symlink target")
	}
	upd, err := objectMetaFromRequest(r.Header, rq.object, h.cfg.Now())
	if err != nil {
		return err
	}
	cur, err := h.proxy.HeadObject(ctx, rq.objectName())
	if err != nil {
		return fmt.Errorf("post object %q: %w", rq.object, err)
	}
	if expired(&cur, h.cfg.Now()) {
		return fmt.Errorf("object %q expired: %w", rq.object, errNotFound)
	}
	if r.Header.Get("Content-Type") == "" {
		upd.ContentType = cur.ContentType
	}
	// PostObject merges SysMeta: an empty value clears an earlier X-Delete-At or
	// X-Object-Manifest, since a POST without one removes it in Swift.
	if upd.SysMeta == nil {
		upd.SysMeta = map[string]string{}
	}
	for _, k := range []string{sysDeleteAt, sysDLO, sysDLORaw} {
		if _, ok := upd.SysMeta[k]; !ok {
			upd.SysMeta[k] = ""
		}
	}
	if err := h.queueExpiry(ctx, rq.objectName(), upd.SysMeta); err != nil {
		return err
	}
	if _, err := h.proxy.PostObject(ctx, rq.objectName(), upd); err != nil {
		return fmt.Errorf("post object %q: %w", rq.object, err)
	}
	if vobj, _, ok := versions.LinkedVersion(&cur); ok {
		// A versioned object: the metadata goes to its current version too (without the
		// expiry, which is the link's), as Swift's object versioning follows its link.
		return h.postVersion(w, r, rq, vobj, upd)
	}
	if isSymlink(&cur) {
		return symlinkRedirect(w, r, rq, &cur)
	}
	writeStatus(w, r, http.StatusAccepted)
	return nil
}

// deleteObject deletes an object: 204, or 404 when there is none.
func (h *Handler) deleteObject(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := h.checkObjectLockInPlace(r.Context(), rq); err != nil {
		return err
	}
	if r.URL.Query().Get("multipart-manifest") == "delete" {
		return h.deleteManifest(w, r, rq)
	}
	if v, ok := r.Header["X-If-Delete-At"]; ok {
		// Swift's expirer deletes with X-If-Delete-At, so that an object given a new expiry
		// meanwhile survives. The check and the delete are not atomic.
		want, err := strconv.ParseInt(strings.TrimSpace(v[0]), 10, 64)
		if err != nil {
			return errBadRequest.withText("Bad X-If-Delete-At header value")
		}
		cur, err := h.proxy.HeadObject(r.Context(), rq.objectName())
		if err != nil {
			return fmt.Errorf("delete object %q: %w", rq.object, err)
		}
		if deleteAt(&cur) != want {
			return errPreconditionFailed.withText("X-If-Delete-At and X-Delete-At do not match")
		}
	}
	if rq.versionID == "" {
		st, err := h.versionState(r.Context(), rq.tenant, rq.container)
		if err != nil {
			return err
		}
		if st.Enabled {
			return h.deleteWithMarker(w, r, rq, st)
		}
	}
	v, err := h.containerVersioning(r.Context(), rq.tenant, rq.container)
	if err != nil {
		return err
	}
	if v.archive != "" {
		done, err := h.deleteVersioned(r.Context(), rq.objectName(), v)
		if err != nil {
			return err
		}
		if done {
			writeStatus(w, r, http.StatusNoContent)
			return nil
		}
	}
	if err := h.proxy.DeleteObject(r.Context(), rq.objectName()); err != nil {
		return fmt.Errorf("delete object %q: %w", rq.object, err)
	}
	writeStatus(w, r, http.StatusNoContent)
	return nil
}

// checkObjectLockInPlace refuses a DELETE that would remove, in place, an object under S3
// Object Lock: in a container with it, the object in place is normally a link (a DELETE then
// writes a delete marker), but a null version kept from before, deleted by ?version-id=null or
// with multipart-manifest=delete, is removed in place and must meet its lock as any version.
func (h *Handler) checkObjectLockInPlace(ctx context.Context, rq *request) error {
	c, err := h.headContainer(ctx, rq.tenant, rq.container)
	if err != nil || !versions.LockEnabled(c) {
		return nil // the delete itself says what is missing
	}
	cur, err := h.proxy.HeadObjectBrief(ctx, rq.objectName())
	if err != nil || versions.IsLink(&cur) {
		return nil
	}
	return versionsError(versions.CheckRemove(&cur, time.Now(), false))
}

// postVersion applies a POST on a versioned object's link to the version it links to (vobj, in
// the versions container): the request's metadata, without its expiry (202).
func (h *Handler) postVersion(w http.ResponseWriter, r *http.Request, rq *request, vobj string, upd meta.Object) error {
	ctx := r.Context()
	name := meta.ObjectName{Account: rq.tenant, Container: versions.ContainerFor(rq.container), Object: vobj}
	v, err := h.proxy.HeadObjectBrief(ctx, name)
	if err != nil {
		return fmt.Errorf("post object %q: its version: %w", rq.object, err)
	}
	vupd := upd
	vupd.SysMeta = cloneMap(upd.SysMeta)
	vupd.SysMeta[sysDeleteAt] = ""
	if r.Header.Get("Content-Type") == "" {
		vupd.ContentType = v.ContentType
	}
	if _, err := h.proxy.PostObject(ctx, name, vupd); err != nil {
		return fmt.Errorf("post object %q: its version: %w", rq.object, err)
	}
	writeStatus(w, r, http.StatusAccepted)
	return nil
}
