package s3core

import (
	"net"
	"net/http"
	"strings"
)

// Target is what a request addresses: nothing (the service), a bucket, or an object.
type Target struct {
	Bucket string
	Key    string
	// VirtualHost: the bucket came from the Host (bucket.domain), not the path.
	VirtualHost bool
}

// ParseTarget finds the bucket and key of a request: virtual-hosted style when the Host is a
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
	OpPostObject              = "PostObject" // a browser form upload (package objects, postobject.go)
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

// BucketGetUnconfigured are GET bucket subresources for settings a Cairn bucket never has; S3
// answers such a GET with a "no such configuration" 404, which clients expect. (GET ?policy is
// served: a bucket may have a policy, and so for ?cors and ?lifecycle.)
var BucketGetUnconfigured = map[string]*APIError{
	"website":     errNoSuchWebsite,
	"replication": errNoReplicationConfig,
}
