package sigv4

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// subResourcesV2 are the query parameters that enter the SigV2 canonicalized
// resource, as S3 (and Swift's s3api) list them.
var subResourcesV2 = map[string]bool{
	"acl": true, "cors": true, "delete": true, "lifecycle": true, "location": true,
	"logging": true, "notification": true, "partNumber": true, "policy": true,
	"requestPayment": true, "restore": true, "tagging": true, "torrent": true,
	"uploadId": true, "uploads": true, "versionId": true, "versioning": true,
	"versions": true, "website": true,
	"response-cache-control": true, "response-content-disposition": true,
	"response-content-encoding": true, "response-content-language": true,
	"response-content-type": true, "response-expires": true,
}

// parseAuthorizationV2 splits "AWS AccessKey:Signature". The access key is
// everything before the last colon.
func parseAuthorizationV2(h string) (accessKey, signature string, err error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(h)+" ", "AWS ")
	if !ok {
		return "", "", fmt.Errorf("%w: not a Signature V2 header", ErrUnsupportedAuthType)
	}
	rest = strings.TrimSpace(rest)
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 || i == len(rest)-1 {
		return "", "", fmt.Errorf("%w: Signature V2 header must be \"AWS AccessKeyId:Signature\"", ErrMalformedV2Header)
	}
	return rest[:i], rest[i+1:], nil
}

// StringToSignV2 is the Signature Version 2 string-to-sign of r. dateLine
// is the Date header (empty when x-amz-date is present) for header auth,
// or the Expires parameter for presigned URLs.
func StringToSignV2(r *http.Request, dateLine string) string {
	return stringToSignV2(r, dateLine, "", false)
}

// stringToSignV2 is the string-to-sign; bucketSlash adds the "/" AWS's canonical resource of a
// path-style request to a bucket has ("/bucket/" for a request to "/bucket").
func stringToSignV2(r *http.Request, dateLine, vhostBucket string, bucketSlash bool) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(strings.TrimSpace(r.Header.Get("Content-Md5")))
	b.WriteByte('\n')
	b.WriteString(strings.TrimSpace(r.Header.Get("Content-Type")))
	b.WriteByte('\n')
	b.WriteString(dateLine)
	b.WriteByte('\n')
	amz := map[string][]string{}
	for name, vals := range r.Header {
		l := strings.ToLower(name)
		if !strings.HasPrefix(l, "x-amz-") {
			continue
		}
		for _, v := range vals {
			amz[l] = append(amz[l], strings.TrimSpace(v))
		}
	}
	names := make([]string, 0, len(amz))
	for n := range amz {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte(':')
		b.WriteString(strings.Join(amz[n], ","))
		b.WriteByte('\n')
	}
	if vhostBucket != "" {
		b.WriteString("/" + vhostBucket)
	}
	b.WriteString(canonicalResourceV2(r, bucketSlash))
	return b.String()
}

// matchesV2 reports whether sig signs r. A path-style request to a bucket ("/bucket", no
// trailing slash) matches as the client sent it and as AWS canonicalizes it ("/bucket/",
// which botocore signs).
func matchesV2(secret string, r *http.Request, dateLine, vhostBucket, sig string) bool {
	if sigEqual(SignV2(secret, stringToSignV2(r, dateLine, vhostBucket, false)), sig) {
		return true
	}
	return vhostBucket == "" && bucketPathV2(r) && sigEqual(SignV2(secret, stringToSignV2(r, dateLine, "", true)), sig)
}

// bucketPathV2 reports whether r's path is one segment without a trailing slash: a path-style
// request to a bucket.
func bucketPathV2(r *http.Request) bool {
	p := r.URL.EscapedPath()
	return len(p) > 1 && !strings.Contains(p[1:], "/")
}

// canonicalResourceV2 is the path as sent plus the sorted sub-resources
// (decoded values, "name" alone when the value is empty).
func canonicalResourceV2(r *http.Request, bucketSlash bool) string {
	path := r.URL.EscapedPath()
	if p, _, _ := strings.Cut(r.RequestURI, "?"); strings.HasPrefix(p, "/") {
		path = p // the client's own encoding, which it signed
	}
	if bucketSlash {
		path += "/"
	}
	q, _ := url.ParseQuery(r.URL.RawQuery)
	var params []string
	for k, vs := range q {
		if !subResourcesV2[k] {
			continue
		}
		v := ""
		if len(vs) > 0 {
			v = vs[len(vs)-1]
		}
		if v == "" {
			params = append(params, k)
		} else {
			params = append(params, k+"="+v)
		}
	}
	if len(params) == 0 {
		return path
	}
	sort.Strings(params)
	return path + "?" + strings.Join(params, "&")
}

// SignV2 returns the base64 HMAC-SHA1 signature of a string-to-sign.
func SignV2(secretKey, stringToSign string) string {
	m := hmac.New(sha1.New, []byte(secretKey))
	m.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func verifyHeaderV2(ctx context.Context, r *http.Request, authz string, store CredentialStore, now time.Time, o *Options) (*Auth, error) {
	ak, sig, err := parseAuthorizationV2(authz)
	if err != nil {
		return nil, err
	}
	var t time.Time
	dateLine := ""
	if v := r.Header.Get("X-Amz-Date"); v != "" {
		t, err = parseV2Date(v)
	} else if v := r.Header.Get("Date"); v != "" {
		dateLine = v
		t, err = parseV2Date(v)
	} else {
		err = fmt.Errorf("%w: no Date or x-amz-date", ErrMissingDate)
	}
	if err != nil {
		return nil, err
	}
	cred, err := lookup(ctx, store, ak)
	if err != nil {
		return nil, err
	}
	if d := now.Sub(t); d > o.MaxSkew || d < -o.MaxSkew {
		return nil, fmt.Errorf("%w: request time %s, server time %s", ErrRequestTimeTooSkewed, t.UTC().Format(timeFormat), now.UTC().Format(timeFormat))
	}
	if !matchesV2(cred.SecretKey, r, dateLine, o.VirtualHostBucket, sig) {
		return nil, fmt.Errorf("%w: access key %q (Signature V2)", ErrSignatureDoesNotMatch, ak)
	}
	return &Auth{Credential: cred, Time: t, Payload: PayloadUnsigned, DecodedContentLength: -1, SignatureV2: true}, nil
}

func verifyQueryV2(ctx context.Context, r *http.Request, q url.Values, store CredentialStore, now time.Time, o *Options) (*Auth, error) {
	ak, sig, exp := q.Get("AWSAccessKeyId"), q.Get("Signature"), q.Get("Expires")
	if ak == "" || sig == "" || exp == "" {
		return nil, fmt.Errorf("%w: AWSAccessKeyId, Signature and Expires are all required", ErrAuthorizationQueryParametersError)
	}
	secs, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || secs < 0 || secs > math.MaxInt32 {
		return nil, fmt.Errorf("%w: Expires %.40q", ErrInvalidExpiresV2, exp)
	}
	cred, err := lookup(ctx, store, ak)
	if err != nil {
		return nil, err
	}
	expires := time.Unix(secs, 0)
	if now.After(expires) {
		return nil, fmt.Errorf("%w: expired at %s", ErrRequestExpired, expires.UTC().Format(timeFormat))
	}
	if !matchesV2(cred.SecretKey, r, exp, o.VirtualHostBucket, sig) {
		return nil, fmt.Errorf("%w: access key %q (Signature V2 query)", ErrSignatureDoesNotMatch, ak)
	}
	return &Auth{Credential: cred, Time: now, Expires: expires, Presigned: true, Payload: PayloadUnsigned, DecodedContentLength: -1, SignatureV2: true}, nil
}

// parseV2Date accepts the HTTP date formats and ISO 8601 basic/extended.
func parseV2Date(v string) (time.Time, error) {
	if t, err := http.ParseTime(v); err == nil {
		return t.UTC(), nil
	}
	for _, f := range []string{timeFormat, "2006-01-02T15:04:05Z", "2006-01-02T15:04:05.000Z", time.RFC1123Z} {
		if t, err := time.Parse(f, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: date %.60q", ErrMissingDate, v)
}
