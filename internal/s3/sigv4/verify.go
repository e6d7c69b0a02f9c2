package sigv4

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Credential is one access key pair. Account is opaque to this package: it
// names the owner the front end authorises against.
type Credential struct {
	AccessKey string
	SecretKey string
	Account   string
	// User, Admin and Root describe whom the key belongs to, for access decisions made above
	// this package (a key of the account's user User; Root: the server's root key).
	User        string
	Admin, Root bool
}

// CredentialStore resolves access keys. Lookup returns an error wrapping
// ErrUnknownAccessKey for keys it does not know; any other error is treated
// as an internal failure and returned unchanged (wrapped) by Verify.
type CredentialStore interface {
	Lookup(ctx context.Context, accessKey string) (Credential, error)
}

// StaticStore is an in-memory CredentialStore keyed by access key, for
// tests and single-tenant setups.
type StaticStore map[string]Credential

// Lookup implements CredentialStore.
func (s StaticStore) Lookup(_ context.Context, accessKey string) (Credential, error) {
	c, ok := s[accessKey]
	if !ok {
		return Credential{}, fmt.Errorf("%w: %q", ErrUnknownAccessKey, accessKey)
	}
	return c, nil
}

// Special x-amz-content-sha256 values.
const (
	UnsignedPayload                       = "UNSIGNED-PAYLOAD"
	StreamingPayload                      = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingPayloadTrailer               = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	StreamingUnsignedPayloadTrailer       = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	streamingECDSAPayloadPrefix           = "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD"
	defaultMaxSkew                        = 15 * time.Minute
	maxPresignExpiry                      = 7 * 24 * time.Hour
	DefaultMaxChunkSize             int64 = 16 << 20
)

// PayloadMode says how the request body is protected.
type PayloadMode int

const (
	// PayloadUnsigned: UNSIGNED-PAYLOAD (and every presigned URL without
	// a content hash). The body is not covered by the signature.
	PayloadUnsigned PayloadMode = iota
	// PayloadSigned: x-amz-content-sha256 is the hex SHA-256 of the body.
	PayloadSigned
	// PayloadStreamingSigned: STREAMING-AWS4-HMAC-SHA256-PAYLOAD.
	PayloadStreamingSigned
	// PayloadStreamingSignedTrailer: STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER.
	PayloadStreamingSignedTrailer
	// PayloadStreamingUnsignedTrailer: STREAMING-UNSIGNED-PAYLOAD-TRAILER.
	PayloadStreamingUnsignedTrailer
)

// Streaming reports whether the body is aws-chunked encoded.
func (m PayloadMode) Streaming() bool { return m >= PayloadStreamingSigned }

// Options tune Verify. The zero value (or nil) is S3's behaviour.
type Options struct {
	// Region, if set, is the only region accepted in the credential
	// scope. Empty accepts any region (the signature still binds it).
	Region string
	// MaxSkew is the allowed clock difference; 0 means 15 minutes.
	MaxSkew time.Duration
	// MaxChunkSize bounds one aws-chunked chunk; 0 means 16 MiB.
	MaxChunkSize int64
	// VirtualHostBucket is the bucket named by the Host of a virtual-hosted-style request;
	// SigV2 signs it as the first path segment.
	VirtualHostBucket string
}

// Auth is a successfully verified request.
type Auth struct {
	Credential    Credential // the matched key, including Account
	Region        string     // region from the credential scope
	Presigned     bool       // authenticated by query parameters
	Time          time.Time  // request time (X-Amz-Date or Date)
	Expires       time.Time  // presigned URLs only: end of validity
	SignatureV2   bool       // authenticated by AWS Signature Version 2 (HMAC-SHA1)
	SignedHeaders []string

	Payload       PayloadMode
	PayloadSHA256 string // hex, only for PayloadSigned
	// DecodedContentLength is x-amz-decoded-content-length for streaming
	// payloads, -1 otherwise.
	DecodedContentLength int64
	// DeclaredTrailers are the lower-cased names from x-amz-trailer.
	DeclaredTrailers []string

	signature    string // request (seed) signature
	amzDate      string // ISO8601 basic timestamp used in string-to-sign
	scope        string
	key          []byte
	maxChunkSize int64
}

// Verify authenticates r with SigV4 as S3 does: Authorization header or
// presigned query. It does not read the body; use Auth.Body for that.
// Every failure wraps one of the package's sentinel errors (plus, for
// CredentialStore failures other than unknown keys, the store's error).
func Verify(ctx context.Context, r *http.Request, store CredentialStore, now time.Time, opts *Options) (*Auth, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxSkew <= 0 {
		o.MaxSkew = defaultMaxSkew
	}
	if o.MaxChunkSize <= 0 {
		o.MaxChunkSize = DefaultMaxChunkSize
	}
	q := r.URL.Query()
	hasQueryV4 := q.Has("X-Amz-Algorithm") || q.Has("X-Amz-Credential") || q.Has("X-Amz-Signature")
	hasQueryV2 := q.Has("AWSAccessKeyId")
	authz := r.Header.Get("Authorization")
	switch {
	case authz != "" && (hasQueryV4 || hasQueryV2):
		return nil, fmt.Errorf("%w: Authorization header and query authentication both present", ErrMultipleAuthMechanisms)
	case strings.HasPrefix(strings.TrimLeft(authz, " "), "AWS ") || strings.TrimSpace(authz) == "AWS":
		return verifyHeaderV2(ctx, r, authz, store, now, &o)
	case authz != "":
		return verifyHeader(ctx, r, authz, store, now, &o)
	case hasQueryV4:
		return verifyQuery(ctx, r, q, store, now, &o)
	case hasQueryV2:
		return verifyQueryV2(ctx, r, q, store, now, &o)
	}
	return nil, ErrAnonymous
}

func lookup(ctx context.Context, store CredentialStore, ak string) (Credential, error) {
	c, err := store.Lookup(ctx, ak)
	if errors.Is(err, ErrUnknownAccessKey) {
		return Credential{}, fmt.Errorf("%w: %q", ErrInvalidAccessKeyID, ak)
	}
	if err != nil {
		return Credential{}, fmt.Errorf("sigv4: credential lookup for %q: %w", ak, err)
	}
	return c, nil
}

// requestDate returns the request time and the exact string that enters the
// string-to-sign, plus which header supplied it.
func requestDate(r *http.Request) (time.Time, string, string, error) {
	// A date header sent empty or twice is no valid date (S3: AccessDenied), even if another
	// value would parse.
	for _, name := range []string{"X-Amz-Date", "Date"} {
		if vs, ok := r.Header[name]; ok && (len(vs) != 1 || strings.TrimSpace(vs[0]) == "") {
			return time.Time{}, "", "", fmt.Errorf("%w: %s sent %d times or empty", ErrMissingDate, name, len(vs))
		}
	}
	if v := r.Header.Get("X-Amz-Date"); v != "" {
		t, err := time.Parse(timeFormat, v)
		if err != nil {
			return time.Time{}, "", "", fmt.Errorf("%w: X-Amz-Date %.40q", ErrMissingDate, v)
		}
		return t, v, "x-amz-date", nil
	}
	if v := r.Header.Get("Date"); v != "" {
		t, err := http.ParseTime(v)
		if err != nil {
			return time.Time{}, "", "", fmt.Errorf("%w: Date %.60q", ErrMissingDate, v)
		}
		t = t.UTC()
		return t, t.Format(timeFormat), "date", nil
	}
	return time.Time{}, "", "", ErrMissingDate
}

// checkUnsignedAmzHeaders rejects x-amz-* headers left out of the
// signature; exempt names are allowed unsigned.
func checkUnsignedAmzHeaders(r *http.Request, signed []string, exempt ...string) error {
	set := make(map[string]bool, len(signed)+len(exempt))
	for _, s := range signed {
		set[s] = true
	}
	for _, s := range exempt {
		set[s] = true
	}
	for name := range r.Header {
		l := strings.ToLower(name)
		if strings.HasPrefix(l, "x-amz-") && !set[l] {
			return fmt.Errorf("%w: %s", ErrHeadersNotSigned, l)
		}
	}
	return nil
}

func classifyPayload(v string) (PayloadMode, error) {
	switch v {
	case UnsignedPayload:
		return PayloadUnsigned, nil
	case StreamingPayload:
		return PayloadStreamingSigned, nil
	case StreamingPayloadTrailer:
		return PayloadStreamingSignedTrailer, nil
	case StreamingUnsignedPayloadTrailer:
		return PayloadStreamingUnsignedTrailer, nil
	}
	if strings.HasPrefix(v, streamingECDSAPayloadPrefix) {
		return 0, fmt.Errorf("%w: SigV4a streaming (%s) is not supported", ErrInvalidContentSHA256, v)
	}
	if isLowerHex(strings.ToLower(v), 64) {
		return PayloadSigned, nil
	}
	return 0, fmt.Errorf("%w: %.80q", ErrInvalidContentSHA256, v)
}

func verifyHeader(ctx context.Context, r *http.Request, authz string, store CredentialStore, now time.Time, o *Options) (*Auth, error) {
	// A SigV4 request without a valid date is AccessDenied even if its header is malformed
	// too (an empty x-amz-date next to the client's own also duplicates it in SignedHeaders).
	a, err := parseAuthorization(authz)
	t, amzDate, dateHeader, dateErr := requestDate(r)
	if err != nil {
		if dateErr != nil && errors.Is(err, ErrAuthorizationHeaderMalformed) {
			return nil, dateErr
		}
		return nil, err
	}
	if dateErr != nil {
		return nil, dateErr
	}
	if a.cred.date != t.Format(dateFormat) {
		return nil, malformedHeader("Invalid credential date %q. This date is not the same as X-Amz-Date: %q.", a.cred.date, t.Format(dateFormat))
	}
	if o.Region != "" && a.cred.region != o.Region {
		return nil, &MalformedError{Detail: fmt.Sprintf("the region '%s' is wrong; expecting '%s'", a.cred.region, o.Region), Region: o.Region}
	}
	if !contains(a.signedHeaders, dateHeader) {
		return nil, malformedHeader("the %s header must be signed.", dateHeader)
	}
	payloadHash := r.Header.Get("X-Amz-Content-Sha256")
	if payloadHash == "" {
		return nil, ErrMissingContentSHA256
	}
	mode, err := classifyPayload(payloadHash)
	if err != nil {
		return nil, err
	}
	if err := checkUnsignedAmzHeaders(r, a.signedHeaders); err != nil {
		return nil, err
	}
	cred, err := lookup(ctx, store, a.cred.accessKey)
	if err != nil {
		return nil, err
	}
	if d := now.Sub(t); d > o.MaxSkew || d < -o.MaxSkew {
		return nil, fmt.Errorf("%w: request time %s, server time %s", ErrRequestTimeTooSkewed, amzDate, now.UTC().Format(timeFormat))
	}
	auth := &Auth{
		Credential:           cred,
		Region:               a.cred.region,
		Time:                 t,
		SignedHeaders:        a.signedHeaders,
		Payload:              mode,
		DecodedContentLength: -1,
		signature:            a.signature,
		amzDate:              amzDate,
		scope:                a.cred.String(),
		key:                  signingKey(cred.SecretKey, a.cred.date, a.cred.region),
		maxChunkSize:         o.MaxChunkSize,
	}
	if mode == PayloadSigned {
		auth.PayloadSHA256 = strings.ToLower(payloadHash)
	}
	if mode.Streaming() {
		if err := auth.parseStreamingHeaders(r); err != nil {
			return nil, err
		}
	}
	creq := canonicalRequest(r, a.signedHeaders, canonicalQuery(r.URL.RawQuery, false), payloadHash)
	want := signHex(auth.key, stringToSign(amzDate, auth.scope, creq))
	if !sigEqual(want, a.signature) {
		return nil, fmt.Errorf("%w: access key %q", ErrSignatureDoesNotMatch, a.cred.accessKey)
	}
	return auth, nil
}

func (a *Auth) parseStreamingHeaders(r *http.Request) error {
	v := r.Header.Get("X-Amz-Decoded-Content-Length")
	if v == "" {
		return fmt.Errorf("%w: x-amz-decoded-content-length is required for aws-chunked payloads", ErrMissingSecurityHeader)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%w: x-amz-decoded-content-length %.40q", ErrIncompleteBody, v)
	}
	a.DecodedContentLength = n
	if a.Payload == PayloadStreamingSignedTrailer || a.Payload == PayloadStreamingUnsignedTrailer {
		for _, t := range r.Header.Values("X-Amz-Trailer") {
			for _, name := range strings.Split(t, ",") {
				if name = strings.ToLower(strings.TrimSpace(name)); name != "" {
					a.DeclaredTrailers = append(a.DeclaredTrailers, name)
				}
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
