package sigv4

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// AWS's documented Signature Version 2 examples (S3 developer guide, "Signing and
// authenticating REST requests"), path style.
const (
	v2AK     = "AKIAIOSFODNN7EXAMPLE"
	v2Secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

func TestSignV2AWSExamples(t *testing.T) {
	tests := []struct {
		name, method, target, ctype, date, wantSTS, wantSig string
	}{
		{"object GET", "GET", "/johnsmith/photos/puppy.jpg", "", "Tue, 27 Mar 2007 19:36:42 +0000",
			"GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/puppy.jpg", "bWq2s1WEIj+Ydj0vQ697zp+IXMU="},
		{"object PUT", "PUT", "/johnsmith/photos/puppy.jpg", "image/jpeg", "Tue, 27 Mar 2007 21:15:45 +0000",
			"PUT\n\nimage/jpeg\nTue, 27 Mar 2007 21:15:45 +0000\n/johnsmith/photos/puppy.jpg", "MyyxeRY7whkBe+bq8fHCL/2kKUg="},
		{"list", "GET", "/johnsmith/?prefix=photos&max-keys=50&marker=puppy", "", "Tue, 27 Mar 2007 19:42:41 +0000",
			"GET\n\n\nTue, 27 Mar 2007 19:42:41 +0000\n/johnsmith/", "htDYFYduRNen8P9ZfE/s9SuKy0U="},
		{"acl", "GET", "/johnsmith/?acl", "", "Tue, 27 Mar 2007 19:44:46 +0000",
			"GET\n\n\nTue, 27 Mar 2007 19:44:46 +0000\n/johnsmith/?acl", "c2WLPFtWHVgbEmeEG93a4cG37dM="},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.target, nil)
			if tc.ctype != "" {
				r.Header.Set("Content-Type", tc.ctype)
			}
			r.Header.Set("Date", tc.date)
			sts := StringToSignV2(r, tc.date)
			if sts != tc.wantSTS {
				t.Fatalf("string to sign %q, want %q", sts, tc.wantSTS)
			}
			if got := SignV2(v2Secret, sts); got != tc.wantSig {
				t.Fatalf("signature %s, want %s", got, tc.wantSig)
			}
		})
	}
}

func TestStringToSignV2AmzHeaders(t *testing.T) {
	r := httptest.NewRequest("PUT", "/b/k?uploadId=xyz&partNumber=2&foo=bar", nil)
	r.Header.Set("Content-MD5", " abc== ")
	r.Header.Set("X-Amz-Meta-B", "2")
	r.Header.Add("X-Amz-Meta-A", " one ")
	r.Header.Add("X-Amz-Meta-A", "two")
	r.Header.Set("X-Amz-Date", "Tue, 27 Mar 2007 19:36:42 +0000")
	want := "PUT\nabc==\n\n\nx-amz-date:Tue, 27 Mar 2007 19:36:42 +0000\nx-amz-meta-a:one,two\nx-amz-meta-b:2\n/b/k?partNumber=2&uploadId=xyz"
	if got := StringToSignV2(r, ""); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestVerifyV2(t *testing.T) {
	store := StaticStore{v2AK: {AccessKey: v2AK, SecretKey: v2Secret, Account: "acct"}}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	date := now.Format(http.TimeFormat)
	signed := func(method, target string, mod func(*http.Request)) *http.Request {
		r := httptest.NewRequest(method, target, nil)
		r.Header.Set("Date", date)
		if mod != nil {
			mod(r)
		}
		dl := r.Header.Get("Date")
		if r.Header.Get("X-Amz-Date") != "" {
			dl = ""
		}
		r.Header.Set("Authorization", "AWS "+v2AK+":"+SignV2(v2Secret, StringToSignV2(r, dl)))
		return r
	}
	tests := []struct {
		name string
		req  *http.Request
		want error
	}{
		{"ok", signed("GET", "/b/k", nil), nil},
		{"ok x-amz-date", signed("GET", "/b/k?acl", func(r *http.Request) {
			r.Header.Set("Date", "garbage")
			r.Header.Set("X-Amz-Date", date)
		}), nil},
		{"tampered", func() *http.Request {
			r := signed("GET", "/b/k", nil)
			r.Header.Set("X-Amz-Meta-X", "1")
			return r
		}(), ErrSignatureDoesNotMatch},
		{"skewed", signed("GET", "/b/k", func(r *http.Request) {
			r.Header.Set("Date", now.Add(-16*time.Minute).Format(http.TimeFormat))
		}), ErrRequestTimeTooSkewed},
		{"no date", signed("GET", "/b/k", func(r *http.Request) { r.Header.Del("Date") }), ErrMissingDate},
		{"unknown key", func() *http.Request {
			r := signed("GET", "/b/k", nil)
			r.Header.Set("Authorization", "AWS nobody:abc")
			return r
		}(), ErrInvalidAccessKeyID},
		{"malformed", func() *http.Request {
			r := signed("GET", "/b/k", nil)
			r.Header.Set("Authorization", "AWS nocolon")
			return r
		}(), ErrMalformedV2Header},
		// A path-style request to a bucket sent as "/b", signed over AWS's canonical "/b/"
		// (botocore signs so), and the same for an object, which has no such form.
		{"bucket path signed with its slash", bucketSignedWithSlash("PUT", "/b?cors", date), nil},
		{"object path signed with a slash", bucketSignedWithSlash("PUT", "/b/k", date), ErrSignatureDoesNotMatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Verify(context.Background(), tc.req, store, now, nil)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if !a.SignatureV2 || a.Credential.Account != "acct" {
					t.Fatalf("auth %+v", a)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifyV2Query(t *testing.T) {
	store := StaticStore{v2AK: {AccessKey: v2AK, SecretKey: v2Secret, Account: "acct"}}
	// AWS's query-string example: Expires 1175139620.
	r := httptest.NewRequest("GET", "/johnsmith/photos/puppy.jpg", nil)
	sig := SignV2(v2Secret, StringToSignV2(r, "1175139620"))
	if sig != "NpgCjnDzrM+WFzoENXmpNDUsSn8=" {
		t.Fatalf("signature %s", sig)
	}
	target := "/johnsmith/photos/puppy.jpg?AWSAccessKeyId=" + v2AK + "&Expires=1175139620&Signature=" + url.QueryEscape(sig)
	before := time.Unix(1175139000, 0)
	if _, err := Verify(context.Background(), httptest.NewRequest("GET", target, nil), store, before, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(context.Background(), httptest.NewRequest("GET", target, nil), store, time.Unix(1175139621, 0), nil); !errors.Is(err, ErrRequestExpired) {
		t.Fatalf("expired: %v", err)
	}
	far := "/johnsmith/photos/puppy.jpg?AWSAccessKeyId=" + v2AK + "&Expires=5470000000&Signature=x"
	if _, err := Verify(context.Background(), httptest.NewRequest("GET", far, nil), store, before, nil); !errors.Is(err, ErrInvalidExpiresV2) {
		t.Fatalf("Expires past 32 bits: %v", err)
	}
	bad := "/johnsmith/photos/other.jpg?AWSAccessKeyId=" + v2AK + "&Expires=1175139620&Signature=" + url.QueryEscape(sig)
	if _, err := Verify(context.Background(), httptest.NewRequest("GET", bad, nil), store, before, nil); !errors.Is(err, ErrSignatureDoesNotMatch) {
		t.Fatalf("other path: %v", err)
	}
}

func FuzzParseAuthorizationV2(f *testing.F) {
	f.Add("AWS AKIAIOSFODNN7EXAMPLE:bWq2s1WEIj+Ydj0vQ697zp+IXMU=")
	f.Add("AWS a:b:c")
	f.Add("AWS :")
	f.Fuzz(func(t *testing.T, h string) {
		ak, sig, err := parseAuthorizationV2(h)
		if err == nil && (ak == "" || sig == "") {
			t.Fatalf("accepted %q with empty parts", h)
		}
	})
}

func FuzzStringToSignV2(f *testing.F) {
	f.Add("/b/k", "acl&uploadId=1&x=2", "x-amz-meta-a")
	f.Fuzz(func(t *testing.T, path, query, hdr string) {
		u := &url.URL{Path: path, RawQuery: query}
		r := &http.Request{Method: "GET", URL: u, Header: http.Header{}}
		r.Header.Set(hdr, "v")
		_ = StringToSignV2(r, "")
	})
}

func TestVerifyV2VirtualHost(t *testing.T) {
	// AWS's example as sent: Host johnsmith.s3.amazonaws.com, path /photos/puppy.jpg.
	store := StaticStore{v2AK: {AccessKey: v2AK, SecretKey: v2Secret, Account: "acct"}}
	r := httptest.NewRequest("GET", "/photos/puppy.jpg", nil)
	r.Host = "johnsmith.s3.amazonaws.com"
	r.Header.Set("Date", "Tue, 27 Mar 2007 19:36:42 +0000")
	r.Header.Set("Authorization", "AWS "+v2AK+":bWq2s1WEIj+Ydj0vQ697zp+IXMU=")
	now := time.Date(2007, 3, 27, 19, 40, 0, 0, time.UTC)
	if _, err := Verify(context.Background(), r, store, now, &Options{VirtualHostBucket: "johnsmith"}); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyEmptyOrRepeatedDate(t *testing.T) {
	// Swift's s3api test_service_error_no_date_header: a SigV4 request with an empty x-amz-date
	// next to the signed one is AccessDenied (ErrMissingDate), not a malformed header.
	store := StaticStore{v2AK: {AccessKey: v2AK, SecretKey: v2Secret, Account: "acct"}}
	now := time.Now()
	r := httptest.NewRequest("GET", "/", nil)
	if err := SignRequest(r, Credential{AccessKey: v2AK, SecretKey: v2Secret}, "us-east-1", now); err != nil {
		t.Fatal(err)
	}
	r.Header["X-Amz-Date"] = append(r.Header["X-Amz-Date"], "")
	if _, err := Verify(context.Background(), r, store, now, nil); !errors.Is(err, ErrMissingDate) {
		t.Fatalf("repeated x-amz-date: %v", err)
	}
}

// bucketSignedWithSlash is a request to target signed over its path with "/" added.
func bucketSignedWithSlash(method, target, date string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.Header.Set("Date", date)
	path, query, _ := strings.Cut(target, "?")
	res := path + "/"
	if query != "" {
		res += "?" + query
	}
	sts := method + "\n\n\n" + date + "\n" + res
	r.Header.Set("Authorization", "AWS "+v2AK+":"+SignV2(v2Secret, sts))
	return r
}
