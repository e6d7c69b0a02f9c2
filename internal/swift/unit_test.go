package swift

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

func TestParsePath(t *testing.T) {
	for path, want := range map[string]*Target{
		"/v1/AUTH_a":         {Account: "AUTH_a"},
		"/v1/AUTH_a/":        {Account: "AUTH_a"},
		"/v1/AUTH_a/c":       {Account: "AUTH_a", Container: "c"},
		"/v1/AUTH_a/c/":      {Account: "AUTH_a", Container: "c"},
		"/v1/AUTH_a/c/o":     {Account: "AUTH_a", Container: "c", Object: "o"},
		"/v1/AUTH_a/c/a//b/": {Account: "AUTH_a", Container: "c", Object: "a//b/"},
		"/v1/":               nil,
		"/v1//c/o":           nil,
		"/v2/AUTH_a":         nil,
		"/v1/AUTH_a//o":      nil,
	} {
		got, ok := parsePath(path)
		if want == nil {
			if ok {
				t.Errorf("parsePath(%q) = %+v, want refusal", path, got)
			}
			continue
		}
		if !ok || got != *want {
			t.Errorf("parsePath(%q) = %+v, %v; want %+v", path, got, ok, *want)
		}
	}
}

func TestIsSwiftPath(t *testing.T) {
	for p, want := range map[string]bool{"/auth/v1.0": true, "/auth/v1.0/": true, "/info": true, "/v1/AUTH_x": true, "/v1": true, "//v1/AUTH_x": true,
		"/": false, "/bucket": false, "/v1x": false, "/info/x": false, "/auth": false} {
		if IsSwiftPath(p) != want {
			t.Errorf("IsSwiftPath(%q) = %v", p, !want)
		}
	}
}

func TestCheckConditions(t *testing.T) {
	lm := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	get := func(h map[string]string, method string) error {
		r, _ := http.NewRequest(method, "/", nil)
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return CheckConditions(r, "abc", lm)
	}
	for _, tc := range []struct {
		h      map[string]string
		method string
		want   *Error
	}{
		{map[string]string{"If-Match": `"abc"`}, "GET", nil},
		{map[string]string{"If-Match": "x, abc"}, "GET", nil},
		{map[string]string{"If-Match": "x"}, "GET", ErrPreconditionFailed},
		{map[string]string{"If-None-Match": "abc"}, "GET", ErrNotModified},
		{map[string]string{"If-None-Match": "abc"}, "COPY", ErrPreconditionFailed},
		{map[string]string{"If-Modified-Since": lm.Format(http.TimeFormat)}, "GET", ErrNotModified},
		{map[string]string{"If-Modified-Since": lm.Add(-time.Second).Format(http.TimeFormat)}, "GET", nil},
		{map[string]string{"If-Unmodified-Since": lm.Add(-time.Second).Format(http.TimeFormat)}, "GET", ErrPreconditionFailed},
		{map[string]string{"If-Unmodified-Since": "garbage"}, "GET", nil},
		// Each condition counts on its own, as in Swift (RFC 9110 would let the first decide).
		{map[string]string{"If-Match": "abc", "If-Unmodified-Since": lm.Add(-time.Hour).Format(http.TimeFormat)}, "GET", ErrPreconditionFailed},
		{map[string]string{"If-None-Match": "x", "If-Modified-Since": lm.Add(time.Hour).Format(http.TimeFormat)}, "GET", ErrNotModified},
	} {
		err := get(tc.h, tc.method)
		if tc.want == nil && err != nil || tc.want != nil && err != tc.want {
			t.Errorf("%v %s: %v, want %v", tc.h, tc.method, err, tc.want)
		}
	}
}

func TestSwiftTimestamps(t *testing.T) {
	ts := meta.Timestamp(1_795_337_705_073_280_123)
	if got := swiftwire.Timestamp(ts); got != "1795337705.07328" {
		t.Errorf("swiftwire.Timestamp %q", got)
	}
	if got := swiftwire.LastModified(ts); !got.Equal(time.Unix(1_795_337_706, 0)) {
		t.Errorf("swiftwire.LastModified %v (Swift rounds up)", got)
	}
	if got := swiftwire.ListingTime(ts); got != "2026-11-22T08:55:05.073280" {
		t.Errorf("swiftwire.ListingTime %q", got)
	}
	if swiftwire.GuessContentType("a.txt") != "text/plain" || swiftwire.GuessContentType("noext") != "application/octet-stream" || swiftwire.GuessContentType("b.WAV") != "audio/x-wav" || swiftwire.GuessContentType("c.zip") != "application/zip" {
		t.Error("swiftwire.GuessContentType")
	}
}

func TestErrorTable(t *testing.T) {
	for err, status := range map[error]int{meta.ErrNotFound: 404, meta.ErrNotEmpty: 409, meta.ErrInvalidRange: 416,
		meta.ErrIncompleteBody: 499, meta.ErrUnavailable: 503, meta.ErrInsufficientStorage: 507, ErrUnprocessable: 422,
		&http.MaxBytesError{Limit: 1}: 413, http.ErrBodyNotAllowed: 500,
		fmt.Errorf("engine: reading body: %w", httpwire.ErrBodyTimeout): 408, ErrOverloaded: 503} {
		if got := ToError(err).Status; got != status {
			t.Errorf("%v → %d, want %d", err, got, status)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	f.Add("/v1/AUTH_a/c/o")
	f.Add("/v1/AUTH_a//x")
	f.Fuzz(func(t *testing.T, p string) {
		tg, ok := parsePath(p)
		if !ok {
			return
		}
		if tg.Account == "" || strings.Contains(tg.Account, "/") || strings.Contains(tg.Container, "/") || tg.Container == "" && tg.Object != "" {
			t.Fatalf("%q → %+v", p, tg)
		}
	})
}

func FuzzReadTempURLParams(f *testing.F) {
	f.Add("da39a3ee5e6b4b0d3255bfef95601890afd80709", "1700000000", "p/")
	f.Add("sha256:AAAA", "2026-11-22T15:04:05Z", "")
	f.Fuzz(func(t *testing.T, sig, expires, prefix string) {
		p := readTempURLParams(url.Values{"temp_url_sig": {sig}, "temp_url_expires": {expires}, "temp_url_prefix": {prefix}})
		if p.sig != sig || p.prefix != prefix || !p.hasSig || !p.hasExpires || !p.hasPrefix {
			t.Fatalf("readTempURLParams lost a parameter: %+v", p)
		}
	})
}
