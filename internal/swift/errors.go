package swift

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// swiftError is an error as Swift puts it on the wire: a status and a body. Swift answers most
// errors with a small HTML page (from its swob response classes) and the errors its constraint
// checks raise with one plain-text line; both kinds live in this one table so that every answer
// of the front end has the wording clients and people know from Swift.
type swiftError struct {
	status      int
	body        string
	contentType string
}

const (
	contentTypeHTML  = "text/html; charset=UTF-8"
	contentTypePlain = "text/plain"
)

func (e *swiftError) Error() string { return fmt.Sprintf("%d %s", e.status, e.body) }

// HTTPStatus lets errors of internal/swift/swiftwire match these by status.
func (e *swiftError) HTTPStatus() int { return e.status }

// Is makes a re-worded error match the sentinel it came from.
func (e *swiftError) Is(target error) bool {
	t, ok := target.(*swiftError)
	return ok && t.status == e.status
}

// withText returns the same status with a plain-text body, as Swift's constraint checks answer
// ("Metadata name too long: ...").
func (e *swiftError) withText(format string, args ...any) *swiftError {
	return &swiftError{status: e.status, body: fmt.Sprintf(format, args...), contentType: contentTypePlain}
}

// statusLine is the status as Swift's bulk answers name it ("404 Not Found").
func (e *swiftError) statusLine() string {
	if e.status == 499 {
		return "499 Client Disconnect"
	}
	return strconv.Itoa(e.status) + " " + http.StatusText(e.status)
}

// asHTML labels a plain-text body as HTML, as Swift does for the texts its middlewares pass to
// an HTTPException (copy's "Destination header required", for example).
func (e *swiftError) asHTML() *swiftError {
	return &swiftError{status: e.status, body: e.body, contentType: contentTypeHTML}
}

func htmlError(status int, title, text string) *swiftError {
	return &swiftError{status: status, body: "<html><h1>" + title + "</h1><p>" + text + "</p></html>", contentType: contentTypeHTML}
}

// The error table: Swift 2.30's texts for each status.
var (
	errBadRequest          = htmlError(http.StatusBadRequest, "Bad Request", "The server could not comply with the request since it is either malformed or otherwise incorrect.")
	errUnauthorized        = htmlError(http.StatusUnauthorized, "Unauthorized", "This server could not verify that you are authorized to access the document you requested.")
	errForbidden           = htmlError(http.StatusForbidden, "Forbidden", "Access was denied to this resource.")
	errNotFound            = htmlError(http.StatusNotFound, "Not Found", "The resource could not be found.")
	errMethodNotAllowed    = htmlError(http.StatusMethodNotAllowed, "Method Not Allowed", "The method is not allowed for this resource.")
	errNotAcceptable       = htmlError(http.StatusNotAcceptable, "Not Acceptable", "The resource is not available in a format acceptable to your browser.")
	errRequestTimeout      = htmlError(http.StatusRequestTimeout, "Request Timeout", "The server has waited too long for the request to be sent by the client.")
	errConflict            = htmlError(http.StatusConflict, "Conflict", "There was a conflict when trying to complete your request.")
	errLengthRequired      = htmlError(http.StatusLengthRequired, "Length Required", "Length Required")
	errPreconditionFailed  = htmlError(http.StatusPreconditionFailed, "Precondition Failed", "A precondition for this request was not met.")
	errTooLarge            = &swiftError{status: http.StatusRequestEntityTooLarge, body: "Your request is too large.", contentType: contentTypePlain}
	errRangeNotSatisfiable = htmlError(http.StatusRequestedRangeNotSatisfiable, "Requested Range Not Satisfiable", "The Range requested is not available.")
	errUnprocessable       = htmlError(http.StatusUnprocessableEntity, "Unprocessable Entity", "Unable to process the contained instructions")
	errClientDisconnect    = htmlError(499, "Client Disconnect", "The client was disconnected during request.")
	errInternal            = htmlError(http.StatusInternalServerError, "Internal Error", "The server has either erred or is incapable of performing the requested operation.")
	errNotImplemented      = htmlError(http.StatusNotImplemented, "Not Implemented", "The server has no support for this request.")
	errUnavailable         = htmlError(http.StatusServiceUnavailable, "Service Unavailable", "The server is currently unavailable. Please try again at a later time.")
	// errOverloaded is errUnavailable for a request the server will not serve now, because too
	// many are in flight (ServeOverloaded): shedding load, not a failure to log.
	errOverloaded          = htmlError(http.StatusServiceUnavailable, "Service Unavailable", "The server is currently unavailable. Please try again at a later time.")
	errInsufficientStorage = htmlError(http.StatusInsufficientStorage, "Insufficient Storage", "There was not enough space to save the resource. Drive: unknown")

	// errNotModified carries no body (a 304 never has one).
	errNotModified = &swiftError{status: http.StatusNotModified}
)

// toSwiftError maps any error to its wire form: the front end's own errors as they are, the
// shared sentinels of the lower layers by the table below, anything else to 500.
func toSwiftError(err error) *swiftError {
	var se *swiftError
	if errors.As(err, &se) {
		return se
	}
	var we *swiftwire.Error
	if errors.As(err, &we) {
		ct := contentTypePlain
		if we.HTML {
			ct = contentTypeHTML
		}
		return &swiftError{status: we.Status, body: we.Body, contentType: ct}
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return errTooLarge
	case errors.Is(err, httpwire.ErrBodyTimeout):
		return errRequestTimeout
	case errors.Is(err, meta.ErrNotFound), errors.Is(err, ErrNoAccount):
		return errNotFound
	case errors.Is(err, meta.ErrNotEmpty), errors.Is(err, meta.ErrConflict), errors.Is(err, meta.ErrExists):
		return errConflict
	case errors.Is(err, meta.ErrPreconditionFailed):
		return errPreconditionFailed
	case errors.Is(err, swiftwire.ErrNotAcceptable):
		return errNotAcceptable
	case errors.Is(err, meta.ErrInvalidRange):
		return errRangeNotSatisfiable
	case errors.Is(err, meta.ErrInvalidName):
		return errBadRequest
	case errors.Is(err, meta.ErrIncompleteBody), errors.Is(err, context.Canceled):
		return errClientDisconnect
	case errors.Is(err, meta.ErrBodyTooLong):
		return errBadRequest
	case errors.Is(err, context.DeadlineExceeded):
		return errRequestTimeout
	case errors.Is(err, meta.ErrInsufficientStorage):
		return errInsufficientStorage
	case errors.Is(err, meta.ErrUnavailable):
		return errUnavailable
	case errors.Is(err, policy.ErrNotSupported):
		// A container of a policy erasure-coded with Swift's code (made by Swift's proxy):
		// its fragments are liberasurecode's, which Cairn does not read.
		return errNotImplemented
	}
	return errInternal
}

// writeError writes err as Swift would. HEAD answers carry no body.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, rq *request, err error) {
	se := toSwiftError(err)
	if se.status >= 500 && se != errOverloaded {
		h.log.ErrorContext(r.Context(), "swift request failed", "trans_id", rq.transID, "op", rq.op, "err", err)
	} else {
		h.log.DebugContext(r.Context(), "swift request refused", "trans_id", rq.transID, "op", rq.op, "status", se.status, "err", err)
	}
	hdr := w.Header()
	if se.status == http.StatusUnauthorized {
		realm := "unknown"
		if rq.account != "" {
			realm = rq.account
		}
		// The realm comes from the URL: quoted, so that it cannot end the header value.
		hdr.Set("Www-Authenticate", `Swift realm="`+swiftwire.PyQuote(realm)+`"`)
	}
	if se.status == http.StatusNotModified {
		// A 304 keeps the object's headers (Content-Type included) and has no body.
		hdr.Del("Content-Length")
		w.WriteHeader(se.status)
		return
	}
	hdr.Set("Content-Type", se.contentType)
	if r.Method == http.MethodHead || se.body == "" {
		hdr.Set("Content-Length", "0")
		w.WriteHeader(se.status)
		return
	}
	hdr.Set("Content-Length", fmt.Sprint(len(se.body)))
	w.WriteHeader(se.status)
	w.Write([]byte(se.body))
}
