package access

import (
	"fmt"
	"testing"
	"time"
)

// condPolicy is a policy allowing everyone s3:GetObject on photos/* under a Condition block.
func condPolicy(t *testing.T, effect, cond string) *Policy {
	t.Helper()
	return mustPolicy(t, fmt.Sprintf(`{"Statement":[{"Effect":%q,"Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*","Condition":%s}]}`, effect, cond))
}

// holds evaluates a Condition block through Decide: an Allow statement under it, asked by an
// anonymous caller, is allowed exactly when the block holds.
func holds(t *testing.T, cond string, ctx Context) bool {
	t.Helper()
	st := &BucketState{Policy: condPolicy(t, "Allow", cond)}
	d := Decide(Request{Identity: Identity{Anonymous: true}, Action: GetObject,
		Resource: Resource{Owner: "acme", Bucket: "photos", Key: "k"}, Bucket: st, Object: &ACL{}, Context: ctx})
	return d.Allowed
}

func ctxOf(kv ...string) Context {
	c := Context{}
	for i := 0; i+1 < len(kv); i += 2 {
		v, _ := c.Get(kv[i])
		c.Set(kv[i], append(v, kv[i+1])...)
	}
	return c
}

func TestConditionOperators(t *testing.T) {
	none := Context{}
	cases := []struct {
		cond string
		ctx  Context
		want bool
	}{
		// Strings: case-sensitive, IgnoreCase, wildcards; several values OR.
		{`{"StringEquals":{"s3:prefix":"home/"}}`, ctxOf("s3:prefix", "home/"), true},
		{`{"StringEquals":{"s3:prefix":"home/"}}`, ctxOf("s3:prefix", "Home/"), false},
		{`{"StringEquals":{"s3:prefix":["a","home/"]}}`, ctxOf("s3:prefix", "home/"), true},
		{`{"StringEquals":{"s3:prefix":"home/"}}`, none, false},
		{`{"StringNotEquals":{"s3:prefix":"home/"}}`, ctxOf("s3:prefix", "x"), true},
		{`{"StringNotEquals":{"s3:prefix":"home/"}}`, ctxOf("s3:prefix", "home/"), false},
		{`{"StringNotEquals":{"s3:prefix":["a","b"]}}`, ctxOf("s3:prefix", "b"), false},
		{`{"StringNotEquals":{"s3:prefix":"home/"}}`, none, true}, // negated, key absent: true
		{`{"StringEqualsIgnoreCase":{"s3:prefix":"HOME/"}}`, ctxOf("s3:prefix", "home/"), true},
		{`{"StringEqualsIgnoreCase":{"s3:prefix":"HOME/"}}`, ctxOf("s3:prefix", "away/"), false},
		{`{"StringNotEqualsIgnoreCase":{"s3:prefix":"HOME/"}}`, ctxOf("s3:prefix", "home/"), false},
		{`{"StringNotEqualsIgnoreCase":{"s3:prefix":"HOME/"}}`, ctxOf("s3:prefix", "away/"), true},
		{`{"StringLike":{"aws:UserAgent":"aws-sdk-*"}}`, ctxOf("aws:UserAgent", "aws-sdk-go/1"), true},
		{`{"StringLike":{"aws:UserAgent":"aws-sdk-?o*"}}`, ctxOf("aws:UserAgent", "aws-sdk-go/1"), true},
		{`{"StringLike":{"aws:UserAgent":"aws-sdk-*"}}`, ctxOf("aws:UserAgent", "curl/8"), false},
		{`{"StringLike":{"aws:UserAgent":"aws-sdk-*"}}`, none, false},
		{`{"StringNotLike":{"aws:Referer":"https://example.com/*"}}`, ctxOf("aws:Referer", "https://evil/"), true},
		{`{"StringNotLike":{"aws:Referer":"https://example.com/*"}}`, ctxOf("aws:Referer", "https://example.com/a"), false},
		{`{"StringNotLike":{"aws:Referer":"https://example.com/*"}}`, none, true},
		// Key names compare without case.
		{`{"StringEquals":{"S3:PREFIX":"home/"}}`, ctxOf("s3:prefix", "home/"), true},
		// Numbers.
		{`{"NumericEquals":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "10"), true},
		{`{"NumericEquals":{"s3:max-keys":10}}`, ctxOf("s3:max-keys", "10.0"), true},
		{`{"NumericEquals":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "11"), false},
		{`{"NumericEquals":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "ten"), false},
		{`{"NumericNotEquals":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "11"), true},
		{`{"NumericNotEquals":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "10"), false},
		{`{"NumericNotEquals":{"s3:max-keys":"10"}}`, none, true},
		{`{"NumericLessThan":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "9"), true},
		{`{"NumericLessThan":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "10"), false},
		{`{"NumericLessThanEquals":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "10"), true},
		{`{"NumericLessThanEquals":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "11"), false},
		{`{"NumericGreaterThan":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "11"), true},
		{`{"NumericGreaterThan":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "10"), false},
		{`{"NumericGreaterThanEquals":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "10"), true},
		{`{"NumericGreaterThanEquals":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "9"), false},
		{`{"NumericLessThan":{"s3:max-keys":"10"}}`, none, false},
		// Dates: ISO 8601 or epoch seconds, either side.
		{`{"DateEquals":{"aws:CurrentTime":"2026-01-01T00:00:00Z"}}`, ctxOf("aws:CurrentTime", "2026-01-01T00:00:00Z"), true},
		{`{"DateEquals":{"aws:CurrentTime":"1767225600"}}`, ctxOf("aws:CurrentTime", "2026-01-01T00:00:00Z"), true},
		{`{"DateEquals":{"aws:CurrentTime":"2026-01-01T00:00:00Z"}}`, ctxOf("aws:CurrentTime", "2026-01-01T00:00:01Z"), false},
		{`{"DateNotEquals":{"aws:CurrentTime":"2026-01-01T00:00:00Z"}}`, ctxOf("aws:CurrentTime", "2026-01-01T00:00:01Z"), true},
		{`{"DateNotEquals":{"aws:CurrentTime":"2026-01-01T00:00:00Z"}}`, ctxOf("aws:CurrentTime", "2026-01-01T00:00:00Z"), false},
		{`{"DateLessThan":{"aws:CurrentTime":"2026-01-01T00:00:00Z"}}`, ctxOf("aws:CurrentTime", "2025-12-31T23:59:59Z"), true},
		{`{"DateLessThan":{"aws:CurrentTime":"2026-01-01T00:00:00Z"}}`, ctxOf("aws:CurrentTime", "2026-01-01T00:00:00Z"), false},
		{`{"DateLessThanEquals":{"aws:CurrentTime":"2026-01-01"}}`, ctxOf("aws:CurrentTime", "2026-01-01T00:00:00Z"), true},
		{`{"DateLessThanEquals":{"aws:CurrentTime":"2026-01-01"}}`, ctxOf("aws:CurrentTime", "2026-01-02T00:00:00Z"), false},
		{`{"DateGreaterThan":{"aws:EpochTime":"1767225600"}}`, ctxOf("aws:EpochTime", "1767225601"), true},
		{`{"DateGreaterThan":{"aws:EpochTime":"1767225600"}}`, ctxOf("aws:EpochTime", "1767225600"), false},
		{`{"DateGreaterThanEquals":{"aws:EpochTime":"1767225600"}}`, ctxOf("aws:EpochTime", "1767225600"), true},
		{`{"DateGreaterThanEquals":{"aws:EpochTime":"1767225600"}}`, ctxOf("aws:EpochTime", "1767225599"), false},
		{`{"DateGreaterThan":{"aws:EpochTime":"1767225600"}}`, none, false},
		// Bool, case-insensitive values.
		{`{"Bool":{"aws:SecureTransport":"true"}}`, ctxOf("aws:SecureTransport", "true"), true},
		{`{"Bool":{"aws:SecureTransport":true}}`, ctxOf("aws:SecureTransport", "TRUE"), true},
		{`{"Bool":{"aws:SecureTransport":"true"}}`, ctxOf("aws:SecureTransport", "false"), false},
		{`{"Bool":{"aws:SecureTransport":"false"}}`, none, false},
		// IP addresses: CIDR or one address, IPv4 and IPv6, v4-mapped v6 as v4.
		{`{"IpAddress":{"aws:SourceIp":"127.0.0.0/8"}}`, ctxOf("aws:SourceIp", "127.0.0.1"), true},
		{`{"IpAddress":{"aws:SourceIp":"127.0.0.1"}}`, ctxOf("aws:SourceIp", "127.0.0.1"), true},
		{`{"IpAddress":{"aws:SourceIp":"127.0.0.1"}}`, ctxOf("aws:SourceIp", "::ffff:127.0.0.1"), true},
		{`{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, ctxOf("aws:SourceIp", "127.0.0.1"), false},
		{`{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","2001:db8::/32"]}}`, ctxOf("aws:SourceIp", "2001:db8::1"), true},
		{`{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, ctxOf("aws:SourceIp", "not-an-ip"), false},
		{`{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, none, false},
		{`{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, ctxOf("aws:SourceIp", "127.0.0.1"), true},
		{`{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, ctxOf("aws:SourceIp", "10.1.2.3"), false},
		{`{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, none, true},
		// Null.
		{`{"Null":{"s3:x-amz-server-side-encryption":"true"}}`, none, true},
		{`{"Null":{"s3:x-amz-server-side-encryption":"true"}}`, ctxOf("s3:x-amz-server-side-encryption", "AES256"), false},
		{`{"Null":{"s3:x-amz-server-side-encryption":"false"}}`, ctxOf("s3:x-amz-server-side-encryption", "AES256"), true},
		{`{"Null":{"s3:x-amz-server-side-encryption":"false"}}`, none, false},
		// IfExists: absent is true; present is as without it.
		{`{"StringEqualsIfExists":{"s3:x-amz-acl":"private"}}`, none, true},
		{`{"StringEqualsIfExists":{"s3:x-amz-acl":"private"}}`, ctxOf("s3:x-amz-acl", "private"), true},
		{`{"StringEqualsIfExists":{"s3:x-amz-acl":"private"}}`, ctxOf("s3:x-amz-acl", "public-read"), false},
		{`{"NumericLessThanIfExists":{"s3:max-keys":"10"}}`, none, true},
		{`{"NumericLessThanIfExists":{"s3:max-keys":"10"}}`, ctxOf("s3:max-keys", "100"), false},
		{`{"IpAddressIfExists":{"aws:SourceIp":"10.0.0.0/8"}}`, none, true},
		{`{"BoolIfExists":{"aws:SecureTransport":"true"}}`, ctxOf("aws:SecureTransport", "false"), false},
		// Several keys under one operator: AND; several operators: AND.
		{`{"StringEquals":{"s3:prefix":"a","s3:delimiter":"/"}}`, ctxOf("s3:prefix", "a", "s3:delimiter", "/"), true},
		{`{"StringEquals":{"s3:prefix":"a","s3:delimiter":"/"}}`, ctxOf("s3:prefix", "a"), false},
		{`{"StringEquals":{"s3:prefix":"a"},"Bool":{"aws:SecureTransport":"true"}}`, ctxOf("s3:prefix", "a", "aws:SecureTransport", "false"), false},
		{`{"StringEquals":{"s3:prefix":"a"},"Bool":{"aws:SecureTransport":"true"}}`, ctxOf("s3:prefix", "a", "aws:SecureTransport", "true"), true},
		// Set operators on a multi-valued key.
		{`{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, ctxOf("s3:RequestObjectTagKeys", "x", "s3:RequestObjectTagKeys", "b"), true},
		{`{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, ctxOf("s3:RequestObjectTagKeys", "x"), false},
		{`{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, none, false},
		{`{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, ctxOf("s3:RequestObjectTagKeys", "a", "s3:RequestObjectTagKeys", "b"), true},
		{`{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, ctxOf("s3:RequestObjectTagKeys", "a", "s3:RequestObjectTagKeys", "c"), false},
		{`{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`, none, true},
		{`{"ForAllValues:StringLike":{"s3:RequestObjectTagKeys":"team-*"}}`, ctxOf("s3:RequestObjectTagKeys", "team-a", "s3:RequestObjectTagKeys", "team-b"), true},
		{`{"ForAnyValue:StringNotEquals":{"s3:RequestObjectTagKeys":"secret"}}`, ctxOf("s3:RequestObjectTagKeys", "secret", "s3:RequestObjectTagKeys", "x"), true},
		{`{"ForAnyValue:StringNotEquals":{"s3:RequestObjectTagKeys":"secret"}}`, ctxOf("s3:RequestObjectTagKeys", "secret"), false},
		{`{"ForAllValues:StringNotEquals":{"s3:RequestObjectTagKeys":"secret"}}`, ctxOf("s3:RequestObjectTagKeys", "secret", "s3:RequestObjectTagKeys", "x"), false},
		{`{"ForAllValues:StringNotEquals":{"s3:RequestObjectTagKeys":"secret"}}`, ctxOf("s3:RequestObjectTagKeys", "x"), true},
		{`{"forallvalues:stringequalsifexists":{"s3:RequestObjectTagKeys":"a"}}`, none, true},
		// Without a set operator, a multi-valued key: any value for a positive operator,
		// none for a negated one.
		{`{"StringEquals":{"s3:RequestObjectTagKeys":"a"}}`, ctxOf("s3:RequestObjectTagKeys", "x", "s3:RequestObjectTagKeys", "a"), true},
		{`{"StringNotEquals":{"s3:RequestObjectTagKeys":"a"}}`, ctxOf("s3:RequestObjectTagKeys", "x", "s3:RequestObjectTagKeys", "a"), false},
		// Tag keys keep their case after the prefix; the prefix does not.
		{`{"StringEquals":{"s3:ExistingObjectTag/Team":"blue"}}`, ctxOf("S3:existingobjecttag/Team", "blue"), true},
		{`{"StringEquals":{"s3:ExistingObjectTag/Team":"blue"}}`, ctxOf("s3:ExistingObjectTag/team", "blue"), false},
		{`{"StringEquals":{"s3:RequestObjectTag/env":"prod"}}`, ctxOf("s3:RequestObjectTag/env", "prod"), true},
		// An empty block always holds.
		{`{}`, none, true},
	}
	for _, c := range cases {
		if got := holds(t, c.cond, c.ctx); got != c.want {
			t.Errorf("%s with %v: %v, want %v", c.cond, c.ctx, got, c.want)
		}
	}
}

func TestConditionDeny(t *testing.T) {
	// Deny unless TLS, on top of a public read: the owner's users are denied too.
	doc := `{"Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"},
		{"Sid":"tls","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::photos/*","Condition":{"Bool":{"aws:SecureTransport":"false"}}},
		{"Sid":"net","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::photos/*","Condition":{"NotIpAddress":{"aws:SourceIp":["127.0.0.0/8","192.168.0.0/16"]}}}]}`
	st := &BucketState{Policy: mustPolicy(t, doc)}
	res := Resource{Owner: "acme", Bucket: "photos", Key: "k"}
	cases := []struct {
		id   Identity
		ctx  Context
		want bool
	}{
		{Identity{Anonymous: true}, ctxOf("aws:SecureTransport", "true", "aws:SourceIp", "127.0.0.1"), true},
		{Identity{Anonymous: true}, ctxOf("aws:SecureTransport", "false", "aws:SourceIp", "127.0.0.1"), false},
		{Identity{Anonymous: true}, ctxOf("aws:SecureTransport", "true", "aws:SourceIp", "10.0.0.1"), false},
		// No SourceIp at all: NotIpAddress holds, so the Deny applies.
		{Identity{Anonymous: true}, ctxOf("aws:SecureTransport", "true"), false},
		{Identity{Account: "acme", Admin: true}, ctxOf("aws:SecureTransport", "false", "aws:SourceIp", "127.0.0.1"), false},
		{Identity{Account: "acme", Admin: true}, ctxOf("aws:SecureTransport", "true", "aws:SourceIp", "192.168.1.1"), true},
	}
	for _, c := range cases {
		d := Decide(Request{Identity: c.id, Action: GetObject, Resource: res, Bucket: st, Object: &ACL{}, Context: c.ctx})
		if d.Allowed != c.want {
			t.Errorf("%+v %v: %v (%s), want %v", c.id, c.ctx, d.Allowed, d.Reason, c.want)
		}
	}
	// The owner's administrator may still replace the policy that locks it out.
	d := Decide(Request{Identity: Identity{Account: "acme", Admin: true}, Action: PutBucketPolicy, Resource: Resource{Owner: "acme", Bucket: "photos"}, Bucket: st, Context: ctxOf("aws:SecureTransport", "false")})
	if !d.Allowed {
		t.Errorf("owner locked out of its policy: %s", d.Reason)
	}
}

func TestPolicyPublicConditions(t *testing.T) {
	for cond, want := range map[string]bool{
		`{}`: true,
		`{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`:               false,
		`{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","0.0.0.0/0"]}}`: true,
		`{"IpAddress":{"aws:SourceIp":"2001:db8::/32"}}`:            false,
		`{"IpAddress":{"aws:SourceIp":"2001::/16"}}`:                true,
		`{"IpAddressIfExists":{"aws:SourceIp":"10.0.0.0/8"}}`:       true,
		`{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`:            true,
		`{"StringEquals":{"aws:PrincipalAccount":"acme"}}`:          false,
		`{"StringLike":{"aws:PrincipalAccount":"ac*"}}`:             true,
		`{"StringEquals":{"aws:PrincipalAccount":"ac*"}}`:           true,
		`{"Bool":{"aws:SecureTransport":"true"}}`:                   true,
		`{"StringEquals":{"aws:userid":"acme:bob"}}`:                false,
	} {
		if got := condPolicy(t, "Allow", cond).Public(); got != want {
			t.Errorf("%s: public %v, want %v", cond, got, want)
		}
	}
	if condPolicy(t, "Deny", `{}`).Public() {
		t.Error("a Deny is public")
	}
}

func TestUsesExistingObjectTags(t *testing.T) {
	if condPolicy(t, "Allow", `{"StringEquals":{"s3:RequestObjectTag/a":"b"}}`).UsesExistingObjectTags() {
		t.Error("RequestObjectTag counted")
	}
	if !condPolicy(t, "Allow", `{"StringEquals":{"s3:existingobjecttag/a":"b"}}`).UsesExistingObjectTags() {
		t.Error("ExistingObjectTag missed")
	}
	var nilPolicy *Policy
	if nilPolicy.UsesExistingObjectTags() || nilPolicy.UsesRequestObjectTags() {
		t.Error("nil policy")
	}
	if condPolicy(t, "Allow", `{"StringEquals":{"s3:ExistingObjectTag/a":"b"}}`).UsesRequestObjectTags() {
		t.Error("ExistingObjectTag counted as a request tag")
	}
	for _, key := range []string{"s3:RequestObjectTag/a", "s3:requestobjecttagkeys"} {
		if !condPolicy(t, "Allow", `{"ForAnyValue:StringEquals":{"`+key+`":"b"}}`).UsesRequestObjectTags() {
			t.Errorf("%s missed", key)
		}
	}
}

func TestBaseContext(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))
	c := BaseContext("[::1]:5000", true, now, "ua/1", "", Identity{Account: "acme", User: "bob"})
	want := map[string]string{KeySourceIP: "::1", KeySecureTransport: "true", KeyCurrentTime: "2025-12-31T23:00:00Z",
		KeyEpochTime: "1767222000", KeyUserAgent: "ua/1", KeyPrincipalAccount: "acme", KeyUsername: "bob", KeyUserID: "acme:bob"}
	for k, v := range want {
		if got, ok := c.Get(k); !ok || len(got) != 1 || got[0] != v {
			t.Errorf("%s: %v, want %q", k, got, v)
		}
	}
	if _, ok := c.Get(KeyReferer); ok {
		t.Error("empty Referer present")
	}
	c = BaseContext("garbage", false, now, "", "", Identity{Anonymous: true})
	for _, k := range []string{KeySourceIP, KeyPrincipalAccount, KeyUsername, KeyUserAgent} {
		if _, ok := c.Get(k); ok {
			t.Errorf("%s present for an anonymous caller without address", k)
		}
	}
	if v, _ := c.Get(KeySecureTransport); len(v) != 1 || v[0] != "false" {
		t.Errorf("SecureTransport %v", v)
	}
}

func TestWithExistingTags(t *testing.T) {
	base := ctxOf(KeyPrefix, "p")
	c := base.WithExistingTags(map[string]string{ObjectMetaTagging: "Team=blue&a+b=c%26d"})
	if v, _ := c.Get("s3:ExistingObjectTag/Team"); len(v) != 1 || v[0] != "blue" {
		t.Errorf("Team: %v", v)
	}
	if v, _ := c.Get("s3:ExistingObjectTag/a b"); len(v) != 1 || v[0] != "c&d" {
		t.Errorf("a b: %v", v)
	}
	if _, ok := base.Get("s3:ExistingObjectTag/Team"); ok {
		t.Error("the base context was changed")
	}
	if v, _ := c.Get(KeyPrefix); len(v) != 1 {
		t.Error("base keys lost")
	}
	if len(base.WithExistingTags(nil)) != 1 || len(base.WithExistingTags(map[string]string{ObjectMetaTagging: "%zz"})) != 1 {
		t.Error("no or bad tags added keys")
	}
}
