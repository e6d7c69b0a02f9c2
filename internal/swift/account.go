package swift

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// accountMetadata reads the metadata of the request's account.
func (h *Handler) accountMetadata(ctx context.Context, rq *swiftcore.Request) (map[string]string, error) {
	m, err := h.Accounts.AccountMetadata(ctx, rq.Tenant)
	if err != nil {
		return nil, fmt.Errorf("metadata of account %s: %w", rq.Account, err)
	}
	return m, nil
}

// writeAccountHeaders sets the headers of an account GET, HEAD or POST: usage from the listing
// index, user metadata from the account store.
func writeAccountHeaders(hdr http.Header, a meta.Account, m map[string]string, owner bool) {
	hdr.Set("X-Account-Container-Count", strconv.FormatInt(a.ContainerCount, 10))
	hdr.Set("X-Account-Object-Count", strconv.FormatInt(a.ObjectCount, 10))
	hdr.Set("X-Account-Bytes-Used", strconv.FormatInt(a.BytesUsed, 10))
	// Cairn keeps no creation time for accounts; Swift clients only display it.
	hdr.Set("X-Timestamp", swiftwire.Timestamp(0))
	for k, v := range m {
		if name, ok := strings.CutPrefix(k, swiftcore.AccountMetaPrefix); ok && v != "" {
			if !owner && strings.HasPrefix(name, "temp-url-key") {
				continue // a secret: for the account's owners only
			}
			hdr.Set(swiftwire.MetaHeader("Account", name), v)
		}
	}
	if owner && m[swiftcore.AccountACLKey] != "" {
		hdr.Set("X-Account-Access-Control", m[swiftcore.AccountACLKey])
	}
	swiftcore.WriteRFCEtags(hdr, "Account", m)
}

// getAccount serves GET and HEAD on an account: its usage, its metadata and, for GET, its
// containers.
func (h *Handler) getAccount(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	lr, err := swiftwire.ParseListing(r.URL.Query(), r.Header.Get("Accept"))
	if err != nil {
		return err
	}
	acct, err := h.Proxy.HeadAccount(ctx, rq.Tenant)
	if err != nil {
		return fmt.Errorf("head account %s: %w", rq.Account, err)
	}
	m, err := h.accountMetadata(ctx, rq)
	if err != nil {
		return err
	}
	writeAccountHeaders(w.Header(), acct, m, h.IsOwner(ctx, rq, rq.Tenant))
	var items []swiftwire.ListItem
	if r.Method == http.MethodGet && !lr.Empty {
		page, err := h.Proxy.ListContainers(ctx, rq.Tenant, lr.Opts)
		if err != nil {
			return fmt.Errorf("list containers of %s: %w", rq.Account, err)
		}
		for i := range page.Containers {
			c := &page.Containers[i]
			items = append(items, swiftwire.ListItem{Name: c.Name, Ctr: c})
		}
		for _, p := range page.CommonPrefixes {
			if !lr.DirOnly {
				items = append(items, swiftwire.ListItem{Name: p, Subdir: true})
			}
		}
		items = swiftwire.Merge(items, lr.Opts.Reverse)
		h.ver.AddVersionsBytes(ctx, rq.Tenant, items)
	}
	swiftcore.WriteListing(w, r, lr, "account", rq.Account, rq.Account, items)
	return nil
}

// postAccount serves POST on an account: its user metadata is merged (Swift's limits apply to
// the request) and stored durably before the answer.
func (h *Handler) postAccount(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	if err := checkAccountQuotaHeaders(r.Header, rq); err != nil {
		return err
	}
	um, err := swiftwire.ReadMeta(r.Header, "Account")
	if err != nil {
		return err
	}
	acct, err := h.Proxy.HeadAccount(ctx, rq.Tenant)
	if err != nil {
		return fmt.Errorf("head account %s: %w", rq.Account, err)
	}
	changes := make(map[string]string, len(um))
	for k, v := range um {
		changes[swiftcore.AccountMetaPrefix+k] = v
	}
	swiftcore.ReadRFCEtags(r.Header, "Account", changes)
	if v, ok := r.Header["X-Account-Access-Control"]; ok {
		acl, err := swiftwire.ParseAccountACL(strings.Join(v, ","))
		if err != nil {
			return err
		}
		changes[swiftcore.AccountACLKey] = acl
	}
	var m map[string]string
	if len(changes) > 0 {
		stored, err := h.accountMetadata(ctx, rq)
		if err != nil {
			return err
		}
		if err := swiftwire.CheckMergedMeta(stored, swiftcore.AccountMetaPrefix, um); err != nil {
			return err
		}
		if m, err = h.Accounts.UpdateAccountMetadata(ctx, rq.Tenant, changes); err != nil {
			return fmt.Errorf("update metadata of account %s: %w", rq.Account, err)
		}
	} else if m, err = h.accountMetadata(ctx, rq); err != nil {
		return err
	}
	writeAccountHeaders(w.Header(), acct, m, true)
	swiftcore.WriteStatus(w, r, http.StatusNoContent)
	return nil
}

// checkAccountQuotaHeaders applies the rule of Swift's account_quotas middleware to
// X-Account-Meta-Quota-Bytes (and its X-Remove- form): only a reseller admin may send it, here
// the root user, whose value must be an integer (then kept as plain metadata). Anyone else,
// account administrators included, is 403: Cairn's account quotas are the tenant store's, set
// with `cairn admin account quota`, and enforced on both APIs.
func checkAccountQuotaHeaders(hdr http.Header, rq *swiftcore.Request) error {
	v, set := hdr["X-Account-Meta-Quota-Bytes"]
	_, remove := hdr["X-Remove-Account-Meta-Quota-Bytes"]
	if !set && !remove {
		return nil
	}
	if !rq.ID.Root {
		return fmt.Errorf("X-Account-Meta-Quota-Bytes from %s:%s, not a reseller admin: %w", rq.ID.Account, rq.ID.User, swiftcore.ErrForbidden)
	}
	if set && !remove && v[0] != "" && !swiftwire.IsDigits(v[0]) {
		return swiftcore.ErrBadRequest.WithText("Invalid quota %.40q", v[0])
	}
	return nil
}

// AccountStore keeps each account's metadata (swiftcore.AccountStore; the server implements it).
type AccountStore = swiftcore.AccountStore

// ErrNoAccount is an AccountStore's answer for an account that does not exist.
var ErrNoAccount = swiftcore.ErrNoAccount
