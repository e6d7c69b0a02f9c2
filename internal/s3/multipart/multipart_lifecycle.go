package multipart

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3core"
)

// The lifecycle daemon's view of multipart uploads (lifecycled.Uploads): it decides which
// uploads a rule aborts; the upload format and the abort stay here.

// EachUpload calls fn with every incomplete upload of a bucket: its key, ID and start.
func (h *Handler) EachUpload(ctx context.Context, account, bucket string, fn func(key, id string, initiated time.Time) error) error {
	container := s3core.UploadsContainer(bucket)
	opts := meta.ListOptions{}
	for {
		page, err := h.Proxy.ListObjects(ctx, account, container, opts)
		if errors.Is(err, meta.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range page.Objects {
			key, id, ok := strings.Cut(e.Name, "\x00")
			if !ok || strings.Contains(id, "\x00") {
				continue // a part, not an upload's marker
			}
			if err := fn(key, id, e.Timestamp.Time()); err != nil {
				return err
			}
		}
		if !page.Truncated || len(page.Objects) == 0 {
			return nil
		}
		opts.Marker = page.Objects[len(page.Objects)-1].Name
	}
}

// AbortUpload aborts an upload as AbortMultipartUpload does; false when it ended meanwhile or
// a completion holds it.
func (h *Handler) AbortUpload(ctx context.Context, account, bucket, key, id string) (bool, error) {
	container := s3core.UploadsContainer(bucket)
	m, err := h.Proxy.HeadObject(ctx, meta.ObjectName{Account: account, Container: container, Object: key + "\x00" + id})
	if errors.Is(err, meta.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	err = h.abortUpload(ctx, &s3core.Request{Account: account, Bucket: bucket, Key: key}, &upload{id: id, marker: m})
	if errors.Is(err, s3core.ErrNoSuchUpload) {
		return false, nil
	}
	return err == nil, err
}
