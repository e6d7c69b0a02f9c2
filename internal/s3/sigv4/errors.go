package sigv4

import (
	"errors"
	"fmt"
)

// Sentinel errors. Each maps to exactly one S3 error code (given in its
// comment as Code / HTTP status), so the S3 front end can translate them in
// one table with errors.Is. Returned errors wrap these with context; the
// wrapped message is meant for logs, the S3 message for clients.
var (
	// ErrAnonymous: the request carries no authentication at all.
	// Cairn has no anonymous access. S3: AccessDenied / 403
	// ("Access Denied").
	ErrAnonymous = errors.New("sigv4: anonymous request")

	// ErrSignatureV2Unsupported: the request uses Signature Version 2
	// ("Authorization: AWS AK:sig" or AWSAccessKeyId/Signature query).
	// S3: InvalidRequest / 400 ("The authorization mechanism you have
	// provided is not supported. Please use AWS4-HMAC-SHA256.").
	ErrSignatureV2Unsupported = errors.New("sigv4: signature version 2 is not supported")

	// ErrUnsupportedAuthType: an Authorization header with an unknown
	// scheme (e.g. Bearer, or SigV4a's AWS4-ECDSA-P256-SHA256).
	// S3: InvalidArgument / 400 ("Unsupported Authorization Type").
	ErrUnsupportedAuthType = errors.New("sigv4: unsupported authorization type")

	// ErrMalformedV2Header: an "AWS ..." Authorization header that is not
	// "AWS AccessKeyId:Signature". S3: InvalidArgument / 400 ("AWS
	// authorization header is invalid.  Expected AwsAccessKeyId:signature").
	ErrMalformedV2Header = errors.New("sigv4: malformed signature version 2 header")

	// ErrMultipleAuthMechanisms: both an Authorization header and
	// authentication query parameters are present.
	// S3: InvalidArgument / 400 ("Only one auth mechanism allowed").
	ErrMultipleAuthMechanisms = errors.New("sigv4: more than one auth mechanism")

	// ErrAuthorizationHeaderMalformed: the Authorization header (or its
	// credential scope) cannot be parsed or is inconsistent with the
	// request. S3: AuthorizationHeaderMalformed / 400.
	ErrAuthorizationHeaderMalformed = errors.New("sigv4: authorization header malformed")

	// ErrAuthorizationQueryParametersError: presigned-URL query
	// parameters are missing or malformed (including X-Amz-Expires out of
	// range). S3: AuthorizationQueryParametersError / 400.
	ErrAuthorizationQueryParametersError = errors.New("sigv4: authorization query parameters malformed")

	// ErrExpiresNotNumber, ErrExpiresNegative and ErrExpiresTooLong are the
	// ErrAuthorizationQueryParametersError cases a client most needs told
	// apart: X-Amz-Expires is not a 64-bit integer, is below zero, or is
	// beyond a week.
	ErrExpiresNotNumber = fmt.Errorf("%w: X-Amz-Expires is not a number", ErrAuthorizationQueryParametersError)
	ErrExpiresNegative  = fmt.Errorf("%w: X-Amz-Expires is negative", ErrAuthorizationQueryParametersError)
	ErrExpiresTooLong   = fmt.Errorf("%w: X-Amz-Expires is beyond a week", ErrAuthorizationQueryParametersError)

	// ErrInvalidAccessKeyID: the access key is unknown to the
	// CredentialStore. S3: InvalidAccessKeyId / 403 ("The AWS access key
	// Id you provided does not exist in our records.").
	ErrInvalidAccessKeyID = errors.New("sigv4: invalid access key id")

	// ErrSignatureDoesNotMatch: the request, chunk or trailer signature
	// is wrong. S3: SignatureDoesNotMatch / 403.
	ErrSignatureDoesNotMatch = errors.New("sigv4: signature does not match")

	// ErrRequestTimeTooSkewed: X-Amz-Date/Date is more than the allowed
	// skew (15 minutes) away from the server clock.
	// S3: RequestTimeTooSkewed / 403.
	ErrRequestTimeTooSkewed = errors.New("sigv4: request time too skewed")

	// ErrRequestExpired: a presigned URL is past X-Amz-Date+X-Amz-Expires.
	// S3: AccessDenied / 403 ("Request has expired").
	ErrRequestExpired = errors.New("sigv4: request has expired")

	// ErrInvalidExpiresV2: a SigV2 presigned URL's Expires is not seconds since the epoch
	// within 32 bits. S3: AccessDenied / 403 ("Invalid date (should be seconds since
	// epoch)").
	ErrInvalidExpiresV2 = errors.New("sigv4: invalid Expires")

	// ErrRequestNotYetValid: a presigned URL's X-Amz-Date is further in
	// the future than the allowed skew.
	// S3: AccessDenied / 403 ("Request is not valid yet").
	ErrRequestNotYetValid = errors.New("sigv4: request is not valid yet")

	// ErrMissingDate: neither X-Amz-Date nor Date is usable.
	// S3: AccessDenied / 403 ("AWS authentication requires a valid Date
	// or x-amz-date header").
	ErrMissingDate = errors.New("sigv4: missing or invalid request date")

	// ErrHeadersNotSigned: an x-amz-* header is present but not covered
	// by SignedHeaders, so it could have been added by anyone.
	// S3: AccessDenied / 403 ("There were headers present in the request
	// which were not signed").
	ErrHeadersNotSigned = errors.New("sigv4: request has unsigned x-amz headers")

	// ErrMissingContentSHA256: header-authenticated request without
	// x-amz-content-sha256. S3: InvalidRequest / 400 ("Missing required
	// header for this request: x-amz-content-sha256").
	ErrMissingContentSHA256 = errors.New("sigv4: missing x-amz-content-sha256")

	// ErrInvalidContentSHA256: x-amz-content-sha256 is neither a hex
	// SHA-256 nor one of the accepted special values.
	// S3: InvalidArgument / 400 ("x-amz-content-sha256 must be
	// UNSIGNED-PAYLOAD, STREAMING-..., or a valid sha256 value.").
	ErrInvalidContentSHA256 = errors.New("sigv4: invalid x-amz-content-sha256")

	// ErrMissingSecurityHeader: a header required by the chosen payload
	// mode is missing (x-amz-decoded-content-length for STREAMING-*).
	// S3: MissingSecurityHeader / 400 ("Your request was missing a
	// required header").
	ErrMissingSecurityHeader = errors.New("sigv4: missing required header")

	// ErrContentSHA256Mismatch: the body's SHA-256 differs from
	// x-amz-content-sha256. Reported at EOF so the write is aborted
	// before commit. S3: XAmzContentSHA256Mismatch / 400 ("The provided
	// 'x-amz-content-sha256' header does not match what was computed.").
	ErrContentSHA256Mismatch = errors.New("sigv4: x-amz-content-sha256 mismatch")

	// ErrIncompleteBody: the body ended early, or the aws-chunked payload
	// does not decode to x-amz-decoded-content-length bytes.
	// S3: IncompleteBody / 400 ("You did not provide the number of bytes
	// specified by the Content-Length HTTP header").
	ErrIncompleteBody = errors.New("sigv4: incomplete body")

	// ErrMalformedChunkedEncoding: aws-chunked framing is broken (bad hex
	// size, missing CRLF, over-long line, chunk larger than the limit,
	// bad chunk-signature extension).
	// S3: InvalidRequest / 400 ("Malformed aws-chunked encoding").
	ErrMalformedChunkedEncoding = errors.New("sigv4: malformed aws-chunked encoding")

	// ErrMalformedTrailer: aws-chunked trailing headers are malformed,
	// undeclared in x-amz-trailer, missing, or (signed-trailer variant)
	// lack x-amz-trailer-signature. S3: MalformedTrailerError / 400
	// ("The request contained trailing data that was not well-formed or
	// did not conform to our published schema.").
	ErrMalformedTrailer = errors.New("sigv4: malformed trailer")

	// ErrUnknownAccessKey is what a CredentialStore returns (possibly
	// wrapped) for an access key it does not know. Verify turns it into
	// ErrInvalidAccessKeyID; the front end never sees it directly.
	ErrUnknownAccessKey = errors.New("sigv4: unknown access key")
)

// MalformedError is an ErrAuthorizationHeaderMalformed with what S3 says of it: Detail follows
// "The authorization header is malformed; " in S3's message, and Region, when the scope names
// another region, is the region expected (S3's Region element).
type MalformedError struct {
	Detail string
	Region string
}

func (e *MalformedError) Error() string {
	return ErrAuthorizationHeaderMalformed.Error() + ": " + e.Detail
}

// Is makes errors.Is(err, ErrAuthorizationHeaderMalformed) true.
func (e *MalformedError) Is(target error) bool { return target == ErrAuthorizationHeaderMalformed }

// S3Message is S3's message for this header.
func (e *MalformedError) S3Message() string {
	return "The authorization header is malformed; " + e.Detail
}

func malformedHeader(format string, args ...any) error {
	return &MalformedError{Detail: fmt.Sprintf(format, args...)}
}
