package objects

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3core"
)

func TestParseRange(t *testing.T) {
	cases := []struct {
		h    string
		want *meta.Range
		err  bool
	}{
		{"", nil, false},
		{"bytes=0-9", &meta.Range{Start: 0, End: 9}, false},
		{"bytes=5-", &meta.Range{Start: 5, End: -1}, false},
		{"bytes=-3", &meta.Range{Suffix: 3}, false},
		{"bytes=-0", nil, true},
		{"bytes=9-5", nil, false},     // invalid: ignored
		{"bytes=0-1,4-5", nil, false}, // several ranges: ignored
		{"items=0-1", nil, false},
		{"bytes=a-b", nil, false},
	}
	for _, c := range cases {
		got, err := parseRange(c.h)
		if (err != nil) != c.err || (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%q: got %+v, %v", c.h, got, err)
		}
	}
}

func TestConditions(t *testing.T) {
	lm := time.Date(2025, 5, 1, 12, 0, 0, 500, time.UTC)
	before, after := lm.Add(-time.Hour).Format(http.TimeFormat), lm.Add(time.Hour).Format(http.TimeFormat)
	same := lm.Format(http.TimeFormat)
	cases := []struct {
		c    conditions
		want *s3core.APIError
	}{
		{conditions{}, nil},
		{conditions{ifMatch: `"abc"`}, nil},
		{conditions{ifMatch: `"x", "abc"`}, nil},
		{conditions{ifMatch: "*"}, nil},
		{conditions{ifMatch: `"x"`}, s3core.ErrPreconditionFailed},
		{conditions{ifUnmodifiedSince: before}, s3core.ErrPreconditionFailed},
		{conditions{ifUnmodifiedSince: same}, nil},
		{conditions{ifMatch: `"abc"`, ifUnmodifiedSince: before}, nil}, // If-Match wins
		{conditions{ifNoneMatch: `"abc"`}, s3core.ErrNotModified},
		{conditions{ifNoneMatch: `"x"`}, nil},
		{conditions{ifModifiedSince: after}, s3core.ErrNotModified},
		{conditions{ifModifiedSince: same}, s3core.ErrNotModified},
		{conditions{ifModifiedSince: before}, nil},
		{conditions{ifNoneMatch: `"x"`, ifModifiedSince: after}, nil}, // If-None-Match wins
		{conditions{ifModifiedSince: "garbage"}, nil},
		{conditions{ifMatch: `"x"`, ifNoneMatch: `"abc"`}, s3core.ErrPreconditionFailed},
	}
	for i, c := range cases {
		err := c.c.evaluate("abc", lm, s3core.ErrNotModified)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("case %d %+v: %v", i, c.c, err)
		}
	}
}

func FuzzParseRange(f *testing.F) {
	f.Add("bytes=0-1")
	f.Add("bytes=-5")
	f.Fuzz(func(t *testing.T, h string) {
		r, err := parseRange(h)
		if r != nil && err != nil {
			t.Fatal("range and error")
		}
		if r != nil {
			_, _, _ = r.Resolve(100)
		}
	})
}
