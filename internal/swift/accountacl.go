package swift

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// Account ACLs (tempauth's X-Account-Access-Control, version 2): a JSON object whose keys
// "admin", "read-write" and "read-only" list accounts or account:user names. An account's
// administrators set them. "admin" makes a user an administrator of the account; "read-write"
// lets it read, create and change containers and objects (not ACLs or other privileged
// settings) and read the account; "read-only" lets it read everything (GET and HEAD). They are
// Swift's: S3 requests do not consult them.

// accountACLKey is where an account's ACL is kept in its metadata (JSON, as set).
const accountACLKey = "sys:account-acl"

// Account ACL roles, strongest first.
const (
	roleNone      = ""
	roleAdmin     = "admin"
	roleReadWrite = "read-write"
	roleReadOnly  = "read-only"
)

// parseAccountACL validates a header value as tempauth does; it returns the canonical JSON
// ("" for an empty ACL) or the 400 text.
func parseAccountACL(v string) (string, error) {
	v = strings.TrimSpace(v)
	var raw map[string]any
	if v == "" {
		return "", nil
	}
	if err := json.Unmarshal([]byte(v), &raw); err != nil || raw == nil {
		return "", errBadRequest.withText("Syntax error in input (%q)", v)
	}
	out := map[string][]string{}
	for key, val := range raw {
		if key != roleAdmin && key != roleReadWrite && key != roleReadOnly {
			return "", errBadRequest.withText("Key %q not recognized", key)
		}
		list, ok := val.([]any)
		if !ok {
			return "", errBadRequest.withText("Value for key %q must be a list", key)
		}
		for _, g := range list {
			s, ok := g.(string)
			if !ok {
				return "", errBadRequest.withText("Elements of %q list must be strings", key)
			}
			out[key] = append(out[key], s)
		}
	}
	if len(out) == 0 {
		return "", nil
	}
	b, _ := json.Marshal(out)
	return string(b), nil
}

// accountRole is what the account's ACL gives the caller.
func (h *Handler) accountRole(ctx context.Context, rq *request, account string) string {
	if rq.anonymous || rq.tempURL != nil {
		return roleNone
	}
	m, err := h.cfg.Accounts.AccountMetadata(ctx, account)
	if err != nil || m[accountACLKey] == "" {
		return roleNone
	}
	var acl map[string][]string
	if json.Unmarshal([]byte(m[accountACLKey]), &acl) != nil {
		return roleNone
	}
	groups := []string{rq.id.Account, rq.id.Account + ":" + rq.id.User}
	for _, role := range []string{roleAdmin, roleReadWrite, roleReadOnly} {
		for _, g := range acl[role] {
			if slices.Contains(groups, g) {
				return role
			}
		}
	}
	return roleNone
}

// isOwner reports whether the caller administers the account: by its user flag, as the root,
// or through the account's ACL.
func (h *Handler) isOwner(ctx context.Context, rq *request, account string) bool {
	return rq.ownerAdmin(account) || h.accountRole(ctx, rq, account) == roleAdmin
}

// roleAllows reports whether an account ACL role allows a request method on the account
// (container == "") or on its containers and objects.
func roleAllows(role, method, container string) bool {
	read := method == http.MethodGet || method == http.MethodHead
	switch role {
	case roleAdmin:
		return true
	case roleReadWrite:
		return container != "" || read
	case roleReadOnly:
		return read
	}
	return false
}
