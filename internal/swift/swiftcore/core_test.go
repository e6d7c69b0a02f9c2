package swiftcore

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
)

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
		{map[string]string{"If-None-Match": "abc"}, "GET", errNotModified},
		{map[string]string{"If-None-Match": "abc"}, "COPY", ErrPreconditionFailed},
		{map[string]string{"If-Modified-Since": lm.Format(http.TimeFormat)}, "GET", errNotModified},
		{map[string]string{"If-Modified-Since": lm.Add(-time.Second).Format(http.TimeFormat)}, "GET", nil},
		{map[string]string{"If-Unmodified-Since": lm.Add(-time.Second).Format(http.TimeFormat)}, "GET", ErrPreconditionFailed},
		{map[string]string{"If-Unmodified-Since": "garbage"}, "GET", nil},
		// Each condition counts on its own, as in Swift (RFC 9110 would let the first decide).
		{map[string]string{"If-Match": "abc", "If-Unmodified-Since": lm.Add(-time.Hour).Format(http.TimeFormat)}, "GET", ErrPreconditionFailed},
		{map[string]string{"If-None-Match": "x", "If-Modified-Since": lm.Add(time.Hour).Format(http.TimeFormat)}, "GET", errNotModified},
	} {
		err := get(tc.h, tc.method)
		if tc.want == nil && err != nil || tc.want != nil && err != tc.want {
			t.Errorf("%v %s: %v, want %v", tc.h, tc.method, err, tc.want)
		}
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
