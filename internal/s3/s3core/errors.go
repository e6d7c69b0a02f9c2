package s3core

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/s3/checksum"
	"github.com/cairn-store/cairn/internal/s3/objattr"
	"github.com/cairn-store/cairn/internal/s3/postpolicy"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/s3/tagging"
)

// APIError is an S3 error as it goes on the wire: code, HTTP status and message. Handlers
// return these (possibly wrapped, or re-messaged with withMessage); errors from other layers
// are translated by the table in toAPIError.
type APIError struct {
	Code    string
	Status  int
	Message string
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

// Is makes a re-messaged error match the sentinel it came from.
func (e *APIError) Is(target error) bool {
	t, ok := target.(*APIError)
	return ok && t.Code == e.Code
}

// WithMessage returns the same S3 error with a more specific message.
func (e *APIError) WithMessage(format string, args ...any) *APIError {
	return &APIError{Code: e.Code, Status: e.Status, Message: fmt.Sprintf(format, args...)}
}

// S3 errors the front end raises itself. Messages are S3's own texts where clients or people
// are likely to recognise them.
var (
	ErrAccessDenied                 = &APIError{"AccessDenied", http.StatusForbidden, "Access Denied"}
	errBadDigest                    = &APIError{"BadDigest", http.StatusBadRequest, "The Content-MD5 you specified did not match what we received."}
	ErrBucketAlreadyOwnedByYou      = &APIError{"BucketAlreadyOwnedByYou", http.StatusConflict, "Your previous request to create the named bucket succeeded and you already own it."}
	errBucketAlreadyExists          = &APIError{"BucketAlreadyExists", http.StatusConflict, "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again."}
	ErrBucketNotEmpty               = &APIError{"BucketNotEmpty", http.StatusConflict, "The bucket you tried to delete is not empty"}
	ErrEntityTooSmall               = &APIError{"EntityTooSmall", http.StatusBadRequest, "Your proposed upload is smaller than the minimum allowed object size."}
	ErrEntityTooLarge               = &APIError{"EntityTooLarge", http.StatusBadRequest, "Your proposed upload exceeds the maximum allowed object size."}
	ErrIncompleteBody               = &APIError{"IncompleteBody", http.StatusBadRequest, "You did not provide the number of bytes specified by the Content-Length HTTP header"}
	ErrInternal                     = &APIError{"InternalError", http.StatusInternalServerError, "We encountered an internal error. Please try again."}
	ErrInvalidArgument              = &APIError{"InvalidArgument", http.StatusBadRequest, "Invalid Argument"}
	errInvalidBucketName            = &APIError{"InvalidBucketName", http.StatusBadRequest, "The specified bucket is not valid."}
	errInvalidDigest                = &APIError{"InvalidDigest", http.StatusBadRequest, "The Content-MD5 you specified is not valid."}
	ErrInvalidLocationConstraint    = &APIError{"InvalidLocationConstraint", http.StatusBadRequest, "The specified location-constraint is not valid"}
	ErrInvalidPart                  = &APIError{"InvalidPart", http.StatusBadRequest, "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."}
	ErrInvalidPartOrder             = &APIError{"InvalidPartOrder", http.StatusBadRequest, "The list of parts was not in ascending order. Parts must be ordered by part number."}
	ErrInvalidRange                 = &APIError{"InvalidRange", http.StatusRequestedRangeNotSatisfiable, "The requested range is not satisfiable"}
	ErrInvalidRequest               = &APIError{"InvalidRequest", http.StatusBadRequest, "Invalid Request"}
	errInvalidURI                   = &APIError{"InvalidURI", http.StatusBadRequest, "Couldn't parse the specified URI."}
	errKeyTooLong                   = &APIError{"KeyTooLongError", http.StatusBadRequest, "Your key is too long"}
	ErrMalformedXML                 = &APIError{"MalformedXML", http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema"}
	ErrMaxMessageLength             = &APIError{"MaxMessageLengthExceeded", http.StatusBadRequest, "Your request was too big."}
	errAuthorizationQueryParameters = &APIError{"AuthorizationQueryParametersError", http.StatusBadRequest, "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters."}
	ErrUserKeyMustBeSpecified       = &APIError{"UserKeyMustBeSpecified", http.StatusBadRequest, "The bucket POST must contain the specified field name. If it is specified, please check the order of the fields."}
	errMetadataTooLarge             = &APIError{"MetadataTooLarge", http.StatusBadRequest, "Your metadata headers exceed the maximum allowed metadata size."}
	ErrMethodNotAllowed             = &APIError{"MethodNotAllowed", http.StatusMethodNotAllowed, "The specified method is not allowed against this resource."}
	errMissingContentLength         = &APIError{"MissingContentLength", http.StatusLengthRequired, "You must provide the Content-Length HTTP header."}
	errMissingRequestBody           = &APIError{"MissingRequestBodyError", http.StatusBadRequest, "Request Body is empty"}
	ErrNoSuchBucket                 = &APIError{"NoSuchBucket", http.StatusNotFound, "The specified bucket does not exist"}
	ErrNoSuchKey                    = &APIError{"NoSuchKey", http.StatusNotFound, "The specified key does not exist."}
	ErrNoSuchUpload                 = &APIError{"NoSuchUpload", http.StatusNotFound, "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed."}
	ErrNotImplemented               = &APIError{"NotImplemented", http.StatusNotImplemented, "A header or query you provided implies functionality that is not implemented."}
	ErrNotModified                  = &APIError{"NotModified", http.StatusNotModified, "Not Modified"}
	errOperationAborted             = &APIError{"OperationAborted", http.StatusConflict, "A conflicting conditional operation is currently in progress against this resource. Please try again."}
	ErrPreconditionFailed           = &APIError{"PreconditionFailed", http.StatusPreconditionFailed, "At least one of the pre-conditions you specified did not hold"}
	errServiceUnavailable           = &APIError{"ServiceUnavailable", http.StatusServiceUnavailable, "Please reduce your request rate."}
	errInsufficientStorage          = &APIError{"InsufficientStorage", http.StatusInsufficientStorage, "The storage is full; the request could not be stored."}
	errRequestTimeout               = &APIError{"RequestTimeout", http.StatusBadRequest, "Your socket connection to the server was not read from or written to within the timeout period."}
	// Browser form uploads (package objects, postobject.go); postpolicy's refusals carry their
	// own messages.
	errMalformedPOSTRequest   = &APIError{"MalformedPOSTRequest", http.StatusBadRequest, "The body of your POST request is not well-formed multipart/form-data."}
	errMaxPostPreDataLength   = &APIError{"MaxPostPreDataLengthExceededError", http.StatusBadRequest, "Your POST request fields preceding the upload file were too large."}
	errIncorrectNumberOfFiles = &APIError{"IncorrectNumberOfFilesInPostRequest", http.StatusBadRequest, "POST requires exactly one file upload per request."}
	errInvalidPolicyDocument  = &APIError{"InvalidPolicyDocument", http.StatusBadRequest, "The content of the form does not meet the conditions specified in the policy document."}
	// ErrSlowDown: the server has too many requests in flight (ServeSlowDown).
	ErrSlowDown = &APIError{"SlowDown", http.StatusServiceUnavailable, "Please reduce your request rate."}

	// Access control (acl.go here; policies in package buckets).
	errMalformedACL      = &APIError{"MalformedACLError", http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema"}
	errUnexpectedContent = &APIError{"UnexpectedContent", http.StatusBadRequest, "This request does not support content"}
	errCannedAndGrants   = ErrInvalidRequest.WithMessage("Specifying both Canned ACLs and Header Grants is not allowed")
	// errUnresolvableByEmail: S3 refuses a grant to an e-mail address no account has; no
	// Cairn account has one.
	errUnresolvableByEmail = &APIError{"UnresolvableGrantByEmailAddress", http.StatusBadRequest, "The e-mail address you provided does not match any account on record."}
	ErrMalformedPolicy     = &APIError{"MalformedPolicy", http.StatusBadRequest, "Policies must be valid JSON and the first byte must be '{'"}
	// Object ownership (publicaccess.go): ACLs turned off by BucketOwnerEnforced.
	errACLNotSupported               = &APIError{"AccessControlListNotSupported", http.StatusBadRequest, "The bucket does not allow ACLs"}
	ErrInvalidBucketACLWithOwnership = &APIError{"InvalidBucketAclWithObjectOwnership", http.StatusBadRequest, "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"}
	// errQuotaExceeded: S3 has no quotas; Cairn answers a write over an account's or a
	// bucket's quota with 413 and this code, as Swift answers 413 "Upload exceeds quota.".
	errQuotaExceeded = &APIError{"QuotaExceeded", http.StatusRequestEntityTooLarge, "Your upload exceeds the quota."}

	// Tagging (tagging.go). S3 answers too many tags with the generic BadRequest code.
	errInvalidTag = &APIError{"InvalidTag", http.StatusBadRequest, "The tag provided was not a valid tag."}
	errBadRequest = &APIError{"BadRequest", http.StatusBadRequest, "Bad Request"}

	// "Not configured" answers for bucket settings Cairn does not have: true statements that
	// probing clients (s3cmd info, SDK helpers) understand.
	ErrNoSuchBucketPolicy = &APIError{"NoSuchBucketPolicy", http.StatusNotFound, "The bucket policy does not exist"}
	ErrNoSuchCORS         = &APIError{"NoSuchCORSConfiguration", http.StatusNotFound, "The CORS configuration does not exist"}
	// CORS preflights (cors.go): S3's codes and texts, which its error table does not list
	// (and errBadRequest above).
	errAccessForbidden              = &APIError{"AccessForbidden", http.StatusForbidden, "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."}
	ErrNoSuchLifecycle              = &APIError{"NoSuchLifecycleConfiguration", http.StatusNotFound, "The lifecycle configuration does not exist"}
	ErrNoSuchTagSet                 = &APIError{"NoSuchTagSet", http.StatusNotFound, "The TagSet does not exist"}
	errNoSuchWebsite                = &APIError{"NoSuchWebsiteConfiguration", http.StatusNotFound, "The specified bucket does not have a website configuration"}
	ErrNoEncryptionConfig           = &APIError{"ServerSideEncryptionConfigurationNotFoundError", http.StatusNotFound, "The server side encryption configuration was not found"}
	ErrNoObjectLockConfig           = &APIError{"ObjectLockConfigurationNotFoundError", http.StatusNotFound, "Object Lock configuration does not exist for this bucket"}
	errNoReplicationConfig          = &APIError{"ReplicationConfigurationNotFoundError", http.StatusNotFound, "The replication configuration was not found"}
	ErrNoPublicAccessBlock          = &APIError{"NoSuchPublicAccessBlockConfiguration", http.StatusNotFound, "The public access block configuration was not found"}
	ErrNoOwnershipControls          = &APIError{"OwnershipControlsNotFoundError", http.StatusNotFound, "The bucket ownership controls were not found"}
	errAuthorizationHeaderMalformed = &APIError{"AuthorizationHeaderMalformed", http.StatusBadRequest, "The authorization header is malformed."}
	errConditionalConflict          = &APIError{"ConditionalRequestConflict", http.StatusConflict, "A conflicting operation occurred. If using PutObject you can retry the request. If using multipart upload you should initiate another CreateMultipartUpload request and re-upload each part."}
	errSignatureV2NotWanted         = &APIError{"InvalidRequest", http.StatusBadRequest, "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."}
)

// errorTable translates the errors of the layers below (shared meta sentinels, sigv4 and
// checksum sentinels) into S3 errors. Order matters where sentinels wrap each other: the more
// specific one comes first.
var errorTable = []struct {
	err error
	api *APIError
}{
	{httpwire.ErrBodyTimeout, errRequestTimeout},
	{meta.ErrNoContainer, ErrNoSuchBucket},
	{meta.ErrNotFound, ErrNoSuchKey},
	{meta.ErrNotEmpty, ErrBucketNotEmpty},
	{meta.ErrExists, ErrBucketAlreadyOwnedByYou},
	{meta.ErrConflict, errOperationAborted},
	{meta.ErrPreconditionFailed, ErrPreconditionFailed},
	{meta.ErrConditionalConflict, errConditionalConflict},
	{meta.ErrInsufficientStorage, errInsufficientStorage},
	{meta.ErrIncompleteBody, ErrIncompleteBody},
	{meta.ErrBodyTooLong, ErrIncompleteBody.WithMessage("The request body is longer than its declared length.")},
	{meta.ErrInvalidRange, ErrInvalidRange},
	{meta.ErrUnavailable, errServiceUnavailable},
	{meta.ErrInvalidName, ErrInvalidArgument.WithMessage("The name is not valid.")},
	{meta.ErrCorrupt, ErrInternal},

	{sigv4.ErrAnonymous, ErrAccessDenied},
	{sigv4.ErrSignatureV2Unsupported, errSignatureV2NotWanted},
	{sigv4.ErrUnsupportedAuthType, ErrInvalidArgument.WithMessage("Unsupported Authorization Type")},
	{sigv4.ErrMultipleAuthMechanisms, ErrInvalidArgument.WithMessage("Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified")},
	{sigv4.ErrAuthorizationHeaderMalformed, errAuthorizationHeaderMalformed},
	{sigv4.ErrMalformedV2Header, ErrInvalidArgument.WithMessage("AWS authorization header is invalid.  Expected AwsAccessKeyId:signature")},
	{sigv4.ErrExpiresNotNumber, errAuthorizationQueryParameters.WithMessage("X-Amz-Expires should be a number")},
	{sigv4.ErrExpiresNegative, errAuthorizationQueryParameters.WithMessage("X-Amz-Expires must be non-negative")},
	{sigv4.ErrExpiresTooLong, errAuthorizationQueryParameters.WithMessage("X-Amz-Expires must be less than 604800 seconds")},
	{sigv4.ErrAuthorizationQueryParametersError, errAuthorizationQueryParameters},
	{sigv4.ErrInvalidAccessKeyID, &APIError{"InvalidAccessKeyId", http.StatusForbidden, "The AWS access key Id you provided does not exist in our records."}},
	{sigv4.ErrSignatureDoesNotMatch, &APIError{"SignatureDoesNotMatch", http.StatusForbidden, "The request signature we calculated does not match the signature you provided. Check your key and signing method."}},
	{sigv4.ErrRequestTimeTooSkewed, &APIError{"RequestTimeTooSkewed", http.StatusForbidden, "The difference between the request time and the current time is too large."}},
	{sigv4.ErrRequestExpired, ErrAccessDenied.WithMessage("Request has expired")},
	{sigv4.ErrInvalidExpiresV2, ErrAccessDenied.WithMessage("Invalid date (should be seconds since epoch)")},
	{sigv4.ErrRequestNotYetValid, ErrAccessDenied.WithMessage("Request is not valid yet")},
	{sigv4.ErrMissingDate, ErrAccessDenied.WithMessage("AWS authentication requires a valid Date or x-amz-date header")},
	{sigv4.ErrHeadersNotSigned, ErrAccessDenied.WithMessage("There were headers present in the request which were not signed")},
	{sigv4.ErrMissingContentSHA256, ErrInvalidRequest.WithMessage("Missing required header for this request: x-amz-content-sha256")},
	{sigv4.ErrInvalidContentSHA256, ErrInvalidArgument.WithMessage("x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER or a valid sha256 value.")},
	{sigv4.ErrMissingSecurityHeader, &APIError{"MissingSecurityHeader", http.StatusBadRequest, "Your request was missing a required header"}},
	{sigv4.ErrContentSHA256Mismatch, &APIError{"XAmzContentSHA256Mismatch", http.StatusBadRequest, "The provided 'x-amz-content-sha256' header does not match what was computed."}},
	{sigv4.ErrIncompleteBody, ErrIncompleteBody},
	{sigv4.ErrMalformedChunkedEncoding, ErrInvalidRequest.WithMessage("Malformed aws-chunked encoding")},
	{sigv4.ErrMalformedTrailer, &APIError{"MalformedTrailerError", http.StatusBadRequest, "The request contained trailing data that was not well-formed or did not conform to our published schema."}},

	{access.ErrQuotaExceeded, errQuotaExceeded},
	{access.ErrMalformedPolicy, ErrMalformedPolicy},
	{access.ErrUnsupported, ErrNotImplemented},
	// A bucket of an erasure-coded storage policy (made through another proxy): not served yet.
	{policy.ErrNotSupported, ErrNotImplemented.WithMessage("The bucket's storage policy is erasure-coded with a code Cairn does not serve.")},
	{access.ErrInvalidACL, ErrInvalidArgument.WithMessage("The ACL is not valid.")},
	{access.ErrInvalidSwiftACL, ErrInvalidArgument.WithMessage("The Swift ACL is not valid.")},

	// tagging's and objattr's refusals carry S3's message, which toAPIError puts on these.
	{tagging.ErrInvalidTag, errInvalidTag},
	{tagging.ErrTooManyTags, errBadRequest},
	{tagging.ErrMalformedXML, ErrMalformedXML},
	{tagging.ErrInvalidHeader, ErrInvalidArgument},
	{objattr.ErrInvalidArgument, ErrInvalidArgument},
	{postpolicy.ErrMalformedPOSTRequest, errMalformedPOSTRequest},
	{postpolicy.ErrPreDataTooLarge, errMaxPostPreDataLength},
	{postpolicy.ErrFileCount, errIncorrectNumberOfFiles},
	{postpolicy.ErrInvalidArgument, ErrInvalidArgument},
	{postpolicy.ErrInvalidPolicyDocument, errInvalidPolicyDocument},
	{postpolicy.ErrPolicyDenied, ErrAccessDenied},
	{postpolicy.ErrEntityTooLarge, ErrEntityTooLarge},
	{postpolicy.ErrEntityTooSmall, ErrEntityTooSmall},

	{checksum.ErrBadDigest, errBadDigest},
	{checksum.ErrInvalidDigest, errInvalidDigest},
	{checksum.ErrChecksumMismatch, errBadDigest},
	{checksum.ErrInvalidChecksumRequest, ErrInvalidRequest.WithMessage("The checksum headers of this request are invalid.")},

	{context.DeadlineExceeded, errRequestTimeout},
	{context.Canceled, errRequestTimeout},
}

// ToAPIError returns the S3 error for err: the front end's own errors as they are, other
// layers' through errorTable, anything else as InternalError.
func ToAPIError(err error) *APIError {
	var api *APIError
	if errors.As(err, &api) {
		return api
	}
	var mismatch *checksum.MismatchError
	if errors.As(err, &mismatch) {
		return errBadDigest.WithMessage("%s", mismatch.S3Message())
	}
	var malformed *sigv4.MalformedError
	if errors.As(err, &malformed) {
		return errAuthorizationHeaderMalformed.WithMessage("%s", malformed.S3Message())
	}
	var badValue *checksum.ValueError
	if errors.As(err, &badValue) {
		return errBadDigest.WithMessage("%s", badValue.S3Message())
	}
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			// A refusal of a subpackage that words its own message (tagging, objattr).
			var m interface{ S3Message() string }
			if errors.As(err, &m) {
				return e.api.WithMessage("%s", m.S3Message())
			}
			var pe *postpolicy.Error
			if errors.As(err, &pe) {
				return e.api.WithMessage("%s", pe.Message)
			}
			return e.api
		}
	}
	return ErrInternal
}

// AuthError is the error of a request whose credentials failed, with the elements S3 adds to
// some: the Authorization header as the InvalidArgument, the region expected.
func AuthError(r *http.Request, err error) error {
	err = fmt.Errorf("authenticate: %w", err)
	var malformed *sigv4.MalformedError
	switch {
	case errors.As(err, &malformed) && malformed.Region != "":
		return withFields(err, errorFields{region: malformed.Region})
	case errors.Is(err, sigv4.ErrUnsupportedAuthType), errors.Is(err, sigv4.ErrMalformedV2Header), errors.Is(err, sigv4.ErrMultipleAuthMechanisms):
		return withFields(err, errorFields{argumentName: "Authorization", argumentValue: r.Header.Get("Authorization")})
	}
	return err
}

// detailedError is an S3 error whose document carries more elements than code and message, as
// some of S3's do: a refused CORS preflight names the method and resource type, an
// InvalidArgument the argument, a wrong region the right one.
type detailedError struct {
	err    error // wraps the *apiError
	fields errorFields
}

type errorFields struct {
	method, resourceType, argumentName, argumentValue, region string
}

func (e *detailedError) Error() string { return e.err.Error() }
func (e *detailedError) Unwrap() error { return e.err }

func withFields(err error, f errorFields) error { return &detailedError{err: err, fields: f} }

// errorDocument is S3's XML error body. Like S3's own answers it names the bucket, key or
// upload only for the errors about them (NoSuchBucket, NoSuchKey, NoSuchUpload), not the
// request path for every error.
type errorDocument struct {
	XMLName      xml.Name `xml:"Error"`
	Code         string   `xml:"Code"`
	Message      string   `xml:"Message"`
	Method       string   `xml:"Method,omitempty"`
	ResourceType string   `xml:"ResourceType,omitempty"`
	ArgumentName string   `xml:"ArgumentName,omitempty"`
	// ArgumentValue is sent whenever ArgumentName is, empty or not.
	ArgumentValue *string `xml:"ArgumentValue"`
	Region        string  `xml:"Region,omitempty"`
	BucketName    string  `xml:"BucketName,omitempty"`
	Key           string  `xml:"Key,omitempty"`
	UploadID      string  `xml:"UploadId,omitempty"`
	TagKey        string  `xml:"TagKey,omitempty"` // the key an InvalidTag is about, as S3 names it
	RequestID     string  `xml:"RequestId"`
	HostID        string  `xml:"HostId"`
}

// WriteError sends err as an S3 error: status and, except for HEAD and 304, an XML body.
func (h *Front) WriteError(w http.ResponseWriter, r *http.Request, rq *Request, err error) {
	api := ToAPIError(err)
	switch {
	case api == ErrSlowDown:
		// Shedding load is not a failure; the server counts these (cairn_http_requests_rejected_total).
	case api.Status >= 500:
		h.Log.ErrorContext(r.Context(), "s3 request failed", "request_id", rq.ID, "op", rq.Op, "bucket", rq.Bucket, "key", rq.Key, "status", api.Status, "err", err)
	case !errors.Is(err, ErrNotModified):
		h.Log.DebugContext(r.Context(), "s3 request refused", "request_id", rq.ID, "op", rq.Op, "bucket", rq.Bucket, "code", api.Code, "err", err)
	}
	hdr := w.Header()
	// Headers set for a success that did not happen must not leak into the error.
	for _, k := range []string{"Content-Length", "Content-Range", "Content-Type", "Content-Encoding", "Content-Disposition", "Content-Language", "Cache-Control", "Expires", "Accept-Ranges"} {
		hdr.Del(k)
	}
	if api.Status == http.StatusNotModified || r.Method == http.MethodHead {
		if api.Status != http.StatusNotModified {
			hdr.Set("Content-Type", "application/xml") // as S3 answers a HEAD that fails
			hdr.Set("Content-Length", "0")             // no body, and says so
		}
		w.WriteHeader(api.Status)
		return
	}
	if api.Status == http.StatusMethodNotAllowed {
		hdr.Set("Allow", "GET, HEAD, PUT, POST, DELETE")
	}
	doc := errorDocument{
		Code: api.Code, Message: api.Message, RequestID: rq.ID, HostID: rq.HostID,
	}
	if api == ErrNoSuchBucket || errors.Is(api, ErrNoSuchBucket) || errors.Is(api, ErrNoSuchCORS) {
		doc.BucketName = rq.Bucket
	}
	var details *detailedError
	if errors.As(err, &details) {
		f := details.fields
		doc.Method, doc.ResourceType, doc.Region = f.method, f.resourceType, f.region
		if f.argumentName != "" {
			doc.ArgumentName, doc.ArgumentValue = f.argumentName, &f.argumentValue
		}
	}
	if errors.Is(api, ErrNoSuchKey) {
		doc.Key = rq.Key
	}
	if errors.Is(api, ErrNoSuchUpload) {
		doc.UploadID = rq.Query.Get("uploadId")
	}
	if te := (*tagging.Error)(nil); errors.As(err, &te) && errors.Is(api, errInvalidTag) {
		doc.TagKey = te.TagKey
	}
	WriteXML(w, api.Status, doc)
}
