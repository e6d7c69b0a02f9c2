// Package buckets serves the S3 operations on buckets themselves: CreateBucket, HeadBucket,
// DeleteBucket, ListBuckets and GetBucketLocation, and the bucket configuration APIs: ACL,
// policy and policy status, tagging, CORS, lifecycle, Object Lock configuration, default
// encryption, public access block, ownership controls and versioning, with the fixed answers of
// request payment, logging and the subresources Cairn does not have. A bucket's configuration is
// metadata of its container, which the access decisions of package s3core read back; this
// package only reads and writes it. It depends on package s3core alone, never on the object
// packages.
//
// Files: handler.go (Handler), bucket.go (create, head, delete, list, location, request
// payment, logging, unconfigured subresources), acl.go (bucket ACL), policy.go (bucket policy,
// policy status), tagging.go (bucket tags), cors.go (?cors; rules in package cors),
// lifecycle.go (?lifecycle; rules in package lifecycle), objectlock.go (Object Lock
// configuration), sse_bucket.go (default encryption), publicaccess.go (public access block,
// ownership controls), versioning.go (?versioning).
package buckets

import "github.com/cairn-store/cairn/internal/s3/s3core"

// Handler serves the bucket operations; package s3's operation table holds its methods.
type Handler struct{ *s3core.Front }
