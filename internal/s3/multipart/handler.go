// Package multipart serves S3's multipart uploads: CreateMultipartUpload, UploadPart,
// UploadPartCopy, CompleteMultipartUpload, AbortMultipartUpload, ListParts and
// ListMultipartUploads. An upload is built out of ordinary objects in a hidden per-bucket
// container (s3core.UploadsContainer) and completed as a manifest over its parts. The package
// also owns the state of an upload and the claims of running completes, the lifecycle
// daemon's view of uploads, and the sweeper of abandoned uploads and parts. It builds on
// package objects (writes, copy sources, encryption) and s3core.
//
// Files: handler.go (Handler), multipart.go (the upload operations), multipart_state.go (upload
// states, completion claims, part attempts), multipart_list.go (ListParts,
// ListMultipartUploads), multipart_etag.go (the multipart ETag), multipart_lifecycle.go
// (lifecycled.Uploads), multipart_sweep.go (UploadSweeper), sse.go (encryption of parts).
package multipart

import "github.com/cairn-store/cairn/internal/s3/objects"

// Handler serves the multipart operations; package s3's operation table holds its methods.
type Handler struct{ *objects.Handler }
