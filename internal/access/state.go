package access

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Keys of a container's metadata (meta.Container.Meta) that hold its access state. Both front
// ends read and write these keys, so that one state is seen through either API. Empty values
// mean "not set" (a metadata update removes a key by writing "").
const (
	// MetaACL is the bucket's S3 ACL (ACL.Encode), with S3's meaning: READ lists the bucket.
	MetaACL = "sys:bucket-acl"
	// MetaLegacyACL is where Cairn kept a bucket's ACL before it gave bucket ACLs S3's
	// meaning: there a bucket READ also read every object in the bucket, as Swift's read ACL
	// does. A bucket whose ACL is still there keeps that meaning (BucketState.LegacyBucketRead)
	// until MigrateLegacyACL moves it, or its owner sets a new ACL, which is stored under
	// MetaACL and clears this key.
	MetaLegacyACL = "sys:acl"
	// MetaPolicy is the bucket policy document, as sent (validated by ParsePolicy first).
	MetaPolicy = "sys:policy"
	// MetaSwiftRead and MetaSwiftWrite are X-Container-Read and X-Container-Write in their
	// cleaned form (SwiftACL.String; validated by ParseSwiftACL / ParseSwiftWriteACL first).
	MetaSwiftRead  = "sys:swift-read"
	MetaSwiftWrite = "sys:swift-write"
	// MetaPublicAccessBlock is the bucket's public access block (PublicAccessBlock.Encode).
	MetaPublicAccessBlock = "sys:public-access-block"
	// MetaOwnership is the bucket's object ownership rule (an Ownership value).
	MetaOwnership = "sys:object-ownership"
	// MetaQuotaBytes and MetaQuotaCount are the container quotas of Swift's container_quotas
	// middleware, X-Container-Meta-Quota-Bytes and -Count, which the Swift front end keeps as
	// user metadata ("meta-" + the lower-cased name). Both front ends enforce them.
	MetaQuotaBytes = "meta-quota-bytes"
	MetaQuotaCount = "meta-quota-count"
)

// ObjectMetaACL is the key of an object's SysMeta holding its ACL (ACL.Encode; absent or
// empty: private).
const ObjectMetaACL = "acl"

// BucketState is the access state of one bucket (container), read from its metadata.
type BucketState struct {
	ACL ACL
	// LegacyBucketRead: the ACL was read from MetaLegacyACL, so that its READ grants (and
	// FULL_CONTROL's) also read objects, as they did when it was set.
	LegacyBucketRead bool
	Policy           *Policy // nil: none
	SwiftRead        SwiftACL
	SwiftWrite       SwiftACL
	// PublicAccessBlock is the bucket's public access block; nil: none.
	PublicAccessBlock *PublicAccessBlock
	// Ownership is the bucket's object ownership rule; empty: none set.
	Ownership Ownership
	// Quota is the container's own quota (Swift's container quotas); zero fields: no limit.
	Quota Quota
	// Broken is set when stored state does not parse (it was validated when written, so this
	// means damage or a newer writer). Decide then lets in the owner only.
	Broken error
	// Meta is the container's metadata as read: the front ends find their other bucket
	// settings (versioning) in it, cached with the access state.
	Meta map[string]string
}

// StateFromMeta reads a bucket's access state from its container metadata. It never fails:
// what does not parse is reported in Broken, so that the caller fails closed.
func StateFromMeta(bucket string, m map[string]string) *BucketState {
	st := &BucketState{Meta: m}
	var errs []error
	if v, legacy := bucketACLValue(m); v != "" {
		acl, err := DecodeACL(v)
		if err != nil {
			errs = append(errs, err)
		}
		st.ACL, st.LegacyBucketRead = acl, legacy
	}
	if v := m[MetaPolicy]; v != "" {
		p, err := ParsePolicy([]byte(v), bucket)
		if err != nil {
			errs = append(errs, fmt.Errorf("stored policy: %w", err))
		}
		st.Policy = p
	}
	if v := m[MetaSwiftRead]; v != "" {
		a, err := ParseSwiftACL(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("stored read ACL: %w", err))
		}
		st.SwiftRead = a
	}
	if v := m[MetaSwiftWrite]; v != "" {
		a, err := ParseSwiftWriteACL(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("stored write ACL: %w", err))
		}
		st.SwiftWrite = a
	}
	if v := m[MetaPublicAccessBlock]; v != "" {
		b, err := DecodePublicAccessBlock(v)
		if err != nil {
			errs = append(errs, err)
		}
		st.PublicAccessBlock = &b
	}
	if v := m[MetaOwnership]; v != "" {
		o := Ownership(v)
		if !o.Valid() {
			errs = append(errs, fmt.Errorf("stored object ownership %.40q is unknown", v))
		}
		st.Ownership = o
	}
	// Swift stores whatever a client sent as X-Container-Meta-Quota-*, and its middleware
	// ignores a value that is not a non-negative integer; so does this.
	st.Quota.Bytes = quotaValue(m[MetaQuotaBytes])
	st.Quota.Objects = quotaValue(m[MetaQuotaCount])
	st.Broken = errors.Join(errs...)
	return st
}

// bucketACLValue is the stored bucket ACL: MetaACL's, else MetaLegacyACL's (legacy true).
func bucketACLValue(m map[string]string) (v string, legacy bool) {
	if v := m[MetaACL]; v != "" {
		return v, false
	}
	if v := m[MetaLegacyACL]; v != "" {
		return v, true
	}
	return "", false
}

// BucketACLChanges is the metadata update that stores a bucket's new ACL: under MetaACL, with
// S3's meaning, and MetaLegacyACL cleared, so that a bucket set before the change takes S3's
// meaning from its next ACL on.
func BucketACLChanges(a ACL) map[string]string {
	return map[string]string{MetaACL: a.Encode(), MetaLegacyACL: ""}
}

func quotaValue(s string) int64 {
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ObjectACLFromSysMeta reads an object's ACL from its SysMeta. A value that does not parse
// grants nothing (the owner keeps full control).
func ObjectACLFromSysMeta(sys map[string]string) *ACL {
	acl, err := DecodeACL(sys[ObjectMetaACL])
	if err != nil {
		return &ACL{}
	}
	return &acl
}

// Public reports whether the bucket's ACL or policy lets everyone in (S3's policy status looks
// at the policy only; this is the wider question).
func (s *BucketState) Public() bool {
	return s.ACL.Public() || s.Policy.Public() || len(s.SwiftRead.Referrers) > 0
}

// ACLsEnabled reports whether the bucket's ACLs take part in decisions: not when object
// ownership is BucketOwnerEnforced, which turns them off.
func (s *BucketState) ACLsEnabled() bool { return s.Ownership != OwnershipBucketOwnerEnforced }

// pab is the public access block, the zero one when none is set.
func (s *BucketState) pab() PublicAccessBlock {
	if s.PublicAccessBlock == nil {
		return PublicAccessBlock{}
	}
	return *s.PublicAccessBlock
}

// PublicAccessBlock is S3's four flags (PutPublicAccessBlock), kept per bucket; Cairn has no
// account-level block.
type PublicAccessBlock struct {
	// BlockPublicAcls: setting a public ACL (canned or grants, on the bucket or an object)
	// is refused (the front end checks, with ACL.Public semantics).
	BlockPublicAcls bool
	// IgnorePublicAcls: grants to AllUsers and AuthenticatedUsers grant nothing.
	IgnorePublicAcls bool
	// BlockPublicPolicy: putting a public policy (Policy.Public) is refused (the front end).
	BlockPublicPolicy bool
	// RestrictPublicBuckets: while the policy is public, its public statements allow only
	// callers of the owner's account.
	RestrictPublicBuckets bool
}

var pabNames = [4]string{"BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets"}

func (b *PublicAccessBlock) flags() [4]*bool {
	return [4]*bool{&b.BlockPublicAcls, &b.IgnorePublicAcls, &b.BlockPublicPolicy, &b.RestrictPublicBuckets}
}

// Encode is the stored form: the names of the flags set, comma-separated, or "none" when no
// flag is set (an empty value would mean "no configuration").
func (b PublicAccessBlock) Encode() string {
	var on []string
	for i, f := range b.flags() {
		if *f {
			on = append(on, pabNames[i])
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, ",")
}

// DecodePublicAccessBlock reads Encode's form.
func DecodePublicAccessBlock(s string) (PublicAccessBlock, error) {
	var b PublicAccessBlock
	if s == "none" {
		return b, nil
	}
	flags := b.flags()
next:
	for _, name := range strings.Split(s, ",") {
		for i, n := range pabNames {
			if n == name {
				*flags[i] = true
				continue next
			}
		}
		return b, fmt.Errorf("stored public access block %.80q: unknown flag %.40q", s, name)
	}
	return b, nil
}

// Ownership is a bucket's object ownership rule (S3's ObjectOwnership). In Cairn the bucket's
// account owns every object whatever the rule; what the rules change is whether ACLs count.
type Ownership string

// The three rules.
const (
	OwnershipBucketOwnerEnforced  = Ownership("BucketOwnerEnforced")
	OwnershipBucketOwnerPreferred = Ownership("BucketOwnerPreferred")
	OwnershipObjectWriter         = Ownership("ObjectWriter")
)

// Valid reports whether o is one of the three rules.
func (o Ownership) Valid() bool {
	return o == OwnershipBucketOwnerEnforced || o == OwnershipBucketOwnerPreferred || o == OwnershipObjectWriter
}
