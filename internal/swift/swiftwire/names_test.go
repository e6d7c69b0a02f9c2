package swiftwire

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestReadMeta(t *testing.T) {
	hdr := http.Header{"X-Object-Meta-Color": {"blue"}, "X-Remove-Object-Meta-Old": {"x"}, "X-Container-Meta-Other": {"y"}}
	m, err := ReadMeta(hdr, "Object")
	if err != nil || len(m) != 2 || m["color"] != "blue" || m["old"] != "" {
		t.Fatalf("ReadMeta = %v, %v", m, err)
	}
	if _, err := ReadMeta(http.Header{"X-Object-Meta-": {"v"}}, "Object"); err == nil {
		t.Error("empty name accepted")
	}
	// Exactly at the limits is accepted.
	hdr = http.Header{}
	for i := range 16 {
		hdr.Set("X-Object-Meta-"+strings.Repeat("k", 2)+string(rune('a'+i)), strings.Repeat("v", 253))
	}
	if _, err := ReadMeta(hdr, "Object"); err != nil {
		t.Errorf("4096 bytes refused: %v", err)
	}
	hdr.Set("X-Object-Meta-Z", "v")
	if _, err := ReadMeta(hdr, "Object"); err == nil {
		t.Error("4098 bytes accepted")
	}
}

func TestReadDeleteAt(t *testing.T) {
	now := time.Unix(1000, 0)
	for hdr, want := range map[[2]string]int64{
		{"X-Delete-After", "10"}:                   1010,
		{"X-Delete-At", "2000"}:                    2000,
		{"X-Delete-At", "2000.5"}:                  -1,
		{"X-Delete-At", "1000"}:                    -1,
		{"X-Delete-At", "x"}:                       -1,
		{"X-Delete-After", "-1"}:                   -1,
		{"X-Delete-After", "1.5"}:                  -1,
		{"X-Delete-At", "NaN"}:                     -1,
		{"X-Delete-At", "1e300"}:                   -1,
		{"X-Delete-At", "+-5"}:                     -1,
		{"X-Delete-At", "99999999999999999999999"}: 9999999999,
	} {
		got, err := ReadDeleteAt(http.Header{hdr[0]: {hdr[1]}}, now)
		if want < 0 && err == nil || want >= 0 && (err != nil || got != want) {
			t.Errorf("%s: %s = %d, %v; want %d", hdr[0], hdr[1], got, err, want)
		}
	}
}

func FuzzReadMeta(f *testing.F) {
	f.Add("X-Object-Meta-A", "b", "X-Remove-Object-Meta-C", "d")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		hdr := http.Header{k1: {v1}, k2: {v2}}
		m, err := ReadMeta(hdr, "Object")
		if err != nil {
			return
		}
		size := 0
		for k, v := range m {
			if k == "" || len(k) > MaxMetaNameLength || len(v) > MaxMetaValueLength {
				t.Fatalf("accepted %q=%q", k, v)
			}
			size += len(k) + len(v)
		}
		if len(m) > MaxMetaCount || size > MaxMetaOverallSize {
			t.Fatalf("accepted %d items, %d bytes", len(m), size)
		}
	})
}
