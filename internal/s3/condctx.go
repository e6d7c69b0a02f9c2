package s3

import (
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/tagging"
)

// The request context of bucket policy conditions: what a request offers to the condition
// keys that access evaluates (access.Context). Keys whose source is absent from the request
// are left out, so that conditions see them absent as IAM's rules describe.

// conditionContext collects the context of a request, once it is authenticated.
func conditionContext(r *http.Request, rq *request, now time.Time) access.Context {
	c := access.Context{}
	// aws:SourceIp is the TCP peer: Cairn trusts no proxy header (X-Forwarded-For and the like
	// are the client's to forge), so behind a proxy it is the proxy's address.
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil && host != "" {
		c.Set(access.KeySourceIP, host)
	}
	c.Set(access.KeySecureTransport, strconv.FormatBool(r.TLS != nil))
	now = now.UTC()
	c.Set(access.KeyCurrentTime, now.Format(time.RFC3339))
	c.Set(access.KeyEpochTime, strconv.FormatInt(now.Unix(), 10))
	if v := r.Header.Get("User-Agent"); v != "" {
		c.Set(access.KeyUserAgent, v)
	}
	if v := r.Header.Get("Referer"); v != "" {
		c.Set(access.KeyReferer, v)
	}
	if id := rq.who; !id.Anonymous && id.Account != "" {
		c.Set(access.KeyPrincipalAccount, id.Account)
		if id.User != "" {
			c.Set(access.KeyUsername, id.User)
			c.Set(access.KeyUserID, id.Account+":"+id.User)
		}
	}
	switch rq.op {
	case opListObjects, opListObjectsV2, opListObjectVersions:
		for key, param := range map[string]string{access.KeyPrefix: "prefix", access.KeyDelimiter: "delimiter", access.KeyMaxKeys: "max-keys"} {
			if rq.query.Has(param) {
				c.Set(key, rq.query.Get(param))
			}
		}
	}
	headers := map[string]string{
		access.KeyACL:                   "X-Amz-Acl",
		access.KeySSE:                   "X-Amz-Server-Side-Encryption",
		access.KeyCopySource:            "X-Amz-Copy-Source",
		access.KeyMetadataDirective:     "X-Amz-Metadata-Directive",
		access.KeyObjectLockMode:        "X-Amz-Object-Lock-Mode",
		access.KeyObjectLockRetainUntil: "X-Amz-Object-Lock-Retain-Until-Date",
		access.KeyObjectLockLegalHold:   "X-Amz-Object-Lock-Legal-Hold",
	}
	for key, hdr := range headers {
		if v := r.Header.Get(hdr); v != "" {
			c.Set(key, v)
		}
	}
	if rq.query.Has("versionId") {
		c.Set(access.KeyVersionID, rq.query.Get("versionId"))
	}
	// s3:RequestObjectTag/<key> and s3:RequestObjectTagKeys come from x-amz-tagging (a tag
	// set that does not parse offers none: its write is refused later anyway).
	if v := r.Header.Get("X-Amz-Tagging"); v != "" {
		if set, err := tagging.ParseHeader(v); err == nil {
			keys := make([]string, 0, len(set))
			for _, t := range set {
				c.Set(access.KeyRequestObjectTag+t.Key, t.Value)
				keys = append(keys, t.Key)
			}
			c.Set(access.KeyRequestObjectTagKeys, keys...)
		}
	}
	return c
}

// withExistingTags is ctx with s3:ExistingObjectTag/<key> for each tag of an object.
func withExistingTags(ctx access.Context, obj *meta.Object) access.Context {
	set, err := tagging.Decode(obj.SysMeta[tagging.ObjectSysMetaKey])
	if err != nil || len(set) == 0 {
		return ctx
	}
	c := make(access.Context, len(ctx)+len(set))
	for k, v := range ctx {
		c[k] = v
	}
	for _, t := range set {
		c.Set(access.KeyExistingObjectTag+t.Key, t.Value)
	}
	return c
}
