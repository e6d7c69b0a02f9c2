package s3

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

// apiError is an S3 error as it goes on the wire: code, HTTP status and message. Handlers
// return these (possibly wrapped, or re-messaged with withMessage); errors from other layers
// are translated by the table in toAPIError.
type apiError struct {
	code    string
	status  int
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

// Is makes a re-messaged error match the sentinel it came from.
func (e *apiError) Is(target error) bool {
	t, ok := target.(*apiError)
	return ok && t.code == e.code
}

// withMessage returns the same S3 error with a more specific message.
func (e *apiError) withMessage(format string, args ...any) *apiError {
	return &apiError{code: e.code, status: e.status, message: fmt.Sprintf(format, args...)}
}

// S3 errors the front end raises itself. Messages are S3's own texts where clients or people
// are likely to recognise them.
var (
	errAccessDenied                 = &apiError{"AccessDenied", http.StatusForbidden, "Access Denied"}
	errBadDigest                    = &apiError{"BadDigest", http.StatusBadRequest, "The Content-MD5 you specified did not match what we received."}
	errBucketAlreadyOwnedByYou      = &apiError{"BucketAlreadyOwnedByYou", http.StatusConflict, "Your previous request to create the named bucket succeeded and you already own it."}
	errBucketAlreadyExists          = &apiError{"BucketAlreadyExists", http.StatusConflict, "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again."}
	errBucketNotEmpty               = &apiError{"BucketNotEmpty", http.StatusConflict, "The bucket you tried to delete is not empty"}
	errEntityTooSmall               = &apiError{"EntityTooSmall", http.StatusBadRequest, "Your proposed upload is smaller than the minimum allowed object size."}
	errEntityTooLarge               = &apiError{"EntityTooLarge", http.StatusBadRequest, "Your proposed upload exceeds the maximum allowed object size."}
	errIncompleteBody               = &apiError{"IncompleteBody", http.StatusBadRequest, "You did not provide the number of bytes specified by the Content-Length HTTP header"}
	errInternal                     = &apiError{"InternalError", http.StatusInternalServerError, "We encountered an internal error. Please try again."}
	errInvalidArgument              = &apiError{"InvalidArgument", http.StatusBadRequest, "Invalid Argument"}
	errInvalidBucketName            = &apiError{"InvalidBucketName", http.StatusBadRequest, "The specified bucket is not valid."}
	errInvalidDigest                = &apiError{"InvalidDigest", http.StatusBadRequest, "The Content-MD5 you specified is not valid."}
	errInvalidLocationConstraint    = &apiError{"InvalidLocationConstraint", http.StatusBadRequest, "The specified location-constraint is not valid"}
	errInvalidPart                  = &apiError{"InvalidPart", http.StatusBadRequest, "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."}
	errInvalidPartOrder             = &apiError{"InvalidPartOrder", http.StatusBadRequest, "The list of parts was not in ascending order. Parts must be ordered by part number."}
	errInvalidRange                 = &apiError{"InvalidRange", http.StatusRequestedRangeNotSatisfiable, "The requested range is not satisfiable"}
	errInvalidRequest               = &apiError{"InvalidRequest", http.StatusBadRequest, "Invalid Request"}
	errInvalidURI                   = &apiError{"InvalidURI", http.StatusBadRequest, "Couldn't parse the specified URI."}
	errKeyTooLong                   = &apiError{"KeyTooLongError", http.StatusBadRequest, "Your key is too long"}
	errMalformedXML                 = &apiError{"MalformedXML", http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema"}
	errMaxMessageLength             = &apiError{"MaxMessageLengthExceeded", http.StatusBadRequest, "Your request was too big."}
	errAuthorizationQueryParameters = &apiError{"AuthorizationQueryParametersError", http.StatusBadRequest, "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters."}
	errUserKeyMustBeSpecified       = &apiError{"UserKeyMustBeSpecified", http.StatusBadRequest, "The bucket POST must contain the specified field name. If it is specified, please check the order of the fields."}
	errMetadataTooLarge             = &apiError{"MetadataTooLarge", http.StatusBadRequest, "Your metadata headers exceed the maximum allowed metadata size."}
	errMethodNotAllowed             = &apiError{"MethodNotAllowed", http.StatusMethodNotAllowed, "The specified method is not allowed against this resource."}
	errMissingContentLength         = &apiError{"MissingContentLength", http.StatusLengthRequired, "You must provide the Content-Length HTTP header."}
	errMissingRequestBody           = &apiError{"MissingRequestBodyError", http.StatusBadRequest, "Request Body is empty"}
	errNoSuchBucket                 = &apiError{"NoSuchBucket", http.StatusNotFound, "The specified bucket does not exist"}
	errNoSuchKey                    = &apiError{"NoSuchKey", http.StatusNotFound, "The specified key does not exist."}
	errNoSuchUpload                 = &apiError{"NoSuchUpload", http.StatusNotFound, "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed."}
	errNotImplemented               = &apiError{"NotImplemented", http.StatusNotImplemented, "A header or query you provided implies functionality that is not implemented."}
	errNotModified                  = &apiError{"NotModified", http.StatusNotModified, "Not Modified"}
	errOperationAborted             = &apiError{"OperationAborted", http.StatusConflict, "A conflicting conditional operation is currently in progress against this resource. Please try again."}
	errPreconditionFailed           = &apiError{"PreconditionFailed", http.StatusPreconditionFailed, "At least one of the pre-conditions you specified did not hold"}
	errServiceUnavailable           = &apiError{"ServiceUnavailable", http.StatusServiceUnavailable, "Please reduce your request rate."}
	errInsufficientStorage          = &apiError{"InsufficientStorage", http.StatusInsufficientStorage, "The storage is full; the request could not be stored."}
	errRequestTimeout               = &apiError{"RequestTimeout", http.StatusBadRequest, "Your socket connection to the server was not read from or written to within the timeout period."}
	// Browser form uploads (postobject.go); postpolicy's refusals carry their own messages.
	errMalformedPOSTRequest   = &apiError{"MalformedPOSTRequest", http.StatusBadRequest, "The body of your POST request is not well-formed multipart/form-data."}
	errMaxPostPreDataLength   = &apiError{"MaxPostPreDataLengthExceededError", http.StatusBadRequest, "Your POST request fields preceding the upload file were too large."}
	errIncorrectNumberOfFiles = &apiError{"IncorrectNumberOfFilesInPostRequest", http.StatusBadRequest, "POST requires exactly one file upload per request."}
	errInvalidPolicyDocument  = &apiError{"InvalidPolicyDocument", http.StatusBadRequest, "The content of the form does not meet the conditions specified in the policy document."}
	// errSlowDown: the server has too many requests in flight (ServeSlowDown).
	errSlowDown = &apiError{"SlowDown", http.StatusServiceUnavailable, "Please reduce your request rate."}

	// Access control (acl.go, policy.go).
	errMalformedACL      = &apiError{"MalformedACLError", http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema"}
	errUnexpectedContent = &apiError{"UnexpectedContent", http.StatusBadRequest, "This request does not support content"}
	errCannedAndGrants   = errInvalidRequest.withMessage("Specifying both Canned ACLs and Header Grants is not allowed")
	// errUnresolvableByEmail: S3 refuses a grant to an e-mail address no account has; no
	// Cairn account has one.
	errUnresolvableByEmail = &apiError{"UnresolvableGrantByEmailAddress", http.StatusBadRequest, "The e-mail address you provided does not match any account on record."}
	errMalformedPolicy     = &apiError{"MalformedPolicy", http.StatusBadRequest, "Policies must be valid JSON and the first byte must be '{'"}
	// Object ownership (publicaccess.go): ACLs turned off by BucketOwnerEnforced.
	errACLNotSupported               = &apiError{"AccessControlListNotSupported", http.StatusBadRequest, "The bucket does not allow ACLs"}
	errInvalidBucketACLWithOwnership = &apiError{"InvalidBucketAclWithObjectOwnership", http.StatusBadRequest, "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"}
	// errQuotaExceeded: S3 has no quotas; Cairn answers a write over an account's or a
	// bucket's quota with 413 and this code, as Swift answers 413 "Upload exceeds quota.".
	errQuotaExceeded = &apiError{"QuotaExceeded", http.StatusRequestEntityTooLarge, "Your upload exceeds the quota."}

	// Tagging (tagging.go). S3 answers too many tags with the generic BadRequest code.
	errInvalidTag = &apiError{"InvalidTag", http.StatusBadRequest, "The tag provided was not a valid tag."}
	errBadRequest = &apiError{"BadRequest", http.StatusBadRequest, "Bad Request"}

	// "Not configured" answers for bucket settings Cairn does not have: true statements that
	// probing clients (s3cmd info, SDK helpers) understand.
	errNoSuchBucketPolicy = &apiError{"NoSuchBucketPolicy", http.StatusNotFound, "The bucket policy does not exist"}
	errNoSuchCORS         = &apiError{"NoSuchCORSConfiguration", http.StatusNotFound, "The CORS configuration does not exist"}
	// CORS preflights (cors.go): S3's codes and texts, which its error table does not list
	// (and errBadRequest above).
	errAccessForbidden              = &apiError{"AccessForbidden", http.StatusForbidden, "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec."}
	errNoSuchLifecycle              = &apiError{"NoSuchLifecycleConfiguration", http.StatusNotFound, "The lifecycle configuration does not exist"}
	errNoSuchTagSet                 = &apiError{"NoSuchTagSet", http.StatusNotFound, "The TagSet does not exist"}
	errNoSuchWebsite                = &apiError{"NoSuchWebsiteConfiguration", http.StatusNotFound, "The specified bucket does not have a website configuration"}
	errNoEncryptionConfig           = &apiError{"ServerSideEncryptionConfigurationNotFoundError", http.StatusNotFound, "The server side encryption configuration was not found"}
	errNoObjectLockConfig           = &apiError{"ObjectLockConfigurationNotFoundError", http.StatusNotFound, "Object Lock configuration does not exist for this bucket"}
	errNoReplicationConfig          = &apiError{"ReplicationConfigurationNotFoundError", http.StatusNotFound, "The replication configuration was not found"}
	errNoPublicAccessBlock          = &apiError{"NoSuchPublicAccessBlockConfiguration", http.StatusNotFound, "The public access block configuration was not found"}
	errNoOwnershipControls          = &apiError{"OwnershipControlsNotFoundError", http.StatusNotFound, "The bucket ownership controls were not found"}
	errAuthorizationHeaderMalformed = &apiError{"AuthorizationHeaderMalformed", http.StatusBadRequest, "The authorization header is malformed."}
	errSignatureV2NotWanted         = &apiError{"InvalidRequest", http.StatusBadRequest, "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."}
)

// errorTable translates the errors of the layers below (shared meta sentinels, sigv4 and
// checksum sentinels) into S3 errors. Order matters where sentinels wrap each other: the more
// specific one comes first.
var errorTable = []struct {
	err error
	api *apiError
}{
	{httpwire.ErrBodyTimeout, errRequestTimeout},
	{meta.ErrNoContainer, errNoSuchBucket},
	{meta.ErrNotFound, errNoSuchKey},
	{meta.ErrNotEmpty, errBucketNotEmpty},
	{meta.ErrExists, errBucketAlreadyOwnedByYou},
	{meta.ErrConflict, errOperationAborted},
	{meta.ErrPreconditionFailed, errPreconditionFailed},
	{meta.ErrInsufficientStorage, errInsufficientStorage},
	{meta.ErrIncompleteBody, errIncompleteBody},
	{meta.ErrBodyTooLong, errIncompleteBody.withMessage("The request body is longer than its declared length.")},
	{meta.ErrInvalidRange, errInvalidRange},
	{meta.ErrUnavailable, errServiceUnavailable},
	{meta.ErrInvalidName, errInvalidArgument.withMessage("The name is not valid.")},
	{meta.ErrCorrupt, errInternal},

	{sigv4.ErrAnonymous, errAccessDenied},
	{sigv4.ErrSignatureV2Unsupported, errSignatureV2NotWanted},
	{sigv4.ErrUnsupportedAuthType, errInvalidArgument.withMessage("Unsupported Authorization Type")},
	{sigv4.ErrMultipleAuthMechanisms, errInvalidArgument.withMessage("Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified")},
	{sigv4.ErrAuthorizationHeaderMalformed, errAuthorizationHeaderMalformed},
	{sigv4.ErrMalformedV2Header, errInvalidArgument.withMessage("AWS authorization header is invalid.  Expected AwsAccessKeyId:signature")},
	{sigv4.ErrExpiresNotNumber, errAuthorizationQueryParameters.withMessage("X-Amz-Expires should be a number")},
	{sigv4.ErrExpiresNegative, errAuthorizationQueryParameters.withMessage("X-Amz-Expires must be non-negative")},
	{sigv4.ErrExpiresTooLong, errAuthorizationQueryParameters.withMessage("X-Amz-Expires must be less than 604800 seconds")},
	{sigv4.ErrAuthorizationQueryParametersError, errAuthorizationQueryParameters},
	{sigv4.ErrInvalidAccessKeyID, &apiError{"InvalidAccessKeyId", http.StatusForbidden, "The AWS access key Id you provided does not exist in our records."}},
	{sigv4.ErrSignatureDoesNotMatch, &apiError{"SignatureDoesNotMatch", http.StatusForbidden, "The request signature we calculated does not match the signature you provided. Check your key and signing method."}},
	{sigv4.ErrRequestTimeTooSkewed, &apiError{"RequestTimeTooSkewed", http.StatusForbidden, "The difference between the request time and the current time is too large."}},
	{sigv4.ErrRequestExpired, errAccessDenied.withMessage("Request has expired")},
	{sigv4.ErrInvalidExpiresV2, errAccessDenied.withMessage("Invalid date (should be seconds since epoch)")},
	{sigv4.ErrRequestNotYetValid, errAccessDenied.withMessage("Request is not valid yet")},
	{sigv4.ErrMissingDate, errAccessDenied.withMessage("AWS authentication requires a valid Date or x-amz-date header")},
	{sigv4.ErrHeadersNotSigned, errAccessDenied.withMessage("There were headers present in the request which were not signed")},
	{sigv4.ErrMissingContentSHA256, errInvalidRequest.withMessage("Missing required header for this request: x-amz-content-sha256")},
	{sigv4.ErrInvalidContentSHA256, errInvalidArgument.withMessage("x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER or a valid sha256 value.")},
	{sigv4.ErrMissingSecurityHeader, &apiError{"MissingSecurityHeader", http.StatusBadRequest, "Your request was missing a required header"}},
	{sigv4.ErrContentSHA256Mismatch, &apiError{"XAmzContentSHA256Mismatch", http.StatusBadRequest, "The provided 'x-amz-content-sha256' header does not match what was computed."}},
	{sigv4.ErrIncompleteBody, errIncompleteBody},
	{sigv4.ErrMalformedChunkedEncoding, errInvalidRequest.withMessage("Malformed aws-chunked encoding")},
	{sigv4.ErrMalformedTrailer, &apiError{"MalformedTrailerError", http.StatusBadRequest, "The request contained trailing data that was not well-formed or did not conform to our published schema."}},

	{access.ErrQuotaExceeded, errQuotaExceeded},
	{access.ErrMalformedPolicy, errMalformedPolicy},
	{access.ErrUnsupported, errNotImplemented},
	// A bucket of an erasure-coded storage policy (made through another proxy): not served yet.
	{policy.ErrNotSupported, errNotImplemented.withMessage("The bucket's storage policy is erasure-coded with a code Cairn does not serve.")},
	{access.ErrInvalidACL, errInvalidArgument.withMessage("The ACL is not valid.")},
	{access.ErrInvalidSwiftACL, errInvalidArgument.withMessage("The Swift ACL is not valid.")},

	// tagging's and objattr's refusals carry S3's message, which toAPIError puts on these.
	{tagging.ErrInvalidTag, errInvalidTag},
	{tagging.ErrTooManyTags, errBadRequest},
	{tagging.ErrMalformedXML, errMalformedXML},
	{tagging.ErrInvalidHeader, errInvalidArgument},
	{objattr.ErrInvalidArgument, errInvalidArgument},
	{postpolicy.ErrMalformedPOSTRequest, errMalformedPOSTRequest},
	{postpolicy.ErrPreDataTooLarge, errMaxPostPreDataLength},
	{postpolicy.ErrFileCount, errIncorrectNumberOfFiles},
	{postpolicy.ErrInvalidArgument, errInvalidArgument},
	{postpolicy.ErrInvalidPolicyDocument, errInvalidPolicyDocument},
	{postpolicy.ErrPolicyDenied, errAccessDenied},
	{postpolicy.ErrEntityTooLarge, errEntityTooLarge},
	{postpolicy.ErrEntityTooSmall, errEntityTooSmall},

	{checksum.ErrBadDigest, errBadDigest},
	{checksum.ErrInvalidDigest, errInvalidDigest},
	{checksum.ErrChecksumMismatch, errBadDigest},
	{checksum.ErrInvalidChecksumRequest, errInvalidRequest.withMessage("The checksum headers of this request are invalid.")},

	{context.DeadlineExceeded, errRequestTimeout},
	{context.Canceled, errRequestTimeout},
}

// toAPIError returns the S3 error for err: the front end's own errors as they are, other
// layers' through errorTable, anything else as InternalError.
func toAPIError(err error) *apiError {
	var api *apiError
	if errors.As(err, &api) {
		return api
	}
	var mismatch *checksum.MismatchError
	if errors.As(err, &mismatch) {
		return errBadDigest.withMessage("%s", mismatch.S3Message())
	}
	var malformed *sigv4.MalformedError
	if errors.As(err, &malformed) {
		return errAuthorizationHeaderMalformed.withMessage("%s", malformed.S3Message())
	}
	var badValue *checksum.ValueError
	if errors.As(err, &badValue) {
		return errBadDigest.withMessage("%s", badValue.S3Message())
	}
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			// A refusal of a subpackage that words its own message (tagging, objattr).
			var m interface{ S3Message() string }
			if errors.As(err, &m) {
				return e.api.withMessage("%s", m.S3Message())
			}
			var pe *postpolicy.Error
			if errors.As(err, &pe) {
				return e.api.withMessage("%s", pe.Message)
			}
			return e.api
		}
	}
	return errInternal
}

// authError is the error of a request whose credentials failed, with the elements S3 adds to
// some: the Authorization header as the InvalidArgument, the region expected.
func authError(r *http.Request, err error) error {
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

// writeError sends err as an S3 error: status and, except for HEAD and 304, an XML body.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, rq *request, err error) {
	api := toAPIError(err)
	switch {
	case api == errSlowDown:
		// Shedding load is not a failure; the server counts these (cairn_http_requests_rejected_total).
	case api.status >= 500:
		h.log.ErrorContext(r.Context(), "s3 request failed", "request_id", rq.id, "op", rq.op, "bucket", rq.bucket, "key", rq.key, "status", api.status, "err", err)
	case !errors.Is(err, errNotModified):
		h.log.DebugContext(r.Context(), "s3 request refused", "request_id", rq.id, "op", rq.op, "bucket", rq.bucket, "code", api.code, "err", err)
	}
	hdr := w.Header()
	// Headers set for a success that did not happen must not leak into the error.
	for _, k := range []string{"Content-Length", "Content-Range", "Content-Type", "Content-Encoding", "Content-Disposition", "Content-Language", "Cache-Control", "Expires", "Accept-Ranges"} {
		hdr.Del(k)
	}
	if api.status == http.StatusNotModified || r.Method == http.MethodHead {
		if api.status != http.StatusNotModified {
			hdr.Set("Content-Type", "application/xml") // as S3 answers a HEAD that fails
			hdr.Set("Content-Length", "0")             // no body, and says so
		}
		w.WriteHeader(api.status)
		return
	}
	if api.status == http.StatusMethodNotAllowed {
		hdr.Set("Allow", "GET, HEAD, PUT, POST, DELETE")
	}
	doc := errorDocument{
		Code: api.code, Message: api.message, RequestID: rq.id, HostID: rq.hostID,
	}
	if api == errNoSuchBucket || errors.Is(api, errNoSuchBucket) || errors.Is(api, errNoSuchCORS) {
		doc.BucketName = rq.bucket
	}
	var details *detailedError
	if errors.As(err, &details) {
		f := details.fields
		doc.Method, doc.ResourceType, doc.Region = f.method, f.resourceType, f.region
		if f.argumentName != "" {
			doc.ArgumentName, doc.ArgumentValue = f.argumentName, &f.argumentValue
		}
	}
	if errors.Is(api, errNoSuchKey) {
		doc.Key = rq.key
	}
	if errors.Is(api, errNoSuchUpload) {
		doc.UploadID = rq.query.Get("uploadId")
	}
	if te := (*tagging.Error)(nil); errors.As(err, &te) && errors.Is(api, errInvalidTag) {
		doc.TagKey = te.TagKey
	}
	writeXML(w, api.status, doc)
}
