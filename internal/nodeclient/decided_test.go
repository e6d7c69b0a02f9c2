package nodeclient

import (
	"errors"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

func TestObjectGuardRoundTrips(t *testing.T) {
	for _, g := range []ObjectGuard{
		{},
		{Name: meta.ObjectName{Account: "AUTH_a", Container: "box", Object: "dir/ob\x00j"}, Seen: meta.Now()},
		{Name: meta.ObjectName{Object: "x"}, Seen: 1},
	} {
		got, err := DecodeObjectGuard(g.AppendTo(nil))
		if err != nil || got != g {
			t.Errorf("%+v decoded as %+v, %v", g, got, err)
		}
	}
	good := ObjectGuard{Name: meta.ObjectName{Account: "a", Container: "b", Object: "c"}, Seen: 5}.AppendTo(nil)
	for name, b := range map[string][]byte{
		"empty":          nil,
		"other version":  append([]byte{9}, good[1:]...),
		"truncated":      good[:len(good)-1],
		"trailing bytes": append(append([]byte{}, good...), 0),
		"negative seen":  {guardVersion, 1, 0, 0, 0},
	} {
		if _, err := DecodeObjectGuard(b); !errors.Is(err, ErrBadGuard) {
			t.Errorf("%s: err %v, want ErrBadGuard", name, err)
		}
	}
	if at, ok := DecodeDecided(EncodeDecided(42)); !ok || at != 42 {
		t.Errorf("decided 42 decoded as %d, %v", at, ok)
	}
	if _, ok := DecodeDecided([]byte("not eight")); ok {
		t.Error("nine bytes decoded as a decision")
	}
}

// Whatever bytes arrive in a guard, decoding never panics, and what decodes encodes to the
// same bytes' meaning.
func FuzzDecodeObjectGuard(f *testing.F) {
	f.Add(ObjectGuard{Name: meta.ObjectName{Account: "a", Container: "b", Object: "c"}, Seen: 5}.AppendTo(nil))
	f.Add([]byte{guardVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := DecodeObjectGuard(b)
		if err != nil {
			return
		}
		again, err := DecodeObjectGuard(g.AppendTo(nil))
		if err != nil || again != g {
			t.Fatalf("%x decoded to %+v, which re-decodes as %+v, %v", b, g, again, err)
		}
	})
}
