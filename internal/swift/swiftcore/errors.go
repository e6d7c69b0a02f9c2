package swiftcore

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

// Error is an error as Swift puts it on the wire: a status and a body. Swift answers most
// errors with a small HTML page (from its swob response classes) and the errors its constraint
// checks raise with one plain-text line; both kinds live in this one table so that every answer
// of the front end has the wording clients and people know from Swift.
type Error struct {
	Status      int
	Body        string
	ContentType string
}

const (
	ContentTypeHTML  = "text/html; charset=UTF-8"
	ContentTypePlain = "text/plain"
)

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Body) }

// HTTPStatus lets errors of internal/swift/swiftwire match these by status.
func (e *Error) HTTPStatus() int { return e.Status }

// Is makes a re-worded error match the sentinel it came from.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status
}

// WithText returns the same status with a plain-text body, as Swift's constraint checks answer
// ("Metadata name too long: ...").
func (e *Error) WithText(format string, args ...any) *Error {
	return &Error{Status: e.Status, Body: fmt.Sprintf(format, args...), ContentType: ContentTypePlain}
}

// StatusLine is the status as Swift's bulk answers name it ("404 Not Found").
func (e *Error) StatusLine() string {
	if e.Status == 499 {
		return "499 Client Disconnect"
	}
	return strconv.Itoa(e.Status) + " " + http.StatusText(e.Status)
}

// AsHTML labels a plain-text body as HTML, as Swift does for the texts its middlewares pass to
// an HTTPException (copy's "Destination header required", for example).
func (e *Error) AsHTML() *Error {
	return &Error{Status: e.Status, Body: e.Body, ContentType: ContentTypeHTML}
}

func htmlError(status int, title, text string) *Error {
	return &Error{Status: status, Body: "<html><h1>" + title + "</h1><p>" + text + "</p></html>", ContentType: ContentTypeHTML}
}

// The error table: Swift 2.30's texts for each status.
var (
	ErrBadRequest          = htmlError(http.StatusBadRequest, "Bad Request", "The server could not comply with the request since it is either malformed or otherwise incorrect.")
	ErrUnauthorized        = htmlError(http.StatusUnauthorized, "Unauthorized", "This server could not verify that you are authorized to access the document you requested.")
	ErrForbidden           = htmlError(http.StatusForbidden, "Forbidden", "Access was denied to this resource.")
	ErrNotFound            = htmlError(http.StatusNotFound, "Not Found", "The resource could not be found.")
	ErrMethodNotAllowed    = htmlError(http.StatusMethodNotAllowed, "Method Not Allowed", "The method is not allowed for this resource.")
	ErrNotAcceptable       = htmlError(http.StatusNotAcceptable, "Not Acceptable", "The resource is not available in a format acceptable to your browser.")
	errRequestTimeout      = htmlError(http.StatusRequestTimeout, "Request Timeout", "The server has waited too long for the request to be sent by the client.")
	ErrConflict            = htmlError(http.StatusConflict, "Conflict", "There was a conflict when trying to complete your request.")
	ErrLengthRequired      = htmlError(http.StatusLengthRequired, "Length Required", "Length Required")
	ErrPreconditionFailed  = htmlError(http.StatusPreconditionFailed, "Precondition Failed", "A precondition for this request was not met.")
	ErrTooLarge            = &Error{Status: http.StatusRequestEntityTooLarge, Body: "Your request is too large.", ContentType: ContentTypePlain}
	ErrRangeNotSatisfiable = htmlError(http.StatusRequestedRangeNotSatisfiable, "Requested Range Not Satisfiable", "The Range requested is not available.")
	ErrUnprocessable       = htmlError(http.StatusUnprocessableEntity, "Unprocessable Entity", "Unable to process the contained instructions")
	errClientDisconnect    = htmlError(499, "Client Disconnect", "The client was disconnected during request.")
	errInternal            = htmlError(http.StatusInternalServerError, "Internal Error", "The server has either erred or is incapable of performing the requested operation.")
	ErrNotImplemented      = htmlError(http.StatusNotImplemented, "Not Implemented", "The server has no support for this request.")
	ErrUnavailable         = htmlError(http.StatusServiceUnavailable, "Service Unavailable", "The server is currently unavailable. Please try again at a later time.")
	// ErrOverloaded is ErrUnavailable for a request the server will not serve now, because too
	// many are in flight (ServeOverloaded): shedding load, not a failure to log.
	ErrOverloaded          = htmlError(http.StatusServiceUnavailable, "Service Unavailable", "The server is currently unavailable. Please try again at a later time.")
	errInsufficientStorage = htmlError(http.StatusInsufficientStorage, "Insufficient Storage", "There was not enough space to save the resource. Drive: unknown")

	// errNotModified carries no body (a 304 never has one).
	errNotModified = &Error{Status: http.StatusNotModified}
)

// ToError maps any error to its wire form: the front end's own errors as they are, the
// shared sentinels of the lower layers by the table below, anything else to 500.
func ToError(err error) *Error {
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	var we *swiftwire.Error
	if errors.As(err, &we) {
		ct := ContentTypePlain
		if we.HTML {
			ct = ContentTypeHTML
		}
		return &Error{Status: we.Status, Body: we.Body, ContentType: ct}
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return ErrTooLarge
	case errors.Is(err, httpwire.ErrBodyTimeout):
		return errRequestTimeout
	case errors.Is(err, meta.ErrNotFound), errors.Is(err, ErrNoAccount):
		return ErrNotFound
	case errors.Is(err, meta.ErrNotEmpty), errors.Is(err, meta.ErrConflict), errors.Is(err, meta.ErrExists), errors.Is(err, meta.ErrConditionalConflict):
		return ErrConflict
	case errors.Is(err, meta.ErrPreconditionFailed):
		return ErrPreconditionFailed
	case errors.Is(err, swiftwire.ErrNotAcceptable):
		return ErrNotAcceptable
	case errors.Is(err, meta.ErrInvalidRange):
		return ErrRangeNotSatisfiable
	case errors.Is(err, meta.ErrInvalidName):
		return ErrBadRequest
	case errors.Is(err, meta.ErrIncompleteBody), errors.Is(err, context.Canceled):
		return errClientDisconnect
	case errors.Is(err, meta.ErrBodyTooLong):
		return ErrBadRequest
	case errors.Is(err, context.DeadlineExceeded):
		return errRequestTimeout
	case errors.Is(err, meta.ErrInsufficientStorage):
		return errInsufficientStorage
	case errors.Is(err, meta.ErrUnavailable):
		return ErrUnavailable
	case errors.Is(err, policy.ErrNotSupported):
		// A container of a policy erasure-coded with Swift's code (made by Swift's proxy):
		// its fragments are liberasurecode's, which Cairn does not read.
		return ErrNotImplemented
	}
	return errInternal
}

// WriteError writes err as Swift would. HEAD answers carry no body.
func (h *Server) WriteError(w http.ResponseWriter, r *http.Request, rq *Request, err error) {
	se := ToError(err)
	if se.Status >= 500 && se != ErrOverloaded {
		h.Log.ErrorContext(r.Context(), "swift request failed", "trans_id", rq.TransID, "op", rq.Op, "err", err)
	} else {
		h.Log.DebugContext(r.Context(), "swift request refused", "trans_id", rq.TransID, "op", rq.Op, "status", se.Status, "err", err)
	}
	hdr := w.Header()
	if se.Status == http.StatusUnauthorized {
		realm := "unknown"
		if rq.Account != "" {
			realm = rq.Account
		}
		// The realm comes from the URL: quoted, so that it cannot end the header value.
		hdr.Set("Www-Authenticate", `Swift realm="`+swiftwire.PyQuote(realm)+`"`)
	}
	if se.Status == http.StatusNotModified {
		// A 304 keeps the object's headers (Content-Type included) and has no body.
		hdr.Del("Content-Length")
		w.WriteHeader(se.Status)
		return
	}
	hdr.Set("Content-Type", se.ContentType)
	if r.Method == http.MethodHead || se.Body == "" {
		hdr.Set("Content-Length", "0")
		w.WriteHeader(se.Status)
		return
	}
	hdr.Set("Content-Length", fmt.Sprint(len(se.Body)))
	w.WriteHeader(se.Status)
	w.Write([]byte(se.Body))
}
