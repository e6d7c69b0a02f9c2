package sigv4

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var (
	testCred  = Credential{AccessKey: "AKTEST", SecretKey: "secret/key", Account: "acct"}
	testStore = StaticStore{testCred.AccessKey: testCred}
	testNow   = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

type failingStore struct{}

func (failingStore) Lookup(context.Context, string) (Credential, error) {
	return Credential{}, errors.New("backend down")
}

// signed returns a request signed by SignRequest after mutate ran.
func signed(t *testing.T, mutate func(*http.Request)) *http.Request {
	t.Helper()
	r := httptest.NewRequest("PUT", "http://bucket.example.com/dir/obj%20name?partNumber=1&uploadId=x", strings.NewReader("payload"))
	r.Header.Set("X-Amz-Meta-A", "1")
	if mutate != nil {
		mutate(r)
	}
	if err := SignRequest(r, testCred, "us-east-1", testNow); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestVerifyErrors(t *testing.T) {
	tests := []struct {
		name  string
		req   func() *http.Request
		store CredentialStore
		now   time.Time
		opts  *Options
		want  error
	}{
		{name: "ok", req: func() *http.Request { return signed(t, nil) }},
		{name: "anonymous", req: func() *http.Request { return httptest.NewRequest("GET", "/b/k", nil) }, want: ErrAnonymous},
		{name: "sigv2 header", req: func() *http.Request {
			r := httptest.NewRequest("GET", "/b/k", nil)
			r.Header.Set("Authorization", "AWS AKTEST:c2lnbmF0dXJl")
			return r
		}, want: ErrMissingDate}, // SigV2 is verified (sigv2_test.go); this one has no date
		{name: "sigv2 query", req: func() *http.Request {
			return httptest.NewRequest("GET", "/b/k?AWSAccessKeyId=AKTEST&Expires=1&Signature=x", nil)
		}, want: ErrRequestExpired},
		{name: "bearer", req: func() *http.Request {
			r := httptest.NewRequest("GET", "/b/k", nil)
			r.Header.Set("Authorization", "Bearer abc")
			return r
		}, want: ErrUnsupportedAuthType},
		{name: "header and query", req: func() *http.Request {
			r := signed(t, nil)
			r.URL.RawQuery += "&X-Amz-Signature=00"
			return r
		}, want: ErrMultipleAuthMechanisms},
		{name: "unknown key", req: func() *http.Request { return signed(t, nil) }, store: StaticStore{}, want: ErrInvalidAccessKeyID},
		{name: "skew future", req: func() *http.Request { return signed(t, nil) }, now: testNow.Add(-16 * time.Minute), want: ErrRequestTimeTooSkewed},
		{name: "skew past", req: func() *http.Request { return signed(t, nil) }, now: testNow.Add(16 * time.Minute), want: ErrRequestTimeTooSkewed},
		{name: "skew within", req: func() *http.Request { return signed(t, nil) }, now: testNow.Add(14 * time.Minute)},
		{name: "tampered path", req: func() *http.Request {
			r := signed(t, nil)
			r.URL.Path, r.URL.RawPath = "/dir/other", ""
			return r
		}, want: ErrSignatureDoesNotMatch},
		{name: "tampered query", req: func() *http.Request {
			r := signed(t, nil)
			r.URL.RawQuery = "partNumber=2&uploadId=x"
			return r
		}, want: ErrSignatureDoesNotMatch},
		{name: "tampered signed header", req: func() *http.Request {
			r := signed(t, nil)
			r.Header.Set("X-Amz-Meta-A", "2")
			return r
		}, want: ErrSignatureDoesNotMatch},
		{name: "unsigned amz header", req: func() *http.Request {
			r := signed(t, nil)
			r.Header.Set("X-Amz-Acl", "public-read")
			return r
		}, want: ErrHeadersNotSigned},
		{name: "unsigned non-amz header is fine", req: func() *http.Request {
			r := signed(t, nil)
			r.Header.Set("User-Agent", "x")
			return r
		}},
		{name: "missing content sha", req: func() *http.Request {
			r := signed(t, nil)
			r.Header.Del("X-Amz-Content-Sha256")
			return r
		}, want: ErrMissingContentSHA256},
		{name: "invalid content sha", req: func() *http.Request {
			return signed(t, func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", "nope") })
		}, want: ErrInvalidContentSHA256},
		{name: "streaming needs decoded length", req: func() *http.Request {
			return signed(t, func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", StreamingPayload) })
		}, want: ErrMissingSecurityHeader},
		{name: "no date", req: func() *http.Request {
			r := signed(t, nil)
			r.Header.Del("X-Amz-Date")
			return r
		}, want: ErrMissingDate},
		{name: "credential date mismatch", req: func() *http.Request {
			r := signed(t, nil)
			r.Header.Set("X-Amz-Date", "20260302T000000Z")
			return r
		}, want: ErrAuthorizationHeaderMalformed},
		{name: "region pinned", req: func() *http.Request { return signed(t, nil) }, opts: &Options{Region: "eu-west-1"}, want: ErrAuthorizationHeaderMalformed},
		{name: "region pinned ok", req: func() *http.Request { return signed(t, nil) }, opts: &Options{Region: "us-east-1"}},
		{name: "wrong service", req: func() *http.Request {
			r := signed(t, nil)
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/s3/", "/ec2/", 1))
			return r
		}, want: ErrAuthorizationHeaderMalformed},
		{name: "store failure is not InvalidAccessKeyId", req: func() *http.Request { return signed(t, nil) }, store: failingStore{}, want: errNotSentinel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := tc.store
			if store == nil {
				store = testStore
			}
			now := tc.now
			if now.IsZero() {
				now = testNow
			}
			auth, err := Verify(context.Background(), tc.req(), store, now, tc.opts)
			switch {
			case tc.want == errNotSentinel:
				if err == nil || errors.Is(err, ErrInvalidAccessKeyID) {
					t.Fatalf("err = %v", err)
				}
			case tc.want == nil:
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if auth.Credential != testCred || auth.Presigned {
					t.Fatalf("auth = %+v", auth)
				}
			case !errors.Is(err, tc.want):
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

var errNotSentinel = errors.New("any non-sentinel error")

func TestPresignRoundTrip(t *testing.T) {
	r := httptest.NewRequest("GET", "http://bucket.example.com/a%20b/%C3%BC+=~?versionId=3&x=", nil)
	u, err := Presign(r, testCred, "auto", testNow, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(string) string
		now    time.Time
		want   error
	}{
		{name: "ok", now: testNow.Add(time.Minute)},
		{name: "expired", now: testNow.Add(time.Hour + time.Second), want: ErrRequestExpired},
		{name: "tampered expiry", mutate: func(s string) string { return strings.Replace(s, "X-Amz-Expires=3600", "X-Amz-Expires=7200", 1) }, now: testNow, want: ErrSignatureDoesNotMatch},
		{name: "missing signature", mutate: func(s string) string { return s[:strings.Index(s, "&X-Amz-Signature")] }, now: testNow, want: ErrAuthorizationQueryParametersError},
		{name: "bad algorithm", mutate: func(s string) string { return strings.Replace(s, "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA1", 1) }, now: testNow, want: ErrAuthorizationQueryParametersError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := u
			if tc.mutate != nil {
				s = tc.mutate(s)
			}
			req := httptest.NewRequest("GET", s, nil)
			auth, err := Verify(context.Background(), req, testStore, tc.now, nil)
			if tc.want == nil {
				if err != nil || !auth.Presigned || auth.Region != "auto" || auth.Payload != PayloadUnsigned {
					t.Fatalf("Verify = %+v, %v (url %s)", auth, err, s)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := Presign(r, testCred, "auto", testNow, 8*24*time.Hour); err == nil {
		t.Fatal("Presign accepted an 8-day expiry")
	}
}

func TestSignedBodyMismatch(t *testing.T) {
	for _, tc := range []struct {
		body, hashOf string
		want         error
	}{
		{"payload", "payload", nil},
		{"payload", "other", ErrContentSHA256Mismatch},
	} {
		r := signed(t, func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", sha256Hex(tc.hashOf)) })
		auth, err := Verify(context.Background(), r, testStore, testNow, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := auth.Body(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(body)
		if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
			t.Fatalf("err = %v, want %v", err, tc.want)
		}
		if tc.want == nil && string(got) != tc.body {
			t.Fatalf("body %q", got)
		}
	}
}

func TestCanonicalHelpers(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/", "/"},
		{"/a%20b/c+d", "/a%20b/c%2Bd"},
		{"/a%2Fb/c", "/a%2Fb/c"}, // escaped slash stays in its segment
		{"/%7Euser/~x", "/~user/~x"},
		{"//x/./../y", "//x/./../y"}, // no normalisation
		{"/%E2%82%AC", "/%E2%82%AC"},
	}
	for _, tc := range tests {
		r := httptest.NewRequest("GET", "http://h"+tc.in, nil)
		if got := canonicalURI(r.URL); got != tc.want {
			t.Errorf("canonicalURI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for in, want := range map[string]string{
		"":                      "",
		"b=2&a=1&a=0":           "a=0&a=1&b=2",
		"acl":                   "acl=",
		"k=a+b&s=%2a":           "k=a%20b&s=%2A",
		"X-Amz-Signature=1&z=1": "X-Amz-Signature=1&z=1",
	} {
		if got := canonicalQuery(in, false); got != want {
			t.Errorf("canonicalQuery(%q) = %q, want %q", in, got, want)
		}
	}
	if got := canonicalQuery("X-Amz-Signature=1&z=1", true); got != "z=1" {
		t.Errorf("presign canonicalQuery = %q", got)
	}
	for in, want := range map[string]string{"  a   b  ": "a b", "a\tb": "a\tb", "": ""} {
		if got := trimAll(in); got != want {
			t.Errorf("trimAll(%q) = %q", in, got)
		}
	}
}

func TestParseAuthorization(t *testing.T) {
	const sig = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"
	good := fmt.Sprintf("AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-date, Signature=%s", sig)
	tests := []struct {
		in   string
		want error
	}{
		{good, nil},
		{strings.ReplaceAll(good, ", ", ","), nil},
		{fmt.Sprintf("AWS4-HMAC-SHA256 Signature=%s,SignedHeaders=host,Credential=AK/20130524/r/s3/aws4_request", sig), nil},
		{"AWS4-HMAC-SHA256", ErrAuthorizationHeaderMalformed},
		{strings.Replace(good, "Signature="+sig, "Signature=abc", 1), ErrAuthorizationHeaderMalformed},
		{strings.Replace(good, "aws4_request", "aws5_request", 1), ErrAuthorizationHeaderMalformed},
		{strings.Replace(good, "20130524", "2013052", 1), ErrAuthorizationHeaderMalformed},
		{strings.Replace(good, "host;range", "range", 1), ErrAuthorizationHeaderMalformed},
		{strings.Replace(good, "host;range", "Host;range", 1), ErrAuthorizationHeaderMalformed},
		{good + ", Signature=" + sig, ErrAuthorizationHeaderMalformed},
		{good + ", Extra=1", ErrAuthorizationHeaderMalformed},
		{"AWS AK:sig", ErrSignatureV2Unsupported},
		{"AWS4-ECDSA-P256-SHA256 Credential=x", ErrUnsupportedAuthType},
	}
	for _, tc := range tests {
		a, err := parseAuthorization(tc.in)
		if tc.want == nil {
			if err != nil || a.signature != sig || a.cred.accessKey != "AK" {
				t.Errorf("parseAuthorization(%q) = %+v, %v", tc.in, a, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("parseAuthorization(%q) err = %v, want %v", tc.in, err, tc.want)
		}
	}
}

func FuzzParseAuthorization(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024")
	f.Add("AWS AK:sig")
	f.Add("AWS4-HMAC-SHA256 Credential=/a//b/,,,=")
	f.Fuzz(func(t *testing.T, h string) {
		a, err := parseAuthorization(h)
		if err != nil {
			return
		}
		if !isLowerHex(a.signature, 64) || a.cred.accessKey == "" || !contains(a.signedHeaders, "host") {
			t.Fatalf("accepted invalid header %q: %+v", h, a)
		}
	})
}
