package access

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Errors of parsing what clients send. Every error this package returns for bad input wraps
// one of them, so that a front end can pick its answer (S3: InvalidArgument or
// MalformedACLError, NotImplemented, MalformedPolicy; Swift: 400).
var (
	// ErrInvalidACL: an S3 ACL, grant or canned ACL name that is not valid.
	ErrInvalidACL = errors.New("invalid ACL")
	// ErrUnsupported: valid in S3 or Swift, but not something Cairn implements (a canned ACL
	// such as log-delivery-write, a policy condition, a grant by e-mail address).
	ErrUnsupported = errors.New("not supported")
	// ErrMalformedPolicy: a bucket policy that does not parse or does not validate.
	ErrMalformedPolicy = errors.New("malformed policy")
	// ErrInvalidSwiftACL: an X-Container-Read or X-Container-Write value that does not parse.
	ErrInvalidSwiftACL = errors.New("invalid Swift ACL")
)

// Permission is an S3 ACL permission.
type Permission string

// S3's ACL permissions.
const (
	FullControl Permission = "FULL_CONTROL"
	Read        Permission = "READ"
	Write       Permission = "WRITE"
	ReadACP     Permission = "READ_ACP"
	WriteACP    Permission = "WRITE_ACP"
)

// Permissions lists every permission, in S3's order.
var Permissions = []Permission{FullControl, Read, Write, ReadACP, WriteACP}

// ParsePermission checks a permission name.
func ParsePermission(s string) (Permission, error) {
	p := Permission(s)
	if !slices.Contains(Permissions, p) {
		return "", fmt.Errorf("%w: unknown permission %q", ErrInvalidACL, s)
	}
	return p, nil
}

// Group grantees, named by their S3 URIs.
const (
	AllUsersURI           = "http://acs.amazonaws.com/groups/global/AllUsers"
	AuthenticatedUsersURI = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
	logDeliveryURI        = "http://acs.amazonaws.com/groups/s3/LogDelivery"
)

// Grantee is whom a grant is for: an account (S3's canonical user; Cairn's canonical user ID is
// the account name) or a group (AllUsers: everyone, anonymous included; AuthenticatedUsers:
// every authenticated Cairn user, of any account).
type Grantee struct {
	ID  string `json:"id,omitempty"`  // an account name
	URI string `json:"uri,omitempty"` // AllUsersURI or AuthenticatedUsersURI
}

// Grant gives a grantee a permission.
type Grant struct {
	Grantee    Grantee    `json:"grantee"`
	Permission Permission `json:"permission"`
}

// ACL is an S3 access control list: the grants beyond the owner's, who always has full control
// (the owning account is not listed; a front end shows it first when it answers a GET ?acl).
// The zero ACL is "private".
type ACL struct {
	Grants []Grant
}

// Canned ACL names.
const (
	CannedPrivate                = "private"
	CannedPublicRead             = "public-read"
	CannedPublicReadWrite        = "public-read-write"
	CannedAuthenticatedRead      = "authenticated-read"
	CannedBucketOwnerRead        = "bucket-owner-read"
	CannedBucketOwnerFullControl = "bucket-owner-full-control"
)

// CannedACL expands a canned ACL name (x-amz-acl) into its grants. forObject allows the two
// object-only names (bucket-owner-read and bucket-owner-full-control: in Cairn the bucket's
// account owns every object in it, so both mean private). An unknown name is ErrInvalidACL;
// aws-exec-read and log-delivery-write are ErrUnsupported.
func CannedACL(name string, forObject bool) (ACL, error) {
	switch name {
	case CannedPrivate:
		return ACL{}, nil
	case CannedPublicRead:
		return ACL{Grants: []Grant{{Grantee{URI: AllUsersURI}, Read}}}, nil
	case CannedPublicReadWrite:
		return ACL{Grants: []Grant{{Grantee{URI: AllUsersURI}, Read}, {Grantee{URI: AllUsersURI}, Write}}}, nil
	case CannedAuthenticatedRead:
		return ACL{Grants: []Grant{{Grantee{URI: AuthenticatedUsersURI}, Read}}}, nil
	case CannedBucketOwnerRead, CannedBucketOwnerFullControl:
		if forObject {
			return ACL{}, nil
		}
		return ACL{}, fmt.Errorf("%w: the canned ACL %q applies to objects only", ErrInvalidACL, name)
	case "aws-exec-read", "log-delivery-write":
		return ACL{}, fmt.Errorf("%w: the canned ACL %q", ErrUnsupported, name)
	}
	return ACL{}, fmt.Errorf("%w: unknown canned ACL %q", ErrInvalidACL, name)
}

// Validate checks every grant: a known permission, and a grantee that is either a valid account
// name or one of the two supported groups (LogDelivery is ErrUnsupported).
func (a ACL) Validate() error {
	for _, g := range a.Grants {
		if _, err := ParsePermission(string(g.Permission)); err != nil {
			return err
		}
		if err := g.Grantee.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (g Grantee) validate() error {
	switch {
	case g.ID != "" && g.URI != "":
		return fmt.Errorf("%w: a grantee is an ID or a group, not both", ErrInvalidACL)
	case g.ID != "":
		if !validAccountName(g.ID) {
			return fmt.Errorf("%w: invalid id %.80q (a canonical user ID is an account name)", ErrInvalidACL, g.ID)
		}
	case g.URI == AllUsersURI, g.URI == AuthenticatedUsersURI:
	case g.URI == logDeliveryURI:
		return fmt.Errorf("%w: the LogDelivery group", ErrUnsupported)
	case g.URI != "":
		return fmt.Errorf("%w: invalid group uri %.120q", ErrInvalidACL, g.URI)
	default:
		return fmt.Errorf("%w: a grantee needs an ID or a group URI", ErrInvalidACL)
	}
	return nil
}

// matches reports whether the grantee covers an identity.
func (g Grantee) matches(id Identity) bool {
	switch {
	case g.URI == AllUsersURI:
		return true
	case g.URI == AuthenticatedUsersURI:
		return !id.Anonymous && id.Account != ""
	case g.ID != "":
		// A grant to an account (canonical ID) is for the account, which its administrators
		// act for; see Principal.matches.
		return !id.Anonymous && id.Account == g.ID && id.Admin
	}
	return false
}

// grants reports whether the ACL gives the identity permission p (FULL_CONTROL gives all).
func (a ACL) grants(id Identity, p Permission) bool { return a.grantsExcept(id, p, false) }

// grantsExcept is grants, leaving out the public grants (Grantee.public) when ignorePublic
// (a public access block's IgnorePublicAcls).
func (a ACL) grantsExcept(id Identity, p Permission, ignorePublic bool) bool {
	for _, g := range a.Grants {
		if ignorePublic && g.Grantee.public() {
			continue
		}
		if (g.Permission == p || g.Permission == FullControl) && g.Grantee.matches(id) {
			return true
		}
	}
	return false
}

// public reports whether a grantee is public as a public access block sees it: AllUsers or
// AuthenticatedUsers (any account at all).
func (g Grantee) public() bool { return g.URI == AllUsersURI || g.URI == AuthenticatedUsersURI }

// GrantsPublic reports whether the ACL is public as a public access block sees it: it grants
// anything to AllUsers or AuthenticatedUsers.
func (a ACL) GrantsPublic() bool {
	for _, g := range a.Grants {
		if g.Grantee.public() {
			return true
		}
	}
	return false
}

// Public reports whether the ACL grants anything to everyone.
func (a ACL) Public() bool {
	for _, g := range a.Grants {
		if g.Grantee.URI == AllUsersURI {
			return true
		}
	}
	return false
}

// Encode is the ACL as it is stored (container metadata MetaACL, object SysMeta ObjectMetaACL):
// compact JSON, or "" for private (store nothing).
func (a ACL) Encode() string {
	if len(a.Grants) == 0 {
		return ""
	}
	b, err := json.Marshal(a.Grants)
	if err != nil {
		panic(fmt.Sprintf("access: encoding an ACL: %v", err)) // plain strings cannot fail
	}
	return string(b)
}

// DecodeACL reads what Encode wrote ("" is private) and validates it.
func DecodeACL(s string) (ACL, error) {
	if s == "" {
		return ACL{}, nil
	}
	var gs []Grant
	if err := json.Unmarshal([]byte(s), &gs); err != nil {
		return ACL{}, fmt.Errorf("%w: stored ACL: %v", ErrInvalidACL, err)
	}
	a := ACL{Grants: gs}
	if err := a.Validate(); err != nil {
		return ACL{}, fmt.Errorf("stored ACL: %w", err)
	}
	return a, nil
}

// bucketACLPermission is the bucket ACL permission that allows an action, as in S3: READ lists
// the bucket (objects, versions, uploads) and reads no object, which its own ACL decides; WRITE
// creates, replaces and deletes objects; READ_ACP and WRITE_ACP read and change the bucket's
// ACL. (An ACL stored before Cairn gave bucket ACLs this meaning still reads objects with
// READ: BucketState.LegacyBucketRead.)
func bucketACLPermission(a Action) (Permission, bool) {
	switch a {
	case ListBucket, ListBucketMultipartUploads, ListBucketVersions:
		return Read, true
	case PutObject, DeleteObject, AbortMultipartUpload, ListMultipartUploadParts:
		return Write, true
	case GetBucketAcl:
		return ReadACP, true
	case PutBucketAcl:
		return WriteACP, true
	}
	return "", false
}

// objectACLPermission is the object ACL permission that allows an action: READ reads the
// object, READ_ACP and WRITE_ACP its ACL. (WRITE means nothing on an object, as in S3.)
func objectACLPermission(a Action) (Permission, bool) {
	switch a {
	case GetObject:
		return Read, true
	case GetObjectAcl:
		return ReadACP, true
	case PutObjectAcl:
		return WriteACP, true
	}
	return "", false
}
