package access

import (
	"reflect"
	"testing"
)

// TestGrantsShown: each API shows the other's grants in its own meaning, and an ACL sent back
// does not turn Swift's grants (or the old bucket ACL's object reads) into S3 grants.
func TestGrantsShown(t *testing.T) {
	r, w := mustSwift(t, ".r:*,.rlistings,other,acme:carol", "third,other:pete")
	pub := mustCanned(t, CannedPublicRead)
	g := func(who string, p Permission) Grant {
		switch who {
		case "AllUsers":
			return Grant{Grantee{URI: AllUsersURI}, p}
		case "AuthenticatedUsers":
			return Grant{Grantee{URI: AuthenticatedUsersURI}, p}
		}
		return Grant{Grantee{ID: who}, p}
	}
	objACL := ACL{Grants: []Grant{g("fourth", ReadACP)}}
	for _, tc := range []struct {
		name          string
		st            *BucketState
		bucket, objct []Grant
	}{
		{"private", &BucketState{}, nil, []Grant{g("fourth", ReadACP)}},
		{"S3 public-read", &BucketState{ACL: pub}, []Grant{g("AllUsers", Read)}, []Grant{g("fourth", ReadACP)}},
		{"Swift ACLs", &BucketState{SwiftRead: r, SwiftWrite: w},
			[]Grant{g("AllUsers", Read), g("other", Read), g("third", Write)},
			[]Grant{g("fourth", ReadACP), g("AllUsers", Read), g("other", Read)}},
		{"Swift referrer without listings", &BucketState{SwiftRead: SwiftACL{Referrers: []string{"*"}}}, nil,
			[]Grant{g("fourth", ReadACP), g("AllUsers", Read)}},
		{"Swift referrer of one host", &BucketState{SwiftRead: SwiftACL{Referrers: []string{"example.com"}, Listings: true}}, nil,
			[]Grant{g("fourth", ReadACP)}},
		{"S3 and Swift alike", &BucketState{ACL: pub, SwiftRead: r}, []Grant{g("AllUsers", Read), g("other", Read)},
			[]Grant{g("fourth", ReadACP), g("AllUsers", Read), g("other", Read)}},
		{"legacy public-read", &BucketState{ACL: pub, LegacyBucketRead: true}, []Grant{g("AllUsers", Read)},
			[]Grant{g("fourth", ReadACP), g("AllUsers", Read)}},
		{"legacy, ignored", &BucketState{ACL: pub, LegacyBucketRead: true, PublicAccessBlock: &PublicAccessBlock{IgnorePublicAcls: true}},
			[]Grant{g("AllUsers", Read)}, []Grant{g("fourth", ReadACP)}},
		{"BucketOwnerEnforced: Swift's only", &BucketState{ACL: pub, SwiftRead: r, Ownership: OwnershipBucketOwnerEnforced},
			[]Grant{g("AllUsers", Read), g("other", Read)}, []Grant{g("AllUsers", Read), g("other", Read)}},
	} {
		if got := tc.st.BucketACLShown().Grants; !reflect.DeepEqual(got, tc.bucket) {
			t.Errorf("%s: bucket ACL shown %v, want %v", tc.name, got, tc.bucket)
		}
		if got := tc.st.ObjectACLShown(objACL).Grants; !reflect.DeepEqual(got, tc.objct) {
			t.Errorf("%s: object ACL shown %v, want %v", tc.name, got, tc.objct)
		}
		// What GetBucketAcl/GetObjectAcl show, put back, stores only what S3 holds itself.
		if got := tc.st.WithoutShownOnly(tc.st.BucketACLShown(), tc.st.ACL, false); tc.st.ACLsEnabled() && !reflect.DeepEqual(got.Grants, tc.st.ACL.Grants) {
			t.Errorf("%s: bucket ACL put back stores %v", tc.name, got)
		}
		if got := tc.st.WithoutShownOnly(tc.st.ObjectACLShown(objACL), objACL, true); tc.st.ACLsEnabled() && !reflect.DeepEqual(got, objACL) {
			t.Errorf("%s: object ACL put back stores %v", tc.name, got)
		}
	}
	if got := BucketACLHeaderValue(map[string]string{MetaLegacyACL: pub.Encode()}); got != "READ:AllUsers;legacy-bucket-read" {
		t.Errorf("legacy header %q", got)
	}
	acl := ACL{Grants: []Grant{g("AuthenticatedUsers", Read), g("other", Write)}}
	if got := BucketACLHeaderValue(map[string]string{MetaACL: acl.Encode()}); got != "READ:AuthenticatedUsers,WRITE:other" {
		t.Errorf("header %q", got)
	}
	if got := BucketACLHeaderValue(map[string]string{}); got != "" {
		t.Errorf("private header %q", got)
	}
}
