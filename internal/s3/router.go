package s3

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// target is what a request addresses: nothing (the service), a bucket, or an object.
type Target struct {
	Bucket string
	Key    string
	// virtualHost: the bucket came from the Host (bucket.domain), not the path.
	VirtualHost bool
}

// parseTarget finds the bucket and key of a request: virtual-hosted style when the Host is a
// subdomain of one of the configured domains (bucket.domain/key), path style otherwise
// (host/bucket/key). The key is the decoded path, unchanged otherwise: S3 keys may contain
// "//", "./" and trailing slashes.
func ParseTarget(r *http.Request, domains []string) Target {
	path := r.URL.Path
	host := strings.ToLower(r.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	for _, d := range domains {
		if bucket, ok := strings.CutSuffix(host, "."+d); ok && bucket != "" {
			return Target{Bucket: bucket, Key: strings.TrimPrefix(path, "/"), VirtualHost: true}
		}
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return Target{Bucket: bucket, Key: key}
}

// Operation names, as S3 and the metrics call them.
const (
	OpListBuckets             = "ListBuckets"
	OpCreateBucket            = "CreateBucket"
	OpHeadBucket              = "HeadBucket"
	OpDeleteBucket            = "DeleteBucket"
	OpGetBucketLocation       = "GetBucketLocation"
	OpGetBucketVersioning     = "GetBucketVersioning"
	OpPutBucketVersioning     = "PutBucketVersioning"
	OpListObjectVersions      = "ListObjectVersions"
	OpGetBucketACL            = "GetBucketAcl"
	OpPutBucketACL            = "PutBucketAcl"
	OpGetBucketPolicy         = "GetBucketPolicy"
	OpPutBucketPolicy         = "PutBucketPolicy"
	OpDeleteBucketPolicy      = "DeleteBucketPolicy"
	OpGetBucketPolicyStatus   = "GetBucketPolicyStatus"
	OpGetBucketRequestPayment = "GetBucketRequestPayment"
	OpGetBucketLogging        = "GetBucketLogging"
	OpGetBucketTagging        = "GetBucketTagging"
	OpPutBucketTagging        = "PutBucketTagging"
	OpDeleteBucketTagging     = "DeleteBucketTagging"
	OpGetBucketCors           = "GetBucketCors"
	OpPutBucketCors           = "PutBucketCors"
	OpDeleteBucketCors        = "DeleteBucketCors"
	OpPreflight               = "PreflightCORS" // OPTIONS on a bucket or object (cors.go)
	OpGetObjectLockConfig     = "GetObjectLockConfiguration"
	OpPutObjectLockConfig     = "PutObjectLockConfiguration"
	OpGetObjectRetention      = "GetObjectRetention"
	OpPutObjectRetention      = "PutObjectRetention"
	OpGetObjectLegalHold      = "GetObjectLegalHold"
	OpPutObjectLegalHold      = "PutObjectLegalHold"
	OpGetPublicAccessBlock    = "GetPublicAccessBlock"
	OpPutPublicAccessBlock    = "PutPublicAccessBlock"
	OpDeletePublicAccessBlock = "DeletePublicAccessBlock"
	OpGetOwnershipControls    = "GetBucketOwnershipControls"
	OpPutOwnershipControls    = "PutBucketOwnershipControls"
	OpDeleteOwnershipControls = "DeleteBucketOwnershipControls"
	OpGetBucketLifecycle      = "GetBucketLifecycleConfiguration"
	OpPutBucketLifecycle      = "PutBucketLifecycleConfiguration"
	OpDeleteBucketLifecycle   = "DeleteBucketLifecycle"
	OpGetBucketEncryption     = "GetBucketEncryption"
	OpPutBucketEncryption     = "PutBucketEncryption"
	OpDeleteBucketEncryption  = "DeleteBucketEncryption"
	OpGetBucketUnconfigured   = "GetBucketUnconfigured" // website, encryption, ... that Cairn does not have
	OpListObjects             = "ListObjects"
	OpListObjectsV2           = "ListObjectsV2"
	OpListMultipartUploads    = "ListMultipartUploads"
	OpDeleteObjects           = "DeleteObjects"
	OpPutObject               = "PutObject"
	OpPostObject              = "PostObject" // a browser form upload (postobject.go)
	OpCopyObject              = "CopyObject"
	OpGetObject               = "GetObject"
	OpHeadObject              = "HeadObject"
	OpDeleteObject            = "DeleteObject"
	OpGetObjectACL            = "GetObjectAcl"
	OpPutObjectACL            = "PutObjectAcl"
	OpGetObjectTagging        = "GetObjectTagging"
	OpPutObjectTagging        = "PutObjectTagging"
	OpDeleteObjectTagging     = "DeleteObjectTagging"
	OpGetObjectAttributes     = "GetObjectAttributes"
	OpCreateMultipartUpload   = "CreateMultipartUpload"
	OpUploadPart              = "UploadPart"
	OpUploadPartCopy          = "UploadPartCopy"
	OpCompleteMultipartUpload = "CompleteMultipartUpload"
	OpAbortMultipartUpload    = "AbortMultipartUpload"
	OpListParts               = "ListParts"
	OpUnknown                 = "Unknown"
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
var BucketGetUnconfigured = map[string]*APIError{
	"website":     errNoSuchWebsite,
	"replication": errNoReplicationConfig,
}

// resolveOperation picks the S3 operation of a request from its method, target, query and
// headers. It returns NotImplemented for subresources Cairn lacks and MethodNotAllowed for
// methods that mean nothing on the target.
func resolveOperation(method string, t Target, q url.Values, hdr http.Header) (string, error) {
	if t.Bucket == "" {
		if method == http.MethodGet {
			return OpListBuckets, nil
		}
		return OpUnknown, ErrMethodNotAllowed
	}
	if t.Key == "" {
		return resolveBucketOperation(method, q, hdr)
	}
	return resolveObjectOperation(method, q, hdr)
}

func resolveBucketOperation(method string, q url.Values, hdr http.Header) (string, error) {
	switch method {
	case http.MethodGet:
		switch {
		case q.Has("location"):
			return OpGetBucketLocation, nil
		case q.Has("versioning"):
			return OpGetBucketVersioning, nil
		case q.Has("acl"):
			return OpGetBucketACL, nil
		case q.Has("policy"):
			return OpGetBucketPolicy, nil
		case q.Has("policyStatus"):
			return OpGetBucketPolicyStatus, nil
		case q.Has("requestPayment"):
			return OpGetBucketRequestPayment, nil
		case q.Has("logging"):
			return OpGetBucketLogging, nil
		case q.Has("tagging"):
			return OpGetBucketTagging, nil
		case q.Has("cors"):
			return OpGetBucketCors, nil
		case q.Has("object-lock"):
			return OpGetObjectLockConfig, nil
		case q.Has("publicAccessBlock"):
			return OpGetPublicAccessBlock, nil
		case q.Has("ownershipControls"):
			return OpGetOwnershipControls, nil
		case q.Has("lifecycle"):
			return OpGetBucketLifecycle, nil
		case q.Has("encryption"):
			return OpGetBucketEncryption, nil
		case q.Has("uploads"):
			return OpListMultipartUploads, nil
		case q.Has("versions"):
			return OpListObjectVersions, nil
		}
		for sub := range BucketGetUnconfigured {
			if q.Has(sub) {
				return OpGetBucketUnconfigured, nil
			}
		}
		if sub := unsupported(q); sub != "" {
			return OpUnknown, ErrNotImplemented.WithMessage("GET ?%s is not implemented.", sub)
		}
		if q.Get("list-type") == "2" {
			return OpListObjectsV2, nil
		}
		if q.Has("list-type") {
			return OpUnknown, ErrInvalidArgument.WithMessage("Invalid list-type %q.", q.Get("list-type"))
		}
		return OpListObjects, nil
	case http.MethodHead:
		return OpHeadBucket, nil
	case http.MethodPut:
		switch {
		case q.Has("acl"):
			return OpPutBucketACL, nil
		case q.Has("policy"):
			return OpPutBucketPolicy, nil
		case q.Has("versioning"):
			return OpPutBucketVersioning, nil
		case q.Has("tagging"):
			return OpPutBucketTagging, nil
		case q.Has("cors"):
			return OpPutBucketCors, nil
		case q.Has("object-lock"):
			return OpPutObjectLockConfig, nil
		case q.Has("publicAccessBlock"):
			return OpPutPublicAccessBlock, nil
		case q.Has("ownershipControls"):
			return OpPutOwnershipControls, nil
		case q.Has("lifecycle"):
			return OpPutBucketLifecycle, nil
		case q.Has("encryption"):
			return OpPutBucketEncryption, nil
		}
		if sub := unsupported(q); sub != "" {
			return OpUnknown, ErrNotImplemented.WithMessage("PUT ?%s is not implemented.", sub)
		}
		return OpCreateBucket, nil
	case http.MethodDelete:
		switch {
		case q.Has("policy"):
			return OpDeleteBucketPolicy, nil
		case q.Has("tagging"):
			return OpDeleteBucketTagging, nil
		case q.Has("cors"):
			return OpDeleteBucketCors, nil
		case q.Has("publicAccessBlock"):
			return OpDeletePublicAccessBlock, nil
		case q.Has("ownershipControls"):
			return OpDeleteOwnershipControls, nil
		case q.Has("lifecycle"):
			return OpDeleteBucketLifecycle, nil
		case q.Has("encryption"):
			return OpDeleteBucketEncryption, nil
		}
		if sub := unsupported(q); sub != "" {
			return OpUnknown, ErrNotImplemented.WithMessage("DELETE ?%s is not implemented.", sub)
		}
		return OpDeleteBucket, nil
	case http.MethodPost:
		if q.Has("delete") {
			return OpDeleteObjects, nil
		}
		if sub := unsupported(q); sub != "" {
			return OpUnknown, ErrNotImplemented.WithMessage("POST ?%s is not implemented.", sub)
		}
		if IsFormPost(hdr) {
			return OpPostObject, nil
		}
		return OpUnknown, ErrPreconditionFailed.WithMessage("Bucket POST must be of the enclosure-type multipart/form-data")
	}
	return OpUnknown, ErrMethodNotAllowed
}

func resolveObjectOperation(method string, q url.Values, hdr http.Header) (string, error) {
	hasUpload := q.Has("uploadId")
	switch method {
	case http.MethodGet:
		switch {
		case q.Has("acl"):
			return OpGetObjectACL, nil
		case q.Has("tagging"):
			return OpGetObjectTagging, nil
		case q.Has("retention"):
			return OpGetObjectRetention, nil
		case q.Has("legal-hold"):
			return OpGetObjectLegalHold, nil
		case q.Has("attributes"):
			return OpGetObjectAttributes, nil
		}
		if sub := unsupported(q); sub != "" {
			return OpUnknown, ErrNotImplemented.WithMessage("GET ?%s is not implemented.", sub)
		}
		if hasUpload {
			return OpListParts, nil
		}
		return OpGetObject, nil
	case http.MethodHead:
		return OpHeadObject, nil
	case http.MethodPut:
		switch {
		case q.Has("acl"):
			return OpPutObjectACL, nil
		case q.Has("tagging"):
			return OpPutObjectTagging, nil
		case q.Has("retention"):
			return OpPutObjectRetention, nil
		case q.Has("legal-hold"):
			return OpPutObjectLegalHold, nil
		}
		if sub := unsupported(q); sub != "" {
			return OpUnknown, ErrNotImplemented.WithMessage("PUT ?%s is not implemented.", sub)
		}
		copying := hdr.Get("X-Amz-Copy-Source") != ""
		if hasUpload || q.Has("partNumber") {
			if copying {
				return OpUploadPartCopy, nil
			}
			return OpUploadPart, nil
		}
		if copying {
			return OpCopyObject, nil
		}
		return OpPutObject, nil
	case http.MethodDelete:
		if q.Has("tagging") {
			return OpDeleteObjectTagging, nil
		}
		if sub := unsupported(q); sub != "" {
			return OpUnknown, ErrNotImplemented.WithMessage("DELETE ?%s is not implemented.", sub)
		}
		if hasUpload {
			return OpAbortMultipartUpload, nil
		}
		return OpDeleteObject, nil
	case http.MethodPost:
		switch {
		case q.Has("uploads"):
			return OpCreateMultipartUpload, nil
		case hasUpload:
			return OpCompleteMultipartUpload, nil
		}
		return OpUnknown, ErrNotImplemented.WithMessage("POST on an object is implemented only for multipart uploads.")
	}
	return OpUnknown, ErrMethodNotAllowed
}

func unsupported(q url.Values) string {
	for _, s := range unsupportedSubresources {
		if q.Has(s) {
			return s
		}
	}
	return ""
}
