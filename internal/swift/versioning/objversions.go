package versioning

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/versions"
)

// Object versioning, Swift's X-Versions-Enabled (its object_versioning middleware), kept by
// internal/versions in the middleware's own layout: a versioned container's objects are static
// links to their current versions in the hidden container "\x00versions\x00<container>", a
// delete writes a delete marker, and ?version-id addresses one version. It is the same state as
// S3's bucket versioning: a bucket versioned through S3 is a container versioned here, and the
// other way round. The older versioned writes (X-Versions-Location, X-History-Location:
// versioned.go) are a separate mode a container uses one of, as in Swift.

// headerVersionsEnabled turns object versioning on or off (PUT or POST on a container).
const headerVersionsEnabled = "X-Versions-Enabled"

var (
	errLegacyVersioning = swiftcore.ErrBadRequest.WithText("Cannot enable object versioning on a container that is already using the legacy versioned writes feature.")
	errObjectVersioning = swiftcore.ErrBadRequest.WithText("Cannot use the legacy versioned writes feature on a container that uses object versioning.")
)

// CheckVersioningChange refuses, before anything is changed, a container PUT or POST that
// would mix the two versioning modes: X-Versions-Enabled on a container with a versions or
// history location (Swift's 400), and a location on a container that uses object versioning
// (Swift stores it; both middlewares would then act on every write, which Cairn refuses).
func (h *Handler) CheckVersioningChange(ctx context.Context, r *http.Request, rq *swiftcore.Request, settings map[string]string) error {
	_, enable := r.Header[headerVersionsEnabled]
	setsLocation := settings[metaVersionsLocation] != ""
	if !enable && !setsLocation {
		return nil
	}
	if enable && setsLocation {
		return errLegacyVersioning
	}
	c, err := h.Proxy.HeadContainer(ctx, rq.Tenant, rq.Container)
	if errors.Is(err, meta.ErrNotFound) {
		return nil // a new container: nothing to mix with
	}
	if err != nil {
		return fmt.Errorf("head container %q: %w", rq.Container, err)
	}
	if enable && c.Meta[metaVersionsLocation] != "" {
		return errLegacyVersioning
	}
	if setsLocation && c.Meta[versions.KeyContainer] != "" {
		return errObjectVersioning
	}
	return nil
}

// ApplyVersionsEnabled turns object versioning on or off after a container PUT or POST that
// asks to (X-Versions-Enabled, read as Swift's config_true_value): on makes the versions
// container, in the container's storage policy; off keeps the versions.
func (h *Handler) ApplyVersionsEnabled(ctx context.Context, r *http.Request, rq *swiftcore.Request) error {
	v, ok := r.Header[headerVersionsEnabled]
	if !ok {
		return nil
	}
	c, err := h.Proxy.HeadContainer(ctx, rq.Tenant, rq.Container)
	if err != nil {
		return fmt.Errorf("head container %q: %w", rq.Container, err)
	}
	var changes map[string]string
	if swiftwire.Truthy(strings.Join(v, ",")) {
		if changes, err = h.Versions.Enable(ctx, rq.Tenant, c); err != nil {
			return fmt.Errorf("enable object versioning of %q: %w", rq.Container, err)
		}
	} else if changes, err = versions.Suspend(c); err != nil {
		// An S3 bucket with Object Lock keeps its versions on for good.
		return swiftcore.ErrConflict.WithText("Object Lock is enabled on this container: object versioning cannot be disabled.")
	}
	if _, err := h.Proxy.PostContainer(ctx, rq.Tenant, rq.Container, changes); err != nil {
		return fmt.Errorf("object versioning of %q: %w", rq.Container, err)
	}
	return nil
}

// WriteObjectVersioningHeaders shows a container's object versioning (once it was ever set).
func WriteObjectVersioningHeaders(hdr http.Header, c meta.Container) {
	switch c.Meta[versions.KeyEnabled] {
	case "true":
		hdr.Set(headerVersionsEnabled, "True")
	case "false":
		hdr.Set(headerVersionsEnabled, "False")
	}
}

// ServeObjectVersioning serves what object versioning changes of an object request before the
// operation itself: ?version-id (GET, HEAD, DELETE, PUT; COPY reads the version in
// copyObject), and the X-Object-Version-Id of a plain read in a versioned container. handled is
// true when it answered.
func (h *Handler) ServeObjectVersioning(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, op string) (handled bool, err error) {
	ctx := r.Context()
	id := r.URL.Query().Get("version-id")
	if rq.TempURL != nil {
		id = "" // a temp URL reads and writes the current object, as Swift's (version-id ignored)
	}
	if id == "" && op != swiftcore.OpGetObject && op != swiftcore.OpHeadObject {
		return false, nil
	}
	st, err := h.VersionState(ctx, rq.Tenant, rq.Container)
	if err != nil {
		return true, err
	}
	if id == "" {
		if st.Versioned() {
			w.Header().Set("X-Object-Version-Id", versions.Null)
		}
		return false, nil
	}
	switch {
	case r.Method == http.MethodPost:
		return true, swiftcore.ErrBadRequest.WithText("POST to a specific version is not allowed")
	case !st.Versioned() && id != versions.Null:
		return true, swiftcore.ErrBadRequest.WithText("version-aware operations require that the container is versioned")
	}
	if id != versions.Null {
		if _, err := versions.ParseID(id); err != nil {
			return true, swiftcore.ErrBadRequest.WithText("Invalid version parameter")
		}
	}
	rq.VersionID = id
	switch {
	case op == swiftcore.OpDeleteObject:
		if id == versions.Null {
			return false, nil // the object in place, whatever it is, deleted as a plain DELETE
		}
		return true, h.deleteVersion(w, r, rq, st, id)
	case r.Method == http.MethodPut:
		return true, h.putVersion(w, r, rq, st, id)
	case op == swiftcore.OpGetObject || op == swiftcore.OpHeadObject:
		return true, h.getVersion(w, r, rq, st, id)
	}
	return false, nil // COPY: copyObject reads the version
}

// getVersion serves GET and HEAD ?version-id: the version, read as an object of the versions
// container (so with its access rules: the account's owners), or 404 with the delete marker's
// ID and content type.
func (h *Handler) getVersion(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, st versions.State, id string) error {
	ctx := r.Context()
	if id == versions.Null {
		cur, err := h.Proxy.HeadObjectBrief(ctx, rq.ObjectName())
		if err == nil && versions.IsLink(&cur) {
			return fmt.Errorf("object %q: its current version is not the null one: %w", rq.Object, swiftcore.ErrNotFound)
		}
		w.Header().Set("X-Object-Version-Id", versions.Null)
		return h.GetObject(w, r, rq)
	}
	if err := h.Allow(ctx, r, rq, rq.Tenant, versions.ContainerFor(rq.Container), rq.Object, access.GetObject); err != nil {
		return err
	}
	v, err := h.Versions.Resolve(ctx, st, rq.ObjectName(), id)
	if err != nil {
		return swiftcore.VersionsError(err)
	}
	if v.DeleteMarker {
		return writeDeleteMarker(w, r, id)
	}
	w.Header().Set("X-Object-Version-Id", id)
	sub := *rq
	sub.SSEBucket, sub.SSEKey = rq.Container, rq.Object // an encrypted version's key is bound to its name
	sub.Container, sub.Object = v.Name.Container, v.Name.Object
	return h.GetObject(w, r, &sub)
}

// writeDeleteMarker answers a read of a delete marker: 404 with its ID and content type.
func writeDeleteMarker(w http.ResponseWriter, r *http.Request, id string) error {
	se := swiftcore.ToError(swiftcore.ErrNotFound)
	hdr := w.Header()
	hdr.Set("X-Object-Version-Id", id)
	hdr.Set("Content-Type", versions.DeleteMarkerType)
	body := se.Body
	if r.Method == http.MethodHead {
		body = ""
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(body))
	return nil
}

// deleteVersion serves DELETE ?version-id (not null): that version goes for good, without a
// delete marker; when it was the current one, its link goes too and no other version becomes
// current (Swift's rule). X-Object-Current-Version-Id answers what is current after.
func (h *Handler) deleteVersion(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, st versions.State, id string) error {
	ctx := r.Context()
	if err := h.Allow(ctx, r, rq, rq.Tenant, versions.ContainerFor(rq.Container), rq.Object, access.DeleteObject); err != nil {
		return err
	}
	hdr := w.Header()
	if r.URL.Query().Get("multipart-manifest") == "delete" {
		// The version with its segments: its link first (when it is current), then the
		// manifest's segments and the manifest, answered as the bulk delete answers.
		v, err := h.Versions.Resolve(ctx, st, rq.ObjectName(), id)
		if err != nil {
			return swiftcore.VersionsError(err)
		}
		if err := versions.CheckRemove(&v.Object, time.Now(), false); err != nil {
			return swiftcore.VersionsError(err)
		}
		cur, err := h.Proxy.HeadObjectBrief(ctx, rq.ObjectName())
		if err == nil {
			if vobj, _, ok := versions.LinkedVersion(&cur); ok && vobj == v.Name.Object {
				if err := h.Proxy.DeleteObjectIf(ctx, rq.ObjectName(), meta.Precondition{IfTimestamp: cur.Timestamp}); err != nil && !errors.Is(err, meta.ErrNotFound) {
					return fmt.Errorf("delete the link of %q: %w", rq.Object, err)
				}
			}
		}
		hdr.Set("X-Object-Version-Id", id)
		hdr.Set("X-Object-Current-Version-Id", h.currentVersionID(ctx, rq))
		sub := *rq
		sub.Container, sub.Object = v.Name.Container, v.Name.Object
		return h.lo.DeleteManifest(w, r, &sub)
	}
	v, err := h.Versions.DeleteVersion(ctx, st, rq.ObjectName(), id, versions.DeleteOptions{NoRestore: true})
	if err != nil {
		return swiftcore.VersionsError(fmt.Errorf("delete version %s of %q: %w", id, rq.Object, err))
	}
	hdr.Set("X-Object-Version-Id", id)
	hdr.Set("X-Object-Current-Version-Id", h.currentVersionID(ctx, rq))
	if v.Name.Object == "" {
		return fmt.Errorf("version %s of %q: %w", id, rq.Object, swiftcore.ErrNotFound)
	}
	swiftcore.WriteStatus(w, r, http.StatusNoContent)
	return nil
}

// currentVersionID is the ID of the object's current version: its link's, else "null".
func (h *Handler) currentVersionID(ctx context.Context, rq *swiftcore.Request) string {
	cur, err := h.Proxy.HeadObjectBrief(ctx, rq.ObjectName())
	if err != nil {
		return versions.Null
	}
	if _, id, ok := versions.LinkedVersion(&cur); ok && !cur.Deleted {
		return id
	}
	return versions.Null
}

// putVersion serves PUT ?version-id with no body: that version becomes the current one.
func (h *Handler) putVersion(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, st versions.State, id string) error {
	hasBody, err := swiftcore.RequestHasBody(r)
	if err != nil {
		return err
	}
	if hasBody {
		return swiftcore.ErrBadRequest.WithText("PUT version-id requests require a zero byte body")
	}
	if id == versions.Null {
		return swiftcore.ErrBadRequest.WithText("Invalid version parameter")
	}
	v, err := h.Versions.MakeCurrent(r.Context(), st, rq.ObjectName(), id)
	if errors.Is(err, versions.ErrNoSuchVersion) {
		return swiftcore.ErrNotFound.WithText("The specified version does not exist")
	}
	if err != nil {
		return swiftcore.VersionsError(fmt.Errorf("make version %s of %q current: %w", id, rq.Object, err))
	}
	hdr := w.Header()
	hdr.Set("Etag", v.Object.AsServed().ETag)
	hdr.Set("Last-Modified", swiftwire.LastModified(v.Object.Modified()).Format(http.TimeFormat))
	hdr.Set("X-Object-Version-Id", id)
	swiftcore.WriteStatus(w, r, http.StatusCreated)
	return nil
}

// ResolveCopyVersion points a COPY ?version-id at the version it names (its source).
func (h *Handler) ResolveCopyVersion(r *http.Request, rq *swiftcore.Request, src meta.ObjectName) (meta.ObjectName, error) {
	id := rq.VersionID
	if id == "" {
		return src, nil
	}
	ctx := r.Context()
	st, err := h.VersionState(ctx, src.Account, src.Container)
	if err != nil {
		return src, err
	}
	if id == versions.Null {
		cur, err := h.Proxy.HeadObjectBrief(ctx, src)
		if err == nil && versions.IsLink(&cur) {
			return src, fmt.Errorf("copy source %q: its current version is not the null one: %w", src.Object, swiftcore.ErrNotFound)
		}
		return src, nil
	}
	v, err := h.Versions.Resolve(ctx, st, src, id)
	if err != nil {
		return src, swiftcore.VersionsError(err)
	}
	if v.DeleteMarker {
		return src, fmt.Errorf("copy source %q: version %s is a delete marker: %w", src.Object, id, swiftcore.ErrNotFound)
	}
	return v.Name, nil
}

// DeleteWithMarker serves a DELETE in a container with object versioning on: a delete marker
// becomes the newest version and the link goes (X-Object-Version-Id: the marker's ID). The
// answer is 404 when there was no current object, as Swift's (the marker is written all the
// same).
func (h *Handler) DeleteWithMarker(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, st versions.State) error {
	ctx := r.Context()
	cur, err := h.Proxy.HeadObjectBrief(ctx, rq.ObjectName())
	exists := err == nil && !cur.Deleted && !swiftcore.Expired(&cur, h.Now())
	id, err := h.Versions.Delete(ctx, st, rq.ObjectName())
	if err != nil {
		return swiftcore.VersionsError(fmt.Errorf("delete object %q: %w", rq.Object, err))
	}
	w.Header().Set("X-Object-Version-Id", id)
	if !exists {
		return fmt.Errorf("delete object %q: %w", rq.Object, swiftcore.ErrNotFound)
	}
	swiftcore.WriteStatus(w, r, http.StatusNoContent)
	return nil
}

// jsonVersion is an entry of a ?versions listing, with Swift's fields.
type jsonVersion struct {
	Name         string `json:"name"`
	Bytes        int64  `json:"bytes"`
	Hash         string `json:"hash"`
	ContentType  string `json:"content_type"`
	LastModified string `json:"last_modified"`
	VersionID    string `json:"version_id"`
	IsLatest     bool   `json:"is_latest"`
	SLOETag      string `json:"slo_etag,omitempty"`
}

// acceptsJSON reports whether a ?versions listing may answer JSON, its only format: format=
// overrides Accept, and no Accept accepts anything.
func acceptsJSON(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	if f := r.URL.Query().Get("format"); f != "" {
		switch strings.ToLower(f) {
		case "json":
			return true
		default:
			return false
		}
	}
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		mr, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		mr = strings.ToLower(strings.TrimSpace(mr))
		if mr != "*/*" && mr != "application/*" && mr != "application/json" {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.TrimSpace(k) == "q" {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if q > 0 {
			return true
		}
	}
	return false
}

// ListVersions serves GET ?versions on a container: every version of its objects, as Swift's
// object versioning lists them (JSON only), with marker and version_marker, prefix, delimiter,
// limit and reverse. A container never versioned lists its objects as null versions.
func (h *Handler) ListVersions(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, lr swiftwire.ListRequest, c meta.Container) error {
	if !acceptsJSON(r) {
		return swiftcore.ErrNotAcceptable
	}
	q := r.URL.Query()
	marker, versionMarker := q.Get("marker"), q.Get("version_marker")
	if q.Has("version_marker") {
		if !q.Has("marker") {
			return swiftcore.ErrBadRequest.WithText("version_marker param requires marker")
		}
		if versionMarker != versions.Null {
			if _, err := versions.ParseID(versionMarker); err != nil {
				return swiftcore.ErrBadRequest.WithText("invalid version_marker param")
			}
		}
	}
	if strings.ContainsAny(lr.Opts.Delimiter, "0123456789."+meta.ReservedPrefix) {
		return swiftcore.ErrBadRequest.WithText("invalid delimiter param")
	}
	out := []any{}
	if !lr.Empty {
		l, err := h.Versions.List(r.Context(), versions.StateOf(c), rq.Tenant, rq.Container, versions.ListOptions{
			Prefix: lr.Opts.Prefix, Delimiter: lr.Opts.Delimiter, KeyMarker: marker, VersionMarker: versionMarker,
			Limit: lr.Opts.Limit, Reverse: lr.Opts.Reverse})
		if err != nil {
			return swiftcore.VersionsError(fmt.Errorf("list versions of %q: %w", rq.Container, err))
		}
		items := make([]swiftwire.ListItem, 0, len(l.Versions)+len(l.CommonPrefixes))
		for i := range l.Versions {
			items = append(items, swiftwire.ListItem{Name: l.Versions[i].Key, Obj: &l.Versions[i].Entry, VersionID: l.Versions[i].ID})
		}
		for _, p := range l.CommonPrefixes {
			items = append(items, swiftwire.ListItem{Name: p, Subdir: true})
		}
		// Subdirs fall between the versions; a key's versions keep their order.
		items = swiftwire.Merge(items, lr.Opts.Reverse)
		latest := map[*meta.ListEntry]bool{}
		for i := range l.Versions {
			latest[&l.Versions[i].Entry] = l.Versions[i].Latest
		}
		for _, it := range items {
			if it.Subdir {
				out = append(out, map[string]string{"subdir": it.Name})
				continue
			}
			hash, params := swiftwire.ParseListingETag(it.Obj.ETag)
			out = append(out, jsonVersion{Name: it.Name, Bytes: it.Obj.Size, Hash: hash, ContentType: it.Obj.ContentType,
				LastModified: swiftwire.ListingTime(it.Obj.Timestamp), VersionID: it.VersionID, IsLatest: latest[it.Obj],
				SLOETag: params["slo_etag"]})
		}
	}
	body, err := json.Marshal(out)
	if err != nil {
		return err
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// CurrentListed is a container listing's entry as Swift's object versioning shows it: a version
// link stands for its version (its bytes and ETag), and its JSON entry names it (version_id).
func CurrentListed(e *meta.ListEntry, container string) (meta.ListEntry, string) {
	cur, id, _ := swiftcore.ListedVersion(e, container)
	return cur, id
}

// AddVersionsBytes adds the bytes of each listed container's versions to its own, as Swift's
// account listings show them.
func (h *Handler) AddVersionsBytes(ctx context.Context, account string, items []swiftwire.ListItem) {
	lo, hi := "", ""
	for _, it := range items {
		if it.Ctr == nil {
			continue
		}
		if lo == "" || it.Name < lo {
			lo = it.Name
		}
		if it.Name > hi {
			hi = it.Name
		}
	}
	if hi == "" {
		return
	}
	first := versions.ContainerFor(lo)
	page, err := h.Proxy.ListReservedContainers(ctx, account, versions.ContainerFor(""), meta.ListOptions{
		Marker: first[:len(first)-1], EndMarker: versions.ContainerFor(hi) + "\x00", Limit: swiftwire.ListingLimit})
	if err != nil || len(page.Containers) == 0 {
		return
	}
	bytes := map[string]int64{}
	for _, c := range page.Containers {
		bytes[c.Name] = c.BytesUsed
	}
	for _, it := range items {
		if it.Ctr != nil {
			it.Ctr.BytesUsed += bytes[versions.ContainerFor(it.Name)]
		}
	}
}
