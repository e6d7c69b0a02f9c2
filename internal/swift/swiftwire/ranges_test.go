package swiftwire

import (
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

func TestParseRange(t *testing.T) {
	for h, want := range map[string]*meta.Range{
		"bytes=0-4":     {Start: 0, End: 4},
		"bytes=5-":      {Start: 5, End: -1},
		"bytes=-3":      {Suffix: 3, Start: -1, End: -1},
		"bytes= 1 - 2":  {Start: 1, End: 2},
		"BYTES = 0 - 9": {Start: 0, End: 9},
		"bytes=0-999 ":  {Start: 0, End: 999},
		"octets=0-1":    nil,
		"bytes=4-2":     nil,
		"bytes=0-1,3-4": nil,
		"items=0-1":     nil,
		"bytes=x-1":     nil,
		"":              nil,
	} {
		got := ParseRange(h)
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("ParseRange(%q) = %+v, want %+v", h, got, want)
		}
	}
	if _, _, err := ParseRange("bytes=-0").Resolve(10); err == nil {
		t.Error("bytes=-0 resolved")
	}
}

func TestParseRanges(t *testing.T) {
	rs := ParseRanges("bytes=0-1, 5-, -3")
	want := []meta.Range{{Start: 0, End: 1}, {Start: 5, End: -1}, {Suffix: 3, Start: -1, End: -1}}
	if len(rs) != len(want) {
		t.Fatalf("ParseRanges = %+v", rs)
	}
	for i := range rs {
		if rs[i] != want[i] {
			t.Errorf("range %d = %+v, want %+v", i, rs[i], want[i])
		}
	}
	if rs := ParseRanges("bytes=" + strings.Repeat("0-1,", MaxRanges) + "0-1"); rs != nil {
		t.Errorf("%d ranges accepted", len(rs))
	}
	if got := ResolveRanges(rs[:0], 10); got != nil {
		t.Errorf("resolve nothing = %v", got)
	}
	if got := ResolveRanges(want, 4); len(got) != 2 || got[0] != (Span{0, 2}) || got[1] != (Span{1, 3}) {
		t.Errorf("ResolveRanges = %v", got)
	}
	m := MultipartLayout{Boundary: "B", ContentType: "t/x", Size: 10}
	spans := []Span{{0, 2}, {5, 3}}
	body := m.PartHeader(spans[0]) + "01\r\n" + m.PartHeader(spans[1]) + "567\r\n" + m.Trailer()
	if m.ContentLength(spans) != int64(len(body)) || m.PartHeader(spans[1]) != "--B\r\nContent-Type: t/x\r\nContent-Range: bytes 5-7/10\r\n\r\n" {
		t.Errorf("layout %q, length %d", body, m.ContentLength(spans))
	}
}

func FuzzParseRanges(f *testing.F) {
	f.Add("bytes=0-10", int64(5))
	f.Add("bytes=-3,4-", int64(0))
	f.Fuzz(func(t *testing.T, h string, size int64) {
		rs := ParseRanges(h)
		if len(rs) > MaxRanges || size < 0 {
			t.Skip()
		}
		for _, s := range ResolveRanges(rs, size) {
			if s.Offset < 0 || s.Length <= 0 || s.Offset+s.Length > size {
				t.Fatalf("%q on %d: %+v", h, size, s)
			}
		}
	})
}
