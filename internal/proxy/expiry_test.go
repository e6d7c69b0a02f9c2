package proxy

import (
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

func TestExpiryEntryNames(t *testing.T) {
	e := ExpiryEntry{At: 1700000000, Name: meta.ObjectName{Account: "acme", Container: "box", Object: "a/b//c"}}
	if got := e.EntryName(); got != "1700000000-acme/box/a/b//c" {
		t.Fatalf("EntryName = %q", got)
	}
	back, err := ParseExpiryEntry(e.EntryName())
	if err != nil || back != e {
		t.Fatalf("ParseExpiryEntry = %+v, %v", back, err)
	}
	if ExpiryBucket(1700000000) != "1699999200" {
		t.Errorf("bucket %s", ExpiryBucket(1700000000))
	}
	for _, bad := range []string{"", "x-a/b/c", "123-a/b/c", "1700000000-a/b", "1700000000-a//c", "1700000000-/b/c", "-170000000-a/b/c"} {
		if _, err := ParseExpiryEntry(bad); err == nil {
			t.Errorf("ParseExpiryEntry(%q) accepted", bad)
		}
	}
}

func FuzzParseExpiryEntry(f *testing.F) {
	f.Add("1700000000-acme/box/o")
	f.Add("0000000001-a/b/c/d")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExpiryEntry(s)
		if err != nil {
			return
		}
		if e.EntryName() != s && !strings.HasPrefix(s, "+") {
			t.Fatalf("%q parsed to %+v, which names %q", s, e, e.EntryName())
		}
	})
}
