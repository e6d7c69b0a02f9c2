package swiftwire

import (
	"net/url"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

func TestNegotiate(t *testing.T) {
	for accept, want := range map[string]string{
		"":                 "text/plain",
		"*/*":              "text/plain",
		"application/json": "application/json",
		"application/*":    "application/json",
		"text/xml":         "text/xml",
		"application/xml;q=0.9, application/json;q=0.8": "application/xml",
		"application/json;q=0, */*;q=0.1":               "text/plain",
		"text/*;q=0.5, application/json":                "application/json",
		"image/png":                                     "",
		"application/json;q=0":                          "",
	} {
		got, ok := Negotiate(accept)
		if got != want || ok != (want != "") {
			t.Errorf("Negotiate(%q) = %q, %v; want %q", accept, got, ok, want)
		}
	}
}

func TestParseListing(t *testing.T) {
	q := url.Values{"prefix": {"p"}, "delimiter": {"/"}, "marker": {"m"}, "end_marker": {"z"}, "limit": {"7"}, "reverse": {"yes"}, "format": {"xml"}}
	lr, err := ParseListing(q, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	want := meta.ListOptions{Prefix: "p", Delimiter: "/", Marker: "m", EndMarker: "z", Limit: 7, Reverse: true}
	if lr.Opts != want || lr.Format != FormatXML {
		t.Errorf("got %+v %v", lr.Opts, lr.Format)
	}
	for _, bad := range []url.Values{{"limit": {"10001"}}, {"prefix": {"\xff"}}, {"end_marker": {"a\xff"}}} {
		if _, err := ParseListing(bad, ""); err == nil {
			t.Errorf("ParseListing(%v) accepted", bad)
		}
	}
	// As Swift 2.30: multi-character delimiters, and a NUL in a marker ("just after a").
	for _, good := range []url.Values{{"delimiter": {"ab"}}, {"marker": {"a\x00"}}} {
		if _, err := ParseListing(good, ""); err != nil {
			t.Errorf("ParseListing(%v): %v", good, err)
		}
	}
	if lr, err := ParseListing(url.Values{"limit": {"-3"}}, ""); err != nil || lr.Opts.Limit != ListingLimit {
		t.Errorf("non-numeric limit: %+v %v", lr.Opts, err)
	}
	if lr, err := ParseListing(url.Values{"format": {"weird"}}, "application/json"); err != nil || lr.Format != FormatPlain {
		t.Errorf("unknown format: %v %v", lr.Format, err)
	}
}

func TestRenderListing(t *testing.T) {
	e := meta.ListEntry{Name: "a&b", Size: 3, ETag: "e", ContentType: "t/x", Timestamp: meta.Timestamp(1_700_000_000_123_456_789)}
	items := Merge([]ListItem{{Name: "z/", Subdir: true}, {Name: "a&b", Obj: &e}}, false)
	if got := string(RenderListing(FormatJSON, "container", "c", "AUTH_a", items)); got !=
		`[{"name":"a&b","hash":"e","bytes":3,"content_type":"t/x","last_modified":"2023-11-14T22:13:20.123456"},{"subdir":"z/"}]` {
		t.Errorf("json %s", got)
	}
	if got := string(RenderListing(FormatXML, "container", "c<", "AUTH_a", items)); !strings.Contains(got, `<container name="c&lt;"><object><name>a&amp;b</name>`) ||
		!strings.HasSuffix(got, `<subdir name="z/"><name>z/</name></subdir></container>`) {
		t.Errorf("xml %s", got)
	}
	if got := string(RenderListing(FormatPlain, "container", "c", "AUTH_a", Merge(items, true))); got != "z/\na&b\n" {
		t.Errorf("plain reversed %q", got)
	}
}

func FuzzParseListing(f *testing.F) {
	f.Add("limit=10&prefix=a&delimiter=/&format=json&reverse=1", "application/json;q=0.5, */*")
	f.Add("limit=99999&delimiter=%FF", "text/*")
	f.Fuzz(func(t *testing.T, query, accept string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		lr, err := ParseListing(q, accept)
		if err != nil {
			return
		}
		if lr.Opts.Limit < 0 || lr.Opts.Limit > ListingLimit {
			t.Fatalf("limit %d", lr.Opts.Limit)
		}
		if lr.ContentType == "" {
			t.Fatal("no content type")
		}
	})
}
