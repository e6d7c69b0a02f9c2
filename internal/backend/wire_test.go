package backend

import (
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

func TestTimestampRoundTrip(t *testing.T) {
	for _, ts := range []meta.Timestamp{0, 1, 9_999, 10_000, 1_700_000_000_123_456_789, 1_700_000_000_000_000_000} {
		s := FormatTimestamp(ts)
		got, err := ParseTimestamp(s)
		if err != nil || got != ts {
			t.Errorf("%d -> %q -> %d, %v", ts, s, got, err)
		}
	}
	for s, want := range map[string]meta.Timestamp{
		"1700000000":                        1_700_000_000_000_000_000,
		"1700000000.5":                      1_700_000_000_500_000_000,
		"1700000000.12345":                  1_700_000_000_123_450_000,
		"1700000000.12345_0000000000000010": 1_700_000_000_123_450_016,
	} {
		if got, err := ParseTimestamp(s); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "abc", "-1", "1.2.3", "17_zz", "1700000000.1234567891"} {
		if _, err := ParseTimestamp(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

func TestPathRoundTrip(t *testing.T) {
	for _, p := range []Path{
		{Device: "d0", Part: 7, Account: "a"},
		{Device: "sdb1", Part: 1023, Account: "AUTH_test", Container: "c with space"},
		{Device: "d0", Part: 0, Account: "a", Container: "\x00segments", Object: "dir/sub/%2F?#ü"},
	} {
		got, err := ParsePath(p.String())
		if err != nil || got != p {
			t.Errorf("%+v -> %q -> %+v, %v", p, p.String(), got, err)
		}
	}
	for _, s := range []string{"", "/", "/d0", "/d0/1", "/d0/x/a", "/d0/1//c", "/../1/a", "/d0/1/a%2Fb/c"} {
		if _, err := ParsePath(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	f.Add("/d0/1/a/c/o")
	f.Add("/d0/1/a%00/c/o%2F")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		if again, err := ParsePath(p.String()); err != nil || again != p {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, p, p.String(), again, err)
		}
	})
}

func FuzzParseTimestamp(f *testing.F) {
	f.Add("1700000000.12345_000000000000000a")
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseTimestamp(s)
		if err != nil {
			return
		}
		if again, err := ParseTimestamp(FormatTimestamp(ts)); err != nil || again != ts {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, ts, FormatTimestamp(ts), again, err)
		}
	})
}

func TestRangeHeaderRoundTrip(t *testing.T) {
	for _, r := range []meta.Range{{Start: 0, End: 9}, {Start: 5, End: -1}, {Suffix: 7}, {Suffix: 0, Start: -1, End: -1}} {
		got, err := parseRange(rangeHeader(&r))
		if err != nil {
			t.Fatalf("%+v → %q: %v", r, rangeHeader(&r), err)
		}
		for _, size := range []int64{0, 1, 20} {
			wo, wl, werr := r.Resolve(size)
			go_, gl, gerr := got.Resolve(size)
			if wo != go_ || wl != gl || (werr == nil) != (gerr == nil) {
				t.Errorf("%+v over %d bytes: sent as %q resolves to %d+%d (%v), want %d+%d (%v)", r, size, rangeHeader(&r), go_, gl, gerr, wo, wl, werr)
			}
		}
	}
}

// System metadata values travel as printable ASCII (Swift 2.30 cannot send back a footer's
// value past Latin-1) and come back as they were.
func TestSysValuesAreASCII(t *testing.T) {
	for _, v := range []string{"", "plain", "蔈☃/ः鐉/seg", " 100% \t", "a\x00b\x7f", "\xff\xfe not UTF-8"} {
		enc := encodeSysValue(v)
		for i := 0; i < len(enc); i++ {
			if enc[i] < 0x20 || enc[i] >= 0x7f {
				t.Errorf("%q -> %q: byte %#x", v, enc, enc[i])
				break
			}
		}
		if got := decodeValue(enc); got != v {
			t.Errorf("%q -> %q -> %q", v, enc, got)
		}
	}
	if got := encodeValue("蔈☃"); got != "蔈☃" {
		t.Errorf("user metadata escaped: %q", got)
	}
}

// Metadata keys differing only in '_' and '-' stay apart through a WSGI server, which folds
// them together in header names.
func TestKeysWithoutUnderscores(t *testing.T) {
	a, b := encodeKey("foo_bar"), encodeKey("foo-bar")
	if strings.Contains(a, "_") || a == b {
		t.Errorf("foo_bar -> %q, foo-bar -> %q", a, b)
	}
	if k, ok := decodeKey(strings.ToUpper(a)); !ok || k != "foo_bar" {
		t.Errorf("%q -> %q, %v", a, k, ok)
	}
}
