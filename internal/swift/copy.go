package swift

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/swift/symlink"
	"github.com/cairn-store/cairn/internal/versions"
)

// parseCopyPath parses a Destination or X-Copy-From header: "[/]container/object", URL-quoted
// or not (Swift unquotes it).
func parseCopyPath(v string) (container, object string, ok bool) {
	v = httpwire.UnescapeLenient(v)
	v = strings.TrimPrefix(v, "/")
	container, object, ok = strings.Cut(v, "/")
	return container, object, ok && container != "" && object != ""
}

// copyAccount resolves the account a copy's other side lives in (Destination-Account or
// X-Copy-From-Account, else the request's). Whether the caller may read or write there is
// decided with both sides (copyObject).
func copyAccount(rq *swiftcore.Request, v string) (string, error) {
	if v == "" {
		return rq.Tenant, nil
	}
	tenant, ok := strings.CutPrefix(v, resellerPrefix)
	if !ok || tenant == "" || len(v) > swiftwire.MaxAccountNameLength {
		return "", swiftcore.ErrPreconditionFailed.WithText("Invalid account %q", v)
	}
	return tenant, nil
}

// copyObject serves COPY (to Destination) and PUT with X-Copy-From: a server-side copy (201).
// The copy keeps the source's content type, content headers and user metadata, with the
// request's metadata laid over them; X-Fresh-Metadata: true starts from the request's alone.
func (h *Handler) copyObject(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	var src, dst meta.ObjectName
	if r.Method == "COPY" {
		dest := r.Header.Get("Destination")
		if dest == "" {
			return swiftcore.ErrPreconditionFailed.WithText("Destination header required").AsHTML()
		}
		c, o, ok := parseCopyPath(dest)
		if !ok {
			return swiftcore.ErrPreconditionFailed.WithText("Destination header must be of the form <container name>/<object name>").AsHTML()
		}
		acct, err := copyAccount(rq, r.Header.Get("Destination-Account"))
		if err != nil {
			return err
		}
		src, dst = rq.ObjectName(), meta.ObjectName{Account: acct, Container: c, Object: o}
		if err := swiftwire.CheckContainerName(c); err != nil {
			return err
		}
		// COPY ?version-id copies that version of the object.
		if src, err = h.ver.ResolveCopyVersion(r, rq, src); err != nil {
			return err
		}
	} else {
		c, o, ok := parseCopyPath(r.Header.Get("X-Copy-From"))
		if !ok {
			return swiftcore.ErrPreconditionFailed.WithText("X-Copy-From header must be of the form <container name>/<object name>").AsHTML()
		}
		acct, err := copyAccount(rq, r.Header.Get("X-Copy-From-Account"))
		if err != nil {
			return err
		}
		if r.ContentLength > 0 || len(r.TransferEncoding) > 0 {
			return swiftcore.ErrBadRequest.WithText("Copy requests require a zero byte body")
		}
		src, dst = meta.ObjectName{Account: acct, Container: c, Object: o}, rq.ObjectName()
	}
	for _, n := range []meta.ObjectName{src, dst} {
		if n.Container == versions.ContainerFor(rq.Container) && n == src {
			continue // a version, named as the versions container names it
		}
		if err := swiftwire.CheckContainerName(n.Container); err != nil {
			return err
		}
		if err := swiftwire.CheckObjectName(n.Object); err != nil {
			return err
		}
	}
	// A copy reads its source and writes its destination, each decided as a GET and a PUT of
	// its own would be (either may be in another account, with an ACL granting it).
	if err := h.Allow(ctx, r, rq, src.Account, src.Container, src.Object, access.GetObject); err != nil {
		return err
	}
	now := h.Now()
	req, err := objectMetaFromRequest(r.Header, dst.Object, now)
	if err != nil {
		return err
	}
	// A Range on the copy request copies that range of the source, as Swift's copy middleware
	// does (its GET of the source carries the request's headers).
	rng := swiftwire.ParseRange(r.Header.Get("Range"))
	rd, err := h.Proxy.GetObject(ctx, src, rng)
	if err != nil {
		return fmt.Errorf("copy source %s/%s: %w", src.Container, src.Object, err)
	}
	defer rd.Close()
	// The destination is decided once the source is known to exist: Swift's copy reads the
	// source first, so a missing source is 404 whatever the destination.
	if err := h.Allow(ctx, r, rq, dst.Account, dst.Container, dst.Object, access.PutObject); err != nil {
		return err
	}
	srcObj := rd.Object
	if swiftcore.Expired(&srcObj, now) {
		return fmt.Errorf("copy source %s/%s expired: %w", src.Container, src.Object, swiftcore.ErrNotFound)
	}
	// A symlink copies as its target, or with ?symlink=get as the link itself.
	linkCopy := swiftcore.IsSymlink(&srcObj) && symlink.WantsSymlinkItself(r)
	if swiftcore.IsSymlink(&srcObj) && !linkCopy {
		target, _, err := h.sym.ResolveSymlinks(r, rq, src.Account, srcObj)
		if err != nil {
			return fmt.Errorf("copy source %s/%s: %w", src.Container, src.Object, err)
		}
		rd.Close()
		if rd, err = h.Proxy.GetObject(ctx, target, rng); err != nil {
			return fmt.Errorf("copy source %s/%s: %w", target.Container, target.Object, err)
		}
		defer rd.Close()
		if srcObj = rd.Object; swiftcore.Expired(&srcObj, now) {
			return fmt.Errorf("copy source %s/%s expired: %w", target.Container, target.Object, swiftcore.ErrNotFound)
		}
	}
	if sse.Encrypted(&srcObj) {
		// Its key is bound to its name: a copy would need re-encrypting, which the S3 API's
		// CopyObject does.
		return swiftcore.ErrBadRequest.WithText("The source is encrypted at rest (S3 server-side encryption); copy it through the S3 API.")
	}
	// A DLO source copies as its bytes (the segments' concatenation), or with
	// ?multipart-manifest=get as the manifest itself, as Swift copies it.
	manifestCopy := r.URL.Query().Get("multipart-manifest") == "get"
	if swiftcore.IsDLO(&srcObj) && !manifestCopy {
		segs, etag, err := h.lo.DLOSegments(r, rq, src.Account, srcObj.SysMeta[swiftcore.SysDLO])
		if err != nil {
			return err
		}
		var total int64
		for _, s := range segs {
			total += s.Size
		}
		off, n := int64(0), total
		if rng != nil {
			if off, n, err = rng.Resolve(total); err != nil {
				return fmt.Errorf("copy source %s/%s: %w", src.Container, src.Object, err)
			}
		}
		rd.Close()
		rd = h.Proxy.ReadSegments(ctx, src.Account, srcObj, segs, off, n)
		defer rd.Close()
		srcObj.ETag = strings.Trim(etag, `"`)
		srcObj.Manifest = segs // a fresh MD5 for the copy, as for any manifest source
	}
	if err := swiftcore.CheckConditions(r, srcObj.ETag, swiftwire.LastModified(srcObj.Modified())); err != nil {
		return err
	}
	if rd.Length > h.MaxObjectSize {
		return swiftcore.ErrTooLarge
	}
	if err := h.CheckQuota(ctx, dst.Account, dst.Container, access.Usage{Bytes: rd.Length, Objects: 1}); err != nil {
		return err
	}
	obj := meta.Object{Size: rd.Length, ContentType: srcObj.ContentType, SysMeta: req.SysMeta}
	if linkCopy {
		// The link itself: its settings, and the account the request names for its target
		// (as a symlink PUT would take it).
		keep := map[string]string{}
		for _, k := range []string{swiftcore.SysSymlinkTarget, swiftcore.SysSymlinkAccount, swiftcore.SysSymlinkETag, swiftcore.SysSymlinkBytes} {
			if v := srcObj.SysMeta[k]; v != "" {
				keep[k] = v
			}
		}
		if v := r.Header.Get("X-Symlink-Target-Account"); v != "" {
			keep[swiftcore.SysSymlinkAccount] = swiftwire.PyQuote(httpwire.UnescapeLenient(v))
		}
		_, params := swiftwire.ParseListingETag(srcObj.SysMeta[meta.SysListingETag])
		keep[meta.SysListingETag] = symlink.SymlinkListingETag(keep, params["slo_etag"])
		obj.SysMeta = swiftcore.Overlay(obj.SysMeta, keep)
	}
	if manifestCopy && swiftcore.IsDLO(&srcObj) && req.SysMeta[swiftcore.SysDLO] == "" {
		obj.SysMeta = swiftcore.Overlay(obj.SysMeta, map[string]string{swiftcore.SysDLO: srcObj.SysMeta[swiftcore.SysDLO], swiftcore.SysDLORaw: srcObj.SysMeta[swiftcore.SysDLORaw]})
	}
	if r.Header.Get("Content-Type") != "" {
		obj.ContentType = req.ContentType
	}
	if !swiftwire.Truthy(r.Header.Get("X-Fresh-Metadata")) {
		obj.Headers = swiftcore.CloneMap(srcObj.Headers)
		obj.UserMeta = swiftcore.CloneMap(srcObj.UserMeta)
	}
	obj.Headers = swiftcore.Overlay(obj.Headers, req.Headers)
	reqMeta, _ := swiftwire.ReadMeta(r.Header, "Object") // checked by objectMetaFromRequest
	for k := range reqMeta {
		if v, set := req.UserMeta[k]; set {
			obj.UserMeta = swiftcore.Overlay(obj.UserMeta, map[string]string{k: v})
		} else {
			delete(obj.UserMeta, k) // X-Remove-Object-Meta-*
		}
	}
	// A plain source's MD5 is known: the copy must arrive with the same one. A manifest's ETag
	// is not the MD5 of its bytes, so its copy (a plain object) gets a fresh one.
	want := ""
	if srcObj.Manifest == nil && rng == nil {
		want = srcObj.ETag
	}
	if err := h.QueueExpiry(ctx, dst, obj.SysMeta); err != nil {
		return err
	}
	if swiftcore.IsSLO(&srcObj) && !manifestCopy {
		// The segments are read as the caller, as Swift's copy reads them.
		if err := h.lo.CheckSegmentAccess(r, rq, src, &srcObj); err != nil {
			return err
		}
	}
	if err := h.ver.ArchiveBeforeWrite(ctx, dst); err != nil {
		return err
	}
	if manifestCopy && swiftcore.IsSLO(&srcObj) {
		// The manifest itself, checked again as a manifest PUT in the destination's account.
		return h.lo.CopyManifest(w, r, rq, src, dst, &srcObj, obj)
	}
	stored, err := h.StoreObject(ctx, w, dst, obj, rd, proxy.PutOptions{BeforeCommit: etagMatcher(want)})
	if err != nil {
		return fmt.Errorf("copy to %s/%s: %w", dst.Container, dst.Object, err)
	}
	hdr := w.Header()
	hdr.Set("Etag", stored.ETag)
	hdr.Set("Last-Modified", swiftwire.LastModified(stored.Timestamp).Format(http.TimeFormat))
	hdr.Set("X-Copied-From", (&url.URL{Path: src.Container + "/" + src.Object}).EscapedPath())
	hdr.Set("X-Copied-From-Account", resellerPrefix+src.Account)
	hdr.Set("X-Copied-From-Last-Modified", swiftwire.LastModified(srcObj.Modified()).Format(http.TimeFormat))
	for k, v := range obj.UserMeta {
		hdr.Set(swiftwire.MetaHeader("Object", k), v)
	}
	swiftcore.WriteStatus(w, r, http.StatusCreated)
	return nil
}
