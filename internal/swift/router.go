package swift

import (
	"fmt"
	"net/http"
	"strings"
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
			return options(w, r, rq, []string{"GET", "HEAD"})
		}
		return h.info(w, r)
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
		return options(w, r, rq, allow)
	}
	// Authenticate before anything else, so that an anonymous caller learns nothing.
	if err := h.identify(r, rq); err != nil {
		return err
	}
	if !hasPrefix || tenant == "" {
		return rq.denied("account %q outside the AUTH_ prefix", t.account)
	}
	if t.container == "" && (r.Method == http.MethodPost || r.Method == http.MethodDelete) && r.URL.Query().Has("bulk-delete") {
		rq.op = opBulkDelete
		if !rq.owner() {
			return rq.denied("bulk delete by a caller who does not own %s", rq.account)
		}
		if err := checkRequest(r, rq); err != nil {
			return err
		}
		return h.bulkDelete(w, r, rq)
	}
	op, allow := route(r.Method, r.Header, t)
	if op == "" {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return errMethodNotAllowed
	}
	rq.op = op
	if err := h.checkAccess(r.Context(), r, rq); err != nil {
		return err
	}
	if err := checkRequest(r, rq); err != nil {
		return err
	}
	return h.ops(op)(w, r, rq)
}

// options answers OPTIONS as Swift does without CORS settings: the allowed methods, without
// authentication; a CORS preflight (with Origin) is refused, since no container allows any
// origin (CORS is not supported).
func options(w http.ResponseWriter, r *http.Request, rq *request, allow []string) error {
	rq.op = opOptions
	w.Header().Set("Allow", strings.Join(append(allow, "OPTIONS"), ", "))
	if r.Header.Get("Origin") != "" {
		return fmt.Errorf("CORS preflight: %w", errUnauthorized)
	}
	writeStatus(w, r, http.StatusOK)
	return nil
}
