package meta

import (
	"errors"
	"sync"
	"testing"
)

func TestRangeResolve(t *testing.T) {
	for _, c := range []struct {
		r           Range
		size        int64
		off, n      int64
		unsatisfied bool
	}{
		{Range{Start: 0, End: 0}, 10, 0, 1, false},
		{Range{Start: 2, End: 5}, 10, 2, 4, false},
		{Range{Start: 2, End: -1}, 10, 2, 8, false},
		{Range{Start: 2, End: 100}, 10, 2, 8, false},
		{Range{Start: 9, End: 9}, 10, 9, 1, false},
		{Range{Start: 10, End: 12}, 10, 0, 0, true},
		{Range{Start: 5, End: 3}, 10, 0, 0, true},
		{Range{Start: 0, End: -1}, 0, 0, 0, true},
		{Range{Suffix: 3}, 10, 7, 3, false},
		{Range{Suffix: 30}, 10, 0, 10, false},
		{Range{Suffix: 3}, 0, 0, 0, true},
	} {
		off, n, err := c.r.Resolve(c.size)
		if c.unsatisfied {
			if !errors.Is(err, ErrInvalidRange) {
				t.Errorf("%+v of %d: err %v, want ErrInvalidRange", c.r, c.size, err)
			}
			continue
		}
		if err != nil || off != c.off || n != c.n {
			t.Errorf("%+v of %d = %d, %d, %v; want %d, %d", c.r, c.size, off, n, err, c.off, c.n)
		}
	}
}

func TestNowNeverRepeats(t *testing.T) {
	const goroutines, each = 8, 2000
	seen := make(chan Timestamp, goroutines*each)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := Timestamp(0)
			for range each {
				ts := Now()
				if ts <= last {
					t.Errorf("Now went back: %d after %d", ts, last)
				}
				last = ts
				seen <- ts
			}
		}()
	}
	wg.Wait()
	close(seen)
	unique := map[Timestamp]bool{}
	for ts := range seen {
		if unique[ts] {
			t.Fatalf("timestamp %d returned twice", ts)
		}
		unique[ts] = true
	}
}

func TestAsServedManifest(t *testing.T) {
	o := Object{Size: 0, ETag: "d41d8cd98f00b204e9800998ecf8427e", SysMeta: map[string]string{SysManifestETag: "abc-2"},
		Manifest: []Segment{{Size: 5}, {Size: 7}}}
	s := o.AsServed()
	if s.Size != 12 || s.ETag != "abc-2" {
		t.Fatalf("manifest served as size %d etag %q", s.Size, s.ETag)
	}
	plain := Object{Size: 3, ETag: "x"}
	if p := plain.AsServed(); p.Size != 3 || p.ETag != "x" {
		t.Fatalf("plain object changed: %+v", p)
	}
}

func TestSwiftNames(t *testing.T) {
	for _, c := range []struct{ cairn, swift string }{
		{"test", "AUTH_test"}, {"AUTH_x", "AUTH_AUTH_x"}, {"\x00names", "\x00names"}, {"\x00", "\x00"},
	} {
		if got := SwiftAccount(c.cairn); got != c.swift {
			t.Errorf("SwiftAccount(%q) = %q, want %q", c.cairn, got, c.swift)
		}
		if got, ok := AccountFromSwift(c.swift); !ok || got != c.cairn {
			t.Errorf("AccountFromSwift(%q) = %q, %v", c.swift, got, ok)
		}
	}
	for _, name := range []string{"test", "AUTH_", "SERVICE_x", ".expiring_objects", ""} {
		if got, ok := AccountFromSwift(name); ok {
			t.Errorf("AccountFromSwift(%q) = %q, accepted", name, got)
		}
	}
	for _, c := range []struct{ container, cairn, swift string }{
		{"b", "k", "k"}, {"\x00mpu\x00b", "k\x00up", "\x00k\x00up"}, {"\x00mpu\x00b", "\x00x", "\x00\x00x"}, {"\x00mpu\x00b", "", "\x00"},
	} {
		if got := SwiftObject(c.container, c.cairn); got != c.swift {
			t.Errorf("SwiftObject(%q, %q) = %q, want %q", c.container, c.cairn, got, c.swift)
		}
		if got, ok := ObjectFromSwift(c.container, c.swift); !ok || got != c.cairn {
			t.Errorf("ObjectFromSwift(%q, %q) = %q, %v", c.container, c.swift, got, ok)
		}
	}
	if got, ok := ObjectFromSwift("\x00mpu\x00b", "k\x00up"); ok {
		t.Errorf("a reserved container's object outside the reserved namespace: %q accepted", got)
	}
}
