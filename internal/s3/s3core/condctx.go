package s3core

import (
	"net/http"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/s3/tagging"
)

// The request context of bucket policy conditions: what a request offers to the condition
// keys that access evaluates (access.Context). Keys whose source is absent from the request
// are left out, so that conditions see them absent as IAM's rules describe.

// conditionHeaders are the condition keys that are a request header's value.
var conditionHeaders = map[string]string{
	access.KeyACL:                   "X-Amz-Acl",
	access.KeySSE:                   "X-Amz-Server-Side-Encryption",
	access.KeySSEKMSKeyID:           "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id",
	access.KeySSECAlgorithm:         "X-Amz-Server-Side-Encryption-Customer-Algorithm",
	access.KeyStorageClass:          "X-Amz-Storage-Class",
	access.KeyContentSHA256:         "X-Amz-Content-Sha256",
	access.KeyGrantRead:             "X-Amz-Grant-Read",
	access.KeyGrantWrite:            "X-Amz-Grant-Write",
	access.KeyGrantReadACP:          "X-Amz-Grant-Read-Acp",
	access.KeyGrantWriteACP:         "X-Amz-Grant-Write-Acp",
	access.KeyGrantFullControl:      "X-Amz-Grant-Full-Control",
	access.KeyCopySource:            "X-Amz-Copy-Source",
	access.KeyMetadataDirective:     "X-Amz-Metadata-Directive",
	access.KeyObjectLockMode:        "X-Amz-Object-Lock-Mode",
	access.KeyObjectLockRetainUntil: "X-Amz-Object-Lock-Retain-Until-Date",
	access.KeyObjectLockLegalHold:   "X-Amz-Object-Lock-Legal-Hold",
}

// listConditionParams are the condition keys of a listing, each a query parameter's value.
var listConditionParams = map[string]string{access.KeyPrefix: "prefix", access.KeyDelimiter: "delimiter", access.KeyMaxKeys: "max-keys"}

// conditionContext collects the context of a request, once it is authenticated.
func conditionContext(r *http.Request, rq *Request, now time.Time) access.Context {
	c := access.BaseContext(r.RemoteAddr, r.TLS != nil, now, r.Header.Get("User-Agent"), r.Header.Get("Referer"), rq.Who)
	switch rq.Op {
	case OpListObjects, OpListObjectsV2, OpListObjectVersions:
		for key, param := range listConditionParams {
			if rq.Query.Has(param) {
				c.Set(key, rq.Query.Get(param))
			}
		}
	}
	for key, hdr := range conditionHeaders {
		if v := r.Header.Get(hdr); v != "" {
			c.Set(key, v)
		}
	}
	if rq.Query.Has("versionId") {
		c.Set(access.KeyVersionID, rq.Query.Get("versionId"))
	}
	// s3:RequestObjectTag/<key> and s3:RequestObjectTagKeys come from x-amz-tagging (a tag
	// set that does not parse offers none: its write is refused later anyway).
	if v := r.Header.Get("X-Amz-Tagging"); v != "" {
		if set, err := tagging.ParseHeader(v); err == nil {
			setRequestTags(c, set)
		}
	}
	return c
}

// setRequestTags sets s3:RequestObjectTag/<key> and s3:RequestObjectTagKeys from a tag set.
func setRequestTags(c access.Context, set tagging.Set) {
	keys := make([]string, 0, len(set))
	for _, t := range set {
		c.Set(access.KeyRequestObjectTag+t.Key, t.Value)
		keys = append(keys, t.Key)
	}
	c.Set(access.KeyRequestObjectTagKeys, keys...)
}

// WithRequestTags is a copy of c with the request tags of set (PutObjectTagging's document).
func WithRequestTags(c access.Context, set tagging.Set) access.Context {
	out := make(access.Context, len(c)+len(set)+1)
	for k, v := range c {
		out[k] = v
	}
	setRequestTags(out, set)
	return out
}
