package sigv4

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestMalformedHeaderMessages: S3's texts for a SigV4 Authorization header it cannot use.
func TestMalformedHeaderMessages(t *testing.T) {
	const sig = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"
	good := fmt.Sprintf("AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=%s", sig)
	three := "the authorization header requires three components: Credential, SignedHeaders, and Signature."
	for _, tc := range []struct {
		name, header, detail string
	}{
		{"algorithm alone", "AWS4-HMAC-SHA256", three},
		{"no Credential", strings.Replace(good, "Credential=AK/20130524/us-east-1/s3/aws4_request, ", "", 1), three},
		{"no SignedHeaders", strings.Replace(good, "SignedHeaders=host;x-amz-date, ", "", 1), three},
		{"no Signature", strings.Replace(good, ", Signature="+sig, "", 1), three},
		{"a credential of four parts", strings.Replace(good, "/us-east-1/", "/", 1), `the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`},
		{"a scope date of seven digits", strings.Replace(good, "/20130524/", "/2013052/", 1), `incorrect date format "2013052". This date in the credential must be in the format "yyyyMMdd".`},
		{"another service", strings.Replace(good, "/s3/", "/ec2/", 1), `incorrect service "ec2". This endpoint belongs to "s3".`},
		{"another terminal", strings.Replace(good, "aws4_request", "aws4_reques", 1), `incorrect terminal "aws4_reques". This endpoint uses "aws4_request".`},
		{"a component twice", good + ", Signature=" + sig, `the authorization component "Signature" is repeated.`},
		{"an unknown component", good + ", Extra=1", `the authorization component "Extra" is not recognised.`},
		{"a component without =", good + ", junk", `the authorization component "junk" is malformed.`},
	} {
		_, err := parseAuthorization(tc.header)
		var m *MalformedError
		if !errors.As(err, &m) || !errors.Is(err, ErrAuthorizationHeaderMalformed) {
			t.Errorf("%s: %v, want a MalformedError", tc.name, err)
			continue
		}
		if m.Detail != tc.detail || m.S3Message() != "The authorization header is malformed; "+tc.detail {
			t.Errorf("%s: %q, want %q", tc.name, m.Detail, tc.detail)
		}
	}
	for _, tc := range []struct {
		header string
		want   error
	}{
		{"Bearer token", ErrUnsupportedAuthType},
		{"AWS4-ECDSA-P256-SHA256 Credential=x", ErrUnsupportedAuthType},
	} {
		if _, err := parseAuthorization(tc.header); !errors.Is(err, tc.want) {
			t.Errorf("%q: %v, want %v", tc.header, err, tc.want)
		}
	}
	for _, h := range []string{"AWS HAHAHA", "AWS", "AWS ", "AWS :sig", "AWS ak:"} {
		if _, _, err := parseAuthorizationV2(h); !errors.Is(err, ErrMalformedV2Header) {
			t.Errorf("%q: %v, want ErrMalformedV2Header", h, err)
		}
	}
}
