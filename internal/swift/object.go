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
	"github.com/cairn-store/cairn/internal/swift/largeobj"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/swift/symlink"
	"github.com/cairn-store/cairn/internal/versions"
)

// etagMatcher returns the BeforeCommit hook that compares a PUT's ETag header with the MD5 of
// what arrived: on a mismatch nothing is stored and the answer is 422.
func etagMatcher(want string) func(*meta.Object) error {
	want = strings.ToLower(httpwire.TrimETag(want))
	return func(o *meta.Object) error {
		if want != "" && o.ETag != want {
			return fmt.Errorf("body MD5 %s, ETag header %s: %w", o.ETag, want, swiftcore.ErrUnprocessable)
		}
		return nil
	}
}

// putObject stores an object (201). The body has a Content-Length or is chunked (then its size
// is checked as it arrives).
func (h *Handler) putObject(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	obj, err := objectMetaFromRequest(r.Header, rq.Object, h.Now())
	if err != nil {
		return err
	}
	cond, err := h.PutIfNoneMatch(r, rq)
	if err != nil {
		return err
	}
	if err := h.ver.ArchiveBeforeWrite(ctx, rq.ObjectName()); err != nil {
		return err
	}
	if q := r.URL.Query(); q.Has("multipart-manifest") {
		if q.Get("multipart-manifest") != "put" {
			return swiftcore.ErrBadRequest.WithText("multipart-manifest must be put on a PUT")
		}
		return h.lo.PutManifest(w, r, rq, obj)
	}
	if _, ok := r.Header["X-Symlink-Target"]; ok {
		return h.sym.PutSymlink(w, r, rq, obj)
	}
	chunked := len(r.TransferEncoding) > 0
	if !chunked && r.Header.Get("Content-Length") == "" {
		return swiftcore.ErrLengthRequired
	}
	body := io.Reader(r.Body)
	if chunked {
		obj.Size = -1
		body = http.MaxBytesReader(w, r.Body, h.MaxObjectSize)
	} else {
		obj.Size = r.ContentLength
		if obj.Size > h.MaxObjectSize {
			return swiftcore.ErrTooLarge
		}
	}
	if err := h.CheckQuota(ctx, rq.Tenant, rq.Container, access.Usage{Bytes: max(obj.Size, 0), Objects: 1}); err != nil {
		return err
	}
	if err := h.QueueExpiry(ctx, rq.ObjectName(), obj.SysMeta); err != nil {
		return err
	}
	stored, err := h.StoreObject(ctx, w, rq.ObjectName(), obj, body, proxy.PutOptions{BeforeCommit: etagMatcher(r.Header.Get("ETag")), If: cond})
	if errors.Is(err, meta.ErrConflict) {
		// A newer write of the name won: Swift's proxy accepts the PUT that lost (202), since
		// newest-wins made it a no-op rather than a failure.
		swiftcore.WriteStatus(w, r, http.StatusAccepted)
		return nil
	}
	if err != nil {
		return fmt.Errorf("put object %q: %w", rq.Object, err)
	}
	hdr := w.Header()
	hdr.Set("Etag", stored.ETag)
	hdr.Set("Last-Modified", swiftwire.LastModified(stored.Timestamp).Format(http.TimeFormat))
	swiftcore.WriteStatus(w, r, http.StatusCreated)
	return nil
}

// getObject serves GET (whole, one range, or several as multipart/byteranges) and HEAD (which
// ignores Range, as Swift does) on an object.
func (h *Handler) getObject(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	if r.Method == http.MethodHead {
		// Brief: a long manifest's segment list is not read, except for the answers that
		// show it.
		obj, err := h.Proxy.HeadObjectBrief(ctx, rq.ObjectName())
		if err == nil && obj.Manifest == nil && obj.Summary != nil && r.URL.Query().Get("multipart-manifest") == "get" {
			obj, err = h.Proxy.HeadObject(ctx, rq.ObjectName())
		}
		if err != nil {
			return fmt.Errorf("head object %q: %w", rq.Object, err)
		}
		if swiftcore.Expired(&obj, h.Now()) {
			return fmt.Errorf("object %q expired: %w", rq.Object, swiftcore.ErrNotFound)
		}
		if followed, err := h.sym.SymlinkHop(w, r, rq, &obj); followed {
			return err
		}
		obj = sse.Served(obj)
		if r.URL.Query().Get("multipart-manifest") == "get" && swiftcore.IsSLO(&obj) {
			return largeobj.GetManifest(w, r, &obj)
		}
		if swiftcore.IsDLO(&obj) {
			if r.URL.Query().Get("multipart-manifest") == "get" {
				w.Header().Set("X-Object-Manifest", largeobj.DLOHeader(&obj))
			} else {
				return h.lo.ServeDLO(w, r, rq, &obj, nil)
			}
		}
		swiftcore.WriteObjectHeaders(w.Header(), &obj)
		if err := swiftcore.CheckConditions(r, obj.ETag, swiftwire.LastModified(obj.Modified())); err != nil {
			return err
		}
		w.Header().Set("Content-Length", strconv.FormatInt(obj.Size, 10))
		w.WriteHeader(http.StatusOK)
		return nil
	}
	if r.URL.Query().Get("multipart-manifest") == "get" {
		obj, err := h.Proxy.HeadObject(ctx, rq.ObjectName())
		if err != nil {
			return fmt.Errorf("head object %q: %w", rq.Object, err)
		}
		if swiftcore.IsSLO(&obj) && !swiftcore.Expired(&obj, h.Now()) {
			return largeobj.GetManifest(w, r, &obj)
		}
	}
	rs := swiftwire.ParseRanges(r.Header.Get("Range"))
	if len(rs) > 1 {
		// A DLO answers several ranges with the whole object, as Swift's does.
		if obj, err := h.Proxy.HeadObject(ctx, rq.ObjectName()); err == nil && swiftcore.IsDLO(&obj) && !swiftcore.Expired(&obj, h.Now()) &&
			r.URL.Query().Get("multipart-manifest") != "get" {
			return h.lo.ServeDLO(w, r, rq, &obj, nil)
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
func (h *Handler) getSingle(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, rng *meta.Range) error {
	ctx := r.Context()
	rd, err := h.Proxy.GetObject(ctx, rq.ObjectName(), rng)
	if errors.Is(err, meta.ErrInvalidRange) {
		obj, herr := h.Proxy.HeadObject(ctx, rq.ObjectName())
		if herr != nil {
			return fmt.Errorf("head object %q: %w", rq.Object, herr)
		}
		if swiftcore.Expired(&obj, h.Now()) {
			return fmt.Errorf("object %q expired: %w", rq.Object, swiftcore.ErrNotFound)
		}
		if followed, err := h.sym.SymlinkHop(w, r, rq, &obj); followed {
			return err
		}
		if swiftcore.IsDLO(&obj) && r.URL.Query().Get("multipart-manifest") != "get" {
			return h.lo.ServeDLO(w, r, rq, &obj, rng)
		}
		obj = sse.Served(obj)
		swiftcore.WriteObjectHeaders(w.Header(), &obj)
		if err := swiftcore.CheckConditions(r, obj.ETag, swiftwire.LastModified(obj.Modified())); err != nil {
			return err
		}
		w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(obj.Size, 10))
		return fmt.Errorf("get object %q: %w", rq.Object, err)
	}
	if err != nil {
		return fmt.Errorf("get object %q: %w", rq.Object, err)
	}
	defer rd.Close()
	obj := &rd.Object
	if swiftcore.Expired(obj, h.Now()) {
		return fmt.Errorf("object %q expired: %w", rq.Object, swiftcore.ErrNotFound)
	}
	if swiftcore.IsSymlink(obj) || rq.SymlinkETag != "" {
		if followed, err := h.sym.SymlinkHop(w, r, rq, obj); followed {
			rd.Close()
			return err
		}
	}
	if sse.Encrypted(obj) {
		plain, err := h.Plaintext(ctx, rq, *obj, rd, rng)
		if err != nil {
			return err
		}
		defer plain.Close()
		rd, obj = plain, &plain.Object
	}
	hdr := w.Header()
	if swiftcore.IsDLO(obj) {
		if r.URL.Query().Get("multipart-manifest") != "get" {
			rd.Close()
			return h.lo.ServeDLO(w, r, rq, obj, rng)
		}
		hdr.Set("X-Object-Manifest", largeobj.DLOHeader(obj))
	}
	swiftcore.WriteObjectHeaders(hdr, obj)
	if err := swiftcore.CheckConditions(r, obj.ETag, swiftwire.LastModified(obj.Modified())); err != nil {
		return err
	}
	if swiftcore.IsSLO(obj) && r.URL.Query().Get("multipart-manifest") != "get" {
		if err := h.lo.CheckSegmentAccess(r, rq, rq.ObjectName(), obj); err != nil {
			return err
		}
		if rd.Offset == 0 {
			if err := h.lo.CheckFirstSegment(r, rq, obj); err != nil {
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
		h.Log.WarnContext(ctx, "swift GET broke off", "trans_id", rq.TransID, "container", rq.Container, "object", rq.Object, "sent", n, "of", rd.Length, "err", err)
		return swiftcore.ErrAbortResponse
	}
	return nil
}

// postObject replaces an object's metadata (202): user metadata, content headers and expiry
// are those of the request; the content type changes only when the request has one.
func (h *Handler) postObject(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	if _, ok := r.Header["X-Symlink-Target"]; ok {
		return swiftcore.ErrBadRequest.WithText("A PUT request is required to set a symlink target")
	}
	upd, err := objectMetaFromRequest(r.Header, rq.Object, h.Now())
	if err != nil {
		return err
	}
	cur, err := h.Proxy.HeadObject(ctx, rq.ObjectName())
	if err != nil {
		return fmt.Errorf("post object %q: %w", rq.Object, err)
	}
	if swiftcore.Expired(&cur, h.Now()) {
		return fmt.Errorf("object %q expired: %w", rq.Object, swiftcore.ErrNotFound)
	}
	if r.Header.Get("Content-Type") == "" {
		upd.ContentType = cur.ContentType
	}
	// PostObject merges SysMeta: an empty value clears an earlier X-Delete-At or
	// X-Object-Manifest, since a POST without one removes it in Swift, and the Last-Modified
	// an S3 metadata change kept, since a Swift POST moves it.
	if upd.SysMeta == nil {
		upd.SysMeta = map[string]string{}
	}
	for _, k := range []string{swiftcore.SysDeleteAt, swiftcore.SysDLO, swiftcore.SysDLORaw, meta.SysLastModified} {
		if _, ok := upd.SysMeta[k]; !ok {
			upd.SysMeta[k] = ""
		}
	}
	if err := h.QueueExpiry(ctx, rq.ObjectName(), upd.SysMeta); err != nil {
		return err
	}
	if _, err := h.Proxy.PostObject(ctx, rq.ObjectName(), upd); err != nil {
		return fmt.Errorf("post object %q: %w", rq.Object, err)
	}
	if vobj, _, ok := versions.LinkedVersion(&cur); ok {
		// A versioned object: the metadata goes to its current version too (without the
		// expiry, which is the link's), as Swift's object versioning follows its link.
		return h.postVersion(w, r, rq, vobj, upd)
	}
	if swiftcore.IsSymlink(&cur) {
		return symlink.SymlinkRedirect(w, r, rq, &cur)
	}
	swiftcore.WriteStatus(w, r, http.StatusAccepted)
	return nil
}

// deleteObject deletes an object: 204, or 404 when there is none.
func (h *Handler) deleteObject(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	if err := h.checkObjectLockInPlace(r.Context(), rq); err != nil {
		return err
	}
	if r.URL.Query().Get("multipart-manifest") == "delete" {
		return h.lo.DeleteManifest(w, r, rq)
	}
	if v, ok := r.Header["X-If-Delete-At"]; ok {
		// Swift's expirer deletes with X-If-Delete-At, so that an object given a new expiry
		// meanwhile survives. The check and the delete are not atomic.
		want, err := strconv.ParseInt(strings.TrimSpace(v[0]), 10, 64)
		if err != nil {
			return swiftcore.ErrBadRequest.WithText("Bad X-If-Delete-At header value")
		}
		cur, err := h.Proxy.HeadObject(r.Context(), rq.ObjectName())
		if err != nil {
			return fmt.Errorf("delete object %q: %w", rq.Object, err)
		}
		if swiftcore.DeleteAt(&cur) != want {
			return swiftcore.ErrPreconditionFailed.WithText("X-If-Delete-At and X-Delete-At do not match")
		}
	}
	if rq.VersionID == "" {
		st, err := h.VersionState(r.Context(), rq.Tenant, rq.Container)
		if err != nil {
			return err
		}
		if st.Enabled {
			return h.ver.DeleteWithMarker(w, r, rq, st)
		}
	}
	v, err := h.ver.ContainerVersioning(r.Context(), rq.Tenant, rq.Container)
	if err != nil {
		return err
	}
	if v.Archive != "" {
		done, err := h.ver.DeleteVersioned(r.Context(), rq.ObjectName(), v)
		if err != nil {
			return err
		}
		if done {
			swiftcore.WriteStatus(w, r, http.StatusNoContent)
			return nil
		}
	}
	if err := h.Proxy.DeleteObject(r.Context(), rq.ObjectName()); err != nil {
		return fmt.Errorf("delete object %q: %w", rq.Object, err)
	}
	swiftcore.WriteStatus(w, r, http.StatusNoContent)
	return nil
}

// checkObjectLockInPlace refuses a DELETE that would remove, in place, an object under S3
// Object Lock: in a container with it, the object in place is normally a link (a DELETE then
// writes a delete marker), but a null version kept from before, deleted by ?version-id=null or
// with multipart-manifest=delete, is removed in place and must meet its lock as any version.
func (h *Handler) checkObjectLockInPlace(ctx context.Context, rq *swiftcore.Request) error {
	c, err := h.HeadContainer(ctx, rq.Tenant, rq.Container)
	if err != nil || !versions.LockEnabled(c) {
		return nil // the delete itself says what is missing
	}
	cur, err := h.Proxy.HeadObjectBrief(ctx, rq.ObjectName())
	if err != nil || versions.IsLink(&cur) {
		return nil
	}
	return swiftcore.VersionsError(versions.CheckRemove(&cur, time.Now(), false))
}

// postVersion applies a POST on a versioned object's link to the version it links to (vobj, in
// the versions container): the request's metadata, without its expiry (202).
func (h *Handler) postVersion(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, vobj string, upd meta.Object) error {
	ctx := r.Context()
	name := meta.ObjectName{Account: rq.Tenant, Container: versions.ContainerFor(rq.Container), Object: vobj}
	v, err := h.Proxy.HeadObjectBrief(ctx, name)
	if err != nil {
		return fmt.Errorf("post object %q: its version: %w", rq.Object, err)
	}
	vupd := upd
	vupd.SysMeta = swiftcore.CloneMap(upd.SysMeta)
	vupd.SysMeta[swiftcore.SysDeleteAt] = ""
	if r.Header.Get("Content-Type") == "" {
		vupd.ContentType = v.ContentType
	}
	if _, err := h.Proxy.PostObject(ctx, name, vupd); err != nil {
		return fmt.Errorf("post object %q: its version: %w", rq.Object, err)
	}
	swiftcore.WriteStatus(w, r, http.StatusAccepted)
	return nil
}

// objectMetaFromRequest reads what a PUT (or a POST, which replaces it) gives an object:
// content type, content headers, user metadata and expiry.
func objectMetaFromRequest(hdr http.Header, objectName string, now time.Time) (meta.Object, error) {
	var obj meta.Object
	um, err := swiftwire.ReadMeta(hdr, "Object")
	if err != nil {
		return obj, err
	}
	for k, v := range um {
		// An empty value is kept (Swift answers it back as an empty header); only
		// X-Remove-Object-Meta-* stores nothing.
		if v == "" && len(hdr.Values("X-Object-Meta-"+k)) == 0 {
			continue
		}
		if obj.UserMeta == nil {
			obj.UserMeta = map[string]string{}
		}
		obj.UserMeta[k] = v
	}
	for _, k := range swiftwire.StoredHeaders {
		if v := hdr.Get(k); v != "" {
			if obj.Headers == nil {
				obj.Headers = map[string]string{}
			}
			obj.Headers[k] = v
		}
	}
	obj.ContentType = hdr.Get("Content-Type")
	if obj.ContentType == "" || swiftwire.Truthy(hdr.Get("X-Detect-Content-Type")) {
		obj.ContentType = swiftwire.GuessContentType(objectName)
	}
	at, err := swiftwire.ReadDeleteAt(hdr, now)
	if err != nil {
		return obj, err
	}
	if at > 0 {
		obj.SysMeta = map[string]string{swiftcore.SysDeleteAt: strconv.FormatInt(at, 10)}
	}
	if err := largeobj.ReadDLOHeader(hdr, &obj); err != nil {
		return obj, err
	}
	return obj, nil
}
