package access

import (
	"errors"
	"testing"
)

// FuzzParsePolicy: any input either parses into a policy whose every part Decide can use, or
// fails with ErrMalformedPolicy; it never panics, and a parsed policy never lets a stranger
// into a bucket it does not name.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{
		`{"Version":"2012-10-17","Statement":[{"Sid":"a","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}]}`,
		`{"Statement":{"Effect":"Deny","Principal":{"AWS":["arn:aws:iam::other:root","acme:bob"]},"Action":["s3:*"],"Resource":["arn:aws:s3:::photos","arn:aws:s3:::photos/*"]}}`,
		`{"Statement":[{"Effect":"Allow","Principal":{"CanonicalUser":"x"},"Action":"*","Resource":"arn:aws:s3:::*","Condition":{}}]}`,
		`{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::photos/*","Condition":{"Bool":{"aws:SecureTransport":"false"},"NotIpAddress":{"aws:SourceIp":["10.0.0.0/8","::1"]}}}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::photos","Condition":{"ForAllValues:StringLikeIfExists":{"s3:prefix":["a*",1,true]},"NumericLessThan":{"s3:max-keys":"1e3"},"DateGreaterThan":{"aws:CurrentTime":"2020-01-01"},"Null":{"s3:ExistingObjectTag/x":"false"}}}]}`,
		`{"Statement":[]}`, `[]`, `{`, `null`, `{"Statement":[null]}`, `{"Statement":[{"Principal":null}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := ParsePolicy(doc, "photos")
		if err != nil {
			if !errors.Is(err, ErrMalformedPolicy) {
				t.Fatalf("error %v does not wrap ErrMalformedPolicy", err)
			}
			return
		}
		if len(p.Statements) == 0 {
			t.Fatal("a policy without statements parsed")
		}
		for _, s := range p.Statements {
			if (s.Effect != EffectAllow && s.Effect != EffectDeny) || len(s.Principals) == 0 || len(s.Actions) == 0 || len(s.Resources) == 0 {
				t.Fatalf("incomplete statement %+v", s)
			}
		}
		st := &BucketState{Policy: p}
		// Conditions evaluate against any context without panicking.
		ctx := Context{}
		ctx.Set(KeySourceIP, "10.1.2.3")
		ctx.Set(KeyPrefix, "a", "b")
		ctx.Set(KeyCurrentTime, "2026-01-01T00:00:00Z")
		ctx.Set(KeyMaxKeys, "x")
		for i := range p.Statements {
			conditionsHold(p.Statements[i].Conditions, ctx)
			conditionsHold(p.Statements[i].Conditions, nil)
		}
		// Whatever the policy says, it speaks of bucket photos only.
		for _, a := range []Action{GetObject, PutObject, ListBucket, DeleteBucket} {
			res := Resource{Owner: "acme", Bucket: "elsewhere"}
			if a.ObjectLevel() {
				res.Key = "k"
			}
			if d := Decide(Request{Identity: Identity{Anonymous: true}, Action: a, Resource: res, Bucket: st, Object: &ACL{}}); d.Allowed &&
				!wildMatchAny(p, res.ARN()) {
				t.Fatalf("policy %s allows %v on %s", doc, a, res.ARN())
			}
		}
		if _, err := ParsePolicy([]byte(p.Raw), "photos"); err != nil {
			t.Fatalf("Raw does not parse again: %v", err)
		}
	})
}

func wildMatchAny(p *Policy, arn string) bool {
	for _, s := range p.Statements {
		if s.coversResource(arn) {
			return true
		}
	}
	return false
}

// FuzzParseSwiftACL: any input either fails with ErrInvalidSwiftACL or parses into an ACL
// whose cleaned form parses back to the same ACL; a write ACL never holds referrers.
func FuzzParseSwiftACL(f *testing.F) {
	for _, s := range []string{"", ".r:*", ".r:*,.rlistings", ".r:-bad.example.com,.r:.example.com", "acme:bob,other",
		".referrer: *.example.com", ".r:", ".x:y", "a:b:c", " , acme ,"} {
		f.Add(s, "http://www.example.com/page")
	}
	f.Fuzz(func(t *testing.T, s, referer string) {
		for _, write := range []bool{false, true} {
			parse := ParseSwiftACL
			if write {
				parse = ParseSwiftWriteACL
			}
			a, err := parse(s)
			if err != nil {
				if !errors.Is(err, ErrInvalidSwiftACL) {
					t.Fatalf("error %v does not wrap ErrInvalidSwiftACL", err)
				}
				continue
			}
			if write && (len(a.Referrers) > 0 || a.Listings) {
				t.Fatalf("write ACL %q has referrers", s)
			}
			b, err := parse(a.String())
			if err != nil || b.String() != a.String() {
				t.Fatalf("%q cleans to %q, which parses to %q (%v)", s, a.String(), b.String(), err)
			}
			_ = a.ReferrerAllowed(referer)
			if a.Empty() && a.ReferrerAllowed(referer) {
				t.Fatal("an empty ACL allows a referrer")
			}
		}
	})
}
