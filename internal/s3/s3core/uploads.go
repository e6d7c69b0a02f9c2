package s3core

import (
	"context"
	"errors"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
)

// UploadsContainer is the hidden container holding the multipart uploads of a bucket
// (package multipart); deleting the bucket drops it.
func UploadsContainer(bucket string) string {
	return meta.ReservedPrefix + "mpu" + meta.ReservedPrefix + bucket
}

// DeleteQuietly deletes an object of the front end's own making (an upload's marker or
// part), logging rather than returning a failure: such cleanups are best-effort.
func (h *Front) DeleteQuietly(ctx context.Context, account, container, object string) {
	err := h.Proxy.DeleteObject(ctx, meta.ObjectName{Account: account, Container: container, Object: object})
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		h.Log.WarnContext(ctx, "s3 multipart cleanup failed; leaving garbage", "container", strings.ReplaceAll(container, "\x00", "/"), "err", err)
	}
}

// DropUploadsContainer deletes a deleted bucket's uploads container and what is left in it.
func (h *Front) DropUploadsContainer(ctx context.Context, account, bucket string) {
	c := UploadsContainer(bucket)
	opts := meta.ListOptions{}
	for {
		l, err := h.Proxy.ListObjects(ctx, account, c, opts)
		if errors.Is(err, meta.ErrNotFound) {
			return
		}
		if err != nil {
			h.Log.WarnContext(ctx, "s3 cannot list the uploads of a deleted bucket", "bucket", bucket, "err", err)
			return
		}
		for _, e := range l.Objects {
			h.DeleteQuietly(ctx, account, c, e.Name)
		}
		if !l.Truncated {
			break
		}
		opts.Marker = l.NextMarker
	}
	if err := h.Proxy.DeleteContainer(ctx, account, c); err != nil && !errors.Is(err, meta.ErrNotFound) {
		h.Log.WarnContext(ctx, "s3 cannot delete the uploads container of a deleted bucket", "bucket", bucket, "err", err)
	}
}
