package access

import (
	"errors"
	"strings"
	"testing"
)

// Identities that act for their accounts are administrators (an account's other users get only
// what names them: see TestNonAdminUsers).
var (
	ownerUser  = Identity{Account: "acme", User: "alice", Admin: true}
	ownerAdm   = Identity{Account: "acme", User: "boss", Admin: true}
	ownerPlain = Identity{Account: "acme", User: "carol"}
	other      = Identity{Account: "other", User: "olga", Admin: true}
	otherBob   = Identity{Account: "other", User: "bob", Admin: true}
	otherPlain = Identity{Account: "other", User: "pete"}
	third      = Identity{Account: "third", User: "tom", Admin: true}
	anon       = Identity{Anonymous: true}
	root       = Identity{Account: "root", User: "root", Admin: true, Root: true}
)

func mustPolicy(t *testing.T, doc string) *Policy {
	t.Helper()
	p, err := ParsePolicy([]byte(doc), "photos")
	if err != nil {
		t.Fatalf("ParsePolicy(%s): %v", doc, err)
	}
	return p
}

func mustCanned(t *testing.T, name string) ACL {
	t.Helper()
	a, err := CannedACL(name, false)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustSwift(t *testing.T, read, write string) (SwiftACL, SwiftACL) {
	t.Helper()
	r, err := ParseSwiftACL(read)
	if err != nil {
		t.Fatal(err)
	}
	w, err := ParseSwiftWriteACL(write)
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}

func TestDecide(t *testing.T) {
	private := &BucketState{}
	publicRead := &BucketState{ACL: mustCanned(t, CannedPublicRead)}
	publicRW := &BucketState{ACL: mustCanned(t, CannedPublicReadWrite)}
	authRead := &BucketState{ACL: mustCanned(t, CannedAuthenticatedRead)}
	grants := &BucketState{ACL: ACL{Grants: []Grant{
		{Grantee{ID: "other"}, Read},
		{Grantee{ID: "third"}, Write},
		{Grantee{ID: "third"}, ReadACP},
	}}}
	full := &BucketState{ACL: ACL{Grants: []Grant{{Grantee{ID: "other"}, FullControl}}}}
	allowOther := &BucketState{Policy: mustPolicy(t, `{"Version":"2012-10-17","Statement":[
		{"Sid":"ReadForOther","Effect":"Allow","Principal":{"AWS":["arn:aws:iam::other:root"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}]}`)}
	allowThenDeny := &BucketState{Policy: mustPolicy(t, `{"Statement":[
		{"Effect":"Allow","Principal":{"AWS":"other"},"Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::photos","arn:aws:s3:::photos/*"]},
		{"Sid":"NoSecrets","Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::photos/secret/*"}]}`)}
	denyUser := &BucketState{Policy: mustPolicy(t, `{"Statement":[
		{"Effect":"Deny","Principal":{"AWS":"acme:alice"},"Action":"s3:Delete*","Resource":"arn:aws:s3:::photos/*"}]}`)}
	denyAll := &BucketState{Policy: mustPolicy(t, `{"Statement":[
		{"Effect":"Deny","Principal":"*","Action":"*","Resource":["arn:aws:s3:::photos","arn:aws:s3:::photos/*"]}]}`)}
	publicPolicy := &BucketState{Policy: mustPolicy(t, `{"Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/pub/*"}]}`)}
	userPolicy := &BucketState{Policy: mustPolicy(t, `{"Statement":[
		{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::other:user/bob"},"Action":"s3:Put*","Resource":"arn:aws:s3:::photos/*"}]}`)}
	denyOverACL := &BucketState{ACL: mustCanned(t, CannedPublicReadWrite), Policy: mustPolicy(t, `{"Statement":[
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::photos/*"}]}`)}
	legacyPublicRead := &BucketState{ACL: mustCanned(t, CannedPublicRead), LegacyBucketRead: true}
	legacyGrants := &BucketState{ACL: grants.ACL, LegacyBucketRead: true}
	legacyFull := &BucketState{ACL: full.ACL, LegacyBucketRead: true}
	legacyIgnored := &BucketState{ACL: mustCanned(t, CannedPublicRead), LegacyBucketRead: true, PublicAccessBlock: &PublicAccessBlock{IgnorePublicAcls: true}}
	legacyEnforced := &BucketState{ACL: mustCanned(t, CannedPublicRead), LegacyBucketRead: true, Ownership: OwnershipBucketOwnerEnforced}
	legacyDenied := &BucketState{ACL: mustCanned(t, CannedPublicRead), LegacyBucketRead: true, Policy: denyAll.Policy}
	sr, sw := mustSwift(t, "other:olga,.r:*", "third")
	swiftState := &BucketState{SwiftRead: sr, SwiftWrite: sw}
	lr, _ := mustSwift(t, ".r:.example.com,.r:-bad.example.com,.rlistings", "")
	swiftRef := &BucketState{SwiftRead: lr}
	acctRead, _ := mustSwift(t, "other", "")
	swiftAcct := &BucketState{SwiftRead: acctRead}
	broken := &BucketState{Broken: errors.New("damaged")}
	pubObj := mustCanned(t, CannedPublicRead)
	readACPObj := ACL{Grants: []Grant{{Grantee{ID: "other"}, ReadACP}, {Grantee{ID: "third"}, WriteACP}}}

	obj := func(key string) Resource { return Resource{Owner: "acme", Bucket: "photos", Key: key} }
	bkt := Resource{Owner: "acme", Bucket: "photos"}

	cases := []struct {
		name     string
		id       Identity
		action   Action
		res      Resource
		st       *BucketState
		object   *ACL
		referer  string
		want     bool
		needObj  bool
		inReason string
	}{
		// Root and the owner account.
		{"root anywhere", root, DeleteBucket, bkt, private, nil, "", true, false, "root"},
		{"root despite deny", root, DeleteObject, obj("x"), denyUser, nil, "", true, false, "root"},
		{"owner user", ownerUser, PutObject, obj("k"), private, nil, "", true, false, "owner"},
		{"owner admin", ownerAdm, PutBucketPolicy, bkt, private, nil, "", true, false, "administrator"},
		{"owner admin, other action", ownerAdm, PutBucketAcl, bkt, private, nil, "", true, false, "owner"},
		{"owner reads broken state", ownerUser, GetObject, obj("k"), broken, nil, "", true, false, "unreadable"},
		{"other denied on broken state", other, GetObject, obj("k"), broken, nil, "", false, false, "unreadable"},
		{"other denied on public but broken", other, GetObject, obj("k"), &BucketState{ACL: pubObj, Broken: errors.New("x")}, nil, "", false, false, ""},

		// Private by default.
		{"other list private", other, ListBucket, bkt, private, nil, "", false, false, "no grant"},
		{"other put private", other, PutObject, obj("k"), private, nil, "", false, false, "no grant"},
		{"other head/get private: object ACL asked", other, GetObject, obj("k"), private, nil, "", false, true, ""},
		{"other get private object", other, GetObject, obj("k"), private, &ACL{}, "", false, false, "no grant"},
		{"anon get private", anon, GetObject, obj("k"), private, &ACL{}, "", false, false, ""},
		{"anon list private", anon, ListBucket, bkt, private, nil, "", false, false, ""},
		{"other delete bucket", other, DeleteBucket, bkt, private, nil, "", false, false, ""},
		{"other bucket policy", other, GetBucketPolicy, bkt, private, nil, "", false, false, ""},
		{"anonymous is never the owner", Identity{Anonymous: true, Account: "acme"}, PutObject, obj("k"), private, nil, "", false, false, ""},

		// Canned ACLs.
		// A bucket READ lists and reads no object (S3): the object's own ACL decides.
		{"public-read: anon get asks the object", anon, GetObject, obj("k"), publicRead, nil, "", false, true, ""},
		{"public-read: anon get private object", anon, GetObject, obj("k"), publicRead, &ACL{}, "", false, false, "no grant"},
		{"public-read: anon get public object", anon, GetObject, obj("k"), publicRead, &pubObj, "", true, false, "object ACL"},
		{"public-read: anon list", anon, ListBucket, bkt, publicRead, nil, "", true, false, "READ"},
		{"public-read: anon uploads list", anon, ListBucketMultipartUploads, bkt, publicRead, nil, "", true, false, ""},
		{"public-read: anon put", anon, PutObject, obj("k"), publicRead, nil, "", false, false, ""},
		{"public-read: other delete", other, DeleteObject, obj("k"), publicRead, nil, "", false, false, ""},
		{"public-read: anon get acl", anon, GetBucketAcl, bkt, publicRead, nil, "", false, false, ""},
		{"public-read: anon location", anon, GetBucketLocation, bkt, publicRead, nil, "", false, false, ""},
		{"public-read-write: anon put", anon, PutObject, obj("k"), publicRW, nil, "", true, false, "WRITE"},
		{"public-read-write: anon delete", anon, DeleteObject, obj("k"), publicRW, nil, "", true, false, ""},
		{"public-read-write: anon put acl", anon, PutBucketAcl, bkt, publicRW, nil, "", false, false, ""},
		{"authenticated-read: other get private object", other, GetObject, obj("k"), authRead, &ACL{}, "", false, false, ""},
		{"authenticated-read: other list", other, ListBucket, bkt, authRead, nil, "", true, false, "READ"},
		{"authenticated-read: anon list", anon, ListBucket, bkt, authRead, nil, "", false, false, ""},
		{"authenticated-read: anon get", anon, GetObject, obj("k"), authRead, &ACL{}, "", false, false, ""},

		// Grants to accounts.
		{"grant READ: list", other, ListBucket, bkt, grants, nil, "", true, false, ""},
		{"grant READ: get private object", otherBob, GetObject, obj("k"), grants, &ACL{}, "", false, false, ""},
		{"grant READ: versions", other, ListBucketVersions, bkt, grants, nil, "", true, false, ""},
		{"grant READ: no put", other, PutObject, obj("k"), grants, nil, "", false, false, ""},
		{"grant READ: no acl read", other, GetBucketAcl, bkt, grants, nil, "", false, false, ""},
		{"grant WRITE: put", third, PutObject, obj("k"), grants, nil, "", true, false, ""},
		{"grant WRITE: delete", third, DeleteObject, obj("k"), grants, nil, "", true, false, ""},
		{"grant WRITE: abort", third, AbortMultipartUpload, obj("k"), grants, nil, "", true, false, ""},
		{"grant WRITE: no list", third, ListBucket, bkt, grants, nil, "", false, false, ""},
		{"grant WRITE: no get", third, GetObject, obj("k"), grants, &ACL{}, "", false, false, ""},
		{"grant READ_ACP: get acl", third, GetBucketAcl, bkt, grants, nil, "", true, false, ""},
		{"grant READ_ACP: no put acl", third, PutBucketAcl, bkt, grants, nil, "", false, false, ""},
		{"grant FULL_CONTROL: put acl", other, PutBucketAcl, bkt, full, nil, "", true, false, ""},
		{"grant FULL_CONTROL: no policy", other, PutBucketPolicy, bkt, full, nil, "", false, false, ""},
		{"grant FULL_CONTROL: no delete bucket", other, DeleteBucket, bkt, full, nil, "", false, false, ""},
		{"grant to other: anon gets nothing", anon, GetObject, obj("k"), grants, &ACL{}, "", false, false, ""},

		// Object ACLs.
		{"object public-read: anon get", anon, GetObject, obj("k"), private, &pubObj, "", true, false, "object ACL"},
		{"object public-read: anon acl", anon, GetObjectAcl, obj("k"), private, &pubObj, "", false, false, ""},
		{"object READ_ACP", other, GetObjectAcl, obj("k"), private, &readACPObj, "", true, false, ""},
		{"object WRITE_ACP", third, PutObjectAcl, obj("k"), private, &readACPObj, "", true, false, ""},
		{"object ACL never writes", anon, PutObject, obj("k"), private, &pubObj, "", false, false, ""},
		{"object ACL not needed for delete", other, DeleteObject, obj("k"), private, nil, "", false, false, ""},

		// Policies.
		{"policy allow: get", other, GetObject, obj("a/b"), allowOther, nil, "", true, false, "ReadForOther"},
		{"policy allow: any user of the account", otherBob, GetObject, obj("k"), allowOther, nil, "", true, false, ""},
		{"policy allow: not list", other, ListBucket, bkt, allowOther, nil, "", false, false, ""},
		{"policy allow: not put", other, PutObject, obj("k"), allowOther, nil, "", false, false, ""},
		{"policy allow: not third", third, GetObject, obj("k"), allowOther, &ACL{}, "", false, false, ""},
		{"policy allow: not anon", anon, GetObject, obj("k"), allowOther, &ACL{}, "", false, false, ""},
		{"policy deny overrides allow", other, GetObject, obj("secret/x"), allowThenDeny, nil, "", false, false, "NoSecrets"},
		{"policy deny: object ACL not consulted", other, GetObject, obj("secret/x"), allowThenDeny, nil, "", false, false, "explicit deny"},
		{"policy deny: not elsewhere", other, GetObject, obj("public/x"), allowThenDeny, nil, "", true, false, ""},
		{"policy deny applies to the owner's users", ownerUser, GetObject, obj("secret/x"), allowThenDeny, nil, "", false, false, "explicit deny"},
		{"policy deny of one user", ownerUser, DeleteObject, obj("k"), denyUser, nil, "", false, false, ""},
		{"policy deny of one user: not others", ownerAdm, DeleteObject, obj("k"), denyUser, nil, "", true, false, ""},
		{"policy deny of one user: other actions", ownerUser, PutObject, obj("k"), denyUser, nil, "", true, false, ""},
		{"deny all locks out the owner's users", ownerPlain, DeleteBucketPolicy, bkt, denyAll, nil, "", false, false, "explicit deny"},
		{"deny all: the account admin still manages the policy", ownerAdm, DeleteBucketPolicy, bkt, denyAll, nil, "", true, false, "administrator"},
		{"deny all: the account admin reads it", ownerAdm, GetBucketPolicy, bkt, denyAll, nil, "", true, false, "administrator"},
		{"deny all: the account admin is denied the rest", ownerAdm, GetObject, obj("k"), denyAll, nil, "", false, false, "explicit deny"},
		{"deny all: an admin of another account", Identity{Account: "other", User: "x", Admin: true}, PutBucketPolicy, bkt, denyAll, nil, "", false, false, ""},
		{"policy deny overrides a public ACL", anon, PutObject, obj("k"), denyOverACL, nil, "", false, false, "explicit deny"},
		{"policy deny: ACL still lists", anon, ListBucket, bkt, denyOverACL, nil, "", true, false, ""},
		{"policy deny: object ACL still reads", anon, GetObject, obj("k"), denyOverACL, &pubObj, "", true, false, "object ACL"},

		// An ACL stored before bucket ACLs had S3's meaning keeps its old one: READ (and
		// FULL_CONTROL) read objects too, until it is migrated.
		{"legacy public-read: anon get", anon, GetObject, obj("k"), legacyPublicRead, nil, "", true, false, "old meaning"},
		{"legacy public-read: anon list", anon, ListBucket, bkt, legacyPublicRead, nil, "", true, false, ""},
		{"legacy public-read: anon put", anon, PutObject, obj("k"), legacyPublicRead, nil, "", false, false, ""},
		{"legacy grant READ: get", otherBob, GetObject, obj("k"), legacyGrants, nil, "", true, false, "old meaning"},
		{"legacy grant WRITE: no get", third, GetObject, obj("k"), legacyGrants, &ACL{}, "", false, false, ""},
		{"legacy FULL_CONTROL: get", other, GetObject, obj("k"), legacyFull, nil, "", true, false, ""},
		{"legacy public-read, IgnorePublicAcls: nothing", anon, GetObject, obj("k"), legacyIgnored, &ACL{}, "", false, false, ""},
		{"legacy public-read, BucketOwnerEnforced: nothing", anon, GetObject, obj("k"), legacyEnforced, &ACL{}, "", false, false, ""},
		{"legacy public-read under a deny", anon, GetObject, obj("k"), legacyDenied, nil, "", false, false, "explicit deny"},
		{"policy public prefix", anon, GetObject, obj("pub/a"), publicPolicy, nil, "", true, false, ""},
		{"policy public prefix: elsewhere", anon, GetObject, obj("priv/a"), publicPolicy, &ACL{}, "", false, false, ""},
		{"policy user principal", otherBob, PutObject, obj("k"), userPolicy, nil, "", true, false, ""},
		{"policy user principal: not another user", other, PutObject, obj("k"), userPolicy, nil, "", false, false, ""},

		// Swift ACLs.
		{"swift read user", other, GetObject, obj("k"), swiftState, nil, "", true, false, "Swift"},
		{"swift read user lists", other, ListBucket, bkt, swiftState, nil, "", true, false, ""},
		{"swift .r:* lets anyone read", anon, GetObject, obj("k"), swiftState, nil, "", true, false, ""},
		{"swift .r:* does not list without .rlistings", anon, ListBucket, bkt, swiftState, nil, "", false, false, ""},
		{"swift read user does not write", other, PutObject, obj("k"), swiftState, nil, "", false, false, ""},
		{"swift write account", third, PutObject, obj("k"), swiftState, nil, "", true, false, ""},
		{"swift write account deletes", third, DeleteObject, obj("k"), swiftState, nil, "", true, false, ""},
		{"swift write not acl", third, PutBucketAcl, bkt, swiftState, nil, "", false, false, ""},
		{"swift write user is not read", otherBob, PutObject, obj("k"), swiftState, nil, "", false, false, ""},
		{"swift referrer", anon, GetObject, obj("k"), swiftRef, nil, "https://www.example.com/page", true, false, ""},
		{"swift referrer lists with .rlistings", anon, ListBucket, bkt, swiftRef, nil, "http://cdn.example.com/", true, false, ""},
		{"swift negated referrer", anon, GetObject, obj("k"), swiftRef, &ACL{}, "http://bad.example.com/", false, false, ""},
		{"swift referrer elsewhere", anon, GetObject, obj("k"), swiftRef, &ACL{}, "http://example.org/", false, false, ""},
		{"swift no referrer", anon, GetObject, obj("k"), swiftRef, &ACL{}, "", false, false, ""},
		{"swift account entry: any user", otherBob, ListBucket, bkt, swiftAcct, nil, "", true, false, ""},
		{"swift account entry: not anon", anon, ListBucket, bkt, swiftAcct, nil, "", false, false, ""},

		// Account-level actions.
		{"create bucket", other, CreateBucket, Resource{Bucket: "new"}, nil, nil, "", true, false, ""},
		{"anon create bucket", anon, CreateBucket, Resource{Bucket: "new"}, nil, nil, "", false, false, ""},
		{"anon list buckets", anon, ListAllMyBuckets, Resource{}, nil, nil, "", false, false, ""},
		{"no state", other, GetObject, obj("k"), nil, nil, "", false, false, ""},
		{"unknown action", ownerUser, Action(0), obj("k"), private, nil, "", false, false, "unknown"},
		{"unknown action 2", ownerUser, numActions, obj("k"), private, nil, "", false, false, "unknown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(Request{Identity: c.id, Action: c.action, Resource: c.res, Bucket: c.st, Object: c.object, Referer: c.referer})
			if d.Allowed != c.want || d.NeedObjectACL != c.needObj {
				t.Fatalf("Decide = %+v, want allowed=%v needObjectACL=%v", d, c.want, c.needObj)
			}
			if c.inReason != "" && !strings.Contains(d.Reason, c.inReason) {
				t.Fatalf("reason %q does not mention %q", d.Reason, c.inReason)
			}
			if d.Reason == "" {
				t.Fatal("no reason")
			}
		})
	}
}

// TestTenantIsolation: with nothing granted, no identity of another account, nor anyone
// anonymous, may do anything at all to a bucket or its objects.
func TestTenantIsolation(t *testing.T) {
	for a := Action(1); a < numActions; a++ {
		if a.accountLevel() {
			continue
		}
		res := Resource{Owner: "acme", Bucket: "photos"}
		if a.ObjectLevel() {
			res.Key = "k"
		}
		for _, id := range []Identity{other, otherBob, otherPlain, ownerPlain, anon, {Account: "acme2", User: "alice", Admin: true}, {Account: "", User: "alice"}} {
			d := Decide(Request{Identity: id, Action: a, Resource: res, Bucket: &BucketState{}, Object: &ACL{}})
			if d.Allowed || d.NeedObjectACL {
				t.Errorf("%v by %+v on a private bucket: %+v", a, id, d)
			}
		}
		if d := Decide(Request{Identity: ownerUser, Action: a, Resource: res, Bucket: &BucketState{}}); !d.Allowed {
			t.Errorf("%v by the owner: %+v", a, d)
		}
	}
}

func TestActionNames(t *testing.T) {
	seen := map[string]bool{}
	for a := Action(1); a < numActions; a++ {
		n := a.String()
		if !strings.HasPrefix(n, "s3:") || seen[n] {
			t.Errorf("action %d: name %q", a, n)
		}
		seen[n] = true
	}
	if s := Action(0).String(); !strings.Contains(s, "Action(0)") {
		t.Errorf("zero action: %q", s)
	}
	if Action(0).Valid() || numActions.Valid() || !GetObject.Valid() {
		t.Error("Valid")
	}
	if !GetObject.ObjectLevel() || ListBucket.ObjectLevel() || !ListMultipartUploadParts.ObjectLevel() {
		t.Error("ObjectLevel")
	}
}

func TestResourceARN(t *testing.T) {
	if got := (Resource{Owner: "a", Bucket: "b"}).ARN(); got != "arn:aws:s3:::b" {
		t.Error(got)
	}
	if got := (Resource{Owner: "a", Bucket: "b", Key: "x/y"}).ARN(); got != "arn:aws:s3:::b/x/y" {
		t.Error(got)
	}
}

func TestValidAccountName(t *testing.T) {
	for _, s := range []string{"a", "acme", "A_b-9", strings.Repeat("x", 64)} {
		if !ValidAccountName(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{"", "a:b", "a b", "é", strings.Repeat("x", 65), "a/b", "*"} {
		if ValidAccountName(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

// TestNonAdminUsers: a user who is not an administrator of its account gets only what names it
// (a policy principal ACCOUNT:USER, a Swift ACL entry for its account or for it) or what is
// public, as tempauth's non-.admin users and AWS's IAM users without policies.
func TestNonAdminUsers(t *testing.T) {
	obj := Resource{Owner: "acme", Bucket: "photos", Key: "k"}
	r, w := mustSwift(t, "acme:carol", "acme")
	for _, tc := range []struct {
		name   string
		id     Identity
		action Action
		res    Resource
		state  *BucketState
		want   bool
	}{
		{"own account, private", ownerPlain, GetObject, obj, &BucketState{}, false},
		{"own account, create bucket", ownerPlain, CreateBucket, Resource{}, nil, false},
		{"own account, list buckets", ownerPlain, ListAllMyBuckets, Resource{}, nil, false},
		{"owner grant in the ACL", ownerPlain, GetObject, obj, &BucketState{ACL: ACL{Grants: []Grant{{Grantee{ID: "acme"}, FullControl}}}}, false},
		{"account-wide policy", ownerPlain, GetObject, obj, &BucketState{Policy: mustPolicy(t, `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"acme"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}]}`)}, false},
		{"policy naming the user", ownerPlain, GetObject, obj, &BucketState{Policy: mustPolicy(t, `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::acme:user/carol"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/*"}]}`)}, true},
		{"Swift read ACL naming the user", ownerPlain, GetObject, obj, &BucketState{SwiftRead: r}, true},
		{"Swift read ACL naming the user: no write", ownerPlain, PutObject, obj, &BucketState{SwiftRead: r}, false},
		{"Swift write ACL naming the account", ownerPlain, PutObject, obj, &BucketState{SwiftWrite: w}, true},
		{"public read bucket: no object", otherPlain, GetObject, obj, &BucketState{ACL: mustCanned(t, CannedPublicRead)}, false},
		{"public read bucket: list", otherPlain, ListBucket, Resource{Owner: "acme", Bucket: "photos"}, &BucketState{ACL: mustCanned(t, CannedPublicRead)}, true},
		{"authenticated read bucket: list", otherPlain, ListBucket, Resource{Owner: "acme", Bucket: "photos"}, &BucketState{ACL: mustCanned(t, CannedAuthenticatedRead)}, true},
		{"legacy public read", otherPlain, GetObject, obj, &BucketState{ACL: mustCanned(t, CannedPublicRead), LegacyBucketRead: true}, true},
		{"legacy authenticated read", otherPlain, GetObject, obj, &BucketState{ACL: mustCanned(t, CannedAuthenticatedRead), LegacyBucketRead: true}, true},
		{"grant to another account", otherPlain, GetObject, obj, &BucketState{ACL: ACL{Grants: []Grant{{Grantee{ID: "other"}, Read}}}}, false},
	} {
		d := Decide(Request{Identity: tc.id, Action: tc.action, Resource: tc.res, Bucket: tc.state, Object: &ACL{}})
		if d.Allowed != tc.want {
			t.Errorf("%s: %+v, want allowed=%v", tc.name, d, tc.want)
		}
	}
}
