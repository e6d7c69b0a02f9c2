package s3core

import (
	"net/http"
	"strings"
)

// MaxTaggingBodyBytes bounds a Tagging document: 50 tags of 128 + 256 characters of up to 4
// bytes each, escaped, fit well within it.
const MaxTaggingBodyBytes = 256 << 10

// setsTags reports whether a write sets tags by header, which takes s3:PutObjectTagging
// besides s3:PutObject. A copy sets them only with x-amz-tagging-directive: REPLACE; with COPY
// (the default) it keeps the source's.
func setsTags(op string, hdr http.Header) bool {
	if hdr.Get("X-Amz-Tagging") == "" {
		return false
	}
	if op == OpCopyObject {
		return strings.EqualFold(hdr.Get("X-Amz-Tagging-Directive"), "REPLACE")
	}
	return true
}
