package buckets

import (
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/tagging"
)

// GetBucketTagging serves the S3 operation of that name.
func (h *Handler) GetBucketTagging(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	c, err := h.RequireBucket(r.Context(), rq)
	if err != nil {
		return err
	}
	stored := c.Meta[tagging.BucketMetaKey]
	if stored == "" {
		return s3core.ErrNoSuchTagSet
	}
	s, err := tagging.Decode(stored)
	if err != nil {
		return fmt.Errorf("tags of bucket %q: %w", rq.Bucket, err)
	}
	s3core.WriteXML(w, http.StatusOK, s.Document())
	return nil
}

// PutBucketTagging replaces the bucket's tag set. An empty TagSet removes it, as
// DeleteBucketTagging does.
func (h *Handler) PutBucketTagging(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	body, err := h.ReadSmallBody(r, rq, s3core.MaxTaggingBodyBytes, false)
	if err != nil {
		return err
	}
	s, err := tagging.ParseXML(body, tagging.Bucket)
	if err != nil {
		return err
	}
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{tagging.BucketMetaKey: s.Encode()}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// DeleteBucketTagging serves the S3 operation of that name.
func (h *Handler) DeleteBucketTagging(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	if err := h.SetBucketMeta(r.Context(), rq, map[string]string{tagging.BucketMetaKey: ""}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}
