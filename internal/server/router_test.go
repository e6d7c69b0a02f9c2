package server

import (
	"net/http/httptest"
	"testing"
)

func TestAccessKeyOf(t *testing.T) {
	cases := []struct {
		target, auth, want string
	}{
		{"/b/k", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261207/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc", "AKIDEXAMPLE"},
		{"/b/k", "AWS AKV2:c2lnbmF0dXJl", "AKV2"},
		{"/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKPRE%2F20261207%2Fus-east-1%2Fs3%2Faws4_request", "", "AKPRE"},
		{"/b/k?AWSAccessKeyId=AKV2PRE&Signature=x&Expires=1", "", "AKV2PRE"},
		{"/b/k", "", ""},
		{"/b/k", "Bearer token", ""},
		{"/b/k", "AWS4-HMAC-SHA256 Credential=", ""},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", c.target, nil)
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		if got := accessKeyOf(r); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.target, c.auth, got, c.want)
		}
	}
}

func FuzzAccessKeyOf(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=AK/20261207/us-east-1/s3/aws4_request")
	f.Add("AWS AK:sig")
	f.Fuzz(func(t *testing.T, auth string) {
		r := httptest.NewRequest("GET", "/b/k", nil)
		r.Header["Authorization"] = []string{auth}
		accessKeyOf(r) // must not panic; the key is only a hint for routing
	})
}
