package swiftcore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// Authorization, as tempauth decides it, through the one decision module both front ends use
// (internal/access): an account's administrators (and the root) may do everything in it;
// anyone else, the account's other users and anonymous callers included, may do what the
// container's ACLs (X-Container-Read/-Write, S3 ACLs and bucket policies) grant. Account
// operations and container creation, deletion and metadata are for administrators only.
// A refusal is 401 for an anonymous caller (who may yet authenticate) and 403 for others.

// who is the caller as the access module knows it.
func (rq *Request) who() access.Identity {
	if rq.Anonymous {
		return access.Identity{Anonymous: true}
	}
	return access.Identity{Account: rq.ID.Account, User: rq.ID.User, Admin: rq.ID.Admin, Root: rq.ID.Root}
}

// OwnerAdmin reports whether the caller administers the account (or is the root).
func (rq *Request) OwnerAdmin(account string) bool {
	return !rq.Anonymous && (rq.ID.Root || rq.ID.Admin && rq.ID.Account == account)
}

// Refused is the error for a denied request.
func (rq *Request) Refused(what string) error {
	if rq.Anonymous || rq.TempURL != nil {
		return fmt.Errorf("anonymous %s: %w", what, ErrUnauthorized)
	}
	return fmt.Errorf("%s:%s may not %s: %w", rq.ID.Account, rq.ID.User, what, ErrForbidden)
}

// RequireAdmin allows only the account's administrators.
func (rq *Request) RequireAdmin(account, what string) error {
	if rq.OwnerAdmin(account) {
		return nil
	}
	return rq.Refused(what)
}

// containerState reads a container's access state; a container that does not exist has an
// empty one (its administrators then get the 404 the operation answers, others a refusal).
func (h *Server) containerState(ctx context.Context, account, container string) (*access.BucketState, error) {
	c, err := h.HeadContainer(ctx, account, container)
	if errors.Is(err, meta.ErrNotFound) {
		return &access.BucketState{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("access state of %q: %w", container, err)
	}
	return access.StateFromMeta(container, c.Meta), nil
}

// Allow decides one action on an object (or, with object "", on a container) of account.
func (h *Server) Allow(ctx context.Context, r *http.Request, rq *Request, account, container, object string, a access.Action) error {
	if rq.OwnerAdmin(account) || rq.TempURL.covers(account, container) {
		return nil // skip reading the state: rule 1 and 3 decide before any grant is read
	}
	switch h.accountRole(ctx, rq, account) {
	case swiftwire.RoleAdmin, swiftwire.RoleReadWrite:
		return nil
	case swiftwire.RoleReadOnly:
		if a == access.GetObject || a == access.ListBucket {
			return nil
		}
	}
	st, err := h.containerState(ctx, account, container)
	if err != nil {
		return err
	}
	// Bucket policy conditions see what the S3 front end offers of any request (the S3
	// request's own keys, s3:prefix and the like, are absent here).
	cond := access.BaseContext(r.RemoteAddr, r.TLS != nil, h.Now(), r.Header.Get("User-Agent"), r.Header.Get("Referer"), rq.who())
	name := meta.ObjectName{Account: account, Container: container, Object: object}
	var o meta.Object
	var oerr error
	headed := false
	if object != "" && a.ObjectLevel() && st.Policy.UsesExistingObjectTags() {
		// The policy tests the object's tags, which S3 keeps in its SysMeta.
		o, oerr = h.Proxy.HeadObject(ctx, name)
		headed = true
		if oerr == nil {
			cond = cond.WithExistingTags(o.SysMeta)
		} else if !errors.Is(oerr, meta.ErrNotFound) {
			return fmt.Errorf("object tags of %q: %w", object, oerr)
		}
	}
	req := access.Request{Identity: rq.who(), Action: a, Bucket: st, Referer: r.Header.Get("Referer"),
		Resource: access.Resource{Owner: account, Bucket: container, Key: object}, Context: cond}
	d := access.Decide(req)
	if d.NeedObjectACL {
		if !headed {
			o, oerr = h.Proxy.HeadObject(ctx, name)
		}
		if err := oerr; err == nil {
			req.Object = access.ObjectACLFromSysMeta(o.SysMeta)
			d = access.Decide(req)
		} else if !errors.Is(err, meta.ErrNotFound) {
			return fmt.Errorf("object ACL of %q: %w", object, err)
		}
	}
	if !d.Allowed {
		h.Log.DebugContext(ctx, "swift access denied", "trans_id", rq.TransID, "account", rq.ID.Account, "user", rq.ID.User,
			"anonymous", rq.Anonymous, "action", a.String(), "owner", account, "container", container, "object", object, "reason", d.Reason)
		return rq.Refused(fmt.Sprintf("%s %s/%s", a, container, object))
	}
	return nil
}

// CheckAccess decides a routed operation on the request's own path. Copies decide their other
// side where they parse it (internal/swift's copy.go); bulk requests decide each item.
func (h *Server) CheckAccess(r *http.Request, rq *Request) error {
	ctx := r.Context()
	switch rq.Op {
	case OpGetAccount, OpHeadAccount, OpPostAccount:
		if rq.OwnerAdmin(rq.Tenant) {
			return nil
		}
		role := h.accountRole(ctx, rq, rq.Tenant)
		if roleAllows(role, r.Method, "") && (rq.Op != OpPostAccount || role == swiftwire.RoleAdmin) {
			return nil
		}
		return rq.Refused("use the account")
	case OpPutContainer, OpPostContainer, OpDeleteContainer:
		if rq.OwnerAdmin(rq.Tenant) {
			return nil
		}
		switch h.accountRole(ctx, rq, rq.Tenant) {
		case swiftwire.RoleAdmin:
			return nil
		case swiftwire.RoleReadWrite:
			// Not an owner: privileged settings are dropped, as Swift drops them.
			for _, k := range privilegedContainerHeaders {
				r.Header.Del(k)
			}
			return nil
		}
		return rq.Refused("change containers")
	case OpGetContainer, OpHeadContainer:
		return h.Allow(ctx, r, rq, rq.Tenant, rq.Container, "", access.ListBucket)
	case OpGetObject, OpHeadObject:
		return h.Allow(ctx, r, rq, rq.Tenant, rq.Container, rq.Object, access.GetObject)
	case OpPutObject, OpPostObject:
		return h.Allow(ctx, r, rq, rq.Tenant, rq.Container, rq.Object, access.PutObject)
	case OpDeleteObject:
		return h.Allow(ctx, r, rq, rq.Tenant, rq.Container, rq.Object, access.DeleteObject)
	case OpCopyObject:
		if rq.Anonymous || rq.TempURL != nil {
			return rq.Refused("copy")
		}
		return nil
	}
	return rq.Refused(rq.Op)
}

// privilegedContainerHeaders are the container settings only the account's owners may make.
var privilegedContainerHeaders = []string{"X-Container-Read", "X-Container-Write", "X-Remove-Container-Read", "X-Remove-Container-Write",
	"X-Container-Sync-To", "X-Container-Sync-Key", "X-Container-Meta-Temp-Url-Key", "X-Container-Meta-Temp-Url-Key-2",
	"X-Remove-Container-Meta-Temp-Url-Key", "X-Remove-Container-Meta-Temp-Url-Key-2"}

// ReadContainerACLs reads X-Container-Read / X-Container-Write (and X-Remove-...) of a
// container PUT or POST into changes, validated and in their cleaned form.
func ReadContainerACLs(hdr http.Header, changes map[string]string) error {
	for _, a := range []struct {
		header, key string
		parse       func(string) (access.SwiftACL, error)
	}{
		{"X-Container-Read", access.MetaSwiftRead, access.ParseSwiftACL},
		{"X-Container-Write", access.MetaSwiftWrite, access.ParseSwiftWriteACL},
	} {
		if v, ok := hdr[a.header]; ok {
			acl, err := a.parse(strings.Join(v, ","))
			if err != nil {
				return ErrBadRequest.WithText("%s", strings.TrimPrefix(err.Error(), access.ErrInvalidSwiftACL.Error()+": "))
			}
			changes[a.key] = acl.String()
		}
		if hdr.Get("X-Remove-"+strings.TrimPrefix(a.header, "X-")) != "" {
			changes[a.key] = ""
		}
	}
	return nil
}

// ClaimIfShared claims the container's name in the shared bucket-name index when its new ACLs
// let in someone outside its account, so that they can address it through S3 too (S3 names a
// bucket without its account; see internal/s3/s3core/registry.go). A name another account already
// shares is left to it: the ACL still works through Swift, whose URLs name the account.
func (h *Server) ClaimIfShared(ctx context.Context, rq *Request, changes map[string]string) {
	shared := false
	for _, k := range []string{access.MetaSwiftRead, access.MetaSwiftWrite} {
		if v := changes[k]; v != "" {
			if acl, err := access.ParseSwiftACL(v); err == nil && acl.SharesOutside(rq.Tenant) {
				shared = true
			}
		}
	}
	if !shared {
		return
	}
	if err := h.Proxy.ClaimName(ctx, rq.Container, rq.Tenant); err != nil {
		h.Log.WarnContext(ctx, "swift: a shared container's name is not addressable through S3 by other accounts", "account", rq.Tenant, "container", rq.Container, "err", err)
	}
}

// WriteContainerACLs shows a container's ACLs to those who may change them, as Swift does.
func WriteContainerACLs(hdr http.Header, m map[string]string) {
	if v := m[access.MetaSwiftRead]; v != "" {
		hdr.Set("X-Container-Read", v)
	}
	if v := m[access.MetaSwiftWrite]; v != "" {
		hdr.Set("X-Container-Write", v)
	}
	// S3's grants, which Swift's ACL headers cannot say (a bucket READ lists and reads no object).
	if v := access.BucketACLHeaderValue(m); v != "" {
		hdr.Set(access.S3ACLHeader, v)
	}
}
