package s3core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
)

// Buckets are containers of their owner's account: each account has its own bucket namespace,
// as with Swift's s3api. A shared bucket's name is also held in the proxy's name index, so that
// other tenants can address it (registry.go).

// BucketError turns "not found" from a container operation into NoSuchBucket.
func BucketError(err error) error {
	if errors.Is(err, meta.ErrNotFound) {
		return fmt.Errorf("%w: %w", ErrNoSuchBucket, err)
	}
	return err
}

// RequireBucket checks that the request's bucket exists.
func (h *Front) RequireBucket(ctx context.Context, rq *Request) (meta.Container, error) {
	c, err := h.Proxy.HeadContainer(ctx, rq.Account, rq.Bucket)
	if err != nil {
		return c, BucketError(fmt.Errorf("head bucket %q: %w", rq.Bucket, err))
	}
	return c, nil
}

// drainBody discards what is left of a request body so the connection can be reused.
func drainBody(r *http.Request) {
	io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10))
}

// bucketOfCopySource splits "bucket/key" of an x-amz-copy-source.
func SplitBucketKey(s string) (string, string, bool) {
	s = strings.TrimPrefix(s, "/")
	b, k, ok := strings.Cut(s, "/")
	return b, k, ok && b != "" && k != ""
}
