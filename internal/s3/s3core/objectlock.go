package s3core

import (
	"net/http"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/versions"
)

// Object Lock, as S3 has it: a bucket created with it (or given it once versioning is on)
// keeps versioning on for good, may give new versions a default retention, and each version
// may carry a retention (GOVERNANCE or COMPLIANCE, until a date) and a legal hold. The rules of
// what a lock forbids are the version store's (internal/versions/lock.go), so that a version is
// protected whichever API asks to remove it.

var (
	ErrObjectLocked           = &APIError{"AccessDenied", http.StatusForbidden, "Access Denied because object protected by object lock."}
	errInvalidBucketState     = &APIError{"InvalidBucketState", http.StatusConflict, "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed."}
	ErrLockNotEnabled         = ErrInvalidRequest.WithMessage("Bucket is missing Object Lock Configuration")
	ErrNoSuchObjectLockConfig = &APIError{"NoSuchObjectLockConfiguration", http.StatusNotFound, "The specified object does not have a ObjectLock configuration"}
	ErrRetainUntilPast        = ErrInvalidArgument.WithMessage("The retain until date must be in the future!")
)

// LockEnabled reports the Object Lock setting of the request's bucket (from its cached state).
func (rq *Request) LockEnabled() bool {
	return rq.State != nil && versions.LockEnabled(meta.Container{Meta: rq.State.Meta})
}
