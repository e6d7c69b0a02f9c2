package httpwire

import (
	"net/url"
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	want := time.Date(2026, 11, 22, 15, 30, 52, 0, time.UTC)
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"Sun, 22 Nov 2026 15:30:52 GMT", true},
		{"Sun, 22 Nov 2026 15:30:52 -0000", true}, // Python's email.utils.formatdate
		{"Sun, 22 Nov 2026 15:30:52 +0000", true},
		{"Sun, 22 Nov 2026 16:30:52 +0100", true},
		{"Sunday, 22-Nov-26 15:30:52 GMT", true},
		{"Sun Nov 22 15:30:52 2026", true},
		{"", false},
		{"a valid HTTP-date timestamp", false},
		{"2026-11-22T15:30:52Z", false},
	} {
		got, ok := ParseDate(tc.in)
		if ok != tc.ok || (ok && !got.Equal(want)) {
			t.Errorf("ParseDate(%q) = %v, %v; want %v, %v", tc.in, got, ok, want, tc.ok)
		}
	}
}

func TestETagListMatches(t *testing.T) {
	for _, tc := range []struct {
		list, etag string
		want       bool
	}{
		{`"abc"`, "abc", true},
		{`abc`, `"abc"`, true},
		{`W/"abc"`, "abc", true},
		{`"x", "abc"`, "abc", true},
		{`*`, "abc", true},
		{`"x","y"`, "abc", false},
		{``, "abc", false},
	} {
		if got := ETagListMatches(tc.list, tc.etag); got != tc.want {
			t.Errorf("ETagListMatches(%q, %q) = %v, want %v", tc.list, tc.etag, got, tc.want)
		}
	}
}

func TestUnescapeLenient(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                   "plain",
		"a%20b":                   "a b",
		"%E2%98%83":               "\u2603",
		"50% off":                 "50% off",
		"name with %-sign 🙂":      "name with %-sign 🙂",
		"%41%zz%4":                "A%zz%4",
		"%":                       "%",
		"%%41":                    "%A",
		"/bucket/key%2Fwith%2fsl": "/bucket/key/with/sl",
		"a+b":                     "a+b", // '+' is a plus in a path, not a space
	} {
		if got := UnescapeLenient(in); got != want {
			t.Errorf("UnescapeLenient(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzUnescapeLenient: wherever strict unescaping succeeds, the lenient one agrees with it, and
// escaping the result gives it back.
func FuzzUnescapeLenient(f *testing.F) {
	for _, s := range []string{"a%20b", "50% off", "%E2%98%83", "%", "%%41", "%4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := UnescapeLenient(s)
		if strict, err := url.PathUnescape(s); err == nil && strict != got {
			t.Fatalf("UnescapeLenient(%q) = %q, url.PathUnescape says %q", s, got, strict)
		}
		if back := UnescapeLenient(url.PathEscape(got)); back != got {
			t.Fatalf("round trip of %q: %q", got, back)
		}
	})
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"Sun, 22 Nov 2026 15:30:52 GMT", "Sun, 22 Nov 2026 15:30:52 -0000", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tm, ok := ParseDate(s); ok && tm.Location() != time.UTC {
			t.Fatalf("ParseDate(%q) = %v, not in UTC", s, tm)
		}
	})
}
