package access

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseSwiftACL(t *testing.T) {
	cases := []struct {
		in   string
		want SwiftACL
		str  string
	}{
		{"", SwiftACL{}, ""},
		{" , ,", SwiftACL{}, ""},
		{".r:*", SwiftACL{Referrers: []string{"*"}}, ".r:*"},
		{".r:*,.rlistings", SwiftACL{Referrers: []string{"*"}, Listings: true}, ".r:*,.rlistings"},
		{" .rlistings , .r:* ", SwiftACL{Referrers: []string{"*"}, Listings: true}, ".r:*,.rlistings"},
		{".r:example.com,.r:-bad.example.com", SwiftACL{Referrers: []string{"example.com", "-bad.example.com"}}, ".r:example.com,.r:-bad.example.com"},
		{".r:*.example.com", SwiftACL{Referrers: []string{".example.com"}}, ".r:.example.com"},
		{".referrer:.example.com,.ref:a.b,.referer:c", SwiftACL{Referrers: []string{".example.com", "a.b", "c"}}, ".r:.example.com,.r:a.b,.r:c"},
		{".r: - example.com", SwiftACL{Referrers: []string{"-example.com"}}, ".r:-example.com"},
		{"acme", SwiftACL{Principals: []string{"acme"}}, "acme"},
		{"acme:bob,other", SwiftACL{Principals: []string{"acme:bob", "other"}}, "acme:bob,other"},
		{"acme:bob, .r:*", SwiftACL{Referrers: []string{"*"}, Principals: []string{"acme:bob"}}, ".r:*,acme:bob"},
	}
	for _, c := range cases {
		got, err := ParseSwiftACL(c.in)
		if err != nil {
			t.Errorf("ParseSwiftACL(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseSwiftACL(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if got.String() != c.str {
			t.Errorf("ParseSwiftACL(%q).String() = %q, want %q", c.in, got.String(), c.str)
		}
		if got.Empty() != (c.str == "") {
			t.Errorf("Empty(%q)", c.in)
		}
	}
	for _, bad := range []string{
		".r:", ".r:-", ".r:.", ".r:*x*/", ".r:-*", ".r:a b", ".r:a/b", ".x:y", ".admin", ".rlisting", ".r",
		"acme:", ":bob", "acme:bob:x", "acme bob", "ac/me", "*", "*:bob", "a\x00", strings.Repeat("a", 65),
		strings.Repeat("a,", 5000),
	} {
		if _, err := ParseSwiftACL(bad); !errors.Is(err, ErrInvalidSwiftACL) {
			t.Errorf("ParseSwiftACL(%q): %v", bad, err)
		}
	}
}

func TestParseSwiftWriteACL(t *testing.T) {
	if a, err := ParseSwiftWriteACL("acme:bob, other"); err != nil || a.String() != "acme:bob,other" {
		t.Errorf("%+v %v", a, err)
	}
	for _, bad := range []string{".r:*", ".rlistings", "acme,.r:example.com", "x y"} {
		if _, err := ParseSwiftWriteACL(bad); !errors.Is(err, ErrInvalidSwiftACL) {
			t.Errorf("ParseSwiftWriteACL(%q): %v", bad, err)
		}
	}
}

func TestReferrerAllowed(t *testing.T) {
	cases := []struct {
		acl, referer string
		want         bool
	}{
		{"", "http://example.com/", false},
		{"acme", "http://example.com/", false},
		{".r:*", "", true},
		{".r:*", "http://anything/", true},
		{".r:*", "::not a url", true},
		{".r:example.com", "http://example.com/x", true},
		{".r:example.com", "https://example.com:8443/x", true},
		{".r:example.com", "http://www.example.com/x", false},
		{".r:example.com", "", false},
		{".r:.example.com", "http://www.example.com/", true},
		{".r:.example.com", "http://example.com/", false},
		{".r:.example.com", "http://badexample.com/", false},
		{".r:.example.com,.r:-bad.example.com", "http://bad.example.com/", false},
		{".r:.example.com,.r:-bad.example.com", "http://good.example.com/", true},
		{".r:-bad.example.com,.r:.example.com", "http://bad.example.com/", true}, // the last match decides
		{".r:*,.r:-evil.org", "http://evil.org/", false},
		{".r:*,.r:-evil.org", "", true},
		{".r:unknown", "", true}, // as in Swift: no Referer is the host "unknown"
	}
	for _, c := range cases {
		a, err := ParseSwiftACL(c.acl)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.ReferrerAllowed(c.referer); got != c.want {
			t.Errorf("%q allows %q: %v, want %v", c.acl, c.referer, got, c.want)
		}
	}
}

func TestStateFromMeta(t *testing.T) {
	pub, _ := CannedACL(CannedPublicRead, false)
	policy := `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}]}`
	st := StateFromMeta("photos", map[string]string{
		MetaACL: pub.Encode(), MetaPolicy: policy, MetaSwiftRead: ".r:*,.rlistings", MetaSwiftWrite: "other",
		MetaQuotaBytes: "1000", MetaQuotaCount: "10", "meta-color": "blue",
	})
	if st.Broken != nil || !reflect.DeepEqual(st.ACL, pub) || st.Policy == nil || st.Policy.Raw != policy ||
		st.SwiftRead.String() != ".r:*,.rlistings" || st.SwiftWrite.String() != "other" || st.Quota != (Quota{1000, 10}) {
		t.Fatalf("%+v", st)
	}
	if !st.Public() {
		t.Error("not public")
	}
	empty := StateFromMeta("photos", nil)
	if empty.Broken != nil || empty.Policy != nil || len(empty.ACL.Grants) != 0 || empty.Public() || !empty.Quota.None() {
		t.Fatalf("%+v", empty)
	}
	// Garbage quotas are no quotas, as in Swift's middleware.
	if q := StateFromMeta("b", map[string]string{MetaQuotaBytes: "lots", MetaQuotaCount: "-3"}).Quota; q != (Quota{}) {
		t.Errorf("%+v", q)
	}
	for k, v := range map[string]string{MetaACL: "{", MetaPolicy: "[]", MetaSwiftRead: ".x:y", MetaSwiftWrite: ".r:*"} {
		if st := StateFromMeta("photos", map[string]string{k: v}); st.Broken == nil {
			t.Errorf("%s=%q is not broken", k, v)
		}
	}
	// A policy stored for another bucket name (cannot happen, but) does not validate.
	if st := StateFromMeta("other", map[string]string{MetaPolicy: policy}); st.Broken == nil {
		t.Error("a policy naming another bucket is not broken")
	}
}

func TestSwiftACLSharesOutside(t *testing.T) {
	for s, want := range map[string]bool{"": false, "acme": false, "acme:bob": false, "other": true, "other:bob": true, ".r:*": true, ".rlistings": false} {
		a, err := ParseSwiftACL(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.SharesOutside("acme"); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}
