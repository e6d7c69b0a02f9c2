package sigv4

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// queryParam returns the single value of a required presign parameter.
func queryParam(q url.Values, name string) (string, error) {
	vs := q[name]
	switch {
	case len(vs) == 0 || vs[0] == "":
		return "", fmt.Errorf("%w: missing %s", ErrAuthorizationQueryParametersError, name)
	case len(vs) > 1:
		return "", fmt.Errorf("%w: %s given more than once", ErrAuthorizationQueryParametersError, name)
	}
	return vs[0], nil
}

func verifyQuery(ctx context.Context, r *http.Request, q url.Values, store CredentialStore, now time.Time, o *Options) (*Auth, error) {
	var p [6]string
	for i, name := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"} {
		v, err := queryParam(q, name)
		if err != nil {
			return nil, err
		}
		p[i] = v
	}
	alg, credStr, amzDate, expStr, shStr, sig := p[0], p[1], p[2], p[3], p[4], p[5]
	if alg != algorithm {
		return nil, fmt.Errorf("%w: X-Amz-Algorithm only supports %q", ErrAuthorizationQueryParametersError, algorithm)
	}
	cred, err := parseCredential(credStr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAuthorizationQueryParametersError, err)
	}
	t, err := time.Parse(timeFormat, amzDate)
	if err != nil {
		return nil, fmt.Errorf("%w: X-Amz-Date %.40q", ErrAuthorizationQueryParametersError, amzDate)
	}
	if cred.date != t.Format(dateFormat) {
		return nil, fmt.Errorf("%w: credential date %s does not match X-Amz-Date %s", ErrAuthorizationQueryParametersError, cred.date, amzDate)
	}
	if o.Region != "" && cred.region != o.Region {
		return nil, fmt.Errorf("%w: the region %q is wrong; expecting %q", ErrAuthorizationQueryParametersError, cred.region, o.Region)
	}
	secs, err := strconv.ParseInt(expStr, 10, 64)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %.40q", ErrExpiresNotNumber, expStr)
	case secs < 0:
		return nil, ErrExpiresNegative
	case secs > int64(maxPresignExpiry/time.Second):
		return nil, ErrExpiresTooLong
	}
	signed, err := parseSignedHeaders(shStr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAuthorizationQueryParametersError, err)
	}
	sig = strings.ToLower(sig)
	if !isLowerHex(sig, 64) {
		return nil, fmt.Errorf("%w: X-Amz-Signature is not 64 hex digits", ErrAuthorizationQueryParametersError)
	}
	// A presigned URL is normally used without x-amz-content-sha256; when a
	// client sends one anyway it is the payload hash (and may be unsigned).
	payloadHash := UnsignedPayload
	if v := r.Header.Get("X-Amz-Content-Sha256"); v != "" {
		payloadHash = v
	}
	mode, err := classifyPayload(payloadHash)
	if err != nil {
		return nil, err
	}
	if mode.Streaming() {
		return nil, fmt.Errorf("%w: aws-chunked payloads need header authentication", ErrInvalidContentSHA256)
	}
	if err := checkUnsignedAmzHeaders(r, signed, "x-amz-content-sha256"); err != nil {
		return nil, err
	}
	c, err := lookup(ctx, store, cred.accessKey)
	if err != nil {
		return nil, err
	}
	expires := t.Add(time.Duration(secs) * time.Second)
	if now.After(expires) {
		return nil, fmt.Errorf("%w: expired at %s, now %s", ErrRequestExpired, expires.Format(timeFormat), now.UTC().Format(timeFormat))
	}
	if t.Sub(now) > o.MaxSkew {
		return nil, fmt.Errorf("%w: X-Amz-Date %s is in the future", ErrRequestNotYetValid, amzDate)
	}
	auth := &Auth{
		Credential:           c,
		Region:               cred.region,
		Presigned:            true,
		Time:                 t,
		Expires:              expires,
		SignedHeaders:        signed,
		Payload:              mode,
		DecodedContentLength: -1,
		signature:            sig,
		amzDate:              amzDate,
		scope:                cred.String(),
		key:                  signingKey(c.SecretKey, cred.date, cred.region),
		maxChunkSize:         o.MaxChunkSize,
	}
	if mode == PayloadSigned {
		auth.PayloadSHA256 = strings.ToLower(payloadHash)
	}
	creq := canonicalRequest(r, signed, canonicalQuery(r.URL.RawQuery, true), payloadHash)
	want := signHex(auth.key, stringToSign(amzDate, auth.scope, creq))
	if !sigEqual(want, sig) {
		return nil, fmt.Errorf("%w: presigned, access key %q", ErrSignatureDoesNotMatch, cred.accessKey)
	}
	return auth, nil
}
