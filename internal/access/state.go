package access

import (
	"errors"
	"fmt"
	"strconv"
)

// Keys of a container's metadata (meta.Container.Meta) that hold its access state. Both front
// ends read and write these keys, so that one state is seen through either API. Empty values
// mean "not set" (a metadata update removes a key by writing "").
const (
	// MetaACL is the bucket's S3 ACL (ACL.Encode).
	MetaACL = "sys:acl"
	// MetaPolicy is the bucket policy document, as sent (validated by ParsePolicy first).
	MetaPolicy = "sys:policy"
	// MetaSwiftRead and MetaSwiftWrite are X-Container-Read and X-Container-Write in their
	// cleaned form (SwiftACL.String; validated by ParseSwiftACL / ParseSwiftWriteACL first).
	MetaSwiftRead  = "sys:swift-read"
	MetaSwiftWrite = "sys:swift-write"
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
	ACL        ACL
	Policy     *Policy // nil: none
	SwiftRead  SwiftACL
	SwiftWrite SwiftACL
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
	if v := m[MetaACL]; v != "" {
		acl, err := DecodeACL(v)
		if err != nil {
			errs = append(errs, err)
		}
		st.ACL = acl
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
	// Swift stores whatever a client sent as X-Container-Meta-Quota-*, and its middleware
	// ignores a value that is not a non-negative integer; so does this.
	st.Quota.Bytes = quotaValue(m[MetaQuotaBytes])
	st.Quota.Objects = quotaValue(m[MetaQuotaCount])
	st.Broken = errors.Join(errs...)
	return st
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
