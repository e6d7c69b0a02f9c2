package swift

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
)

// Operation names, the "operation" label of the metrics.
const (
	opUnknown         = "Unknown"
	opOptions         = "Options"
	opAuth            = "Auth"
	opInfo            = "Info"
	opGetAccount      = "GetAccount"
	opHeadAccount     = "HeadAccount"
	opPostAccount     = "PostAccount"
	opBulkDelete      = "BulkDelete"
	opBulkUpload      = "BulkUpload"
	opGetContainer    = "GetContainer"
	opHeadContainer   = "HeadContainer"
	opPutContainer    = "PutContainer"
	opPostContainer   = "PostContainer"
	opDeleteContainer = "DeleteContainer"
	opGetObject       = "GetObject"
	opHeadObject      = "HeadObject"
	opPutObject       = "PutObject"
	opCopyObject      = "CopyObject" // PUT with X-Copy-From, or COPY
	opPostObject      = "PostObject"
	opDeleteObject    = "DeleteObject"
)

// opFunc serves one operation. It returns an error instead of writing one, so that every error
// goes through the one table; once it has written a response it must return nil, or
// errAbortResponse when the response broke off midway.
type opFunc func(w http.ResponseWriter, r *http.Request, rq *request) error

// target is what a /v1 path names.
type target struct {
	account, container, object string
}

// parsePath splits /v1/<account>[/<container>[/<object>]]. The object part is kept whole,
// slashes included ("a//b/" is a legal object name). A trailing slash after the account or
// container names the account or container, as in Swift.
func parsePath(path string) (target, bool) {
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok || rest == "" {
		return target{}, false
	}
	parts := strings.SplitN(rest, "/", 3)
	t := target{account: parts[0]}
	if len(parts) > 1 {
		t.container = parts[1]
	}
	if len(parts) > 2 {
		t.object = parts[2]
	}
	if t.account == "" || t.container == "" && t.object != "" {
		return target{}, false
	}
	return t, true
}

// route picks the operation for a method on a target.
func route(method string, hdr http.Header, t target) (string, []string) {
	switch {
	case t.object != "":
		switch method {
		case http.MethodGet:
			return opGetObject, nil
		case http.MethodHead:
			return opHeadObject, nil
		case http.MethodPut:
			if hdr.Get("X-Copy-From") != "" {
				return opCopyObject, nil
			}
			return opPutObject, nil
		case "COPY":
			return opCopyObject, nil
		case http.MethodPost:
			return opPostObject, nil
		case http.MethodDelete:
			return opDeleteObject, nil
		}
		return "", []string{"COPY", "DELETE", "GET", "HEAD", "POST", "PUT"}
	case t.container != "":
		switch method {
		case http.MethodGet:
			return opGetContainer, nil
		case http.MethodHead:
			return opHeadContainer, nil
		case http.MethodPut:
			return opPutContainer, nil
		case http.MethodPost:
			return opPostContainer, nil
		case http.MethodDelete:
			return opDeleteContainer, nil
		}
		return "", []string{"DELETE", "GET", "HEAD", "POST", "PUT"}
	default:
		switch method {
		case http.MethodGet:
			return opGetAccount, nil
		case http.MethodHead:
			return opHeadAccount, nil
		case http.MethodPost:
			return opPostAccount, nil
		}
		// Accounts are created and deleted by Cairn's tenant administration, not by Swift's
		// allow_account_management PUT and DELETE.
		return "", []string{"GET", "HEAD", "POST"}
	}
}

func (h *Handler) ops(op string) opFunc {
	switch op {
	case opGetAccount, opHeadAccount:
		return h.getAccount
	case opPostAccount:
		return h.postAccount
	case opGetContainer, opHeadContainer:
		return h.getContainer
	case opPutContainer:
		return h.putContainer
	case opPostContainer:
		return h.postContainer
	case opDeleteContainer:
		return h.deleteContainer
	case opGetObject, opHeadObject:
		return h.getObject
	case opPutObject:
		return h.putObject
	case opCopyObject:
		return h.copyObject
	case opPostObject:
		return h.postObject
	case opDeleteObject:
		return h.deleteObject
	}
	return nil
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, rq *request) error {
	switch r.URL.Path {
	case authPath, authPath + "/":
		rq.op = opAuth
		return h.getToken(w, r, rq)
	case infoPath:
		rq.op = opInfo
		if r.Method == http.MethodOptions {
			return h.options(w, r, rq, []string{"GET", "HEAD"})
		}
		return h.info(w, r)
	}
	if r.URL.Path == "/v1" || r.URL.Path == "/v1/" {
		return errPreconditionFailed.withText("Bad URL").asHTML() // a version without an account
	}
	t, ok := parsePath(r.URL.Path)
	if !ok {
		return fmt.Errorf("path %q: %w", r.URL.Path, errNotFound)
	}
	rq.account, rq.container, rq.object = t.account, t.container, t.object
	tenant, hasPrefix := strings.CutPrefix(t.account, resellerPrefix)
	rq.tenant = tenant
	if r.Method == http.MethodOptions {
		_, allow := route("", nil, t)
		return h.options(w, r, rq, allow)
	}
	if t.object != "" {
		r = r.WithContext(withContainerMemo(r.Context()))
	}
	if t.object != "" && h.quoteEtags(r.Context(), rq) {
		w = &etagQuoter{ResponseWriter: w}
	}
	if origin := r.Header.Get("Origin"); origin != "" && t.container != "" {
		w = &corsWriter{ResponseWriter: w, rules: h.corsOf(r.Context(), rq), origin: origin}
	}
	// Authenticate before anything else, so that a caller with a bad token learns nothing. A
	// temp URL stands in for a token.
	scope, err := h.checkTempURL(r, rq)
	if err != nil {
		return err
	}
	if scope != nil {
		rq.tempURL = scope
		if err := prepareTempURLRequest(r); err != nil {
			return err
		}
		w = &tempURLWriter{ResponseWriter: w, r: r, scope: scope, name: rq.object}
	} else if err := h.authenticate(r, rq); err != nil {
		return err
	}
	if strings.HasPrefix(tenant, meta.ReservedPrefix) {
		return fmt.Errorf("account %q is reserved: %w", t.account, errNotFound) // Cairn's own (name index, expiry queue)
	}
	if !hasPrefix || tenant == "" {
		return fmt.Errorf("account %q outside the AUTH_ prefix: %w", t.account, errForbidden)
	}
	// Swift's bulk middleware answers ?bulk-delete on any path of the account; the body names
	// what to delete.
	if (r.Method == http.MethodPost || r.Method == http.MethodDelete) && r.URL.Query().Has("bulk-delete") {
		rq.op = opBulkDelete
		if rq.anonymous {
			return rq.refused("bulk delete")
		}
		if err := checkRequest(r, rq); err != nil {
			return err
		}
		return h.bulkDelete(w, r, rq)
	}
	if r.Method == http.MethodPut && r.URL.Query().Has("extract-archive") {
		rq.op = opBulkUpload
		if rq.anonymous {
			return rq.refused("bulk upload") // each container and object is decided as it is made
		}
		return h.extractArchive(w, r, rq, r.URL.Query().Get("extract-archive"))
	}
	op, allow := route(r.Method, r.Header, t)
	if op == "" {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return errMethodNotAllowed
	}
	rq.op = op
	if err := checkRequest(r, rq); err != nil {
		return err
	}
	if err := h.checkAccess(r, rq); err != nil {
		return err
	}
	if webMode(r, rq) {
		if handled, err := h.serveWeb(w, r, rq); handled || err != nil {
			return err
		}
	}
	if t.object != "" {
		if handled, err := h.serveObjectVersioning(w, r, rq, op); handled {
			return err
		}
	}
	return h.ops(op)(w, r, rq)
}

// options answers OPTIONS as Swift does: the allowed methods, without authentication; with an
// Origin it is a CORS preflight, answered from the container's CORS settings (cors.go).
func (h *Handler) options(w http.ResponseWriter, r *http.Request, rq *request, allow []string) error {
	rq.op = opOptions
	allow = append(allow, "OPTIONS")
	w.Header().Set("Allow", strings.Join(allow, ", "))
	if r.Header.Get("Origin") != "" {
		return h.preflight(w, r, rq, allow)
	}
	writeStatus(w, r, http.StatusOK)
	return nil
}
