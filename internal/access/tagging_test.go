package access

import "testing"

// TestTaggingActions: tags are changed and read only by the owner's administrators and whom a
// policy names, never by an ACL grant or a Swift ACL (AWS's ACL permissions do not cover
// tagging), and a policy's actions are matched on their own names.
func TestTaggingActions(t *testing.T) {
	rw := mustCanned(t, CannedPublicReadWrite)
	swiftR, swiftW := mustSwift(t, "other", "other")
	policy := mustPolicy(t, `{"Statement":[
		{"Effect":"Allow","Principal":{"AWS":"other"},"Action":["s3:PutObjectTagging","s3:GetObjectTagging"],"Resource":"arn:aws:s3:::photos/*"},
		{"Effect":"Allow","Principal":{"AWS":"third"},"Action":"s3:*BucketTagging","Resource":"arn:aws:s3:::photos"},
		{"Effect":"Deny","Principal":{"AWS":"acme:carol"},"Action":"s3:DeleteObjectTagging","Resource":"arn:aws:s3:::photos/*"}]}`)
	obj := Resource{Owner: "acme", Bucket: "photos", Key: "k"}
	bkt := Resource{Owner: "acme", Bucket: "photos"}
	full := &ACL{Grants: []Grant{{Grantee{URI: AllUsersURI}, FullControl}}}
	for _, tc := range []struct {
		name  string
		id    Identity
		a     Action
		res   Resource
		state *BucketState
		want  bool
	}{
		{"owner tags", ownerUser, PutObjectTagging, obj, &BucketState{}, true},
		{"owner deletes bucket tags", ownerUser, PutBucketTagging, bkt, &BucketState{}, true},
		{"public-read-write does not tag", other, PutObjectTagging, obj, &BucketState{ACL: rw}, false},
		{"public-read-write does not read tags", anon, GetObjectTagging, obj, &BucketState{ACL: rw}, false},
		{"Swift ACLs do not tag", other, PutObjectTagging, obj, &BucketState{SwiftRead: swiftR, SwiftWrite: swiftW}, false},
		{"Swift ACLs do not read tags", other, GetObjectTagging, obj, &BucketState{SwiftRead: swiftR, SwiftWrite: swiftW}, false},
		{"policy allows tagging", other, PutObjectTagging, obj, &BucketState{Policy: policy}, true},
		{"policy allows reading tags", other, GetObjectTagging, obj, &BucketState{Policy: policy}, true},
		{"policy does not allow deleting tags", other, DeleteObjectTagging, obj, &BucketState{Policy: policy}, false},
		{"policy allows bucket tagging by wildcard", third, PutBucketTagging, bkt, &BucketState{Policy: policy}, true},
		{"policy allows reading bucket tags by wildcard", third, GetBucketTagging, bkt, &BucketState{Policy: policy}, true},
		{"bucket tagging names the bucket only", third, PutObjectTagging, obj, &BucketState{Policy: policy}, false},
		{"deny for a plain user", ownerPlain, DeleteObjectTagging, obj, &BucketState{Policy: policy}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// An object ACL granting everything does not reach tags either.
			d := Decide(Request{Identity: tc.id, Action: tc.a, Resource: tc.res, Bucket: tc.state, Object: full})
			if d.Allowed != tc.want || d.NeedObjectACL {
				t.Fatalf("%v by %+v: %+v, want allowed=%v", tc.a, tc.id, d, tc.want)
			}
		})
	}
	for _, a := range []Action{GetObjectTagging, PutObjectTagging, DeleteObjectTagging} {
		if !a.ObjectLevel() {
			t.Errorf("%v is not object-level", a)
		}
	}
	if PutBucketTagging.ObjectLevel() || GetBucketTagging.ObjectLevel() {
		t.Error("bucket tagging is object-level")
	}
}
