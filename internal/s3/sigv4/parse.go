package sigv4

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// credentialScope is the parsed "AK/yyyymmdd/region/s3/aws4_request".
type credentialScope struct {
	accessKey string
	date      string // yyyymmdd
	region    string
}

func (c credentialScope) String() string { return scopeString(c.date, c.region) }

// parseCredential splits a Credential value. The access key is everything
// before the last four components, so keys are opaque to this package.
// Errors are plain descriptions; callers wrap them with the right sentinel
// for the header or query flavour.
func parseCredential(v string) (credentialScope, error) {
	parts := strings.Split(v, "/")
	if len(parts) < 5 {
		return credentialScope{}, errors.New(`the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`)
	}
	n := len(parts)
	c := credentialScope{
		accessKey: strings.Join(parts[:n-4], "/"),
		date:      parts[n-4],
		region:    parts[n-3],
	}
	if c.accessKey == "" {
		return credentialScope{}, errors.New(`the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`)
	}
	if _, err := time.Parse(dateFormat, c.date); err != nil || len(c.date) != 8 {
		return credentialScope{}, fmt.Errorf(`incorrect date format %q. This date in the credential must be in the format "yyyyMMdd".`, c.date)
	}
	if c.region == "" {
		return credentialScope{}, errors.New("the region '' is wrong; a region is needed")
	}
	if parts[n-2] != service {
		return credentialScope{}, fmt.Errorf(`incorrect service %q. This endpoint belongs to %q.`, parts[n-2], service)
	}
	if parts[n-1] != scopeTerminal {
		return credentialScope{}, fmt.Errorf(`incorrect terminal %q. This endpoint uses %q.`, parts[n-1], scopeTerminal)
	}
	return c, nil
}

// parseSignedHeaders validates a SignedHeaders list ("host;x-amz-date").
// Names must be non-empty, lower case and without duplicates; the order is
// kept verbatim because it is part of the canonical request.
func parseSignedHeaders(v string) ([]string, error) {
	if v == "" {
		return nil, fmt.Errorf("empty SignedHeaders")
	}
	names := strings.Split(v, ";")
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n == "" || n != strings.ToLower(n) || strings.ContainsAny(n, " \t:") {
			return nil, fmt.Errorf("SignedHeaders %q: invalid header name %q", v, n)
		}
		if seen[n] {
			return nil, fmt.Errorf("SignedHeaders %q: duplicate %q", v, n)
		}
		seen[n] = true
	}
	if !seen["host"] {
		return nil, fmt.Errorf("SignedHeaders %q: host must be signed", v)
	}
	return names, nil
}

// authorization is a parsed SigV4 Authorization header.
type authorization struct {
	cred          credentialScope
	signedHeaders []string
	signature     string // lower-case hex
}

// parseAuthorization parses
//
//	AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=<64 hex>
//
// The three components may come in any order, separated by commas with
// optional spaces. Unknown, duplicate or missing components are errors.
// Errors wrap ErrAuthorizationHeaderMalformed, or ErrSignatureV2Unsupported /
// ErrUnsupportedAuthType when the scheme is not SigV4.
func parseAuthorization(h string) (authorization, error) {
	scheme, rest, _ := strings.Cut(strings.TrimLeft(h, " "), " ")
	switch scheme {
	case algorithm:
	case "AWS":
		return authorization{}, fmt.Errorf("%w: Authorization scheme AWS", ErrSignatureV2Unsupported)
	default:
		return authorization{}, fmt.Errorf("%w: %.40q", ErrUnsupportedAuthType, scheme)
	}
	var a authorization
	var haveCred, haveSH, haveSig bool
	for _, comp := range strings.Split(rest, ",") {
		comp = strings.TrimSpace(comp)
		if comp == "" {
			continue
		}
		k, v, ok := strings.Cut(comp, "=")
		if !ok {
			return authorization{}, malformedHeader("the authorization component %.60q is malformed.", comp)
		}
		var err error
		switch k {
		case "Credential":
			if haveCred {
				return authorization{}, malformedHeader("the authorization component %q is repeated.", k)
			}
			haveCred = true
			a.cred, err = parseCredential(v)
		case "SignedHeaders":
			if haveSH {
				return authorization{}, malformedHeader("the authorization component %q is repeated.", k)
			}
			haveSH = true
			a.signedHeaders, err = parseSignedHeaders(v)
		case "Signature":
			if haveSig {
				return authorization{}, malformedHeader("the authorization component %q is repeated.", k)
			}
			haveSig = true
			a.signature = strings.ToLower(v)
			if !isLowerHex(a.signature, 64) {
				err = fmt.Errorf("the Signature %.70q is not 64 hexadecimal digits.", v)
			}
		default:
			err = fmt.Errorf("the authorization component %.40q is not recognised.", k)
		}
		if err != nil {
			return authorization{}, malformedHeader("%s", err.Error())
		}
	}
	if !haveCred || !haveSH || !haveSig {
		return authorization{}, malformedHeader("the authorization header requires three components: Credential, SignedHeaders, and Signature.")
	}
	return a, nil
}
