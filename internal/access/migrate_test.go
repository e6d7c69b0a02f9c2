package access

import (
	"maps"
	"strings"
	"testing"
	"time"
)

// TestMigrateLegacyACLKeepsEveryDecision: for every legacy bucket state below, every identity,
// action and object ACL is decided alike before and after the migration, or the bucket is left
// as it is with a reason. Nobody's access widens or narrows.
func TestMigrateLegacyACLKeepsEveryDecision(t *testing.T) {
	acls := map[string]string{
		"public-read":           mustCanned(t, CannedPublicRead).Encode(),
		"public-read-write":     mustCanned(t, CannedPublicReadWrite).Encode(),
		"authenticated-read":    mustCanned(t, CannedAuthenticatedRead).Encode(),
		"grants":                ACL{Grants: []Grant{{Grantee{ID: "other"}, Read}, {Grantee{ID: "third"}, Write}, {Grantee{ID: "third"}, FullControl}}}.Encode(),
		"write and acp only":    ACL{Grants: []Grant{{Grantee{ID: "other"}, Write}, {Grantee{ID: "third"}, ReadACP}}}.Encode(),
		"public and an account": ACL{Grants: []Grant{{Grantee{URI: AllUsersURI}, Read}, {Grantee{ID: "other"}, Read}, {Grantee{ID: "other"}, FullControl}}}.Encode(),
	}
	policies := map[string]string{
		"no policy":              "",
		"deny a prefix":          `{"Version":"2012-10-17","Statement":[{"Sid":"NoSecrets","Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::photos/secret/*"}]}`,
		"one statement, no list": `{"Statement":{"Effect":"Allow","Principal":{"AWS":"third"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::photos"}}`,
	}
	extras := map[string]map[string]string{
		"plain":                 {},
		"IgnorePublicAcls":      {MetaPublicAccessBlock: "IgnorePublicAcls"},
		"BlockPublicPolicy":     {MetaPublicAccessBlock: "BlockPublicAcls,BlockPublicPolicy"},
		"RestrictPublicBuckets": {MetaPublicAccessBlock: "RestrictPublicBuckets"},
		"BucketOwnerEnforced":   {MetaOwnership: string(OwnershipBucketOwnerEnforced)},
		"Swift ACLs":            {MetaSwiftRead: "acme:carol,.r:-bad.example.com", MetaSwiftWrite: "other:pete"},
	}
	ids := []Identity{ownerUser, ownerPlain, other, otherBob, otherPlain, third, anon, {Account: "fourth", User: "f"}}
	pubObj := mustCanned(t, CannedPublicRead)
	objects := []*ACL{{}, &pubObj}
	migrated, refused := 0, 0
	for an, acl := range acls {
		for pn, policy := range policies {
			for en, extra := range extras {
				name := an + " / " + pn + " / " + en
				before := map[string]string{MetaLegacyACL: acl, MetaPolicy: policy}
				maps.Copy(before, extra)
				mig := MigrateLegacyACL("photos", before)
				if mig.Refused != "" {
					refused++
					if mig.Changes != nil {
						t.Errorf("%s: refused (%s) with changes %v", name, mig.Refused, mig.Changes)
					}
					continue
				}
				if mig.Changes == nil {
					t.Errorf("%s: nothing to do for a legacy ACL", name)
					continue
				}
				migrated++
				after := maps.Clone(before)
				for k, v := range mig.Changes {
					if v == "" {
						delete(after, k)
					} else {
						after[k] = v
					}
				}
				sb, sa := StateFromMeta("photos", before), StateFromMeta("photos", after)
				if sa.LegacyBucketRead || sa.Broken != nil || sa.ACL.Encode() != acl {
					t.Fatalf("%s: after: legacy %v, broken %v, ACL %s", name, sa.LegacyBucketRead, sa.Broken, sa.ACL.Encode())
				}
				for _, id := range ids {
					for a := Action(1); a < numActions; a++ {
						for _, key := range []string{"", "k", "secret/x"} {
							if a.ObjectLevel() != (key != "") {
								continue
							}
							for _, o := range objects {
								r := Request{Identity: id, Action: a, Resource: Resource{Owner: "acme", Bucket: "photos", Key: key}, Object: o, Context: BaseContext("127.0.0.1:5000", false, time.Unix(1.8e9, 0), "test", "", id)}
								r.Bucket = sb
								db := Decide(r)
								r.Bucket = sa
								da := Decide(r)
								if db.Allowed != da.Allowed {
									t.Errorf("%s: %+v %s %q (object ACL %v): before %+v, after %+v", name, id, a, key, o.Grants, db, da)
								}
							}
						}
					}
				}
			}
		}
	}
	if migrated == 0 || refused == 0 {
		t.Errorf("%d migrated, %d refused: the table should have both", migrated, refused)
	}
}

func TestMigrateLegacyACLWrites(t *testing.T) {
	// Nothing to do: no ACL, or one stored with S3's meaning already.
	for _, m := range []map[string]string{{}, {MetaACL: mustCanned(t, CannedPublicRead).Encode()}} {
		if mig := MigrateLegacyACL("photos", m); mig.Changes != nil || mig.Refused != "" {
			t.Errorf("%v: %+v", m, mig)
		}
	}
	mig := MigrateLegacyACL("photos", map[string]string{MetaLegacyACL: mustCanned(t, CannedPublicRead).Encode()})
	if mig.Refused != "" || mig.Changes[MetaLegacyACL] != "" || mig.Changes[MetaACL] == "" || len(mig.Readers) != 1 || mig.Readers[0] != "AllUsers" {
		t.Fatalf("public-read: %+v", mig)
	}
	p, err := ParsePolicy([]byte(mig.Changes[MetaPolicy]), "photos")
	if err != nil || len(p.Statements) != 1 || !strings.HasPrefix(p.Statements[0].Sid, MigratedSidPrefix) || !p.Public() {
		t.Fatalf("policy %s: %v", mig.Changes[MetaPolicy], err)
	}
	// A second migration of the result finds nothing; a policy that already has the
	// statements (a legacy ACL set again by an old server) is refused rather than doubled.
	after := map[string]string{MetaACL: mig.Changes[MetaACL], MetaPolicy: mig.Changes[MetaPolicy]}
	if again := MigrateLegacyACL("photos", after); again.Changes != nil {
		t.Errorf("migrated twice: %+v", again)
	}
	after[MetaLegacyACL], after[MetaACL] = after[MetaACL], ""
	if again := MigrateLegacyACL("photos", after); again.Refused == "" {
		t.Errorf("statements added twice: %+v", again)
	}
	// Damaged state is left for its owner to repair.
	if mig := MigrateLegacyACL("photos", map[string]string{MetaLegacyACL: "{"}); mig.Refused == "" || mig.Changes != nil {
		t.Errorf("broken: %+v", mig)
	}
}
