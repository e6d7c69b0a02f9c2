package s3

import (
	"net/http"
	"net/url"

	"github.com/cairn-store/cairn/internal/s3/objects"
	"github.com/cairn-store/cairn/internal/s3/s3core"
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

// resolveOperation picks the S3 operation of a request from its method, target, query and
// headers. It returns NotImplemented for subresources Cairn lacks and MethodNotAllowed for
// methods that mean nothing on the target.
func resolveOperation(method string, t s3core.Target, q url.Values, hdr http.Header) (string, error) {
	if t.Bucket == "" {
		if method == http.MethodGet {
			return s3core.OpListBuckets, nil
		}
		return s3core.OpUnknown, s3core.ErrMethodNotAllowed
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
			return s3core.OpGetBucketLocation, nil
		case q.Has("versioning"):
			return s3core.OpGetBucketVersioning, nil
		case q.Has("acl"):
			return s3core.OpGetBucketACL, nil
		case q.Has("policy"):
			return s3core.OpGetBucketPolicy, nil
		case q.Has("policyStatus"):
			return s3core.OpGetBucketPolicyStatus, nil
		case q.Has("requestPayment"):
			return s3core.OpGetBucketRequestPayment, nil
		case q.Has("logging"):
			return s3core.OpGetBucketLogging, nil
		case q.Has("tagging"):
			return s3core.OpGetBucketTagging, nil
		case q.Has("cors"):
			return s3core.OpGetBucketCors, nil
		case q.Has("object-lock"):
			return s3core.OpGetObjectLockConfig, nil
		case q.Has("publicAccessBlock"):
			return s3core.OpGetPublicAccessBlock, nil
		case q.Has("ownershipControls"):
			return s3core.OpGetOwnershipControls, nil
		case q.Has("lifecycle"):
			return s3core.OpGetBucketLifecycle, nil
		case q.Has("encryption"):
			return s3core.OpGetBucketEncryption, nil
		case q.Has("uploads"):
			return s3core.OpListMultipartUploads, nil
		case q.Has("versions"):
			return s3core.OpListObjectVersions, nil
		}
		for sub := range s3core.BucketGetUnconfigured {
			if q.Has(sub) {
				return s3core.OpGetBucketUnconfigured, nil
			}
		}
		if sub := unsupported(q); sub != "" {
			return s3core.OpUnknown, s3core.ErrNotImplemented.WithMessage("GET ?%s is not implemented.", sub)
		}
		if q.Get("list-type") == "2" {
			return s3core.OpListObjectsV2, nil
		}
		if q.Has("list-type") {
			return s3core.OpUnknown, s3core.ErrInvalidArgument.WithMessage("Invalid list-type %q.", q.Get("list-type"))
		}
		return s3core.OpListObjects, nil
	case http.MethodHead:
		return s3core.OpHeadBucket, nil
	case http.MethodPut:
		switch {
		case q.Has("acl"):
			return s3core.OpPutBucketACL, nil
		case q.Has("policy"):
			return s3core.OpPutBucketPolicy, nil
		case q.Has("versioning"):
			return s3core.OpPutBucketVersioning, nil
		case q.Has("tagging"):
			return s3core.OpPutBucketTagging, nil
		case q.Has("cors"):
			return s3core.OpPutBucketCors, nil
		case q.Has("object-lock"):
			return s3core.OpPutObjectLockConfig, nil
		case q.Has("publicAccessBlock"):
			return s3core.OpPutPublicAccessBlock, nil
		case q.Has("ownershipControls"):
			return s3core.OpPutOwnershipControls, nil
		case q.Has("lifecycle"):
			return s3core.OpPutBucketLifecycle, nil
		case q.Has("encryption"):
			return s3core.OpPutBucketEncryption, nil
		}
		if sub := unsupported(q); sub != "" {
			return s3core.OpUnknown, s3core.ErrNotImplemented.WithMessage("PUT ?%s is not implemented.", sub)
		}
		return s3core.OpCreateBucket, nil
	case http.MethodDelete:
		switch {
		case q.Has("policy"):
			return s3core.OpDeleteBucketPolicy, nil
		case q.Has("tagging"):
			return s3core.OpDeleteBucketTagging, nil
		case q.Has("cors"):
			return s3core.OpDeleteBucketCors, nil
		case q.Has("publicAccessBlock"):
			return s3core.OpDeletePublicAccessBlock, nil
		case q.Has("ownershipControls"):
			return s3core.OpDeleteOwnershipControls, nil
		case q.Has("lifecycle"):
			return s3core.OpDeleteBucketLifecycle, nil
		case q.Has("encryption"):
			return s3core.OpDeleteBucketEncryption, nil
		}
		if sub := unsupported(q); sub != "" {
			return s3core.OpUnknown, s3core.ErrNotImplemented.WithMessage("DELETE ?%s is not implemented.", sub)
		}
		return s3core.OpDeleteBucket, nil
	case http.MethodPost:
		if q.Has("delete") {
			return s3core.OpDeleteObjects, nil
		}
		if sub := unsupported(q); sub != "" {
			return s3core.OpUnknown, s3core.ErrNotImplemented.WithMessage("POST ?%s is not implemented.", sub)
		}
		if objects.IsFormPost(hdr) {
			return s3core.OpPostObject, nil
		}
		return s3core.OpUnknown, s3core.ErrPreconditionFailed.WithMessage("Bucket POST must be of the enclosure-type multipart/form-data")
	}
	return s3core.OpUnknown, s3core.ErrMethodNotAllowed
}

func resolveObjectOperation(method string, q url.Values, hdr http.Header) (string, error) {
	hasUpload := q.Has("uploadId")
	switch method {
	case http.MethodGet:
		switch {
		case q.Has("acl"):
			return s3core.OpGetObjectACL, nil
		case q.Has("tagging"):
			return s3core.OpGetObjectTagging, nil
		case q.Has("retention"):
			return s3core.OpGetObjectRetention, nil
		case q.Has("legal-hold"):
			return s3core.OpGetObjectLegalHold, nil
		case q.Has("attributes"):
			return s3core.OpGetObjectAttributes, nil
		}
		if sub := unsupported(q); sub != "" {
			return s3core.OpUnknown, s3core.ErrNotImplemented.WithMessage("GET ?%s is not implemented.", sub)
		}
		if hasUpload {
			return s3core.OpListParts, nil
		}
		return s3core.OpGetObject, nil
	case http.MethodHead:
		return s3core.OpHeadObject, nil
	case http.MethodPut:
		switch {
		case q.Has("acl"):
			return s3core.OpPutObjectACL, nil
		case q.Has("tagging"):
			return s3core.OpPutObjectTagging, nil
		case q.Has("retention"):
			return s3core.OpPutObjectRetention, nil
		case q.Has("legal-hold"):
			return s3core.OpPutObjectLegalHold, nil
		}
		if sub := unsupported(q); sub != "" {
			return s3core.OpUnknown, s3core.ErrNotImplemented.WithMessage("PUT ?%s is not implemented.", sub)
		}
		copying := hdr.Get("X-Amz-Copy-Source") != ""
		if hasUpload || q.Has("partNumber") {
			if copying {
				return s3core.OpUploadPartCopy, nil
			}
			return s3core.OpUploadPart, nil
		}
		if copying {
			return s3core.OpCopyObject, nil
		}
		return s3core.OpPutObject, nil
	case http.MethodDelete:
		if q.Has("tagging") {
			return s3core.OpDeleteObjectTagging, nil
		}
		if sub := unsupported(q); sub != "" {
			return s3core.OpUnknown, s3core.ErrNotImplemented.WithMessage("DELETE ?%s is not implemented.", sub)
		}
		if hasUpload {
			return s3core.OpAbortMultipartUpload, nil
		}
		return s3core.OpDeleteObject, nil
	case http.MethodPost:
		switch {
		case q.Has("uploads"):
			return s3core.OpCreateMultipartUpload, nil
		case hasUpload:
			return s3core.OpCompleteMultipartUpload, nil
		}
		return s3core.OpUnknown, s3core.ErrNotImplemented.WithMessage("POST on an object is implemented only for multipart uploads.")
	}
	return s3core.OpUnknown, s3core.ErrMethodNotAllowed
}

func unsupported(q url.Values) string {
	for _, s := range unsupportedSubresources {
		if q.Has(s) {
			return s
		}
	}
	return ""
}
