package objattr

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   Attributes
		err    string
	}{
		{"all", []string{"ETag,Checksum,ObjectParts,StorageClass,ObjectSize"}, Attributes{true, true, true, true, true}, ""},
		{"spaces and repeats", []string{" ETag , ObjectSize", "ETag"}, Attributes{ETag: true, ObjectSize: true}, ""},
		{"one", []string{"StorageClass"}, Attributes{StorageClass: true}, ""},
		{"missing", nil, Attributes{}, "missing or empty"},
		{"empty", []string{""}, Attributes{}, "missing or empty"},
		{"only commas", []string{", ,"}, Attributes{}, "missing or empty"},
		{"unknown", []string{"ETag,Owner"}, Attributes{}, "Invalid attribute name specified."},
		{"wrong case", []string{"etag"}, Attributes{}, "Invalid attribute name specified."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.values)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrInvalidArgument) || !contains(e.S3Message(), tc.err) {
				t.Fatalf("got %v, want a refusal saying %q", err, tc.err)
			}
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestParsePaging(t *testing.T) {
	for _, tc := range []struct {
		max, marker string
		want        Paging
		bad         bool
	}{
		{"", "", Paging{Max: 1000}, false},
		{"5", "3", Paging{Max: 5, Marker: 3}, false},
		{"5000", "", Paging{Max: 1000}, false},
		{"0", "", Paging{Max: 0}, false},
		{"-1", "", Paging{}, true},
		{"x", "", Paging{}, true},
		{"", "-2", Paging{}, true},
		{"", "1.5", Paging{}, true},
	} {
		got, err := ParsePaging(tc.max, tc.marker)
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("ParsePaging(%q, %q) = %+v, %v", tc.max, tc.marker, got, err)
		}
	}
}

func TestPage(t *testing.T) {
	for _, tc := range []struct {
		p                     Paging
		total                 int
		first, last, next     int
		truncated, emptyWants bool
	}{
		{Paging{Max: 1000}, 3, 1, 3, 3, false, false},
		{Paging{Max: 2}, 3, 1, 2, 2, true, false},
		{Paging{Max: 2, Marker: 2}, 3, 3, 3, 3, false, false},
		{Paging{Max: 2, Marker: 3}, 3, 4, 3, 3, false, true},
		{Paging{Max: 2, Marker: 10}, 3, 11, 10, 10, false, true},
		{Paging{Max: 0}, 3, 1, 0, 0, true, true},
	} {
		first, last, truncated, next := tc.p.Page(tc.total)
		if first != tc.first || last != tc.last || truncated != tc.truncated || next != tc.next || (first > last) != tc.emptyWants {
			t.Errorf("%+v of %d: %d..%d truncated %v next %d", tc.p, tc.total, first, last, truncated, next)
		}
	}
}
