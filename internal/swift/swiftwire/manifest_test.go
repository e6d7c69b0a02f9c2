package swiftwire

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

func TestParseManifest(t *testing.T) {
	segs, err := ParseManifest([]byte(`[{"path": "/c/o", "etag": "e", "size_bytes": 3}, {"path": "c/p", "etag": null, "range": "-2"}, {"data": "eA=="}]`), "c/m")
	if err != nil || len(segs) != 3 || *segs[0].ETag != "e" || *segs[0].SizeBytes != 3 || segs[1].ETag != nil ||
		*segs[1].Range != (meta.Range{End: -1, Suffix: 2}) || string(segs[2].Data) != "x" {
		t.Fatalf("ParseManifest = %+v, %v", segs, err)
	}
	for _, c := range []struct{ body, want string }{
		{`{}`, "Manifest must be a list.\n"},
		{`nope`, "Manifest must be valid JSON.\n"},
		{`[1]`, "Index 0: not a JSON object\n"},
		{`[{"etag": "x"}]`, "Index 0: expected keys to include one of 'data' or 'path'\n"},
		{`[{"path": "/c/o", "zz": 1, "aa": 2}]`, `Index 0: extraneous keys "aa", "zz"` + "\n"},
		{`[{"path": "/c/o"}, {"data": "eA==", "path": "/c/o"}]`, `Index 1: extraneous keys "path"` + "\n"},
		{`[{"path": 3}]`, "Index 0: \"path\" must be a string\n"},
		{`[{"path": "/c/o", "etag": 3}]`, "Index 0: \"etag\" must be a string or null (if provided)\n"},
		{`[{"path": "/c"}]`, "Index 0: path does not refer to an object. Path must be of the form /container/object.\n"},
		{`[{"path": "/c/o", "size_bytes": "x"}]`, "Index 0: invalid size_bytes\n"},
		{`[{"path": "/c/o", "size_bytes": 0}, {"path": "/c/p"}]`, "Index 0: too small; each segment must be at least 1 byte.\n"},
		{`[{"path": "/c/m"}]`, "Index 0: manifest must not include itself as a segment\n"},
		{`[{"path": "/c/o", "range": "x-y"}]`, "Index 0: invalid range\n"},
		{`[{"path": "/c/o", "range": "3-1"}]`, "Index 0: invalid range\n"},
		{`[{"path": "/c/o", "range": "1-2,4-5"}]`, "Index 0: multiple ranges (only one allowed)\n"},
		{`[{"path": "/c/o", "range": "5-", "size_bytes": 5}]`, "Index 0: unsatisfiable range\n"},
		{`[{"path": "/c/o"}, {"data": "e!=="}]`, "Index 1: data must be valid base64\n"},
		{`[{"path": "/c/o"}, {"data": ""}]`, "Index 1: too small; each segment must be at least 1 byte.\n"},
		{`[{"data": "eA=="}]`, "Inline data segments require at least one object-backed segment.\n"},
		{`[1, {"path": "/c"}]`, "Index 0: not a JSON object\nIndex 1: path does not refer to an object. Path must be of the form /container/object.\n"},
	} {
		_, err := ParseManifest([]byte(c.body), "c/m")
		var we *Error
		if !errors.As(err, &we) || we.Status != 400 || we.Body != c.want {
			t.Errorf("ParseManifest(%s) = %v, want 400 %q", c.body, err, c.want)
		}
	}
	if got := SLOETag([]meta.Segment{{ETag: "a"}, {ETag: "b"}}); got != "187ef4436122d1cc2f40dc2b92f0eba0" { // md5("ab")
		t.Errorf("SLOETag %s", got)
	}
	// md5("a:1-2;" + md5("x")) as Swift computes it
	if got, want := SLOETag([]meta.Segment{{ETag: "a", Ranged: true, Offset: 1, Length: 2}, {Data: []byte("x")}}), MD5Hex([]byte("a:1-2;"+MD5Hex([]byte("x")))); got != want {
		t.Errorf("SLOETag with range and data %s, want %s", got, want)
	}
}

func TestParseSegmentRange(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []meta.Range
		bad  bool
	}{
		{in: "1-2", want: []meta.Range{{Start: 1, End: 2}}},
		{in: " 1 - ", want: []meta.Range{{Start: 1, End: -1}}},
		{in: "-3", want: []meta.Range{{End: -1, Suffix: 3}}},
		{in: "0-0,5-", want: []meta.Range{{Start: 0, End: 0}, {Start: 5, End: -1}}},
		{in: "-", bad: true}, {in: "5", bad: true}, {in: "2-1", bad: true}, {in: "1--2", bad: true}, {in: "a-", bad: true},
	} {
		got, err := ParseSegmentRange(c.in)
		if c.bad != (err != nil) || (!c.bad && len(got) != len(c.want)) {
			t.Errorf("ParseSegmentRange(%q) = %+v, %v", c.in, got, err)
			continue
		}
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("ParseSegmentRange(%q) = %+v, want %+v", c.in, got, c.want)
			}
		}
	}
	if _, _, err := (mustRange(t, "-0")).Resolve(10); err == nil {
		t.Error("-0 selects something")
	}
}

func mustRange(t *testing.T, s string) meta.Range {
	rs, err := ParseSegmentRange(s)
	if err != nil || len(rs) != 1 {
		t.Fatalf("ParseSegmentRange(%q) = %v, %v", s, rs, err)
	}
	return rs[0]
}

func TestStrictB64(t *testing.T) {
	for in, want := range map[string]string{"eA==": "x", "eA===": "x", "eHk=": "xy", "eHl6": "xyz", "": ""} {
		if got, ok := StrictB64(in); !ok || string(got) != want {
			t.Errorf("StrictB64(%q) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{"eA", "e", "e A=", "eA==\n", "=eA=", "e-A="} {
		if _, ok := StrictB64(in); ok {
			t.Errorf("StrictB64(%q) accepted", in)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`[{"path": "/c/o", "etag": "e", "size_bytes": 3}]`))
	f.Add([]byte(`[{"path": "/c/o", "range": "1-2"}, {"data": "eA=="}, {"path": "c/p", "range": "-3", "size_bytes": "7"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		segs, err := ParseManifest(b, "c/m")
		if err != nil {
			if we := (*Error)(nil); !errors.As(err, &we) || we.Status != 400 {
				t.Fatalf("error %v", err)
			}
			return
		}
		object := len(segs) == 0 // an empty manifest is accepted, as Swift's
		for _, s := range segs {
			switch {
			case s.Data != nil:
				if len(s.Data) == 0 || s.Path != "" {
					t.Fatalf("accepted %+v", s)
				}
			default:
				object = true
				if !strings.Contains(strings.Trim(s.Path, "/"), "/") || strings.TrimLeft(s.Path, "/") == "c/m" {
					t.Fatalf("accepted path %q", s.Path)
				}
				if s.Range != nil && s.SizeBytes != nil {
					if _, _, err := s.Range.Resolve(*s.SizeBytes); err != nil {
						t.Fatalf("accepted unsatisfiable %+v of %d", *s.Range, *s.SizeBytes)
					}
				}
			}
		}
		if !object {
			t.Fatal("accepted only inline data")
		}
	})
}
