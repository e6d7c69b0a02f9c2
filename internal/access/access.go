// Package access decides who may do what to a bucket (an S3 bucket or Swift container) and its
// objects, and whether a write fits a quota. It is pure logic, like a consensus state machine:
// decisions in, effects out. It does no I/O and imports nothing of Cairn's; the front ends load
// what a decision needs (the bucket's stored access state, an object's ACL, usage and limits),
// ask, and act on the answer. One module decides for both APIs, so that an S3 ACL, a bucket
// policy and a Swift container ACL mean the same thing whichever API a request comes through.
//
// The rules (Decide), in order:
//
//  1. The root identity (the server's root key) may do everything, and an administrator of the
//     owning account may always read, replace and delete the bucket policy (as AWS lets an
//     account's root user), so that no policy can lock its own account out for good.
//  2. An explicit Deny in the bucket policy that matches the request (its conditions holding in
//     Request.Context) denies it, for every other principal, the owning account's own users
//     included.
//  3. Administrators of the owning account may do everything else. The account's other users
//     are like anyone else: they get only what rule 4 grants them (tempauth's users without
//     .admin; AWS's IAM users, who need a permission of their own). Grants and policy
//     principals that name a whole account are for that account, so for its administrators;
//     a user who is not one needs an entry naming it (ACCOUNT:USER, arn:aws:iam::A:user/U),
//     or a Swift ACL entry for its account (tempauth gives those to every user of it).
//     Creating and listing an account's buckets is for its administrators too.
//  4. An Allow in the bucket policy, a bucket ACL grant, an object ACL grant (GetObject and the
//     object's ACL only) or a Swift container ACL (X-Container-Read/-Write) allows the request.
//     Each keeps its own API's meaning: a bucket ACL's READ lists the bucket and reads no
//     object (S3), while a Swift read ACL reads objects, and lists for its accounts and with
//     .rlistings (Swift). A bucket ACL stored before Cairn gave it S3's meaning keeps its old
//     one, READ reading objects too, until it is migrated (MigrateLegacyACL) or replaced.
//     The bucket's settings narrow this: object ownership BucketOwnerEnforced turns ACL grants
//     off; a public access block's IgnorePublicAcls ignores grants to AllUsers and
//     AuthenticatedUsers, and RestrictPublicBuckets keeps a public policy's public statements
//     for the owner's account. (BlockPublicAcls and BlockPublicPolicy refuse writes, which the
//     front ends check: ACL.GrantsPublic, Policy.Public.)
//  5. Anything else is denied.
//
// Using it from a front end (the S3 front end does all of this; see internal/s3/s3core/access.go):
//
//   - Read the container with proxy.HeadContainer and its state with StateFromMeta (cache it
//     briefly if you like; forget it when you change it).
//   - Decide(Request{Identity, Action, Resource{Owner: the container's account, Bucket, Key},
//     Bucket: state, Referer, Context}), the Context from BaseContext plus what the API's
//     request offers (and WithExistingTags when Policy.UsesExistingObjectTags). If the answer has NeedObjectACL, read the object's SysMeta
//     (ObjectACLFromSysMeta) and decide again. Refuse what is not Allowed.
//   - Keep state only under the Meta* keys, validated first: ParsePolicy, ACL.Validate,
//     ParseSwiftACL / ParseSwiftWriteACL (store SwiftACL.String()).
//   - Before storing a write, CheckQuota with the account's limits (Quotas) and usage
//     (proxy.HeadAccount), and with BucketState.Quota and the container's usage; refuse on
//     ErrQuotaExceeded.
//
// Files: access.go (identities, actions, resources, Decide), acl.go (S3 ACLs: grants and canned
// ACLs), policy.go (bucket policies), condition.go (policy conditions and their context),
// swiftacl.go (Swift container ACLs), state.go (the access state kept in a container's
// metadata: also the public access block and object ownership), shown.go (what each API shows
// of the other's grants), migrate.go (bucket ACLs of the old meaning moved to S3's), quota.go
// (quota checks).
package access

import (
	"fmt"
	"strings"
)

// Identity is who asks: an authenticated user of an account, the root identity, or nobody
// (Anonymous: a request without credentials).
type Identity struct {
	Account, User string
	// Admin: an administrator of its account (Swift's .admin). Inside its own account an
	// ordinary user may already do everything; an administrator may also manage the bucket
	// policy whatever it denies.
	Admin bool
	// Root: the server's root key, allowed everything everywhere.
	Root bool
	// Anonymous: no credentials. Account and User are then empty.
	Anonymous bool
}

// Action is an operation on a bucket or an object, as a bucket policy names it.
type Action uint8

// Actions. HeadBucket and the listings are ListBucket, HeadObject is GetObject, every write of
// object data (PUT, copy destination, multipart create, part and complete) is PutObject, as in
// S3's policy language.
const (
	_ Action = iota
	ListBucket
	ListBucketMultipartUploads
	GetBucketLocation
	GetBucketVersioning
	PutBucketVersioning
	ListBucketVersions
	GetBucketAcl
	PutBucketAcl
	GetBucketPolicy
	PutBucketPolicy
	DeleteBucketPolicy
	GetBucketPolicyStatus
	GetBucketRequestPayment
	GetBucketLogging
	GetBucketCORS
	// PutBucketCORS sets and deletes the bucket's CORS configuration (S3 has no separate
	// permission for DeleteBucketCors).
	PutBucketCORS
	GetLifecycleConfiguration
	// PutLifecycleConfiguration sets and deletes the bucket's lifecycle configuration (S3 has
	// no separate permission for DeleteBucketLifecycle).
	PutLifecycleConfiguration
	GetBucketTagging
	GetBucketWebsite
	GetEncryptionConfiguration
	GetBucketObjectLockConfiguration
	GetReplicationConfiguration
	GetBucketPublicAccessBlock
	GetBucketOwnershipControls
	DeleteBucket
	// CreateBucket and ListAllMyBuckets act on the caller's own account, not on a bucket of
	// someone else's: any authenticated identity may, nobody anonymous.
	CreateBucket
	ListAllMyBuckets
	GetObject
	PutObject
	DeleteObject
	GetObjectAcl
	PutObjectAcl
	AbortMultipartUpload
	ListMultipartUploadParts
	// Tagging: of objects (object level) and of buckets. AWS decides DeleteBucketTagging as
	// s3:PutBucketTagging; so does Cairn (there is no s3:DeleteBucketTagging).
	GetObjectTagging
	PutObjectTagging
	DeleteObjectTagging
	PutBucketTagging
	// Object Lock: a bucket's configuration, a version's retention and legal hold, and the
	// right to remove or shorten a GOVERNANCE retention (x-amz-bypass-governance-retention).
	PutBucketObjectLockConfiguration
	GetObjectRetention
	PutObjectRetention
	GetObjectLegalHold
	PutObjectLegalHold
	BypassGovernanceRetention
	// The public access block and object ownership of a bucket. AWS decides their DELETEs as
	// their PUTs; so does Cairn.
	PutBucketPublicAccessBlock
	PutBucketOwnershipControls
	// PutEncryptionConfiguration sets and deletes the bucket's default encryption (S3 has no
	// separate permission for DeleteBucketEncryption).
	PutEncryptionConfiguration
	numActions
)

var actionNames = [numActions]string{
	ListBucket:                       "s3:ListBucket",
	ListBucketMultipartUploads:       "s3:ListBucketMultipartUploads",
	GetBucketLocation:                "s3:GetBucketLocation",
	GetBucketVersioning:              "s3:GetBucketVersioning",
	PutBucketVersioning:              "s3:PutBucketVersioning",
	ListBucketVersions:               "s3:ListBucketVersions",
	GetBucketAcl:                     "s3:GetBucketAcl",
	PutBucketAcl:                     "s3:PutBucketAcl",
	GetBucketPolicy:                  "s3:GetBucketPolicy",
	PutBucketPolicy:                  "s3:PutBucketPolicy",
	DeleteBucketPolicy:               "s3:DeleteBucketPolicy",
	GetBucketPolicyStatus:            "s3:GetBucketPolicyStatus",
	GetBucketRequestPayment:          "s3:GetBucketRequestPayment",
	GetBucketLogging:                 "s3:GetBucketLogging",
	GetBucketCORS:                    "s3:GetBucketCORS",
	PutBucketCORS:                    "s3:PutBucketCORS",
	GetLifecycleConfiguration:        "s3:GetLifecycleConfiguration",
	PutLifecycleConfiguration:        "s3:PutLifecycleConfiguration",
	GetBucketTagging:                 "s3:GetBucketTagging",
	GetBucketWebsite:                 "s3:GetBucketWebsite",
	GetEncryptionConfiguration:       "s3:GetEncryptionConfiguration",
	PutEncryptionConfiguration:       "s3:PutEncryptionConfiguration",
	GetBucketObjectLockConfiguration: "s3:GetBucketObjectLockConfiguration",
	GetReplicationConfiguration:      "s3:GetReplicationConfiguration",
	GetBucketPublicAccessBlock:       "s3:GetBucketPublicAccessBlock",
	GetBucketOwnershipControls:       "s3:GetBucketOwnershipControls",
	DeleteBucket:                     "s3:DeleteBucket",
	CreateBucket:                     "s3:CreateBucket",
	ListAllMyBuckets:                 "s3:ListAllMyBuckets",
	GetObject:                        "s3:GetObject",
	PutObject:                        "s3:PutObject",
	DeleteObject:                     "s3:DeleteObject",
	GetObjectAcl:                     "s3:GetObjectAcl",
	PutObjectAcl:                     "s3:PutObjectAcl",
	AbortMultipartUpload:             "s3:AbortMultipartUpload",
	ListMultipartUploadParts:         "s3:ListMultipartUploadParts",
	GetObjectTagging:                 "s3:GetObjectTagging",
	PutObjectTagging:                 "s3:PutObjectTagging",
	DeleteObjectTagging:              "s3:DeleteObjectTagging",
	PutBucketTagging:                 "s3:PutBucketTagging",
	PutBucketObjectLockConfiguration: "s3:PutBucketObjectLockConfiguration",
	GetObjectRetention:               "s3:GetObjectRetention",
	PutObjectRetention:               "s3:PutObjectRetention",
	GetObjectLegalHold:               "s3:GetObjectLegalHold",
	PutObjectLegalHold:               "s3:PutObjectLegalHold",
	BypassGovernanceRetention:        "s3:BypassGovernanceRetention",
	PutBucketPublicAccessBlock:       "s3:PutBucketPublicAccessBlock",
	PutBucketOwnershipControls:       "s3:PutBucketOwnershipControls",
}

// String is the action's name in S3's policy language, "s3:GetObject".
func (a Action) String() string {
	if a == 0 || a >= numActions {
		return fmt.Sprintf("access.Action(%d)", a)
	}
	return actionNames[a]
}

// Valid reports whether a is one of the actions above.
func (a Action) Valid() bool { return a > 0 && a < numActions }

// ObjectLevel reports whether the action applies to an object (its resource is
// arn:aws:s3:::bucket/key) rather than to the bucket.
func (a Action) ObjectLevel() bool {
	switch a {
	case GetObject, PutObject, DeleteObject, GetObjectAcl, PutObjectAcl, AbortMultipartUpload, ListMultipartUploadParts,
		GetObjectTagging, PutObjectTagging, DeleteObjectTagging,
		GetObjectRetention, PutObjectRetention, GetObjectLegalHold, PutObjectLegalHold, BypassGovernanceRetention:
		return true
	}
	return false
}

// accountLevel reports whether the action is on the caller's own account rather than a bucket.
func (a Action) accountLevel() bool { return a == CreateBucket || a == ListAllMyBuckets }

// Resource is what a request acts on: a bucket of an account, or an object in it.
type Resource struct {
	Owner  string // the account that owns the bucket
	Bucket string
	Key    string // empty for bucket-level actions
}

// ARN is the resource as a bucket policy names it: arn:aws:s3:::bucket or
// arn:aws:s3:::bucket/key.
func (r Resource) ARN() string {
	if r.Key == "" {
		return arnPrefix + r.Bucket
	}
	return arnPrefix + r.Bucket + "/" + r.Key
}

const arnPrefix = "arn:aws:s3:::"

// Request is one question: may Identity do Action to Resource, given the bucket's access state?
type Request struct {
	Identity Identity
	Action   Action
	Resource Resource
	// Bucket is the bucket's stored access state (StateFromMeta). Nil only for CreateBucket
	// and ListAllMyBuckets.
	Bucket *BucketState
	// Object is the object's ACL when the caller has loaded it, nil when it has not. It is
	// consulted for GetObject, GetObjectAcl and PutObjectAcl only; see Decision.NeedObjectACL.
	Object *ACL
	// Referer is the request's Referer header, which Swift's referrer ACLs (.r:) test.
	Referer string
	// Context is what the request offers to policy conditions (condition.go); nil: nothing,
	// so that every condition sees its keys absent.
	Context Context
}

// Decision is the answer to a Request.
type Decision struct {
	Allowed bool
	// Reason says which rule decided, for logs and tests.
	Reason string
	// NeedObjectACL: denied on what the request carried, but the object's own ACL could still
	// allow it (Request.Object was nil). Load the object's ACL (ObjectACLFromSysMeta) and ask
	// again; an object that does not exist has no ACL, so the answer stands.
	NeedObjectACL bool
}

func allow(reason string) Decision { return Decision{Allowed: true, Reason: reason} }
func deny(reason string) Decision  { return Decision{Reason: reason} }

// Decide applies the rules of the package comment.
func Decide(r Request) Decision {
	id := r.Identity
	if id.Root && !id.Anonymous {
		return allow("root")
	}
	if !r.Action.Valid() {
		return deny("unknown action")
	}
	if r.Action.accountLevel() {
		if id.Anonymous || id.Account == "" {
			return deny("anonymous")
		}
		if !id.Admin {
			return deny("only an account administrator creates and lists the account's buckets")
		}
		return allow("own account")
	}
	if r.Bucket == nil {
		return deny("no bucket state")
	}
	st := r.Bucket
	owner := !id.Anonymous && id.Account != "" && id.Account == r.Resource.Owner
	if st.Broken != nil {
		// Stored state that does not parse might hide a Deny: only the owner, who can repair
		// it, gets in.
		if owner {
			return allow("bucket owner (access state unreadable)")
		}
		return deny("access state unreadable: " + st.Broken.Error())
	}
	if owner && id.Admin && (r.Action == GetBucketPolicy || r.Action == PutBucketPolicy || r.Action == DeleteBucketPolicy) {
		return allow("account administrator manages the bucket policy")
	}
	arn := r.Resource.ARN()
	pab := st.pab()
	if st.Policy != nil {
		if s := st.Policy.match(EffectDeny, id, r.Action, arn, r.Context, false); s != nil {
			return deny("explicit deny in bucket policy" + sidText(s))
		}
	}
	if owner && id.Admin {
		return allow("bucket owner's administrator")
	}
	if st.Policy != nil {
		// RestrictPublicBuckets: a public policy's public statements are for the owner's
		// account only (AWS: its users and AWS services, of which Cairn has none).
		outsider := pab.RestrictPublicBuckets && !owner && st.Policy.Public()
		if s := st.Policy.match(EffectAllow, id, r.Action, arn, r.Context, outsider); s != nil {
			return allow("bucket policy" + sidText(s))
		}
	}
	// BucketOwnerEnforced turns ACLs off: neither the bucket's nor an object's grants count.
	acls := st.ACLsEnabled()
	if p, ok := bucketACLPermission(r.Action); ok && acls && st.ACL.grantsExcept(id, p, pab.IgnorePublicAcls) {
		return allow("bucket ACL grants " + string(p))
	}
	if r.Action == GetObject && st.LegacyBucketRead && acls && st.ACL.grantsExcept(id, Read, pab.IgnorePublicAcls) {
		return allow("bucket ACL grants READ, stored with its old meaning (objects too) until migrated")
	}
	if swiftAllows(st, id, r.Action, r.Referer) {
		return allow("Swift container ACL")
	}
	if p, ok := objectACLPermission(r.Action); ok && acls {
		if r.Object == nil {
			return Decision{Reason: "no grant on the bucket; the object's ACL is unknown", NeedObjectACL: true}
		}
		if r.Object.grantsExcept(id, p, pab.IgnorePublicAcls) {
			return allow("object ACL grants " + string(p))
		}
	}
	return deny("no grant")
}

func sidText(s *Statement) string {
	if s.Sid == "" {
		return ""
	}
	return " (" + s.Sid + ")"
}

// swiftAllows applies Swift's container ACLs as tempauth does: the read ACL lets its accounts
// and users read objects and list, and requests whose Referer it allows read objects (and
// list too with .rlistings); the write ACL lets its accounts and users write and delete objects.
func swiftAllows(st *BucketState, id Identity, a Action, referer string) bool {
	switch a {
	case GetObject:
		return st.SwiftRead.grantsIdentity(id) || st.SwiftRead.ReferrerAllowed(referer)
	case ListBucket:
		return st.SwiftRead.grantsIdentity(id) || (st.SwiftRead.Listings && st.SwiftRead.ReferrerAllowed(referer))
	case PutObject, DeleteObject, AbortMultipartUpload, ListMultipartUploadParts:
		return st.SwiftWrite.grantsIdentity(id)
	}
	return false
}

// validAccountName applies the tenant store's rule for account and user names: 1 to 64
// characters of A-Z a-z 0-9 _ -.
func validAccountName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ValidAccountName reports whether s could name a Cairn account (or a user): the canonical
// user ID of an ACL grant must.
func ValidAccountName(s string) bool { return validAccountName(s) }

// splitUser splits "account:user".
func splitUser(s string) (account, user string, hasUser bool) {
	account, user, hasUser = strings.Cut(s, ":")
	return
}
