package objclient

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"syscall"
	"testing"
)

func TestSwiftURL(t *testing.T) {
	su, _ := parseBase("http://h:8080/v1/AUTH_test/")
	for _, tc := range []struct{ container, object, want string }{
		{"", "", "http://h:8080/v1/AUTH_test"},
		{"c", "", "http://h:8080/v1/AUTH_test/c"},
		{"c", "a b/c?d#e%f+g", "http://h:8080/v1/AUTH_test/c/a%20b/c%3Fd%23e%25f+g"},
		{"c", "/lead//double/", "http://h:8080/v1/AUTH_test/c//lead//double/"},
		{"c", "ü", "http://h:8080/v1/AUTH_test/c/%C3%BC"},
	} {
		u := swiftURL(su, tc.container, tc.object, "")
		if got := u.String(); got != tc.want {
			t.Errorf("%q %q: %s, want %s", tc.container, tc.object, got, tc.want)
		}
		// What the server decodes is the name itself.
		if p, err := url.PathUnescape(u.EscapedPath()); err != nil || !strings.HasSuffix(p, tc.object) {
			t.Errorf("%q: path %q decodes to %q, %v", tc.object, u.EscapedPath(), p, err)
		}
	}
}

func TestTextMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"<html><h1>Not Found</h1><p>The resource could not be found.</p></html>", "Not Found The resource could not be found."},
		{"Errors:\n/c_segments/k/slo/1/00000001, Etag Mismatch\n/c_segments/nope, 404 Not Found\n",
			"Errors: /c_segments/k/slo/1/00000001, Etag Mismatch; /c_segments/nope, 404 Not Found"},
		{"", ""},
		{"\xff\xfe bad utf-8", "? bad utf-8"},
		{strings.Repeat("é", 300), strings.Repeat("é", 100) + "…"},
	} {
		if got := textMessage([]byte(tc.in)); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestErrorKind(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&Error{Op: "put", Status: 503, Code: "SlowDown"}, "503 SlowDown"},
		{fmt.Errorf("wrapped: %w", &Error{Op: "get", Status: 404}), "404 Not Found"},
		{&Error{Op: "get", Status: 599}, "599"},
		{fmt.Errorf("x: %w", ErrShortBody), "short body"},
		{&url.Error{Op: "Get", URL: "u", Err: syscall.ECONNREFUSED}, "connection refused"},
		{&url.Error{Op: "Get", URL: "u", Err: syscall.ECONNRESET}, "connection reset"},
		{io.ErrUnexpectedEOF, "connection reset"},
		{errors.New("something else"), "network"},
	} {
		if got := ErrorKind(tc.err); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.err, got, tc.want)
		}
	}
	e := &Error{Op: "list", Status: 403, Code: "AccessDenied", Message: "Access Denied."}
	if e.Error() != "objclient: list: HTTP 403 AccessDenied: Access Denied." {
		t.Errorf("%q", e.Error())
	}
}

func TestRangeAndContentRange(t *testing.T) {
	for _, tc := range []struct {
		o    GetOptions
		want string
		bad  bool
	}{
		{GetOptions{}, "", false},
		{GetOptions{Ranged: true, RangeStart: 0, RangeEnd: 0}, "bytes=0-0", false},
		{GetOptions{Ranged: true, RangeStart: 7, RangeEnd: -1}, "bytes=7-", false},
		{GetOptions{Ranged: true, RangeStart: 7, RangeEnd: 6}, "", true},
		{GetOptions{Ranged: true, RangeStart: -1, RangeEnd: 6}, "", true},
	} {
		got, err := rangeHeader(tc.o)
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("%+v: %q, %v", tc.o, got, err)
		}
	}
	for in, want := range map[string]int64{"bytes 0-9/100": 100, "bytes 0-9/*": -1, "": -1, "bytes 0-9/x": -1} {
		if got := contentRangeTotal(in); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}

func TestCheckUploadID(t *testing.T) {
	for id, ok := range map[string]bool{
		"k/slo/123/": true, "k/slo/123": false, "k/slo//": false, "j/slo/123/": false, "k/slo/12a/": false,
	} {
		if err := checkUploadID("k", id); (err == nil) != ok {
			t.Errorf("%q: %v", id, err)
		}
	}
}
