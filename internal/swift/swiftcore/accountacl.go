package swiftcore

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// Account ACLs (tempauth's X-Account-Access-Control, version 2): a JSON object whose keys
// "admin", "read-write" and "read-only" list accounts or account:user names. An account's
// administrators set them. "admin" makes a user an administrator of the account; "read-write"
// lets it read, create and change containers and objects (not ACLs or other privileged
// settings) and read the account; "read-only" lets it read everything (GET and HEAD). They are
// Swift's: S3 requests do not consult them.

// AccountACLKey is where an account's ACL is kept in its metadata (JSON, as set).
const AccountACLKey = "sys:account-acl"

// accountRole is what the account's ACL gives the caller.
func (h *Server) accountRole(ctx context.Context, rq *Request, account string) string {
	if rq.Anonymous || rq.TempURL != nil {
		return swiftwire.RoleNone
	}
	m, err := h.Accounts.AccountMetadata(ctx, account)
	if err != nil || m[AccountACLKey] == "" {
		return swiftwire.RoleNone
	}
	var acl map[string][]string
	if json.Unmarshal([]byte(m[AccountACLKey]), &acl) != nil {
		return swiftwire.RoleNone
	}
	groups := []string{rq.ID.Account, rq.ID.Account + ":" + rq.ID.User}
	for _, role := range []string{swiftwire.RoleAdmin, swiftwire.RoleReadWrite, swiftwire.RoleReadOnly} {
		for _, g := range acl[role] {
			if slices.Contains(groups, g) {
				return role
			}
		}
	}
	return swiftwire.RoleNone
}

// IsOwner reports whether the caller administers the account: by its user flag, as the root,
// or through the account's ACL.
func (h *Server) IsOwner(ctx context.Context, rq *Request, account string) bool {
	return rq.OwnerAdmin(account) || h.accountRole(ctx, rq, account) == swiftwire.RoleAdmin
}

// roleAllows reports whether an account ACL role allows a request method on the account
// (container == "") or on its containers and objects.
func roleAllows(role, method, container string) bool {
	read := method == http.MethodGet || method == http.MethodHead
	switch role {
	case swiftwire.RoleAdmin:
		return true
	case swiftwire.RoleReadWrite:
		return container != "" || read
	case swiftwire.RoleReadOnly:
		return read
	}
	return false
}
