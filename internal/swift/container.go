package swift

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
)

// containerMetaPrefix keeps user metadata (X-Container-Meta-*) apart from the settings Cairn
// may keep in meta.Container.Meta (ACLs, quotas, policies).
const containerMetaPrefix = "meta-"

// policyName is the one storage policy Cairn has, reported by /info and containers.
const policyName = "Policy-0"

// unsupportedContainerHeaders are container settings Swift stores and acts on that Cairn has
// not implemented: refusing them is better than storing a container without them.
var unsupportedContainerHeaders = []string{"X-Container-Sync-To",
	"X-Container-Sync-Key", "X-Versions-Location", "X-History-Location", "X-Versions-Enabled"}

// readContainerSettings reads the metadata of a container PUT or POST, as the keys of
// meta.Container.Meta (an empty value removes a key).
func readContainerSettings(hdr http.Header) (map[string]string, error) {
	for _, k := range unsupportedContainerHeaders {
		if hdr.Get(k) != "" {
			return nil, errBadRequest.withText("%s is not supported by this server", k)
		}
	}
	if p := hdr.Get("X-Storage-Policy"); p != "" && !strings.EqualFold(p, policyName) {
		return nil, errBadRequest.withText("Invalid X-Storage-Policy %q", p)
	}
	um, err := readMeta(hdr, "Container")
	if err != nil {
		return nil, err
	}
	m, err := readContainerACLs(hdr)
	if err != nil {
		return nil, err
	}
	for k, v := range um {
		if m == nil {
			m = map[string]string{}
		}
		m[containerMetaPrefix+k] = v
	}
	return m, nil
}

// readContainerACLs reads X-Container-Read and X-Container-Write (and their X-Remove- forms)
// as the access keys of meta.Container.Meta, cleaned as Swift cleans them; an ACL that does not
// parse is a 400 with the parser's message.
func readContainerACLs(hdr http.Header) (map[string]string, error) {
	var m map[string]string
	for _, a := range []struct {
		header, key string
		parse       func(string) (access.SwiftACL, error)
	}{
		{"X-Container-Read", access.MetaSwiftRead, access.ParseSwiftACL},
		{"X-Container-Write", access.MetaSwiftWrite, access.ParseSwiftWriteACL},
	} {
		v, set := hdr[a.header]
		if _, remove := hdr["X-Remove-"+a.header[len("X-"):]]; remove && !set {
			v, set = []string{""}, true
		}
		if !set {
			continue
		}
		acl, err := a.parse(strings.Join(v, ","))
		if err != nil {
			return nil, errBadRequest.withText("%s", err.Error())
		}
		if m == nil {
			m = map[string]string{}
		}
		m[a.key] = acl.String()
	}
	return m, nil
}

// writeContainerHeaders sets the headers of a container GET, HEAD or POST. owner: the caller
// may change the container's settings, and so sees its ACLs (Swift shows them to no one else).
func writeContainerHeaders(hdr http.Header, c meta.Container, owner bool) {
	hdr.Set("X-Container-Object-Count", strconv.FormatInt(c.ObjectCount, 10))
	hdr.Set("X-Container-Bytes-Used", strconv.FormatInt(c.BytesUsed, 10))
	hdr.Set("X-Timestamp", swiftTimestamp(c.Created))
	hdr.Set("Last-Modified", lastModified(c.Created).Format(http.TimeFormat))
	hdr.Set("X-Storage-Policy", policyName)
	for k, v := range c.Meta {
		if name, ok := strings.CutPrefix(k, containerMetaPrefix); ok && v != "" {
			hdr.Set(metaHeader("Container", name), v)
		}
	}
	if owner {
		if v := c.Meta[access.MetaSwiftRead]; v != "" {
			hdr.Set("X-Container-Read", v)
		}
		if v := c.Meta[access.MetaSwiftWrite]; v != "" {
			hdr.Set("X-Container-Write", v)
		}
	}
}

// getContainer serves GET and HEAD on a container: its usage, metadata and, for GET, objects.
func (h *Handler) getContainer(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	lr, err := parseListing(r.URL.Query(), r.Header.Get("Accept"))
	if err != nil {
		return err
	}
	c, err := h.proxy.HeadContainer(ctx, rq.tenant, rq.container)
	if err != nil {
		return fmt.Errorf("head container %q: %w", rq.container, err)
	}
	writeContainerHeaders(w.Header(), c, rq.owner())
	var items []listItem
	if r.Method == http.MethodGet && !lr.empty {
		page, err := h.proxy.ListObjects(ctx, rq.tenant, rq.container, lr.opts)
		if err != nil {
			return fmt.Errorf("list container %q: %w", rq.container, err)
		}
		for i := range page.Objects {
			o := &page.Objects[i]
			items = append(items, listItem{name: o.Name, obj: o})
		}
		for _, p := range page.CommonPrefixes {
			if !lr.dirOnly {
				items = append(items, listItem{name: p, subdir: true})
			}
		}
		items = merge(items, lr.opts.Reverse)
	}
	writeListing(w, r, lr, "container", rq.container, items)
	return nil
}

// putContainer creates a container (201), or updates the metadata of an existing one (202).
func (h *Handler) putContainer(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	m, err := readContainerSettings(r.Header)
	if err != nil {
		return err
	}
	err = h.proxy.CreateContainer(ctx, rq.tenant, rq.container, withoutEmpty(m))
	if errors.Is(err, meta.ErrExists) {
		if len(m) > 0 {
			if _, err := h.proxy.PostContainer(ctx, rq.tenant, rq.container, m); err != nil {
				return fmt.Errorf("update container %q: %w", rq.container, err)
			}
		}
		writeStatus(w, r, http.StatusAccepted)
		return nil
	}
	if err != nil {
		return fmt.Errorf("create container %q: %w", rq.container, err)
	}
	writeStatus(w, r, http.StatusCreated)
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
func (h *Handler) postContainer(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	m, err := readContainerSettings(r.Header)
	if err != nil {
		return err
	}
	if len(m) == 0 {
		_, err = h.proxy.HeadContainer(ctx, rq.tenant, rq.container)
	} else {
		_, err = h.proxy.PostContainer(ctx, rq.tenant, rq.container, m)
	}
	if err != nil {
		return fmt.Errorf("post container %q: %w", rq.container, err)
	}
	writeStatus(w, r, http.StatusNoContent)
	return nil
}

// deleteContainer deletes an empty container: 204, 409 when it holds objects, 404 when absent.
func (h *Handler) deleteContainer(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := h.proxy.DeleteContainer(r.Context(), rq.tenant, rq.container); err != nil {
		return fmt.Errorf("delete container %q: %w", rq.container, err)
	}
	writeStatus(w, r, http.StatusNoContent)
	return nil
}
