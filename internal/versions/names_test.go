package versions

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
)

// The names of versions are Swift's: the inverted timestamps below are what Swift 2.30's
// ~Timestamp(t).internal gives (computed with python3 -c 'from swift.common.utils import
// Timestamp; print((~Timestamp(t)).internal)').
func TestVersionNamesAreSwifts(t *testing.T) {
	for _, tc := range []struct{ id, inverted string }{
		{"1700000000.12345", "8299999999.87654"},
		{"1795609094.55110", "8204390905.44889"},
		{"0000000001.00000", "9999999998.99999"},
		{"9000000000.00000", "0999999999.99999"},
	} {
		ts, err := ParseID(tc.id)
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		if got := ID(ts); got != tc.id {
			t.Errorf("ID(ParseID(%s)) = %s", tc.id, got)
		}
		name := ObjectName("obj", ts)
		if want := "obj" + meta.ReservedPrefix + tc.inverted; name != want {
			t.Errorf("%s: name %q, want %q", tc.id, name, want)
		}
		// In the cluster the reserved container's names get Swift's leading \x00.
		if got := meta.SwiftObject(ContainerFor("c"), name); got != "\x00obj\x00"+tc.inverted {
			t.Errorf("%s: Swift's name %q", tc.id, got)
		}
		obj, back, ok := SplitObjectName(name)
		if !ok || obj != "obj" || back != ts {
			t.Errorf("SplitObjectName(%q) = %q, %d, %v", name, obj, back, ok)
		}
	}
}

// Newer versions sort first, and one key's versions sort before the next key's.
func TestVersionNamesSort(t *testing.T) {
	older, newer := meta.Timestamp(1_700_000_000_000_000_000), meta.Timestamp(1_700_000_000_000_010_000)
	if !(ObjectName("k", newer) < ObjectName("k", older)) {
		t.Error("a newer version does not sort first")
	}
	if !(ObjectName("k", older) < ObjectName("k0", newer)) || !(ObjectName("k", older) < ObjectName("k/a", newer)) {
		t.Error("a key's versions do not sort before longer keys")
	}
	if !strings.HasPrefix(ObjectName("k", older), Prefix("k")) || strings.HasPrefix(ObjectName("k0", older), Prefix("k")) {
		t.Error("Prefix does not select exactly a key's versions")
	}
}

func TestParseIDRefuses(t *testing.T) {
	// 9999999999.99999 is a Swift timestamp (the year 2286) but past what Cairn's (to 2262) hold.
	for _, id := range []string{"", "abc", "-1", "+1.5", "12345678901.0", "1.123456", "1..2", "1.2.3", "9999999999.99999"} {
		if _, err := ParseID(id); err == nil {
			t.Errorf("ParseID(%q) accepted", id)
		}
	}
	for _, name := range []string{"plain", "k" + meta.ReservedPrefix + "x", "k" + meta.ReservedPrefix, "k" + meta.ReservedPrefix + "0000000000.00000"} {
		if _, _, ok := SplitObjectName(name); ok {
			t.Errorf("SplitObjectName(%q) accepted", name)
		}
	}
}

// New version timestamps are whole units of Swift's resolution and never repeat.
func TestNewTimestamp(t *testing.T) {
	prev := meta.Timestamp(0)
	for range 1000 {
		ts := newTimestamp()
		if ts%swiftUnit != 0 || ts <= prev || ID(ts) == ID(prev) {
			t.Fatalf("timestamp %d after %d", ts, prev)
		}
		if now := meta.Now(); now <= ts+1 {
			t.Fatalf("the clock was not spent past the link: %d <= %d", now, ts+1)
		}
		prev = ts
	}
}

func FuzzSplitObjectName(f *testing.F) {
	f.Add("obj\x008299999999.87654")
	f.Add("a\x00b\x000000000000.00000")
	f.Fuzz(func(t *testing.T, name string) {
		obj, ts, ok := SplitObjectName(name)
		if !ok {
			return
		}
		if ts < 0 || ts%swiftUnit != 0 {
			t.Fatalf("%q: timestamp %d", name, ts)
		}
		if again := ObjectName(obj, ts); again != name {
			// Only the canonical spelling round-trips; others must at least name the same version.
			if o2, ts2, ok := SplitObjectName(again); !ok || o2 != obj || ts2 != ts {
				t.Fatalf("%q -> %q", name, again)
			}
		}
	})
}

func TestLockRules(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	hour := now.Add(time.Hour)
	obj := func(mode string, until time.Time, hold string) *meta.Object {
		sys := map[string]string{}
		if mode != "" {
			SetRetention(sys, Retention{Mode: mode, Until: until})
		}
		if hold != "" {
			SetLegalHold(sys, hold == "ON")
		}
		return &meta.Object{SysMeta: sys}
	}
	for _, tc := range []struct {
		name   string
		o      *meta.Object
		bypass bool
		ok     bool
	}{
		{"none", obj("", time.Time{}, ""), false, true},
		{"compliance", obj(Compliance, hour, ""), false, false},
		{"compliance, bypass", obj(Compliance, hour, ""), true, false},
		{"compliance expired", obj(Compliance, now.Add(-time.Second), ""), false, true},
		{"governance", obj(Governance, hour, ""), false, false},
		{"governance, bypass", obj(Governance, hour, ""), true, true},
		{"legal hold", obj("", time.Time{}, "ON"), true, false},
		{"legal hold off", obj("", time.Time{}, "OFF"), false, true},
		{"damaged retention", &meta.Object{SysMeta: map[string]string{SysLockMode: Governance, SysLockUntil: "garbage"}}, true, false},
	} {
		if err := CheckRemove(tc.o, now, tc.bypass); (err == nil) != tc.ok {
			t.Errorf("%s: CheckRemove %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	g, c := Retention{Mode: Governance, Until: hour}, Retention{Mode: Compliance, Until: hour}
	later, sooner := hour.Add(time.Hour), hour.Add(-time.Minute)
	for _, tc := range []struct {
		name     string
		old, new Retention
		bypass   bool
		ok       bool
	}{
		{"compliance extended", c, Retention{Compliance, later}, false, true},
		{"compliance shortened", c, Retention{Compliance, sooner}, true, false},
		{"compliance to governance", c, Retention{Governance, later}, true, false},
		{"compliance removed", c, Retention{}, true, false},
		{"governance extended", g, Retention{Governance, later}, false, true},
		{"governance to compliance", g, Retention{Compliance, hour}, false, true},
		{"governance shortened", g, Retention{Governance, sooner}, false, false},
		{"governance shortened, bypass", g, Retention{Governance, sooner}, true, true},
		{"governance removed, bypass", g, Retention{}, true, true},
		{"expired compliance changed", Retention{Compliance, now.Add(-time.Second)}, Retention{}, false, true},
	} {
		if err := CheckRetentionChange(tc.old, tc.new, now, tc.bypass); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	for _, d := range []DefaultRetention{{Mode: Governance, Days: 30}, {Mode: Compliance, Years: 7}} {
		got := DefaultRetentionOf(meta.Container{Meta: map[string]string{KeyLockDefault: d.Encode()}})
		if got != d {
			t.Errorf("default %+v read back as %+v", d, got)
		}
	}
	if r := (DefaultRetention{Mode: Governance, Days: 1}).From(now); !r.Until.Equal(now.AddDate(0, 0, 1)) {
		t.Errorf("a day's default until %v", r.Until)
	}
}
