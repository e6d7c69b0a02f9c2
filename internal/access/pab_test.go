package access

import (
	"testing"
)

func TestPublicAccessBlockEncode(t *testing.T) {
	for _, b := range []PublicAccessBlock{{}, {BlockPublicAcls: true}, {true, true, true, true}, {IgnorePublicAcls: true, RestrictPublicBuckets: true}} {
		got, err := DecodePublicAccessBlock(b.Encode())
		if err != nil || got != b {
			t.Errorf("%+v: round trip %q → %+v, %v", b, b.Encode(), got, err)
		}
	}
	if _, err := DecodePublicAccessBlock("BlockPublicAcls,Nope"); err == nil {
		t.Error("unknown flag decoded")
	}
	st := StateFromMeta("photos", map[string]string{MetaPublicAccessBlock: "bad", MetaOwnership: "Nobody"})
	if st.Broken == nil {
		t.Error("damaged PAB and ownership not reported")
	}
	st = StateFromMeta("photos", map[string]string{MetaPublicAccessBlock: "IgnorePublicAcls", MetaOwnership: "BucketOwnerEnforced"})
	if st.Broken != nil || st.PublicAccessBlock == nil || !st.PublicAccessBlock.IgnorePublicAcls || st.PublicAccessBlock.BlockPublicAcls || st.ACLsEnabled() {
		t.Errorf("state %+v", st)
	}
}

func TestPublicAccessBlockAndOwnershipDecisions(t *testing.T) {
	publicRead := mustCanned(t, "public-read")
	authRead := mustCanned(t, "authenticated-read")
	grantBeta := ACL{Grants: []Grant{{Grantee{ID: "beta"}, Read}}}
	publicPolicy := mustPolicy(t, `{"Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::photos","arn:aws:s3:::photos/*"]}]}`)
	anon := Identity{Anonymous: true}
	beta := Identity{Account: "beta", Admin: true}
	acmeUser := Identity{Account: "acme", User: "bob"}
	obj := Resource{Owner: "acme", Bucket: "photos", Key: "k"}
	bkt := Resource{Owner: "acme", Bucket: "photos"}
	cases := []struct {
		why    string
		st     BucketState
		id     Identity
		a      Action
		objACL *ACL
		want   bool
	}{
		{"public bucket ACL", BucketState{ACL: publicRead}, anon, ListBucket, nil, true},
		{"IgnorePublicAcls: bucket ACL", BucketState{ACL: publicRead, PublicAccessBlock: &PublicAccessBlock{IgnorePublicAcls: true}}, anon, ListBucket, nil, false},
		{"IgnorePublicAcls: authenticated-read", BucketState{ACL: authRead, PublicAccessBlock: &PublicAccessBlock{IgnorePublicAcls: true}}, beta, ListBucket, nil, false},
		{"IgnorePublicAcls keeps account grants", BucketState{ACL: grantBeta, PublicAccessBlock: &PublicAccessBlock{IgnorePublicAcls: true}}, beta, ListBucket, nil, true},
		{"BlockPublicAcls alone changes no decision", BucketState{ACL: publicRead, PublicAccessBlock: &PublicAccessBlock{BlockPublicAcls: true}}, anon, ListBucket, nil, true},
		{"public object ACL", BucketState{}, anon, GetObject, &publicRead, true},
		{"IgnorePublicAcls: object ACL", BucketState{PublicAccessBlock: &PublicAccessBlock{IgnorePublicAcls: true}}, anon, GetObject, &publicRead, false},
		{"public policy", BucketState{Policy: publicPolicy}, anon, GetObject, &ACL{}, true},
		{"RestrictPublicBuckets: anonymous", BucketState{Policy: publicPolicy, PublicAccessBlock: &PublicAccessBlock{RestrictPublicBuckets: true}}, anon, GetObject, &ACL{}, false},
		{"RestrictPublicBuckets: other account", BucketState{Policy: publicPolicy, PublicAccessBlock: &PublicAccessBlock{RestrictPublicBuckets: true}}, beta, ListBucket, nil, false},
		{"RestrictPublicBuckets: owner's user", BucketState{Policy: publicPolicy, PublicAccessBlock: &PublicAccessBlock{RestrictPublicBuckets: true}}, acmeUser, ListBucket, nil, true},
		{"BucketOwnerEnforced: bucket ACL off", BucketState{ACL: grantBeta, Ownership: OwnershipBucketOwnerEnforced}, beta, ListBucket, nil, false},
		{"BucketOwnerEnforced: object ACL off", BucketState{Ownership: OwnershipBucketOwnerEnforced}, anon, GetObject, &publicRead, false},
		{"BucketOwnerEnforced: policy still counts", BucketState{Policy: publicPolicy, Ownership: OwnershipBucketOwnerEnforced}, anon, GetObject, nil, true},
		{"BucketOwnerPreferred: ACLs count", BucketState{ACL: grantBeta, Ownership: OwnershipBucketOwnerPreferred}, beta, ListBucket, nil, true},
		{"ObjectWriter: ACLs count", BucketState{Ownership: OwnershipObjectWriter}, anon, GetObject, &publicRead, true},
	}
	for _, c := range cases {
		res := bkt
		if c.a.ObjectLevel() {
			res = obj
		}
		st := c.st
		d := Decide(Request{Identity: c.id, Action: c.a, Resource: res, Bucket: &st, Object: c.objACL})
		if d.Allowed != c.want {
			t.Errorf("%s: allowed %v (%s), want %v", c.why, d.Allowed, d.Reason, c.want)
		}
	}
	// BucketOwnerEnforced never asks for the object's ACL.
	st := BucketState{Ownership: OwnershipBucketOwnerEnforced}
	if d := Decide(Request{Identity: anon, Action: GetObject, Resource: obj, Bucket: &st}); d.NeedObjectACL {
		t.Error("object ACL asked for with ACLs off")
	}
}

func TestACLGrantsPublic(t *testing.T) {
	for name, want := range map[string]bool{"private": false, "public-read": true, "public-read-write": true, "authenticated-read": true, "bucket-owner-full-control": false} {
		a, err := CannedACL(name, true)
		if err != nil {
			t.Fatal(err)
		}
		if a.GrantsPublic() != want {
			t.Errorf("%s: GrantsPublic %v", name, !want)
		}
	}
}
