package swift

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
)

// Access control, as tempauth does it, decided by internal/access (the module the S3 front end
// uses too, so that a container ACL means the same through either API):
//
//   - The root user and the administrators of the URL's account (the account owner, Swift's
//     swift_owner) may do everything there: account requests, container PUT/POST/DELETE, and
//     see and set X-Container-Read/-Write.
//   - Everyone else — ordinary users of the account, users of other accounts (with their own
//     token on the owner's storage URL), and callers without a token — gets only what the
//     container's ACLs grant: X-Container-Read reads objects and lists (a .r: referrer entry
//     reads objects, and lists too with .rlistings), X-Container-Write writes and deletes
//     objects.
//   - A refusal is 401 without a token and 403 with one, as in Swift.

// identify reads the request's token, if any, into rq.id. No token is an anonymous request,
// decided later; a token that is not valid is 401.
func (h *Handler) identify(r *http.Request, rq *request) error {
	tok := r.Header.Get("X-Auth-Token")
	if tok == "" {
		tok = r.Header.Get("X-Storage-Token")
	}
	if tok == "" {
		rq.anonymous = true
		return nil
	}
	id, _, ok := h.tokens.lookup(tok)
	if !ok {
		return fmt.Errorf("unknown or expired token: %w", errUnauthorized)
	}
	rq.id = id
	return nil
}

// owner reports whether the caller may do everything in the request's account: the root user,
// or an administrator of the account.
func (rq *request) owner() bool {
	if rq.anonymous {
		return false
	}
	return rq.id.Root || (rq.id.Admin && rq.id.Account == rq.tenant)
}

// who is the caller as internal/access sees it.
func (rq *request) who() access.Identity {
	if rq.anonymous {
		return access.Identity{Anonymous: true}
	}
	return access.Identity{Account: rq.id.Account, User: rq.id.User, Admin: rq.id.Admin, Root: rq.id.Root}
}

// denied is the refusal of a request: 401 for an anonymous caller, 403 otherwise.
func (rq *request) denied(format string, args ...any) error {
	if rq.anonymous {
		return fmt.Errorf(format+": %w", append(args, errUnauthorized)...)
	}
	return fmt.Errorf(format+": %w", append(args, errForbidden)...)
}

// opActions are the actions a container's ACLs are asked about, per operation. Operations
// missing here (the account's, and container PUT/POST/DELETE) are the owner's alone; a copy
// needs GetObject on its source and PutObject on its destination (copyObject).
var opActions = map[string]access.Action{
	opGetContainer:  access.ListBucket,
	opHeadContainer: access.ListBucket,
	opGetObject:     access.GetObject,
	opHeadObject:    access.GetObject,
	opPutObject:     access.PutObject,
	opPostObject:    access.PutObject,
	opDeleteObject:  access.DeleteObject,
}

// checkAccess decides a routed request.
func (h *Handler) checkAccess(ctx context.Context, r *http.Request, rq *request) error {
	if rq.owner() {
		return nil
	}
	if rq.op == opCopyObject {
		return nil // both sides are decided by copyObject, which knows them
	}
	a, ok := opActions[rq.op]
	if !ok {
		return rq.denied("%s by a caller who does not own %s", rq.op, rq.account)
	}
	return h.allowed(ctx, r, rq, rq.tenant, rq.container, rq.object, a)
}

// allowed decides one action on a container of an account (and an object in it), loading the
// container's access state and, when the decision needs it, the object's ACL.
func (h *Handler) allowed(ctx context.Context, r *http.Request, rq *request, account, container, object string, a access.Action) error {
	if !rq.anonymous && (rq.id.Root || (rq.id.Admin && rq.id.Account == account)) {
		return nil
	}
	c, err := h.proxy.HeadContainer(ctx, account, container)
	if err != nil {
		if errors.Is(err, meta.ErrNotFound) {
			// No container, no ACL: refused, as tempauth does, and nothing learnt.
			return rq.denied("%s on %s/%s: no such container", a, account, container)
		}
		return fmt.Errorf("access state of %s/%s: %w", account, container, err)
	}
	st := access.StateFromMeta(container, c.Meta)
	q := access.Request{Identity: rq.who(), Action: a, Bucket: st, Referer: r.Header.Get("Referer"),
		Resource: access.Resource{Owner: account, Bucket: container, Key: object}}
	d := access.Decide(q)
	if d.NeedObjectACL && object != "" {
		obj, err := h.proxy.HeadObject(ctx, meta.ObjectName{Account: account, Container: container, Object: object})
		switch {
		case err == nil:
			q.Object = access.ObjectACLFromSysMeta(obj.SysMeta)
			d = access.Decide(q)
		case !errors.Is(err, meta.ErrNotFound):
			return fmt.Errorf("object ACL of %s/%s: %w", container, object, err)
		}
	}
	if !d.Allowed {
		h.log.DebugContext(ctx, "swift access denied", "trans_id", rq.transID, "account", rq.id.Account, "user", rq.id.User,
			"anonymous", rq.anonymous, "action", a.String(), "owner", account, "container", container, "object", object, "reason", d.Reason)
		return rq.denied("%s on %s/%s/%s: %s", a, account, container, object, d.Reason)
	}
	return nil
}
