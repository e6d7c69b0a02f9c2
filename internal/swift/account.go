package swift

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/cairn-store/cairn/internal/meta"
)

// writeAccountHeaders sets the headers of an account GET or HEAD.
func writeAccountHeaders(hdr http.Header, a meta.Account) {
	hdr.Set("X-Account-Container-Count", strconv.FormatInt(a.ContainerCount, 10))
	hdr.Set("X-Account-Object-Count", strconv.FormatInt(a.ObjectCount, 10))
	hdr.Set("X-Account-Bytes-Used", strconv.FormatInt(a.BytesUsed, 10))
	// Cairn keeps no creation time for accounts; Swift clients only display it.
	hdr.Set("X-Timestamp", swiftTimestamp(0))
	for k, v := range a.Meta {
		hdr.Set(metaHeader("Account", k), v)
	}
}

// getAccount serves GET and HEAD on an account: its usage and, for GET, its containers.
func (h *Handler) getAccount(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	lr, err := parseListing(r.URL.Query(), r.Header.Get("Accept"))
	if err != nil {
		return err
	}
	acct, err := h.proxy.HeadAccount(ctx, rq.tenant)
	if err != nil {
		return fmt.Errorf("head account %s: %w", rq.account, err)
	}
	writeAccountHeaders(w.Header(), acct)
	var items []listItem
	if r.Method == http.MethodGet && !lr.empty {
		page, err := h.proxy.ListContainers(ctx, rq.tenant, lr.opts)
		if err != nil {
			return fmt.Errorf("list containers of %s: %w", rq.account, err)
		}
		for i := range page.Containers {
			c := &page.Containers[i]
			items = append(items, listItem{name: c.Name, ctr: c})
		}
		for _, p := range page.CommonPrefixes {
			if !lr.dirOnly {
				items = append(items, listItem{name: p, subdir: true})
			}
		}
		items = merge(items, lr.opts.Reverse)
	}
	writeListing(w, r, lr, "account", rq.account, items)
	return nil
}

// postAccount serves POST on an account. Cairn's storage has no account metadata yet, so the
// request's metadata is checked against Swift's limits (a request Swift would refuse is refused)
// and then not stored; docs/api.md says so.
func (h *Handler) postAccount(w http.ResponseWriter, r *http.Request, rq *request) error {
	if _, err := readMeta(r.Header, "Account"); err != nil {
		return err
	}
	acct, err := h.proxy.HeadAccount(r.Context(), rq.tenant)
	if err != nil {
		return fmt.Errorf("head account %s: %w", rq.account, err)
	}
	writeAccountHeaders(w.Header(), acct)
	writeStatus(w, r, http.StatusNoContent)
	return nil
}
