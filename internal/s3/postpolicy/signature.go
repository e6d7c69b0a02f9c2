package postpolicy

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// AlgorithmV4 is the only x-amz-algorithm a SigV4 form may name.
const AlgorithmV4 = "AWS4-HMAC-SHA256"

// Signed is an authenticated form: whose key signed it, and the policy it signed.
type Signed struct {
	Credential  sigv4.Credential
	SignatureV2 bool
	Policy      *Policy
}

// Authenticate verifies a form's signature over its policy field and decodes the policy.
//
//   - SigV4 (any of x-amz-algorithm, x-amz-credential, x-amz-date, x-amz-signature present):
//     x-amz-signature is hex HMAC-SHA256 of the base64 policy with the key of the credential's
//     scope (AK/yyyymmdd/region/s3/aws4_request); region, when not empty, is the only region
//     accepted.
//   - SigV2 (AWSAccessKeyId or signature present): signature is base64 HMAC-SHA1 of the base64
//     policy with the secret key.
//   - Neither, and no policy: the form is anonymous, and Authenticate returns nil, nil; whether
//     anonymous writes are allowed is decided by the bucket's ACL and policy. A policy without a
//     signature is refused: nobody vouches for it.
//
// Errors: *Error (ErrInvalidArgument for a missing or malformed field, ErrInvalidPolicyDocument
// for a policy that does not decode), sigv4.ErrInvalidAccessKeyID for an unknown key,
// sigv4.ErrSignatureDoesNotMatch, or a failure of the store (wrapped).
func Authenticate(ctx context.Context, fields Fields, store sigv4.CredentialStore, region string) (*Signed, error) {
	v4 := fields.Has("x-amz-algorithm") || fields.Has("x-amz-credential") || fields.Has("x-amz-date") || fields.Has("x-amz-signature")
	v2 := fields.Has("awsaccesskeyid") || fields.Has("signature")
	var s *Signed
	var err error
	switch {
	case v4:
		s, err = verifyV4(ctx, fields, store, region)
	case v2:
		s, err = verifyV2(ctx, fields, store)
	case fields.Has("policy"):
		return nil, missingField("AWSAccessKeyId")
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if s.Policy, err = ParsePolicy(fields.Get("policy")); err != nil {
		return nil, err
	}
	return s, nil
}

// required returns the named fields' values, refusing the form at the first one missing.
func required(fields Fields, names ...string) ([]string, error) {
	vals := make([]string, len(names))
	for i, n := range names {
		v := fields.Get(n)
		if v == "" {
			return nil, missingField(n)
		}
		vals[i] = v
	}
	return vals, nil
}

func verifyV4(ctx context.Context, fields Fields, store sigv4.CredentialStore, region string) (*Signed, error) {
	v, err := required(fields, "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature", "policy")
	if err != nil {
		return nil, err
	}
	alg, credential, date, sig, policy := v[0], v[1], v[2], v[3], v[4]
	if alg != AlgorithmV4 {
		return nil, refuse(ErrInvalidArgument, "Unsupported x-amz-algorithm '%s': only %s is supported.", alg, AlgorithmV4)
	}
	if _, err := time.Parse("20060102T150405Z", date); err != nil {
		return nil, refuse(ErrInvalidArgument, "Invalid x-amz-date '%s': it must be yyyyMMdd'T'HHmmss'Z'.", date)
	}
	ak, day, credRegion, err := parseCredential(credential)
	if err != nil {
		return nil, refuse(ErrInvalidArgument, "Invalid x-amz-credential '%s': %v.", credential, err)
	}
	if region != "" && credRegion != region {
		return nil, refuse(ErrInvalidArgument, "Invalid x-amz-credential: the region '%s' is wrong; expecting '%s'.", credRegion, region)
	}
	cred, err := lookup(ctx, store, ak)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal([]byte(strings.ToLower(sig)), []byte(SignV4(cred.SecretKey, day, credRegion, policy))) {
		return nil, fmt.Errorf("%w: access key %q (POST form, SigV4)", sigv4.ErrSignatureDoesNotMatch, ak)
	}
	return &Signed{Credential: cred}, nil
}

// parseCredential splits AK/yyyymmdd/region/s3/aws4_request; the access key is everything
// before the last four parts, as in a header.
func parseCredential(v string) (ak, day, region string, err error) {
	parts := strings.Split(v, "/")
	n := len(parts)
	if n < 5 {
		return "", "", "", errors.New("want AK/date/region/s3/aws4_request")
	}
	ak, day, region = strings.Join(parts[:n-4], "/"), parts[n-4], parts[n-3]
	if _, err := time.Parse("20060102", day); err != nil || len(day) != 8 {
		return "", "", "", fmt.Errorf("invalid date %q", day)
	}
	switch {
	case ak == "":
		return "", "", "", errors.New("empty access key")
	case region == "":
		return "", "", "", errors.New("empty region")
	case parts[n-2] != "s3":
		return "", "", "", fmt.Errorf("incorrect service %q, expecting \"s3\"", parts[n-2])
	case parts[n-1] != "aws4_request":
		return "", "", "", fmt.Errorf("incorrect terminal %q, expecting \"aws4_request\"", parts[n-1])
	}
	return ak, day, region, nil
}

func verifyV2(ctx context.Context, fields Fields, store sigv4.CredentialStore) (*Signed, error) {
	v, err := required(fields, "AWSAccessKeyId", "signature", "policy")
	if err != nil {
		return nil, err
	}
	ak, sig, policy := v[0], v[1], v[2]
	cred, err := lookup(ctx, store, ak)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal([]byte(sig), []byte(SignV2(cred.SecretKey, policy))) {
		return nil, fmt.Errorf("%w: access key %q (POST form, SigV2)", sigv4.ErrSignatureDoesNotMatch, ak)
	}
	return &Signed{Credential: cred, SignatureV2: true}, nil
}

func lookup(ctx context.Context, store sigv4.CredentialStore, ak string) (sigv4.Credential, error) {
	c, err := store.Lookup(ctx, ak)
	if errors.Is(err, sigv4.ErrUnknownAccessKey) {
		return sigv4.Credential{}, fmt.Errorf("%w: %q", sigv4.ErrInvalidAccessKeyID, ak)
	}
	if err != nil {
		return sigv4.Credential{}, fmt.Errorf("postpolicy: credential lookup for %q: %w", ak, err)
	}
	return c, nil
}

// SignV4 is the x-amz-signature of a base64 policy: hex HMAC-SHA256 with the SigV4 key of
// the secret, day (yyyymmdd) and region, for s3.
func SignV4(secretKey, day, region, policyB64 string) string {
	return sigv4.SignStringV4(secretKey, day, region, policyB64)
}

// SignV2 is the signature field of a base64 policy: base64 HMAC-SHA1 with the secret key.
func SignV2(secretKey, policyB64 string) string { return sigv4.SignV2(secretKey, policyB64) }
