package sse

import (
	"errors"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

func TestPartsLayoutRoundTrip(t *testing.T) {
	manifest := []meta.Segment{{Object: "up\x00a,b:c/1", Size: 100}, {Object: "up\x002", Size: 40}}
	enc := EncodeParts(manifest)
	obj := meta.Object{Size: 140, SysMeta: map[string]string{SysParts: enc}}
	l, err := LayoutOf(&obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.parts) != 2 || l.parts[0].Name != manifest[0].Object || l.parts[1].CipherSize != 40 {
		t.Fatalf("layout %+v from %q", l.parts, enc)
	}
	for _, bad := range []struct {
		enc  string
		size int64
	}{{enc, 141}, {"x:a", 1}, {"-1:a", -1}, {"10", 10}, {"10:%zz", 10}} {
		obj := meta.Object{Size: bad.size, SysMeta: map[string]string{SysParts: bad.enc}}
		if _, err := LayoutOf(&obj); !errors.Is(err, ErrBadLayout) {
			t.Errorf("parts %q in %d bytes: %v, want ErrBadLayout", bad.enc, bad.size, err)
		}
	}
}

func FuzzPartsLayout(f *testing.F) {
	f.Add(EncodeParts([]meta.Segment{{Object: "a", Size: 65552}, {Object: "b", Size: 17}}), int64(65569))
	f.Add("1:,2:x", int64(3))
	f.Fuzz(func(t *testing.T, enc string, size int64) {
		obj := meta.Object{Size: size, SysMeta: map[string]string{SysParts: enc}}
		l, err := LayoutOf(&obj)
		if err == nil && l == nil {
			t.Fatal("no layout and no error")
		}
	})
}
