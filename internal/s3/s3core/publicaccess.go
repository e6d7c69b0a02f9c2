package s3core

import (
	"fmt"

	"github.com/cairn-store/cairn/internal/access"
)

// CheckACLWrite refuses an ACL a request sets on the bucket or an object when the bucket's
// settings forbid it: any grant while BucketOwnerEnforced turns ACLs off
// (AccessControlListNotSupported), a public grant under BlockPublicAcls (AccessDenied).
func CheckACLWrite(rq *Request, acl access.ACL) error {
	if !rq.State.ACLsEnabled() && len(acl.Grants) > 0 {
		return fmt.Errorf("ACL on %s/%s: %w", rq.Bucket, rq.Key, errACLNotSupported)
	}
	return checkPublicACL(rq, acl)
}

// checkPublicACL refuses a public ACL (grants to AllUsers or AuthenticatedUsers) on a bucket
// whose public access block has BlockPublicAcls.
func checkPublicACL(rq *Request, acl access.ACL) error {
	if b := rq.State.PublicAccessBlock; b != nil && b.BlockPublicAcls && acl.GrantsPublic() {
		return fmt.Errorf("public ACL on %s/%s under BlockPublicAcls: %w", rq.Bucket, rq.Key, ErrAccessDenied)
	}
	return nil
}
