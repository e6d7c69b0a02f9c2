package swift

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

func TestParsePath(t *testing.T) {
	for path, want := range map[string]*swiftcore.Target{
		"/v1/AUTH_a":         {Account: "AUTH_a"},
		"/v1/AUTH_a/":        {Account: "AUTH_a"},
		"/v1/AUTH_a/c":       {Account: "AUTH_a", Container: "c"},
		"/v1/AUTH_a/c/":      {Account: "AUTH_a", Container: "c"},
		"/v1/AUTH_a/c/o":     {Account: "AUTH_a", Container: "c", Object: "o"},
		"/v1/AUTH_a/c/a//b/": {Account: "AUTH_a", Container: "c", Object: "a//b/"},
		"/v1/":               nil,
		"/v1//c/o":           nil,
		"/v2/AUTH_a":         nil,
		"/v1/AUTH_a//o":      nil,
	} {
		got, ok := parsePath(path)
		if want == nil {
			if ok {
				t.Errorf("parsePath(%q) = %+v, want refusal", path, got)
			}
			continue
		}
		if !ok || got != *want {
			t.Errorf("parsePath(%q) = %+v, %v; want %+v", path, got, ok, *want)
		}
	}
}

func TestIsSwiftPath(t *testing.T) {
	for p, want := range map[string]bool{"/auth/v1.0": true, "/auth/v1.0/": true, "/info": true, "/v1/AUTH_x": true, "/v1": true, "//v1/AUTH_x": true,
		"/": false, "/bucket": false, "/v1x": false, "/info/x": false, "/auth": false} {
		if IsSwiftPath(p) != want {
			t.Errorf("IsSwiftPath(%q) = %v", p, !want)
		}
	}
}

func TestSwiftTimestamps(t *testing.T) {
	ts := meta.Timestamp(1_795_337_705_073_280_123)
	if got := swiftwire.Timestamp(ts); got != "1795337705.07328" {
		t.Errorf("swiftwire.Timestamp %q", got)
	}
	if got := swiftwire.LastModified(ts); !got.Equal(time.Unix(1_795_337_706, 0)) {
		t.Errorf("swiftwire.LastModified %v (Swift rounds up)", got)
	}
	if got := swiftwire.ListingTime(ts); got != "2026-11-22T08:55:05.073280" {
		t.Errorf("swiftwire.ListingTime %q", got)
	}
	if swiftwire.GuessContentType("a.txt") != "text/plain" || swiftwire.GuessContentType("noext") != "application/octet-stream" || swiftwire.GuessContentType("b.WAV") != "audio/x-wav" || swiftwire.GuessContentType("c.zip") != "application/zip" {
		t.Error("swiftwire.GuessContentType")
	}
}

func FuzzParsePath(f *testing.F) {
	f.Add("/v1/AUTH_a/c/o")
	f.Add("/v1/AUTH_a//x")
	f.Fuzz(func(t *testing.T, p string) {
		tg, ok := parsePath(p)
		if !ok {
			return
		}
		if tg.Account == "" || strings.Contains(tg.Account, "/") || strings.Contains(tg.Container, "/") || tg.Container == "" && tg.Object != "" {
			t.Fatalf("%q → %+v", p, tg)
		}
	})
}
