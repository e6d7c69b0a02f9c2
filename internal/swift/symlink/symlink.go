// Package symlink is Swift's symlink middleware: a zero-byte object whose X-Symlink-Target
// names another object ("container/object", optionally in X-Symlink-Target-Account). GET and
// HEAD follow it (at most SymloopMax links in a row) and answer with the target, and a
// Content-Location naming it; ?symlink=get answers the link itself. A static link
// (X-Symlink-Target-Etag) must find the target with that ETag, at creation and on every read.
// COPY follows the link unless ?symlink=get; POST changes the link's metadata and answers 307
// pointing at the target; DELETE deletes the link. Reading through a link needs read access to
// the target, decided as for a direct read. The marks of a symlink (its SysMeta keys, IsSymlink,
// its headers) are swiftcore's, since every part of the front end tells links apart.
//
// Files: symlink.go (creating links, following them on reads, resolving them for copies and
// SLO segments).
package symlink

import (
	"crypto/md5"
	"encoding/hex"
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
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// SymloopMax is how many links one read follows in a row (Swift's default).
const SymloopMax = 2

// emptyMD5 is the ETag of a symlink (it has no bytes).
var emptyMD5 = func() string { s := md5.Sum(nil); return hex.EncodeToString(s[:]) }()

// WantsSymlinkItself reports whether a request addresses a symlink rather than its target.
func WantsSymlinkItself(r *http.Request) bool { return r.URL.Query().Get("symlink") == "get" }

// symlinkTarget is the account (AUTH_ name), container and object a symlink names, and its
// Content-Location path.
func symlinkTarget(obj *meta.Object, rq *swiftcore.Request) (account, tenant, container, object, location string) {
	tenant, container, object, _ = obj.SymlinkTarget(rq.Tenant)
	account = swiftwire.ResellerPrefix + tenant
	return account, tenant, container, object, "/v1/" + swiftwire.PyQuote(account) + "/" + obj.SysMeta[swiftcore.SysSymlinkTarget]
}

// SymlinkHop is called wherever a GET or HEAD has read an object's metadata, before it answers.
// For a symlink (unless the request wants the link itself) it serves the target instead:
// followed is true and err is what serving it returned. At the end of a chain that began with a
// static link it checks the final object's ETag.
func (h *Handler) SymlinkHop(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, obj *meta.Object) (followed bool, err error) {
	if WantsSymlinkItself(r) && rq.SymlinkHops == 0 {
		return false, nil
	}
	if !swiftcore.IsSymlink(obj) {
		if want := rq.SymlinkETag; want != "" {
			if got := symlinkComparableETag(obj); got != want {
				return true, swiftcore.ErrConflict.WithText("Object Etag %s does not match X-Symlink-Target-Etag header %s", swiftwire.PyRepr(got), swiftwire.PyRepr(want))
			}
		}
		return false, nil
	}
	if rq.SymlinkETag != "" {
		// A static link onto a link: each link's ETag must agree.
		found := obj.SysMeta[swiftcore.SysSymlinkETag]
		if found == "" {
			found = emptyMD5
		}
		if found != rq.SymlinkETag {
			return true, swiftcore.ErrConflict.WithText("X-Symlink-Target-Etag headers do not match")
		}
	}
	if id, ok := swiftcore.VersionLink(obj); ok {
		return true, h.followVersionLink(w, r, rq, obj, id)
	}
	if rq.SymlinkHops >= SymloopMax {
		return true, swiftcore.ErrConflict.WithText("Too many levels of symbolic links, maximum allowed is %d", SymloopMax)
	}
	account, tenant, container, object, location := symlinkTarget(obj, rq)
	w.Header().Set("Content-Location", location)
	if err := h.Allow(r.Context(), r, rq, tenant, container, object, access.GetObject); err != nil {
		return true, err
	}
	sub := *rq
	sub.Account, sub.Tenant, sub.Container, sub.Object = account, tenant, container, object
	sub.SymlinkHops++
	sub.SymlinkLocation = location
	// What comes next is checked against this link's ETag if it is static; past a dynamic
	// link nothing is (Swift's rule).
	sub.SymlinkETag = obj.SysMeta[swiftcore.SysSymlinkETag]
	return true, h.GetObject(w, r, &sub)
}

// symlinkComparableETag is the ETag a static link records for an object: a manifest's own for
// a static large object (its X-Manifest-Etag), the MD5 otherwise.
func symlinkComparableETag(obj *meta.Object) string {
	if swiftcore.IsSLO(obj) {
		return swiftcore.ManifestETag(obj)
	}
	return obj.ETag
}

// PutSymlink stores a symlink (PUT with X-Symlink-Target): no body, a well-formed target that
// is not the link itself; a static link's target must exist with the ETag given.
func (h *Handler) PutSymlink(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, obj meta.Object) error {
	ctx := r.Context()
	if hasBody, err := swiftcore.RequestHasBody(r); err != nil {
		return err
	} else if hasBody {
		return swiftcore.ErrBadRequest.WithText("Symlink requests require a zero byte body")
	}
	formErr := swiftcore.ErrPreconditionFailed.WithText("X-Symlink-Target header must be of the form <container name>/<object name>")
	raw := httpwire.UnescapeLenient(r.Header.Get("X-Symlink-Target"))
	container, object, ok := strings.Cut(raw, "/")
	if strings.HasPrefix(raw, "/") || !ok || container == "" || object == "" {
		return formErr
	}
	if err := swiftwire.CheckContainerName(container); err != nil {
		return err
	}
	if err := swiftwire.CheckObjectName(object); err != nil {
		return err
	}
	sys := map[string]string{swiftcore.SysSymlinkTarget: swiftwire.PyQuote(container + "/" + object)}
	account := rq.Account
	if v, ok := r.Header["X-Symlink-Target-Account"]; ok {
		account = httpwire.UnescapeLenient(strings.Join(v, ","))
		switch {
		case account == "":
			return swiftcore.ErrPreconditionFailed.WithText("Account name cannot be empty")
		case strings.Contains(account, "/"):
			return swiftcore.ErrPreconditionFailed.WithText("Account name cannot contain slashes")
		case len(account) > swiftwire.MaxAccountNameLength:
			return swiftcore.ErrPreconditionFailed.WithText("Account name length of %d longer than %d", len(account), swiftwire.MaxAccountNameLength)
		}
		sys[swiftcore.SysSymlinkAccount] = swiftwire.PyQuote(account)
	}
	if account == rq.Account && container == rq.Container && object == rq.Object {
		return swiftcore.ErrBadRequest.WithText("Symlink cannot target itself")
	}
	tenant := strings.TrimPrefix(account, swiftwire.ResellerPrefix)
	slo := ""
	etag := httpwire.TrimETag(r.Header.Get("X-Symlink-Target-Etag"))
	if etag != "" {
		if strings.ContainsAny(etag, `;"\`) {
			return swiftcore.ErrBadRequest.WithText("Bad X-Symlink-Target-Etag format")
		}
		w.Header().Set("Content-Location", "/v1/"+swiftwire.PyQuote(account)+"/"+sys[swiftcore.SysSymlinkTarget]) // for the refusals
		target, err := h.staticSymlinkTarget(r, rq, tenant, container, object, etag)
		if err != nil {
			return err
		}
		w.Header().Del("Content-Location")
		size := target.Size
		if swiftcore.IsSymlink(&target) {
			size, _ = strconv.ParseInt(target.SysMeta[swiftcore.SysSymlinkBytes], 10, 64)
		}
		sys[swiftcore.SysSymlinkETag], sys[swiftcore.SysSymlinkBytes] = etag, strconv.FormatInt(size, 10)
		if r.Header.Get("Content-Type") == "" {
			obj.ContentType = target.ContentType
		}
		if swiftcore.IsSLO(&target) {
			slo = `"` + target.ETag + `"`
		}
	} else if r.Header.Get("Content-Type") == "" {
		obj.ContentType = "application/symlink"
	}
	sys[meta.SysListingETag] = SymlinkListingETag(sys, slo)
	obj.SysMeta = swiftcore.Overlay(obj.SysMeta, sys)
	obj.Size = 0
	if err := h.CheckQuota(ctx, rq.Tenant, rq.Container, access.Usage{Objects: 1}); err != nil {
		return err
	}
	if err := h.QueueExpiry(ctx, rq.ObjectName(), obj.SysMeta); err != nil {
		return err
	}
	stored, err := h.StoreObject(ctx, w, rq.ObjectName(), obj, strings.NewReader(""), proxy.PutOptions{})
	if err != nil {
		return fmt.Errorf("put symlink %q: %w", rq.Object, err)
	}
	hdr := w.Header()
	hdr.Set("Etag", stored.ETag)
	hdr.Set("Last-Modified", swiftwire.LastModified(stored.Timestamp).Format(http.TimeFormat))
	if etag != "" {
		hdr.Set("X-Symlink-Target-Etag", etag)
	}
	swiftcore.WriteStatus(w, r, http.StatusCreated)
	return nil
}

// SymlinkListingETag is the listing ETag of a symlink with settings sys (meta.SymlinkListingETag).
func SymlinkListingETag(sys map[string]string, slo string) string {
	return meta.SymlinkListingETag(sys, slo)
}

// staticSymlinkTarget reads the target of a static link being made: it must exist, the writer
// must be able to read it, and its ETag (a link's own, for a link) must be etag.
func (h *Handler) staticSymlinkTarget(r *http.Request, rq *swiftcore.Request, tenant, container, object, etag string) (meta.Object, error) {
	if err := h.Allow(r.Context(), r, rq, tenant, container, object, access.GetObject); err != nil {
		return meta.Object{}, err
	}
	target, err := h.Proxy.HeadObject(r.Context(), meta.ObjectName{Account: tenant, Container: container, Object: object})
	if errors.Is(err, meta.ErrNotFound) || err == nil && swiftcore.Expired(&target, h.Now()) {
		return meta.Object{}, swiftcore.ErrConflict.WithText("X-Symlink-Target does not exist")
	}
	if err != nil {
		return meta.Object{}, fmt.Errorf("symlink target %s/%s: %w", container, object, err)
	}
	found := symlinkComparableETag(&target)
	if swiftcore.IsSymlink(&target) {
		found = target.SysMeta[swiftcore.SysSymlinkETag]
		if found == "" {
			found = emptyMD5
		}
		if found != etag {
			return meta.Object{}, swiftcore.ErrConflict.WithText("X-Symlink-Target-Etag headers do not match")
		}
		return target, nil
	}
	if found != etag {
		return meta.Object{}, swiftcore.ErrConflict.WithText("Object Etag %s does not match X-Symlink-Target-Etag header %s", swiftwire.PyRepr(found), swiftwire.PyRepr(etag))
	}
	return target, nil
}

// SymlinkRedirect answers a POST that was applied to a symlink: 307 pointing at the target, as
// Swift does, so that the client learns its metadata went to the link.
func SymlinkRedirect(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, obj *meta.Object) error {
	_, _, _, _, location := symlinkTarget(obj, rq)
	hdr := w.Header()
	hdr.Set("Location", location)
	if e := obj.SysMeta[swiftcore.SysSymlinkETag]; e != "" {
		hdr.Set("X-Symlink-Target-Etag", e)
	}
	body := "The requested POST was applied to a symlink. POST directly to the target to apply requested metadata."
	hdr.Set("Content-Type", swiftcore.ContentTypeHTML)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusTemporaryRedirect)
	io.WriteString(w, body)
	return nil
}

// ResolveSymlinks follows a symlink of account (a copy's source, a manifest's segment) to the
// object it stands for, within SymloopMax links, each target readable by the caller, as a GET
// through it would.
func (h *Handler) ResolveSymlinks(r *http.Request, rq *swiftcore.Request, account string, link meta.Object) (meta.ObjectName, meta.Object, error) {
	hop := *rq
	hop.Account, hop.Tenant = swiftwire.ResellerPrefix+account, account
	obj := link
	var name meta.ObjectName
	for i := 0; swiftcore.IsSymlink(&obj); i++ {
		if i >= SymloopMax {
			return name, obj, swiftcore.ErrConflict.WithText("Too many levels of symbolic links, maximum allowed is %d", SymloopMax)
		}
		acct, tenant, container, object, _ := symlinkTarget(&obj, &hop)
		if _, ok := swiftcore.VersionLink(&obj); ok {
			i-- // a versioned object's link to its version: the object itself, as Swift's SYMLOOP_EXTEND
		} else if err := h.Allow(r.Context(), r, rq, tenant, container, object, access.GetObject); err != nil {
			return name, obj, err
		}
		name = meta.ObjectName{Account: tenant, Container: container, Object: object}
		next, err := h.Proxy.HeadObject(r.Context(), name)
		if errors.Is(err, meta.ErrNotFound) {
			return name, obj, fmt.Errorf("symlink target %s/%s: %w", container, object, swiftcore.ErrNotFound)
		}
		if err != nil {
			return name, obj, err
		}
		hop.Account, hop.Tenant, obj = acct, tenant, next
	}
	return name, obj, nil
}

// followVersionLink serves a GET or HEAD of a versioned object through its link (obj) to its
// current version (id): the version, read with the object's own access (the link is the
// object), without counting as a symlink hop; X-Object-Version-Id and Content-Location name it.
func (h *Handler) followVersionLink(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, obj *meta.Object, id string) error {
	_, tenant, container, object, _ := symlinkTarget(obj, rq)
	hdr := w.Header()
	hdr.Set("X-Object-Version-Id", id)
	hdr.Set("Content-Location", swiftcore.VersionLocation(rq, id))
	sub := *rq
	if sub.SSEBucket == "" {
		sub.SSEBucket, sub.SSEKey = rq.Container, rq.Object
	}
	sub.Tenant, sub.Container, sub.Object = tenant, container, object
	sub.SymlinkETag = "" // the version is the one the link was made for
	return h.GetObject(w, r, &sub)
}

// Handler serves symlinks; it shares the front end's state.
type Handler struct {
	*swiftcore.Server
}

// New returns the feature's handler over the shared state.
func New(s *swiftcore.Server) *Handler {
	return &Handler{Server: s}
}
