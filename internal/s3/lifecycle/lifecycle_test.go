package lifecycle

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func doc(rules ...string) string {
	return `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` + strings.Join(rules, "") + `</LifecycleConfiguration>`
}

func rule(id, body string) string {
	return `<Rule><ID>` + id + `</ID><Status>Enabled</Status>` + body + `</Rule>`
}

func TestParseRefusals(t *testing.T) {
	exp := `<Expiration><Days>1</Days></Expiration>`
	many := make([]string, MaxRules+1)
	for i := range many {
		many[i] = rule(fmt.Sprint(i), `<Filter/>`+exp)
	}
	for _, tc := range []struct {
		name, doc string
		kind      Kind
		msg       string
	}{
		{"not XML", "<Lifecycle", MalformedXML, "well-formed"},
		{"no rules", doc(), MalformedXML, "well-formed"},
		{"too many rules", doc(many...), InvalidRequest, "1000 rules"},
		{"long ID", doc(rule(strings.Repeat("x", 256), `<Filter/>`+exp)), InvalidArgument, "ID length"},
		{"same ID", doc(rule("a", `<Filter/>`+exp), rule("a", `<Filter/>`+exp)), InvalidArgument, "Found two rules with same ID"},
		{"bad status", doc(`<Rule><ID>a</ID><Status>On</Status><Filter/>` + exp + `</Rule>`), MalformedXML, "well-formed"},
		{"no scope", doc(rule("a", exp)), MalformedXML, "well-formed"},
		{"filter and prefix", doc(rule("a", `<Prefix>x</Prefix><Filter/>`+exp)), MalformedXML, "well-formed"},
		{"two filter conditions", doc(rule("a", `<Filter><Prefix>x</Prefix><ObjectSizeLessThan>5</ObjectSizeLessThan></Filter>`+exp)), MalformedXML, "well-formed"},
		{"two tags outside And", doc(rule("a", `<Filter><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>b</Key><Value>1</Value></Tag></Filter>`+exp)), MalformedXML, "well-formed"},
		{"no action", doc(rule("a", `<Filter/>`)), InvalidRequest, "At least one action"},
		{"zero days", doc(rule("a", `<Filter/><Expiration><Days>0</Days></Expiration>`)), InvalidArgument, "'Days' for Expiration action must be a positive integer"},
		{"negative days", doc(rule("a", `<Filter/><Expiration><Days>-3</Days></Expiration>`)), InvalidArgument, "'Days' for Expiration action must be a positive integer"},
		{"days not a number", doc(rule("a", `<Filter/><Expiration><Days>x</Days></Expiration>`)), MalformedXML, "well-formed"},
		{"date not midnight", doc(rule("a", `<Filter/><Expiration><Date>2030-01-01T10:00:00Z</Date></Expiration>`)), InvalidArgument, "'Date' must be at midnight GMT"},
		{"date not ISO", doc(rule("a", `<Filter/><Expiration><Date>Jan 1 2030</Date></Expiration>`)), InvalidArgument, "ISO 8601"},
		{"days and date", doc(rule("a", `<Filter/><Expiration><Days>1</Days><Date>2030-01-01T00:00:00Z</Date></Expiration>`)), MalformedXML, "well-formed"},
		{"marker and days", doc(rule("a", `<Filter/><Expiration><Days>1</Days><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`)), MalformedXML, "well-formed"},
		{"empty expiration", doc(rule("a", `<Filter/><Expiration></Expiration>`)), MalformedXML, "well-formed"},
		{"marker with tags", doc(rule("a", `<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`)), InvalidRequest, "tags"},
		{"noncurrent days zero", doc(rule("a", `<Filter/><NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays></NoncurrentVersionExpiration>`)), InvalidArgument, "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer"},
		{"noncurrent days missing", doc(rule("a", `<Filter/><NoncurrentVersionExpiration></NoncurrentVersionExpiration>`)), InvalidArgument, "'NoncurrentDays'"},
		{"newer noncurrent too many", doc(rule("a", `<Filter/><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>101</NewerNoncurrentVersions></NoncurrentVersionExpiration>`)), InvalidArgument, "NewerNoncurrentVersions"},
		{"abort days zero", doc(rule("a", `<Filter/><AbortIncompleteMultipartUpload><DaysAfterInitiation>0</DaysAfterInitiation></AbortIncompleteMultipartUpload>`)), InvalidArgument, "'DaysAfterInitiation'"},
		{"abort with tag", doc(rule("a", `<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>`)), InvalidRequest, "AbortIncompleteMultipartUpload cannot be specified with Tags"},
		{"abort with And tags", doc(rule("a", `<Filter><And><Prefix>p</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></And></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>`)), InvalidRequest, "AbortIncompleteMultipartUpload cannot be specified with Tags"},
		{"duplicate tag keys", doc(rule("a", `<Filter><And><Tag><Key>k</Key><Value>1</Value></Tag><Tag><Key>k</Key><Value>2</Value></Tag></And></Filter>`+exp)), InvalidRequest, "Duplicate Tag Keys"},
		{"empty tag key", doc(rule("a", `<Filter><Tag><Key></Key><Value>1</Value></Tag></Filter>`+exp)), InvalidArgument, "TagKey"},
		{"sizes crossed", doc(rule("a", `<Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter>`+exp)), InvalidArgument, "ObjectSizeGreaterThan must be less than ObjectSizeLessThan"},
		{"negative size", doc(rule("a", `<Filter><ObjectSizeGreaterThan>-1</ObjectSizeGreaterThan></Filter>`+exp)), InvalidArgument, "positive"},
		{"transition", doc(rule("a", `<Filter/><Transition><Days>30</Days><StorageClass>GLACIER</StorageClass></Transition>`)), NotImplemented, "Transitions"},
		{"noncurrent transition", doc(rule("a", `<Filter/>`+exp+`<NoncurrentVersionTransition><NoncurrentDays>30</NoncurrentDays><StorageClass>GLACIER</StorageClass></NoncurrentVersionTransition>`)), NotImplemented, "Transitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc), func() string { return "gen" })
			e, ok := IsError(err)
			if !ok {
				t.Fatalf("Parse: %v, want a refusal", err)
			}
			if e.Kind != tc.kind || !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("Parse: kind %d %q, want kind %d containing %q", e.Kind, e.Message, tc.kind, tc.msg)
			}
		})
	}
}

func TestParseAcceptsAndRoundTrips(t *testing.T) {
	for _, d := range []string{
		doc(`<Rule><Status>Enabled</Status><Prefix>logs/</Prefix><Expiration><Days>3</Days></Expiration></Rule>`),
		doc(rule("tags", `<Filter><And><Prefix>a/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>j</Key><Value></Value></Tag><ObjectSizeGreaterThan>0</ObjectSizeGreaterThan><ObjectSizeLessThan>100</ObjectSizeLessThan></And></Filter><Expiration><Date>2030-01-01T00:00:00.000Z</Date></Expiration>`)),
		doc(rule("nc", `<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><NoncurrentVersionExpiration><NoncurrentDays>2</NoncurrentDays><NewerNoncurrentVersions>3</NewerNoncurrentVersions></NoncurrentVersionExpiration>`),
			`<Rule><ID>dm</ID><Status>Disabled</Status><Filter><Prefix></Prefix></Filter><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>7</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`),
		doc(rule("size", `<Filter><ObjectSizeLessThan>5</ObjectSizeLessThan></Filter><Expiration><Days>1</Days></Expiration>`)),
	} {
		c, err := Parse([]byte(d), func() string { return "made-up" })
		if err != nil {
			t.Fatalf("Parse %s: %v", d, err)
		}
		back, err := Decode(c.Encode())
		if err != nil {
			t.Fatalf("Decode(Encode) of %s: %v\n%s", d, err, c.Encode())
		}
		if fmt.Sprintf("%+v", back) != fmt.Sprintf("%+v", c) {
			t.Fatalf("round trip:\n%+v\n%+v", c, back)
		}
	}
	c, _ := Parse([]byte(doc(`<Rule><Status>Enabled</Status><Prefix>logs/</Prefix><Expiration><Days>3</Days></Expiration></Rule>`)), func() string { return "made-up" })
	if c.Rules[0].ID != "made-up" || c.Rules[0].Filter.Prefix != "logs/" || c.Rules[0].ExpireDays != 3 || !c.Rules[0].LegacyPrefix {
		t.Fatalf("legacy prefix rule: %+v", c.Rules[0])
	}
	// Answered in the form it was given: the top-level Prefix, no Filter (S3 keeps a
	// configuration as given; clients compare what they read with what they wrote).
	if enc := c.Encode(); !strings.Contains(enc, "<ID>made-up</ID><Prefix>logs/</Prefix><Status>Enabled</Status>") || strings.Contains(enc, "<Filter>") {
		t.Errorf("legacy prefix rule answered as %s", enc)
	}
}

func TestDue(t *testing.T) {
	day := 24 * time.Hour
	created := time.Date(2014, 1, 15, 10, 30, 0, 0, time.UTC)
	// AWS's own example: created 1/15 10:30, 3 days: expires 1/19 00:00 UTC.
	if got := Due(created, 3, day); !got.Equal(time.Date(2014, 1, 19, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("Due = %v", got)
	}
	midnight := time.Date(2014, 1, 15, 0, 0, 0, 0, time.UTC)
	if got := Due(midnight, 1, day); !got.Equal(midnight.Add(day)) {
		t.Fatalf("Due from midnight = %v", got)
	}
}

func TestDecide(t *testing.T) {
	day := 24 * time.Hour
	base := time.Date(2030, 3, 1, 12, 0, 0, 0, time.UTC)
	mk := func(rules string) *Config {
		c, err := Parse([]byte(doc(rules)), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	expire2 := mk(rule("p", `<Filter><Prefix>logs/</Prefix></Filter><Expiration><Days>2</Days></Expiration>`))
	tagged := mk(rule("t", `<Filter><And><Prefix>t/</Prefix><Tag><Key>class</Key><Value>tmp</Value></Tag></And></Filter><Expiration><Days>1</Days></Expiration>`))
	sized := mk(rule("s", `<Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>100</ObjectSizeLessThan></And></Filter><Expiration><Days>1</Days></Expiration>`))
	dated := mk(rule("d", `<Filter/><Expiration><Date>2030-03-05T00:00:00Z</Date></Expiration>`))
	disabled := mk(`<Rule><ID>x</ID><Status>Disabled</Status><Filter/><Expiration><Days>1</Days></Expiration></Rule>`)
	noncurrent := mk(rule("n", `<Filter/><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>`))
	markers := mk(rule("m", `<Filter><Prefix>m/</Prefix></Filter><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`))
	cur := func(key string, size int64, tags map[string]string) Version {
		return Version{Key: key, Size: size, Tags: tags, Modified: base, Current: true}
	}
	old := func(newer int, since time.Time) Version {
		return Version{Key: "k", Size: 1, Modified: base.Add(-10 * day), NoncurrentSince: since, NewerNoncurrent: newer}
	}
	for _, tc := range []struct {
		name string
		c    *Config
		v    Version
		now  time.Time
		want Action
	}{
		{"prefix, not yet due", expire2, cur("logs/a", 1, nil), base.Add(2 * day), None}, // due 3/4 00:00
		{"prefix, due", expire2, cur("logs/a", 1, nil), time.Date(2030, 3, 4, 0, 0, 0, 0, time.UTC), Expire},
		{"prefix, other key", expire2, cur("data/a", 1, nil), base.Add(30 * day), None},
		{"prefix, noncurrent untouched", expire2, Version{Key: "logs/a", Modified: base, NoncurrentSince: base}, base.Add(30 * day), None},
		{"tag matches", tagged, cur("t/a", 1, map[string]string{"class": "tmp", "x": "y"}), base.Add(3 * day), Expire},
		{"tag differs", tagged, cur("t/a", 1, map[string]string{"class": "keep"}), base.Add(3 * day), None},
		{"tag missing", tagged, cur("t/a", 1, nil), base.Add(3 * day), None},
		{"tag but prefix differs", tagged, cur("u/a", 1, map[string]string{"class": "tmp"}), base.Add(3 * day), None},
		{"size within", sized, cur("a", 50, nil), base.Add(3 * day), Expire},
		{"size at lower bound", sized, cur("a", 10, nil), base.Add(3 * day), None},
		{"size at upper bound", sized, cur("a", 100, nil), base.Add(3 * day), None},
		{"date before", dated, cur("a", 1, nil), time.Date(2030, 3, 4, 23, 59, 0, 0, time.UTC), None},
		{"date reached", dated, cur("a", 1, nil), time.Date(2030, 3, 5, 0, 0, 0, 0, time.UTC), Expire},
		{"disabled rule", disabled, cur("a", 1, nil), base.Add(30 * day), None},
		{"noncurrent due, enough newer", noncurrent, old(2, base), base.Add(2 * day), RemoveVersion},
		{"noncurrent due, kept as newer", noncurrent, old(1, base), base.Add(30 * day), None},
		{"noncurrent not due", noncurrent, old(5, base), base.Add(day), None}, // due 3/3 00:00
		{"noncurrent: current untouched", noncurrent, cur("k", 1, nil), base.Add(30 * day), None},
		{"marker alone", markers, Version{Key: "m/a", Current: true, DeleteMarker: true, Modified: base}, base, RemoveVersion},
		{"marker with versions", markers, Version{Key: "m/a", Current: true, DeleteMarker: true, OthersLeft: 1}, base, None},
		{"marker, other prefix", markers, Version{Key: "n/a", Current: true, DeleteMarker: true}, base, None},
		{"marker: objects untouched", markers, cur("m/a", 1, nil), base.Add(300 * day), None},
		{"marker: expire by days leaves markers", expire2, Version{Key: "logs/a", Current: true, DeleteMarker: true, Modified: base}, base.Add(30 * day), None},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Decide(tc.v, tc.now, day); got != tc.want {
				t.Fatalf("Decide = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAbortUpload(t *testing.T) {
	day := time.Hour
	c, err := Parse([]byte(doc(rule("a", `<Filter><Prefix>up/</Prefix></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation></AbortIncompleteMultipartUpload>`))), nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 1, 1, 0, 30, 0, 0, time.UTC)
	if c.AbortUpload("up/x", start, start.Add(2*day), day) {
		t.Fatal("aborted before due (due at the next boundary after 2 days)")
	}
	if !c.AbortUpload("up/x", start, start.Add(150*time.Minute), day) {
		t.Fatal("not aborted once due")
	}
	if c.AbortUpload("other/x", start, start.Add(100*day), day) {
		t.Fatal("aborted out of scope")
	}
	if !c.ActsOnUploads() || c.ActsOnVersions() || c.NeedsTags() {
		t.Fatal("ActsOn*/NeedsTags")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(doc(rule("a", `<Filter><And><Prefix>a/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></And></Filter><Expiration><Days>3</Days></Expiration>`))))
	f.Add([]byte(doc(rule("b", `<Prefix>x</Prefix><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>`))))
	f.Add([]byte(doc(rule("c", `<Filter/><Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration>`))))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, func() string { return "id" })
		if err != nil {
			if _, ok := IsError(err); !ok {
				t.Fatalf("Parse returned a non-refusal error: %v", err)
			}
			return
		}
		// What is accepted is stored encoded, and must read back the same.
		back, err := Decode(c.Encode())
		if err != nil {
			t.Fatalf("stored form does not decode: %v\n%s", err, c.Encode())
		}
		if fmt.Sprintf("%+v", back) != fmt.Sprintf("%+v", c) {
			t.Fatalf("round trip:\n%+v\n%+v", c, back)
		}
	})
}
