package swift

import (
	"errors"
	"strings"
	"testing"
)

func TestParseObjectManifest(t *testing.T) {
	for _, tc := range []struct {
		in        string
		container string
		prefix    string
		bad       bool
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
		{in: "a%2Fb/p", bad: true},
		{in: "segs/%zz", bad: true},
		{in: "", bad: true},
	} {
		m, err := parseObjectManifest(tc.in)
		if tc.bad {
			if !errors.Is(err, errBadRequest) {
				t.Errorf("%q: err %v, want 400", tc.in, err)
			}
			continue
		}
		if err != nil || m.Container != tc.container || m.Prefix != tc.prefix {
			t.Errorf("%q: got %+v, %v; want %q/%q", tc.in, m, err, tc.container, tc.prefix)
		}
	}
}

func FuzzParseObjectManifest(f *testing.F) {
	for _, s := range []string{"segs/obj/", "segs", "/p", "a%2Fb/p", "c/p?x", "c/%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		m, err := parseObjectManifest(v)
		if err != nil {
			if !errors.Is(err, errBadRequest) {
				t.Fatalf("%q: non-400 error %v", v, err)
			}
			return
		}
		if m.Container == "" || m.Prefix == "" || strings.Contains(m.Container, "/") {
			t.Fatalf("%q: accepted %+v", v, m)
		}
	})
}
