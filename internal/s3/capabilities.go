package s3

import "github.com/cairn-store/cairn/internal/s3/s3core"

// Capabilities describes the S3 front end's limits in the form of Swift's /info "s3api" entry,
// which Swift clients and Swift's own functional tests read to learn that a cluster speaks S3
// too, and within which limits.
func Capabilities() map[string]any {
	return map[string]any{
		"max_bucket_listing":       s3core.MaxListKeys,
		"max_parts_listing":        s3core.MaxListKeys,
		"max_upload_part_num":      s3core.MaxPartNumber,
		"max_multi_delete_objects": s3core.MaxDeleteObjects,
		"allow_multipart_uploads":  true,
		"min_segment_size":         s3core.MinPartSize,
		"s3_acl":                   true,
	}
}
