package swiftwire

import (
	"errors"
	"strings"
	"testing"
)

func FuzzParseDLOManifest(f *testing.F) {
	for _, s := range []string{"c/p", "c/", "/p", "c//p", "c/p?x", "c%2Fp/q", "%ff/x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		c, p, err := ParseDLOManifest(v)
		if err != nil {
			return
		}
		if c == "" || p == "" || strings.HasPrefix(p, "/") || strings.Contains(c, "/") {
			t.Fatalf("ParseDLOManifest(%q) = %q, %q", v, c, p)
		}
	})
}

func TestParseDLOManifest(t *testing.T) {
	for _, tc := range []struct {
		in, container, prefix string
		bad                   bool
	}{
		{in: "segs/obj/", container: "segs", prefix: "obj/"},
		{in: "segs/a", container: "segs", prefix: "a"},
		{in: "my%20segs/p%C3%A9", container: "my segs", prefix: "pé"},
		{in: "segs", bad: true},
		{in: "/prefix", bad: true},
		{in: "segs/", bad: true},
		{in: "segs//p", bad: true},
		{in: "segs/p?x", bad: true},
		{in: "segs/p&x", bad: true},
		{in: "", bad: true},
	} {
		c, p, err := ParseDLOManifest(tc.in)
		if tc.bad {
			var we *Error
			if !errors.As(err, &we) || we.Status != 400 || we.Body != "X-Object-Manifest must be in the format container/prefix" {
				t.Errorf("%q: err %v, want Swift's 400", tc.in, err)
			}
			continue
		}
		if err != nil || c != tc.container || p != tc.prefix {
			t.Errorf("%q: got %q, %q, %v; want %q, %q", tc.in, c, p, err, tc.container, tc.prefix)
		}
	}
}
