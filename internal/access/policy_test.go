package access

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParsePolicyValid(t *testing.T) {
	cases := []struct {
		doc  string
		want []Statement
	}{
		{`{"Version":"2012-10-17","Id":"p1","Statement":[{"Sid":"s1","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}]}`,
			[]Statement{{Sid: "s1", Effect: EffectAllow, Principals: []Principal{{Any: true}}, Actions: []string{"s3:getobject"}, Resources: []string{"arn:aws:s3:::photos/*"}}}},
		// A single statement, not in a list; no Version.
		{`{"Statement":{"Effect":"Deny","Principal":{"AWS":"*"},"Action":["s3:*"],"Resource":["arn:aws:s3:::photos","arn:aws:s3:::photos/*"]}}`,
			[]Statement{{Effect: EffectDeny, Principals: []Principal{{Any: true}}, Actions: []string{"s3:*"}, Resources: []string{"arn:aws:s3:::photos", "arn:aws:s3:::photos/*"}}}},
		{`{"Version":"2008-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["arn:aws:iam::other:root","arn:aws:iam::third:user/tom","acme","acme:bob"]},"Action":"S3:ListBucket","Resource":"arn:aws:s3:::photos"}]}`,
			[]Statement{{Effect: EffectAllow, Principals: []Principal{{Account: "other"}, {Account: "third", User: "tom"}, {Account: "acme"}, {Account: "acme", User: "bob"}},
				Actions: []string{"s3:listbucket"}, Resources: []string{"arn:aws:s3:::photos"}}}},
		{`{"Statement":[{"Effect":"Allow","Principal":{"CanonicalUser":"other"},"Action":"*","Resource":"arn:aws:s3:::*"}]}`,
			[]Statement{{Effect: EffectAllow, Principals: []Principal{{Account: "other"}}, Actions: []string{"*"}, Resources: []string{"arn:aws:s3:::*"}}}},
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:Get*","Resource":"arn:aws:s3:::pho?os/a/*"}]}`,
			[]Statement{{Effect: EffectAllow, Principals: []Principal{{Any: true}}, Actions: []string{"s3:get*"}, Resources: []string{"arn:aws:s3:::pho?os/a/*"}}}},
		// An action Cairn does not know is kept (it simply never matches).
		{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:PutBucketWebsite","Resource":"arn:aws:s3:::photos"}]}`,
			[]Statement{{Effect: EffectAllow, Principals: []Principal{{Any: true}}, Actions: []string{"s3:putbucketwebsite"}, Resources: []string{"arn:aws:s3:::photos"}}}},
	}
	for _, c := range cases {
		p, err := ParsePolicy([]byte(c.doc), "photos")
		if err != nil {
			t.Errorf("ParsePolicy(%s): %v", c.doc, err)
			continue
		}
		if p.Raw != c.doc {
			t.Errorf("Raw %q", p.Raw)
		}
		if !reflect.DeepEqual(p.Statements, c.want) {
			t.Errorf("ParsePolicy(%s):\n got %+v\nwant %+v", c.doc, p.Statements, c.want)
		}
	}
}

func TestParsePolicyInvalid(t *testing.T) {
	stmt := func(s string) string { return `{"Version":"2012-10-17","Statement":[` + s + `]}` }
	ok := `"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"`
	cases := []struct {
		doc, why string
	}{
		{``, "not JSON"},
		{`not json`, "not JSON"},
		{`[]`, "not an object"},
		{`{"Statement":[]}`, "no statement"},
		{`{}`, "no statement"},
		{`{"Version":"2012-10-17"}`, "no statement"},
		{`{"Version":"2020-01-01","Statement":[{` + ok + `}]}`, "version"},
		{`{"Version":7,"Statement":[{` + ok + `}]}`, "version type"},
		{`{"Statement":[{` + ok + `}],"Extra":1}`, "unknown top field"},
		{`{"statement":[{` + ok + `}]}`, "field names have case"},
		{`{"Statement":[{` + ok + `}]} trailing`, "trailing garbage"},
		{stmt(`7`), "statement not an object"},
		{stmt(`{"Effect":"Permit","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "effect"},
		{stmt(`{"Effect":"allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "effect case"},
		{stmt(`{"Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "no effect"},
		{stmt(`{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "no principal"},
		{stmt(`{"Effect":"Allow","Principal":"*","Resource":"arn:aws:s3:::photos/*"}`), "no action"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject"}`), "no resource"},
		{stmt(`{` + ok + `,"Condition":{"IpAddres":{"aws:SourceIp":"10.0.0.0/8"}}}`), "unknown operator"},
		{stmt(`{` + ok + `,"Condition":{"IpAddress":{"aws:SourceIpx":"10.0.0.0/8"}}}`), "unknown key"},
		{stmt(`{` + ok + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/33"}}}`), "bad CIDR"},
		{stmt(`{` + ok + `,"Condition":{"NumericLessThan":{"s3:max-keys":"ten"}}}`), "bad number"},
		{stmt(`{` + ok + `,"Condition":{"DateLessThan":{"aws:CurrentTime":"tomorrow"}}}`), "bad date"},
		{stmt(`{` + ok + `,"Condition":{"Bool":{"aws:SecureTransport":"yes"}}}`), "bad bool"},
		{stmt(`{` + ok + `,"Condition":{"ForAnyValue:Null":{"aws:SecureTransport":"true"}}}`), "set Null"},
		{stmt(`{` + ok + `,"Condition":{"ForSomeValues:StringEquals":{"s3:prefix":"a"}}}`), "unknown set operator"},
		{stmt(`{` + ok + `,"Condition":{"StringEquals":{"s3:prefix":[]}}}`), "no values"},
		{stmt(`{` + ok + `,"Condition":{"StringEquals":{"s3:prefix":{"a":1}}}}`), "value type"},
		{stmt(`{` + ok + `,"Condition":{"StringEquals":{}}}`), "operator without key"},
		{stmt(`{` + ok + `,"Condition":{"StringEquals":{"s3:ExistingObjectTag/":"x"}}}`), "tag key missing"},
		{stmt(`{` + ok + `,"Condition":[1]}`), "condition type"},
		{stmt(`{` + ok + `,"NotAction":"s3:PutObject"}`), "NotAction"},
		{stmt(`{"Effect":"Allow","NotPrincipal":{"AWS":"x"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "NotPrincipal"},
		{stmt(`{` + ok + `,"NotResource":"arn:aws:s3:::photos/x"}`), "NotResource"},
		{stmt(`{` + ok + `,"Comment":"x"}`), "unknown statement field"},
		{stmt(`{"Effect":"Allow","Principal":"acme","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "principal string"},
		{stmt(`{"Effect":"Allow","Principal":{"Service":"s3.amazonaws.com"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "principal type"},
		{stmt(`{"Effect":"Allow","Principal":{},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "empty principal"},
		{stmt(`{"Effect":"Allow","Principal":{"AWS":[]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "empty principal list"},
		{stmt(`{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::acme:group/x"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "principal arn"},
		{stmt(`{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::acme:user/"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "principal arn user"},
		{stmt(`{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::acme"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "principal arn short"},
		{stmt(`{"Effect":"Allow","Principal":{"AWS":"acme:"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "principal user empty"},
		{stmt(`{"Effect":"Allow","Principal":{"AWS":"bad name"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "principal name"},
		{stmt(`{"Effect":"Allow","Principal":{"AWS":7},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}`), "principal type number"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"iam:PassRole","Resource":"arn:aws:s3:::photos/*"}`), "non-s3 action"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:","Resource":"arn:aws:s3:::photos/*"}`), "empty action"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:Get Object","Resource":"arn:aws:s3:::photos/*"}`), "action chars"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":[],"Resource":"arn:aws:s3:::photos/*"}`), "empty action list"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":{"a":1},"Resource":"arn:aws:s3:::photos/*"}`), "action type"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}`), "another bucket"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos2/*"}`), "a longer bucket"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"photos/*"}`), "not an ARN"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::"}`), "empty ARN"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:iam::acme:root"}`), "iam ARN"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos"}`), "object action on the bucket"},
		{stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::photos/*"}`), "bucket action on objects"},
		{stmt(`{"Sid":"a",` + ok + `},{"Sid":"a",` + ok + `}`), "duplicate Sid"},
		{stmt(`{"Sid":1,` + ok + `}`), "Sid type"},
		{`{"Statement":[{` + ok + `}],"Id":5}`, "Id type"},
		{`{"Statement":[{` + ok + `}], "Padding":"` + strings.Repeat("x", MaxPolicySize) + `"}`, "too large"},
	}
	for _, c := range cases {
		_, err := ParsePolicy([]byte(c.doc), "photos")
		if !errors.Is(err, ErrMalformedPolicy) {
			t.Errorf("%s: ParsePolicy(%.200s) = %v, want ErrMalformedPolicy", c.why, c.doc, err)
		}
	}
	_, err := ParsePolicy([]byte(stmt(`{`+ok+`,"NotAction":"s3:PutObject"}`)), "photos")
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "NotAction") {
		t.Errorf("NotAction: %v", err)
	}
	_, err = ParsePolicy([]byte(stmt(`{`+ok+`,"Condition":{"StringEquals":{"aws:Nope":"x"}}}`)), "photos")
	if err == nil || !strings.Contains(err.Error(), "Policy has an invalid condition key") {
		t.Errorf("unknown key: %v", err)
	}
	_, err = ParsePolicy([]byte(stmt(`{`+ok+`,"Condition":{"StringEqualz":{"s3:prefix":"x"}}}`)), "photos")
	if err == nil || !strings.Contains(err.Error(), "Invalid Condition type") {
		t.Errorf("unknown operator: %v", err)
	}
}

func TestPolicyPublic(t *testing.T) {
	var nilPolicy *Policy
	if nilPolicy.Public() {
		t.Error("nil policy is public")
	}
	for doc, want := range map[string]bool{
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}]}`:                  true,
		`{"Statement":[{"Effect":"Allow","Principal":{"AWS":["acme","*"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}]}`: true,
		`{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}]}`:                   false,
		`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"acme"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}]}`:       false,
	} {
		p, err := ParsePolicy([]byte(doc), "photos")
		if err != nil || p.Public() != want {
			t.Errorf("%s: public %v, %v", doc, p.Public(), err)
		}
	}
}

func TestWildMatch(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"a*", "a", true},
		{"a*", "ab/c", true},
		{"a*", "ba", false},
		{"*a", "bba", true},
		{"*a", "bab", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXcYb", false},
		{"arn:aws:s3:::b/*", "arn:aws:s3:::b/k", true},
		{"arn:aws:s3:::b/*", "arn:aws:s3:::b", false},
		{"arn:aws:s3:::b/*", "arn:aws:s3:::bb/k", false},
		{"arn:aws:s3:::b*", "arn:aws:s3:::b/k", true},
		{"s3:get*", "s3:getobject", true},
		{"s3:get*", "s3:putobject", false},
		{"**?", "x", true},
		{"*?*?*", "x", false},
		{strings.Repeat("*a", 20) + "b", strings.Repeat("a", 200), false},
	}
	for _, c := range cases {
		if got := wildMatch(c.pat, c.s); got != c.want {
			t.Errorf("wildMatch(%q, %q) = %v", c.pat, c.s, got)
		}
	}
}
