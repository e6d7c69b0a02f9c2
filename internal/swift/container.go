package swift

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/swift/versioning"
	"github.com/cairn-store/cairn/internal/versions"
)

// unsupportedContainerHeaders are container settings Swift stores and acts on that Cairn has
// not implemented: refusing them is better than storing a container without them.
var unsupportedContainerHeaders = []string{"X-Container-Sync-To", "X-Container-Sync-Key"}

// readContainerSettings reads the metadata of a container PUT or POST, as the keys of
// meta.Container.Meta (an empty value removes a key). X-Storage-Policy is read by putContainer
// only: a POST ignores it, as Swift's does.
func readContainerSettings(hdr http.Header) (map[string]string, error) {
	for _, k := range unsupportedContainerHeaders {
		if hdr.Get(k) != "" {
			return nil, swiftcore.ErrBadRequest.WithText("%s is not supported by this server", k)
		}
	}
	um, err := swiftwire.ReadMeta(hdr, "Container")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for k, v := range um {
		m[swiftcore.ContainerMetaPrefix+k] = v
	}
	if err := swiftcore.CheckQuotaHeaders(hdr); err != nil {
		return nil, err
	}
	swiftcore.ReadRFCEtags(hdr, "Container", m)
	if err := swiftcore.ReadContainerACLs(hdr, m); err != nil {
		return nil, err
	}
	if err := versioning.ReadVersioningSettings(hdr, m); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// containerModifiedKey is the container metadata key holding when the container was last PUT
// or POSTed (meta.Timestamp in decimal): Swift's container Last-Modified moves with those, and
// not with object writes.
const containerModifiedKey = "sys:swift-modified"

// containerModified is when a container was last PUT or POSTed.
func containerModified(c meta.Container) meta.Timestamp {
	if n, err := strconv.ParseInt(c.Meta[containerModifiedKey], 10, 64); err == nil && n > int64(c.Created) {
		return meta.Timestamp(n)
	}
	return c.Created
}

// updateContainer stores a container PUT's or POST's settings m, with Swift's limits checked
// on the merged user metadata, and moves the container's Last-Modified.
func (h *Handler) updateContainer(ctx context.Context, rq *swiftcore.Request, m map[string]string) error {
	c, err := h.Proxy.HeadContainer(ctx, rq.Tenant, rq.Container)
	if err != nil {
		return fmt.Errorf("head container %q: %w", rq.Container, err)
	}
	changes := swiftwire.MetaUpdate{}
	for k, v := range m {
		if name, ok := strings.CutPrefix(k, swiftcore.ContainerMetaPrefix); ok {
			changes[name] = v
		}
	}
	if err := swiftwire.CheckMergedMeta(c.Meta, swiftcore.ContainerMetaPrefix, changes); err != nil {
		return err
	}
	update := map[string]string{containerModifiedKey: strconv.FormatInt(h.Now().UnixNano(), 10)}
	for k, v := range m {
		update[k] = v
	}
	if _, err := h.Proxy.PostContainer(ctx, rq.Tenant, rq.Container, update); err != nil {
		return fmt.Errorf("update container %q: %w", rq.Container, err)
	}
	return nil
}

// readStoragePolicy reads a container create's X-Storage-Policy (a policy's name or alias,
// without case; none or empty: the default) as Swift's proxy does: an unknown name and a
// deprecated policy are 400. An erasure-coded policy, which this version cannot store objects
// in, is 501. It returns the policy's index, or -1 for the default.
func (h *Handler) readStoragePolicy(hdr http.Header) (int, error) {
	name := hdr.Get("X-Storage-Policy")
	if name == "" {
		return -1, nil
	}
	p, err := h.Proxy.Policies().ForNewContainer(name)
	switch {
	case errors.Is(err, policy.ErrUnknown):
		return 0, swiftcore.ErrBadRequest.WithText("Invalid X-Storage-Policy '%s'", name)
	case errors.Is(err, policy.ErrDeprecated):
		return 0, swiftcore.ErrBadRequest.WithText("Storage Policy '%s' is deprecated", p.Name)
	case errors.Is(err, policy.ErrNotSupported):
		return 0, swiftcore.ErrNotImplemented.WithText("Storage Policy '%s' is erasure-coded with %s, a code Cairn does not serve (its own is %s)", p.Name, p.EC.Scheme, policy.CairnScheme)
	case err != nil:
		return 0, err
	}
	return p.Index, nil
}

// policyName is the name of a container's storage policy, "" when it is none this server knows.
func (h *Handler) policyName(c meta.Container) string {
	idx, ok := c.PolicyIndex()
	if !ok {
		return ""
	}
	p, _ := h.Proxy.Policies().ByIndex(idx)
	return p.Name
}

// writeContainerHeaders sets the headers of a container GET, HEAD or POST.
func (h *Handler) writeContainerHeaders(hdr http.Header, c meta.Container, showACLs bool) {
	if showACLs {
		swiftcore.WriteContainerACLs(hdr, c.Meta)
	}
	hdr.Set("X-Container-Object-Count", strconv.FormatInt(c.ObjectCount, 10))
	hdr.Set("X-Container-Bytes-Used", strconv.FormatInt(c.BytesUsed, 10))
	hdr.Set("X-Timestamp", swiftwire.Timestamp(c.Created))
	hdr.Set("Last-Modified", swiftwire.LastModified(containerModified(c)).Format(http.TimeFormat))
	if name := h.policyName(c); name != "" {
		hdr.Set("X-Storage-Policy", name)
	}
	swiftcore.WriteRFCEtags(hdr, "Container", c.Meta)
	versioning.WriteVersioningHeaders(hdr, c)
	versioning.WriteObjectVersioningHeaders(hdr, c)
	for k, v := range c.Meta {
		if name, ok := strings.CutPrefix(k, swiftcore.ContainerMetaPrefix); ok && v != "" {
			if !showACLs && strings.HasPrefix(name, "temp-url-key") {
				continue // a secret: for those who may change it, as Swift shows it
			}
			hdr.Set(swiftwire.MetaHeader("Container", name), v)
		}
	}
}

// getContainer serves GET and HEAD on a container: its usage, metadata and, for GET, objects.
func (h *Handler) getContainer(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	lr, err := swiftwire.ParseListing(r.URL.Query(), r.Header.Get("Accept"))
	if err != nil {
		return err
	}
	c, err := h.Proxy.HeadContainer(ctx, rq.Tenant, rq.Container)
	if err != nil {
		return fmt.Errorf("head container %q: %w", rq.Container, err)
	}
	h.writeContainerHeaders(w.Header(), c, h.IsOwner(ctx, rq, rq.Tenant))
	if n := h.VersionsBytes(ctx, rq.Tenant, c); n > 0 {
		w.Header().Set("X-Container-Bytes-Used", strconv.FormatInt(c.BytesUsed+n, 10))
	}
	if r.Method == http.MethodGet && r.URL.Query().Has("versions") {
		return h.ver.ListVersions(w, r, rq, lr, c)
	}
	var items []swiftwire.ListItem
	if r.Method == http.MethodGet && !lr.Empty {
		page, err := h.Proxy.ListObjects(ctx, rq.Tenant, rq.Container, lr.Opts)
		if err != nil {
			return fmt.Errorf("list container %q: %w", rq.Container, err)
		}
		for i := range page.Objects {
			o := &page.Objects[i]
			if lr.DirOnly && o.Name == lr.Opts.Prefix {
				continue // path= lists a directory's children, not its own marker
			}
			e, id := versioning.CurrentListed(o, rq.Container)
			items = append(items, swiftwire.ListItem{Name: o.Name, Obj: &e, VersionID: id})
		}
		for _, p := range page.CommonPrefixes {
			if !lr.DirOnly {
				items = append(items, swiftwire.ListItem{Name: p, Subdir: true})
				continue
			}
			// path=: a pseudo-directory is listed only when an object of its name (a
			// directory marker, "dir/") exists, as an object.
			marker, err := h.dirMarker(ctx, rq, p)
			if err != nil {
				return err
			}
			if marker != nil {
				items = append(items, swiftwire.ListItem{Name: p, Obj: marker})
			}
		}
		items = swiftwire.Merge(items, lr.Opts.Reverse)
	}
	swiftcore.WriteListing(w, r, lr, "container", rq.Container, rq.Account, items)
	return nil
}

// changed tells the server that the request's container changed.
func (h *Handler) changed(rq *swiftcore.Request) {
	if h.ContainerChanged != nil {
		h.ContainerChanged(rq.Tenant, rq.Container)
	}
}

// dirMarker returns the listing entry of the object named exactly dir, nil if there is none.
func (h *Handler) dirMarker(ctx context.Context, rq *swiftcore.Request, dir string) (*meta.ListEntry, error) {
	page, err := h.Proxy.ListObjects(ctx, rq.Tenant, rq.Container, meta.ListOptions{Prefix: dir, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("list container %q: %w", rq.Container, err)
	}
	if len(page.Objects) == 0 || page.Objects[0].Name != dir {
		return nil, nil
	}
	return &page.Objects[0], nil
}

// putContainer creates a container (201), or updates the metadata of an existing one (202).
func (h *Handler) putContainer(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	m, err := readContainerSettings(r.Header)
	if err != nil {
		return err
	}
	pol, err := h.readStoragePolicy(r.Header)
	if err != nil {
		return err
	}
	if err := h.ver.CheckVersioningChange(ctx, r, rq, m); err != nil {
		return err
	}
	create := withoutEmpty(m)
	if pol >= 0 {
		if create == nil {
			create = map[string]string{}
		}
		create[meta.ContainerPolicyKey] = strconv.Itoa(pol)
	}
	// A container that exists in another policy than the one named is 409 (ErrPolicyConflict).
	err = h.Proxy.CreateContainer(ctx, rq.Tenant, rq.Container, create)
	if errors.Is(err, meta.ErrExists) {
		if err := h.updateContainer(ctx, rq, m); err != nil {
			return err
		}
		if err := h.ver.ApplyVersionsEnabled(ctx, r, rq); err != nil {
			return err
		}
		h.ClaimIfShared(ctx, rq, m)
		h.changed(rq)
		swiftcore.WriteStatus(w, r, http.StatusAccepted)
		return nil
	}
	if err != nil {
		return fmt.Errorf("create container %q: %w", rq.Container, err)
	}
	if err := h.ver.ApplyVersionsEnabled(ctx, r, rq); err != nil {
		return err
	}
	h.ClaimIfShared(ctx, rq, m)
	h.changed(rq)
	swiftcore.WriteStatus(w, r, http.StatusCreated)
	return nil
}

func withoutEmpty(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if v != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// postContainer merges metadata into a container (204).
func (h *Handler) postContainer(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	m, err := readContainerSettings(r.Header)
	if err != nil {
		return err
	}
	if err := h.ver.CheckVersioningChange(ctx, r, rq, m); err != nil {
		return err
	}
	if err := h.updateContainer(ctx, rq, m); err != nil {
		return err
	}
	if err := h.ver.ApplyVersionsEnabled(ctx, r, rq); err != nil {
		return err
	}
	h.ClaimIfShared(ctx, rq, m)
	h.changed(rq)
	swiftcore.WriteStatus(w, r, http.StatusNoContent)
	return nil
}

// deleteContainer deletes an empty container: 204, 409 when it holds objects, 404 when absent.
func (h *Handler) deleteContainer(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	// A container that keeps versions goes with its versions container, once that is empty.
	if err := h.Versions.DeleteContainer(r.Context(), rq.Tenant, rq.Container); errors.Is(err, versions.ErrVersionsLeft) {
		return fmt.Errorf("%w: %w", swiftcore.ErrVersionsLeft, err)
	} else if err != nil {
		return fmt.Errorf("delete container %q: %w", rq.Container, err)
	}
	h.changed(rq)
	// A shared container's name is released with it (a no-op for a name it never claimed).
	if err := h.Proxy.ReleaseName(r.Context(), rq.Container, rq.Tenant); err != nil {
		h.Log.WarnContext(r.Context(), "swift: cannot release a deleted container's name; it stays claimed until taken over", "container", rq.Container, "err", err)
	}
	swiftcore.WriteStatus(w, r, http.StatusNoContent)
	return nil
}
