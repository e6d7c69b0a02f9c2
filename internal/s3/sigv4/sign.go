package sigv4

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// unsignedHeaders are never signed by SignRequest/Presign: they are
// commonly rewritten by proxies or the HTTP stack.
var unsignedHeaders = map[string]bool{
	"authorization":     true,
	"user-agent":        true,
	"expect":            true,
	"connection":        true,
	"transfer-encoding": true,
	"x-amzn-trace-id":   true,
}

// headersToSign lists host plus every header on r (lower-cased, sorted),
// and content-length when the body length is known, as the AWS SDKs do.
func headersToSign(r *http.Request) []string {
	set := map[string]bool{"host": true}
	for name := range r.Header {
		if l := strings.ToLower(name); !unsignedHeaders[l] {
			set[l] = true
		}
	}
	if r.ContentLength > 0 {
		set["content-length"] = true
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SignRequest adds header-based SigV4 authentication to r (an outgoing
// request, or one built for a test). It sets X-Amz-Date, sets
// X-Amz-Content-Sha256 to UNSIGNED-PAYLOAD unless the caller already set it
// (to a hex hash or a STREAMING-* value), signs host and every other header
// present, and sets Authorization. The body is not read.
func SignRequest(r *http.Request, cred Credential, region string, now time.Time) error {
	if r.URL == nil {
		return fmt.Errorf("sigv4: sign: request has no URL")
	}
	if r.Header == nil {
		r.Header = make(http.Header)
	}
	now = now.UTC()
	amzDate := now.Format(timeFormat)
	r.Header.Set("X-Amz-Date", amzDate)
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = UnsignedPayload
		r.Header.Set("X-Amz-Content-Sha256", payload)
	}
	r.Header.Del("Authorization")
	signed := headersToSign(r)
	scope := scopeString(now.Format(dateFormat), region)
	key := signingKey(cred.SecretKey, now.Format(dateFormat), region)
	creq := canonicalRequest(r, signed, canonicalQuery(r.URL.RawQuery, false), payload)
	sig := signHex(key, stringToSign(amzDate, scope, creq))
	r.Header.Set("Authorization", algorithm+" Credential="+cred.AccessKey+"/"+scope+
		", SignedHeaders="+strings.Join(signed, ";")+", Signature="+sig)
	return nil
}

// Presign returns a presigned URL for r valid for expires (at most 7 days)
// from now. Host and any headers already on r are signed, so the eventual
// request must carry the same headers; the payload is UNSIGNED-PAYLOAD.
// r itself is not modified.
func Presign(r *http.Request, cred Credential, region string, now time.Time, expires time.Duration) (string, error) {
	if r.URL == nil {
		return "", fmt.Errorf("sigv4: presign: request has no URL")
	}
	if expires < time.Second || expires > maxPresignExpiry {
		return "", fmt.Errorf("sigv4: presign: expiry %v outside 1s..7d", expires)
	}
	now = now.UTC()
	date := now.Format(dateFormat)
	amzDate := now.Format(timeFormat)
	scope := scopeString(date, region)
	c := r.Clone(r.Context())
	u := *r.URL
	c.URL = &u
	if c.Header == nil {
		c.Header = make(http.Header)
	}
	signed := headersToSign(c)
	q := u.Query()
	q.Del("X-Amz-Signature")
	q.Set("X-Amz-Algorithm", algorithm)
	q.Set("X-Amz-Credential", cred.AccessKey+"/"+scope)
	q.Set("X-Amz-Date", amzDate)
	q.Set("X-Amz-Expires", strconv.FormatInt(int64(expires/time.Second), 10))
	q.Set("X-Amz-SignedHeaders", strings.Join(signed, ";"))
	// Send the query in canonical form so that what is signed is what is
	// on the wire, whatever the caller's encoding.
	u.RawQuery = canonicalQuery(encodeValues(q), false)
	creq := canonicalRequest(c, signed, u.RawQuery, UnsignedPayload)
	sig := signHex(signingKey(cred.SecretKey, date, region), stringToSign(amzDate, scope, creq))
	u.RawQuery += "&X-Amz-Signature=" + sig
	return u.String(), nil
}

// encodeValues is url.Values.Encode with %20 for spaces, so "+" never
// appears in a query this package generates.
func encodeValues(q url.Values) string {
	return strings.ReplaceAll(q.Encode(), "+", "%20")
}
