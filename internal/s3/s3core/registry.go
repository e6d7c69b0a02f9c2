package s3core

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-store/cairn/internal/proxy"
)

// The bucket namespace. Bucket names stay per account: a bucket is a container of its owner's
// account, two accounts may each have a bucket "photos", and a caller's own bucket always wins.
// To let another tenant (or anyone, anonymously) address a bucket it was granted, an owner that
// shares a bucket (an ACL with a grant, a policy with an Allow, at creation or later) claims its
// name in the proxy's shared name index (proxy.ClaimName). A request for a bucket the caller
// does not have in its own account goes to the account holding the name there; a private,
// never-shared bucket of another account is therefore simply not found (NoSuchBucket), and
// reveals nothing. Sharing a bucket whose name another account holds is BucketAlreadyExists
// (409): rename it. The claim lasts until the bucket is deleted.

// bucketOwner returns the account holding a bucket name in the index; meta.ErrNotFound if
// none does.
func (h *Front) bucketOwner(ctx context.Context, bucket string) (string, error) {
	return h.Proxy.NameOwner(ctx, bucket)
}

// ClaimForSharing claims the bucket's name when its new access state lets anyone outside its
// account in (grants), so that they can address it.
func (h *Front) ClaimForSharing(ctx context.Context, rq *Request, grants bool) error {
	if !grants {
		return nil
	}
	err := h.Proxy.ClaimName(ctx, rq.Bucket, rq.Account)
	if errors.Is(err, proxy.ErrNameTaken) {
		return fmt.Errorf("%w: %w", errBucketAlreadyExists.WithMessage("Another account already shares a bucket named %q, and bucket names are shared by all accounts once a bucket is shared: use another name to share this bucket.", rq.Bucket), err)
	}
	if err != nil {
		return fmt.Errorf("share bucket %q: %w", rq.Bucket, err)
	}
	return nil
}

// ReleaseBucket drops the account's claim on a deleted bucket's name. A failure leaves a stale
// claim, which the next claim of the name takes over.
func (h *Front) ReleaseBucket(ctx context.Context, bucket, account string) {
	if err := h.Proxy.ReleaseName(ctx, bucket, account); err != nil {
		h.Log.WarnContext(ctx, "s3 cannot release a bucket name; it stays claimed until taken over", "bucket", bucket, "err", err)
	}
}
