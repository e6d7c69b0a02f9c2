package s3

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// target is what a request addresses: nothing (the service), a bucket, or an object.
type target struct {
	bucket string
	key    string
	// virtualHost: the bucket came from the Host (bucket.domain), not the path.
	virtualHost bool
}

// parseTarget finds the bucket and key of a request: virtual-hosted style when the Host is a
// subdomain of one of the configured domains (bucket.domain/key), path style otherwise
// (host/bucket/key). The key is the decoded path, unchanged otherwise: S3 keys may contain
// "//", "./" and trailing slashes.
func parseTarget(r *http.Request, domains []string) target {
	path := r.URL.Path
	host := strings.ToLower(r.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	for _, d := range domains {
		if bucket, ok := strings.CutSuffix(host, "."+d); ok && bucket != "" {
			return target{bucket: bucket, key: strings.TrimPrefix(path, "/"), virtualHost: true}
		}
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return target{bucket: bucket, key: key}
}

// Operation names, as S3 and the metrics call them.
const (
	opListBuckets             = "ListBuckets"
	opCreateBucket            = "CreateBucket"
	opHeadBucket              = "HeadBucket"
	opDeleteBucket            = "DeleteBucket"
	opGetBucketLocation       = "GetBucketLocation"
	opGetBucketVersioning     = "GetBucketVersioning"
	opPutBucketVersioning     = "PutBucketVersioning"
	opListObjectVersions      = "ListObjectVersions"
	opGetBucketACL            = "GetBucketAcl"
	opPutBucketACL            = "PutBucketAcl"
	opGetBucketPolicy         = "GetBucketPolicy"
	opPutBucketPolicy         = "PutBucketPolicy"
	opDeleteBucketPolicy      = "DeleteBucketPolicy"
	opGetBucketPolicyStatus   = "GetBucketPolicyStatus"
	opGetBucketRequestPayment = "GetBucketRequestPayment"
	opGetBucketLogging        = "GetBucketLogging"
	opGetBucketTagging        = "GetBucketTagging"
	opPutBucketTagging        = "PutBucketTagging"
	opDeleteBucketTagging     = "DeleteBucketTagging"
	opGetBucketCors           = "GetBucketCors"
	opPutBucketCors           = "PutBucketCors"
	opDeleteBucketCors        = "DeleteBucketCors"
	opPreflight               = "PreflightCORS" // OPTIONS on a bucket or object (cors.go)
	opGetObjectLockConfig     = "GetObjectLockConfiguration"
	opPutObjectLockConfig     = "PutObjectLockConfiguration"
	opGetObjectRetention      = "GetObjectRetention"
	opPutObjectRetention      = "PutObjectRetention"
	opGetObjectLegalHold      = "GetObjectLegalHold"
	opPutObjectLegalHold      = "PutObjectLegalHold"
	opGetPublicAccessBlock    = "GetPublicAccessBlock"
	opPutPublicAccessBlock    = "PutPublicAccessBlock"
	opDeletePublicAccessBlock = "DeletePublicAccessBlock"
	opGetOwnershipControls    = "GetBucketOwnershipControls"
	opPutOwnershipControls    = "PutBucketOwnershipControls"
	opDeleteOwnershipControls = "DeleteBucketOwnershipControls"
	opGetBucketLifecycle      = "GetBucketLifecycleConfiguration"
	opPutBucketLifecycle      = "PutBucketLifecycleConfiguration"
	opDeleteBucketLifecycle   = "DeleteBucketLifecycle"
	opGetBucketEncryption     = "GetBucketEncryption"
	opPutBucketEncryption     = "PutBucketEncryption"
	opDeleteBucketEncryption  = "DeleteBucketEncryption"
	opGetBucketUnconfigured   = "GetBucketUnconfigured" // website, encryption, ... that Cairn does not have
	opListObjects             = "ListObjects"
	opListObjectsV2           = "ListObjectsV2"
	opListMultipartUploads    = "ListMultipartUploads"
	opDeleteObjects           = "DeleteObjects"
	opPutObject               = "PutObject"
	opPostObject              = "PostObject" // a browser form upload (postobject.go)
	opCopyObject              = "CopyObject"
	opGetObject               = "GetObject"
	opHeadObject              = "HeadObject"
	opDeleteObject            = "DeleteObject"
	opGetObjectACL            = "GetObjectAcl"
	opPutObjectACL            = "PutObjectAcl"
	opGetObjectTagging        = "GetObjectTagging"
	opPutObjectTagging        = "PutObjectTagging"
	opDeleteObjectTagging     = "DeleteObjectTagging"
	opGetObjectAttributes     = "GetObjectAttributes"
	opCreateMultipartUpload   = "CreateMultipartUpload"
	opUploadPart              = "UploadPart"
	opUploadPartCopy          = "UploadPartCopy"
	opCompleteMultipartUpload = "CompleteMultipartUpload"
	opAbortMultipartUpload    = "AbortMultipartUpload"
	opListParts               = "ListParts"
	opUnknown                 = "Unknown"
)

// unsupportedSubresources are S3 query parameters that select an API Cairn does not implement,
// or implements only for some methods and targets (acl, policy, tagging, attributes, ...: the
// routes above take those first). A request naming one gets NotImplemented rather than being
// served as the plain operation (a PUT ?attributes must not overwrite the object).
var unsupportedSubresources = []string{
	"accelerate", "acl", "analytics", "attributes", "cors", "encryption", "intelligent-tiering",
	"inventory", "legal-hold", "lifecycle", "logging", "metadataTable", "metrics", "notification",
	"object-lock", "ownershipControls", "policy", "policyStatus", "publicAccessBlock",
	"replication", "requestPayment", "restore", "retention", "select", "session", "tagging",
	"torrent", "versioning", "website", "location", "renameObject",
}

// bucketGetUnconfigured are GET bucket subresources for settings a Cairn bucket never has; S3
// answers such a GET with a "no such configuration" 404, which clients expect. (GET ?policy is
// served: a bucket may have a policy, and so for ?cors and ?lifecycle.)
var bucketGetUnconfigured = map[string]*apiError{
	"website":     errNoSuchWebsite,
	"replication": errNoReplicationConfig,
}

// resolveOperation picks the S3 operation of a request from its method, target, query and
// headers. It returns NotImplemented for subresources Cairn lacks and MethodNotAllowed for
// methods that mean nothing on the target.
func resolveOperation(method string, t target, q url.Values, hdr http.Header) (string, error) {
	if t.bucket == "" {
		if method == http.MethodGet {
			return opListBuckets, nil
		}
		return opUnknown, errMethodNotAllowed
	}
	if t.key == "" {
		return resolveBucketOperation(method, q, hdr)
	}
	return resolveObjectOperation(method, q, hdr)
}

func resolveBucketOperation(method string, q url.Values, hdr http.Header) (string, error) {
	switch method {
	case http.MethodGet:
		switch {
		case q.Has("location"):
			return opGetBucketLocation, nil
		case q.Has("versioning"):
			return opGetBucketVersioning, nil
		case q.Has("acl"):
			return opGetBucketACL, nil
		case q.Has("policy"):
			return opGetBucketPolicy, nil
		case q.Has("policyStatus"):
			return opGetBucketPolicyStatus, nil
		case q.Has("requestPayment"):
			return opGetBucketRequestPayment, nil
		case q.Has("logging"):
			return opGetBucketLogging, nil
		case q.Has("tagging"):
			return opGetBucketTagging, nil
		case q.Has("cors"):
			return opGetBucketCors, nil
		case q.Has("object-lock"):
			return opGetObjectLockConfig, nil
		case q.Has("publicAccessBlock"):
			return opGetPublicAccessBlock, nil
		case q.Has("ownershipControls"):
			return opGetOwnershipControls, nil
		case q.Has("lifecycle"):
			return opGetBucketLifecycle, nil
		case q.Has("encryption"):
			return opGetBucketEncryption, nil
		case q.Has("uploads"):
			return opListMultipartUploads, nil
		case q.Has("versions"):
			return opListObjectVersions, nil
		}
		for sub := range bucketGetUnconfigured {
			if q.Has(sub) {
				return opGetBucketUnconfigured, nil
			}
		}
		if sub := unsupported(q); sub != "" {
			return opUnknown, errNotImplemented.withMessage("GET ?%s is not implemented.", sub)
		}
		if q.Get("list-type") == "2" {
			return opListObjectsV2, nil
		}
		if q.Has("list-type") {
			return opUnknown, errInvalidArgument.withMessage("Invalid list-type %q.", q.Get("list-type"))
		}
		return opListObjects, nil
	case http.MethodHead:
		return opHeadBucket, nil
	case http.MethodPut:
		switch {
		case q.Has("acl"):
			return opPutBucketACL, nil
		case q.Has("policy"):
			return opPutBucketPolicy, nil
		case q.Has("versioning"):
			return opPutBucketVersioning, nil
		case q.Has("tagging"):
			return opPutBucketTagging, nil
		case q.Has("cors"):
			return opPutBucketCors, nil
		case q.Has("object-lock"):
			return opPutObjectLockConfig, nil
		case q.Has("publicAccessBlock"):
			return opPutPublicAccessBlock, nil
		case q.Has("ownershipControls"):
			return opPutOwnershipControls, nil
		case q.Has("lifecycle"):
			return opPutBucketLifecycle, nil
		case q.Has("encryption"):
			return opPutBucketEncryption, nil
		}
		if sub := unsupported(q); sub != "" {
			return opUnknown, errNotImplemented.withMessage("PUT ?%s is not implemented.", sub)
		}
		return opCreateBucket, nil
	case http.MethodDelete:
		switch {
		case q.Has("policy"):
			return opDeleteBucketPolicy, nil
		case q.Has("tagging"):
			return opDeleteBucketTagging, nil
		case q.Has("cors"):
			return opDeleteBucketCors, nil
		case q.Has("publicAccessBlock"):
			return opDeletePublicAccessBlock, nil
		case q.Has("ownershipControls"):
			return opDeleteOwnershipControls, nil
		case q.Has("lifecycle"):
			return opDeleteBucketLifecycle, nil
		case q.Has("encryption"):
			return opDeleteBucketEncryption, nil
		}
		if sub := unsupported(q); sub != "" {
			return opUnknown, errNotImplemented.withMessage("DELETE ?%s is not implemented.", sub)
		}
		return opDeleteBucket, nil
	case http.MethodPost:
		if q.Has("delete") {
			return opDeleteObjects, nil
		}
		if sub := unsupported(q); sub != "" {
			return opUnknown, errNotImplemented.withMessage("POST ?%s is not implemented.", sub)
		}
		if isFormPost(hdr) {
			return opPostObject, nil
		}
		return opUnknown, errPreconditionFailed.withMessage("Bucket POST must be of the enclosure-type multipart/form-data")
	}
	return opUnknown, errMethodNotAllowed
}

func resolveObjectOperation(method string, q url.Values, hdr http.Header) (string, error) {
	hasUpload := q.Has("uploadId")
	switch method {
	case http.MethodGet:
		switch {
		case q.Has("acl"):
			return opGetObjectACL, nil
		case q.Has("tagging"):
			return opGetObjectTagging, nil
		case q.Has("retention"):
			return opGetObjectRetention, nil
		case q.Has("legal-hold"):
			return opGetObjectLegalHold, nil
		case q.Has("attributes"):
			return opGetObjectAttributes, nil
		}
		if sub := unsupported(q); sub != "" {
			return opUnknown, errNotImplemented.withMessage("GET ?%s is not implemented.", sub)
		}
		if hasUpload {
			return opListParts, nil
		}
		return opGetObject, nil
	case http.MethodHead:
		return opHeadObject, nil
	case http.MethodPut:
		switch {
		case q.Has("acl"):
			return opPutObjectACL, nil
		case q.Has("tagging"):
			return opPutObjectTagging, nil
		case q.Has("retention"):
			return opPutObjectRetention, nil
		case q.Has("legal-hold"):
			return opPutObjectLegalHold, nil
		}
		if sub := unsupported(q); sub != "" {
			return opUnknown, errNotImplemented.withMessage("PUT ?%s is not implemented.", sub)
		}
		copying := hdr.Get("X-Amz-Copy-Source") != ""
		if hasUpload || q.Has("partNumber") {
			if copying {
				return opUploadPartCopy, nil
			}
			return opUploadPart, nil
		}
		if copying {
			return opCopyObject, nil
		}
		return opPutObject, nil
	case http.MethodDelete:
		if q.Has("tagging") {
			return opDeleteObjectTagging, nil
		}
		if sub := unsupported(q); sub != "" {
			return opUnknown, errNotImplemented.withMessage("DELETE ?%s is not implemented.", sub)
		}
		if hasUpload {
			return opAbortMultipartUpload, nil
		}
		return opDeleteObject, nil
	case http.MethodPost:
		switch {
		case q.Has("uploads"):
			return opCreateMultipartUpload, nil
		case hasUpload:
			return opCompleteMultipartUpload, nil
		}
		return opUnknown, errNotImplemented.withMessage("POST on an object is implemented only for multipart uploads.")
	}
	return opUnknown, errMethodNotAllowed
}

func unsupported(q url.Values) string {
	for _, s := range unsupportedSubresources {
		if q.Has(s) {
			return s
		}
	}
	return ""
}
