package postpolicy

import (
	"errors"
	"fmt"
)

// Sentinel errors. Each corresponds to one S3 error code (given in its comment as Code / HTTP
// status), so that the front end translates them in its one table. Refusals come as *Error,
// which wraps one of these with the message S3 gives the client; authentication failures wrap
// sigv4's sentinels instead (ErrInvalidAccessKeyID, ErrSignatureDoesNotMatch).
var (
	// ErrMalformedPOSTRequest: the body is not well-formed multipart/form-data.
	// S3: MalformedPOSTRequest / 400.
	ErrMalformedPOSTRequest = errors.New("postpolicy: malformed POST request")

	// ErrPreDataTooLarge: the fields before the file are larger than MaxFieldBytes.
	// S3: MaxPostPreDataLengthExceededError / 400.
	ErrPreDataTooLarge = errors.New("postpolicy: fields before the file too large")

	// ErrFileCount: the form has no file field. S3: IncorrectNumberOfFilesInPostRequest / 400.
	ErrFileCount = errors.New("postpolicy: no file in the form")

	// ErrInvalidArgument: a field is missing, repeated or has a value S3 does not take (the
	// key, a credential, the algorithm). S3: InvalidArgument / 400.
	ErrInvalidArgument = errors.New("postpolicy: invalid argument")

	// ErrInvalidPolicyDocument: the policy does not decode (base64, JSON, expiration,
	// conditions). S3: InvalidPolicyDocument / 400.
	ErrInvalidPolicyDocument = errors.New("postpolicy: invalid policy document")

	// ErrPolicyDenied: the policy is valid but the form does not satisfy it (expired, a
	// condition failed, a field no condition covers). S3: AccessDenied / 403.
	ErrPolicyDenied = errors.New("postpolicy: denied by policy")

	// ErrEntityTooLarge, ErrEntityTooSmall: the file is outside the policy's
	// content-length-range (or larger than the server takes). S3: EntityTooLarge /
	// EntityTooSmall, 400.
	ErrEntityTooLarge = errors.New("postpolicy: file too large")
	ErrEntityTooSmall = errors.New("postpolicy: file too small")
)

// Error is a refusal with the message S3 gives for it. It wraps one of the sentinels.
type Error struct {
	Kind    error  // one of the sentinels above
	Message string // S3's text for the client
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Kind }

func refuse(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// missingField is S3's answer to a form without a field it needs (or with it after the file).
func missingField(name string) *Error {
	return refuse(ErrInvalidArgument, "Bucket POST must contain a field named '%s'.  If it is specified, please check the order of the fields.", name)
}
