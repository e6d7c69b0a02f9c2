// Package swiftwire owns the OpenStack Swift API's wire rules that need no server: the limits on
// names and metadata and how requests carry them, timestamps and dates, listing formats and
// their rendering, static large object manifests, byte ranges, TempURL signatures, and
// Python-compatible quoting (Swift's answers are Python's, byte for byte). It is pure: strings
// and headers in, values or a refusal out. internal/swift, the front end, serves requests with
// these rules; keeping them apart keeps the handlers about serving, and the rules testable alone.
package swiftwire

import "fmt"

// Error is a refusal in Swift's words: the status and the body Swift answers it with, a plain
// text line from its constraint checks, or (HTML) one of its swob error pages' texts.
type Error struct {
	Status int
	Body   string
	HTML   bool
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Body) }

// Is makes an Error match any error of the same status that says what its status is (the front
// end's own error values do), so that errors.Is(err, <the front end's 400>) holds for a 400 here.
func (e *Error) Is(target error) bool {
	t, ok := target.(interface{ HTTPStatus() int })
	return ok && t.HTTPStatus() == e.Status
}

func refusal(status int, format string, args ...any) *Error {
	return &Error{Status: status, Body: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400 with Swift's text.
func BadRequest(format string, args ...any) *Error { return refusal(400, format, args...) }

// PreconditionFailed is a 412 with Swift's text.
func PreconditionFailed(format string, args ...any) *Error { return refusal(412, format, args...) }

// asHTML labels a refusal's text as HTML, as Swift does for the texts its middlewares pass to
// an HTTPException.
func (e *Error) asHTML() *Error { c := *e; c.HTML = true; return &c }
