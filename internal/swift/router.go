package swift

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/staticweb"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/tempurl"
)

// parsePath splits /v1/<account>[/<container>[/<object>]]. The object part is kept whole,
// slashes included ("a//b/" is a legal object name). A trailing slash after the account or
// container names the account or container, as in Swift.
func parsePath(path string) (swiftcore.Target, bool) {
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok || rest == "" {
		return swiftcore.Target{}, false
	}
	parts := strings.SplitN(rest, "/", 3)
	t := swiftcore.Target{Account: parts[0]}
	if len(parts) > 1 {
		t.Container = parts[1]
	}
	if len(parts) > 2 {
		t.Object = parts[2]
	}
	if t.Account == "" || t.Container == "" && t.Object != "" {
		return swiftcore.Target{}, false
	}
	return t, true
}

// route picks the operation for a method on a target.
func route(method string, hdr http.Header, t swiftcore.Target) (string, []string) {
	switch {
	case t.Object != "":
		switch method {
		case http.MethodGet:
			return swiftcore.OpGetObject, nil
		case http.MethodHead:
			return swiftcore.OpHeadObject, nil
		case http.MethodPut:
			if hdr.Get("X-Copy-From") != "" {
				return swiftcore.OpCopyObject, nil
			}
			return swiftcore.OpPutObject, nil
		case "COPY":
			return swiftcore.OpCopyObject, nil
		case http.MethodPost:
			return swiftcore.OpPostObject, nil
		case http.MethodDelete:
			return swiftcore.OpDeleteObject, nil
		}
		return "", []string{"COPY", "DELETE", "GET", "HEAD", "POST", "PUT"}
	case t.Container != "":
		switch method {
		case http.MethodGet:
			return swiftcore.OpGetContainer, nil
		case http.MethodHead:
			return swiftcore.OpHeadContainer, nil
		case http.MethodPut:
			return swiftcore.OpPutContainer, nil
		case http.MethodPost:
			return swiftcore.OpPostContainer, nil
		case http.MethodDelete:
			return swiftcore.OpDeleteContainer, nil
		}
		return "", []string{"DELETE", "GET", "HEAD", "POST", "PUT"}
	default:
		switch method {
		case http.MethodGet:
			return swiftcore.OpGetAccount, nil
		case http.MethodHead:
			return swiftcore.OpHeadAccount, nil
		case http.MethodPost:
			return swiftcore.OpPostAccount, nil
		}
		// Accounts are created and deleted by Cairn's tenant administration, not by Swift's
		// allow_account_management PUT and DELETE.
		return "", []string{"GET", "HEAD", "POST"}
	}
}

func (h *Handler) ops(op string) swiftcore.OpFunc {
	switch op {
	case swiftcore.OpGetAccount, swiftcore.OpHeadAccount:
		return h.getAccount
	case swiftcore.OpPostAccount:
		return h.postAccount
	case swiftcore.OpGetContainer, swiftcore.OpHeadContainer:
		return h.getContainer
	case swiftcore.OpPutContainer:
		return h.putContainer
	case swiftcore.OpPostContainer:
		return h.postContainer
	case swiftcore.OpDeleteContainer:
		return h.deleteContainer
	case swiftcore.OpGetObject, swiftcore.OpHeadObject:
		return h.getObject
	case swiftcore.OpPutObject:
		return h.putObject
	case swiftcore.OpCopyObject:
		return h.copyObject
	case swiftcore.OpPostObject:
		return h.postObject
	case swiftcore.OpDeleteObject:
		return h.deleteObject
	}
	return nil
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	switch r.URL.Path {
	case authPath, authPath + "/":
		rq.Op = swiftcore.OpAuth
		return h.getToken(w, r, rq)
	case infoPath:
		rq.Op = swiftcore.OpInfo
		if r.Method == http.MethodOptions {
			return h.options(w, r, rq, []string{"GET", "HEAD"})
		}
		return h.info(w, r)
	}
	if r.URL.Path == "/v1" || r.URL.Path == "/v1/" {
		return swiftcore.ErrPreconditionFailed.WithText("Bad URL").AsHTML() // a version without an account
	}
	t, ok := parsePath(r.URL.Path)
	if !ok {
		return fmt.Errorf("path %q: %w", r.URL.Path, swiftcore.ErrNotFound)
	}
	rq.Account, rq.Container, rq.Object = t.Account, t.Container, t.Object
	tenant, hasPrefix := strings.CutPrefix(t.Account, resellerPrefix)
	rq.Tenant = tenant
	if r.Method == http.MethodOptions {
		_, allow := route("", nil, t)
		return h.options(w, r, rq, allow)
	}
	if t.Object != "" {
		r = r.WithContext(swiftcore.WithContainerMemo(r.Context()))
	}
	if t.Object != "" && h.QuoteEtags(r.Context(), rq) {
		w = &swiftcore.EtagQuoter{ResponseWriter: w}
	}
	if origin := r.Header.Get("Origin"); origin != "" && t.Container != "" {
		w = &corsWriter{ResponseWriter: w, rules: h.corsOf(r.Context(), rq), origin: origin}
	}
	// Authenticate before anything else, so that a caller with a bad token learns nothing. A
	// temp URL stands in for a token.
	scope, err := h.tu.Check(r, rq)
	if err != nil {
		return err
	}
	if scope != nil {
		rq.TempURL = scope
		if err := tempurl.PrepareRequest(r); err != nil {
			return err
		}
		w = tempurl.NewWriter(w, r, scope, rq.Object)
	} else if err := h.authenticate(r, rq); err != nil {
		return err
	}
	if strings.HasPrefix(tenant, meta.ReservedPrefix) {
		return fmt.Errorf("account %q is reserved: %w", t.Account, swiftcore.ErrNotFound) // Cairn's own (name index, expiry queue)
	}
	if !hasPrefix || tenant == "" {
		return fmt.Errorf("account %q outside the AUTH_ prefix: %w", t.Account, swiftcore.ErrForbidden)
	}
	// Swift's bulk middleware answers ?bulk-delete on any path of the account; the body names
	// what to delete.
	if (r.Method == http.MethodPost || r.Method == http.MethodDelete) && r.URL.Query().Has("bulk-delete") {
		rq.Op = swiftcore.OpBulkDelete
		if rq.Anonymous {
			return rq.Refused("bulk delete")
		}
		if err := swiftcore.CheckRequest(r, rq); err != nil {
			return err
		}
		return h.bulk.Delete(w, r, rq)
	}
	if r.Method == http.MethodPut && r.URL.Query().Has("extract-archive") {
		rq.Op = swiftcore.OpBulkUpload
		if rq.Anonymous {
			return rq.Refused("bulk upload") // each container and object is decided as it is made
		}
		return h.bulk.ExtractArchive(w, r, rq, r.URL.Query().Get("extract-archive"))
	}
	op, allow := route(r.Method, r.Header, t)
	if op == "" {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return swiftcore.ErrMethodNotAllowed
	}
	rq.Op = op
	if err := swiftcore.CheckRequest(r, rq); err != nil {
		return err
	}
	if err := h.CheckAccess(r, rq); err != nil {
		return err
	}
	if staticweb.WebMode(r, rq) {
		if handled, err := h.web.ServeWeb(w, r, rq); handled || err != nil {
			return err
		}
	}
	if t.Object != "" {
		if handled, err := h.ver.ServeObjectVersioning(w, r, rq, op); handled {
			return err
		}
	}
	return h.ops(op)(w, r, rq)
}

// options answers OPTIONS as Swift does: the allowed methods, without authentication; with an
// Origin it is a CORS preflight, answered from the container's CORS settings (cors.go).
func (h *Handler) options(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, allow []string) error {
	rq.Op = swiftcore.OpOptions
	allow = append(allow, "OPTIONS")
	w.Header().Set("Allow", strings.Join(allow, ", "))
	if r.Header.Get("Origin") != "" {
		return h.preflight(w, r, rq, allow)
	}
	swiftcore.WriteStatus(w, r, http.StatusOK)
	return nil
}
