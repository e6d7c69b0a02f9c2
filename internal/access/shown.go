package access

import (
	"slices"
	"strings"
)

// What each API shows of the other's grants. A bucket's access comes from S3's ACLs and policy
// and from Swift's container ACLs at once; each API answers with its own vocabulary, and shows
// the other's grants where that vocabulary can say them truthfully.
//
// S3's GetBucketAcl and GetObjectAcl add the grants Swift's ACLs make, in S3's meaning:
//
//   - a Swift read ACL entry naming a whole account lets it list (bucket READ) and read every
//     object (object READ);
//   - a read ACL whose referrer entries let in a request without a Referer (.r:*) reads every
//     object (object READ for AllUsers), and with .rlistings also lists (bucket READ);
//   - a Swift write ACL entry naming a whole account lets it write (bucket WRITE);
//   - a bucket ACL stored before bucket ACLs had S3's meaning reads every object for its READ
//     grantees (object READ).
//
// Entries S3 cannot name (account:user, a referrer host) are not shown there. Grants shown this
// way belong to Swift's ACLs (or the old bucket ACL): a PutBucketAcl or PutObjectAcl that sends
// them back does not store them again (WithoutShownOnly), so that taking them away in Swift
// takes them away. Swift shows S3's grants in X-Cairn-S3-Acl (S3ACLHeader).

// BucketACLShown is the bucket ACL GetBucketAcl answers (the owner's FULL_CONTROL aside).
func (s *BucketState) BucketACLShown() ACL {
	var shown ACL
	if s.ACLsEnabled() {
		shown.Grants = slices.Clone(s.ACL.Grants)
	}
	return shown.with(s.swiftBucketGrants())
}

// ObjectACLShown is the object ACL GetObjectAcl answers for an object whose own ACL is obj.
func (s *BucketState) ObjectACLShown(obj ACL) ACL {
	var shown ACL
	if s.ACLsEnabled() {
		shown.Grants = slices.Clone(obj.Grants)
	}
	return shown.with(s.objectGrantsFromBucket())
}

// WithoutShownOnly drops from an ACL being put the grants GetBucketAcl (forObject: GetObjectAcl)
// shows only because Swift's ACLs or the old bucket ACL make them: those the bucket's (or the
// object's) stored ACL does not hold itself.
func (s *BucketState) WithoutShownOnly(a, stored ACL, forObject bool) ACL {
	implied := s.swiftBucketGrants()
	if forObject {
		implied = s.objectGrantsFromBucket()
	}
	var kept ACL
	for _, g := range a.Grants {
		if !slices.Contains(implied, g) || slices.Contains(stored.Grants, g) {
			kept.Grants = append(kept.Grants, g)
		}
	}
	return kept
}

// swiftBucketGrants are the bucket-level grants Swift's container ACLs make.
func (s *BucketState) swiftBucketGrants() []Grant {
	var gs []Grant
	if s.SwiftRead.Listings && s.SwiftRead.ReferrerAllowed("") {
		gs = append(gs, Grant{Grantee{URI: AllUsersURI}, Read})
	}
	for _, a := range wholeAccounts(s.SwiftRead) {
		gs = append(gs, Grant{Grantee{ID: a}, Read})
	}
	for _, a := range wholeAccounts(s.SwiftWrite) {
		gs = append(gs, Grant{Grantee{ID: a}, Write})
	}
	return gs
}

// objectGrantsFromBucket are the object READ grants every object of the bucket has from
// Swift's read ACL and from a bucket ACL of the old meaning.
func (s *BucketState) objectGrantsFromBucket() []Grant {
	var gs []Grant
	if s.SwiftRead.ReferrerAllowed("") {
		gs = append(gs, Grant{Grantee{URI: AllUsersURI}, Read})
	}
	for _, a := range wholeAccounts(s.SwiftRead) {
		gs = append(gs, Grant{Grantee{ID: a}, Read})
	}
	if s.LegacyBucketRead && s.ACLsEnabled() {
		ignorePublic := s.pab().IgnorePublicAcls
		for _, g := range s.ACL.Grants {
			if (g.Permission == Read || g.Permission == FullControl) && !(ignorePublic && g.Grantee.public()) {
				gs = append(gs, Grant{g.Grantee, Read})
			}
		}
	}
	return gs
}

// with adds the grants a does not hold yet (nor holds as FULL_CONTROL).
func (a ACL) with(gs []Grant) ACL {
	for _, g := range gs {
		if !slices.Contains(a.Grants, g) && !slices.Contains(a.Grants, Grant{g.Grantee, FullControl}) {
			a.Grants = append(a.Grants, g)
		}
	}
	return a
}

// wholeAccounts are a Swift ACL's entries that name a whole account.
func wholeAccounts(a SwiftACL) []string {
	var out []string
	for _, p := range a.Principals {
		if _, _, hasUser := splitUser(p); !hasUser && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// S3ACLHeader is the name of the header in which Swift shows a container's or an object's S3
// ACL to those who may change the container's ACLs (its account's administrators), since
// Swift's own ACL headers cannot say S3's grants: a bucket READ lists without reading objects.
const S3ACLHeader = "X-Cairn-S3-Acl"

// HeaderValue is the ACL as S3ACLHeader shows it: PERMISSION:GRANTEE entries, comma-separated,
// the grantee an account name, AllUsers or AuthenticatedUsers ("" for no grant).
func (a ACL) HeaderValue() string {
	var parts []string
	for _, g := range a.Grants {
		who := g.Grantee.ID
		switch g.Grantee.URI {
		case AllUsersURI:
			who = "AllUsers"
		case AuthenticatedUsersURI:
			who = "AuthenticatedUsers"
		}
		parts = append(parts, string(g.Permission)+":"+who)
	}
	return strings.Join(parts, ",")
}

// BucketACLHeaderValue is S3ACLHeader's value for a container with metadata m: its bucket ACL
// (HeaderValue), followed by ";legacy-bucket-read" when it is stored with the old meaning.
func BucketACLHeaderValue(m map[string]string) string {
	v, legacy := bucketACLValue(m)
	acl, err := DecodeACL(v)
	if err != nil {
		return ""
	}
	s := acl.HeaderValue()
	if legacy && s != "" {
		s += ";legacy-bucket-read"
	}
	return s
}
