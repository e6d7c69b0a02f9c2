package buckets

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/lifecycled"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/lifecycle"
	"github.com/cairn-store/cairn/internal/s3/s3core"
)

// Bucket lifecycle (GET, PUT and DELETE ?lifecycle). The configuration (package lifecycle) is
// kept in the bucket's container metadata under lifecycle.MetaKey, as its policy and CORS are;
// the lifecycle daemon (package lifecycled) applies it, finding the buckets that have one in
// its index (lifecycled.IndexEntry), which the handlers here keep.

// GetBucketLifecycle serves GetBucketLifecycleConfiguration.
func (h *Handler) GetBucketLifecycle(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	c, err := h.RequireBucket(r.Context(), rq)
	if err != nil {
		return err
	}
	doc := c.Meta[lifecycle.MetaKey]
	if doc == "" {
		return s3core.ErrNoSuchLifecycle
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/xml")
	body := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + doc
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(body))
	return nil
}

// PutBucketLifecycle serves PutBucketLifecycleConfiguration.
func (h *Handler) PutBucketLifecycle(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	// S3 requires an integrity header on PutBucketLifecycleConfiguration (SDKs send one).
	body, err := h.ReadSmallBody(r, rq, lifecycle.MaxDocument, true)
	if err != nil {
		return err
	}
	cfg, err := lifecycle.Parse(body, newRuleID)
	if err != nil {
		return lifecycleConfigError(err)
	}
	if _, err := h.RequireBucket(ctx, rq); err != nil {
		return err
	}
	if err := h.putLifecycleEntry(ctx, rq.Account, rq.Bucket); err != nil {
		return err
	}
	if err := h.SetBucketMeta(ctx, rq, map[string]string{lifecycle.MetaKey: cfg.Encode()}); err != nil {
		return err
	}
	s3core.WriteEmpty(w, http.StatusOK)
	return nil
}

// DeleteBucketLifecycle serves the S3 operation of that name.
func (h *Handler) DeleteBucketLifecycle(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	if err := h.SetBucketMeta(ctx, rq, map[string]string{lifecycle.MetaKey: ""}); err != nil {
		return err
	}
	// A failure here leaves an entry the daemon removes; the configuration is gone already.
	if err := h.Proxy.DeleteObject(ctx, lifecycled.IndexEntry(rq.Account, rq.Bucket)); err != nil && !errors.Is(err, meta.ErrNotFound) {
		h.Log.Warn("lifecycle: cannot remove an index entry; the daemon will", "bucket", rq.Bucket, "err", err)
	}
	s3core.WriteEmpty(w, http.StatusNoContent)
	return nil
}

// putLifecycleEntry adds a bucket to the index of buckets with a lifecycle configuration.
func (h *Handler) putLifecycleEntry(ctx context.Context, account, bucket string) error {
	put := func() error {
		_, err := h.Proxy.PutObject(ctx, lifecycled.IndexEntry(account, bucket), meta.Object{ContentType: "application/x-lifecycle-entry"}, strings.NewReader(""), proxy.PutOptions{})
		return err
	}
	err := put()
	if errors.Is(err, meta.ErrNotFound) || errors.Is(err, meta.ErrNoContainer) {
		if cerr := h.Proxy.CreateContainer(ctx, lifecycled.IndexAccount, lifecycled.IndexContainer, nil); cerr != nil && !errors.Is(cerr, meta.ErrExists) {
			return fmt.Errorf("lifecycle index: %w", cerr)
		}
		err = put()
	}
	if err != nil {
		return fmt.Errorf("lifecycle index entry of %q: %w", bucket, err)
	}
	return nil
}

// newRuleID makes up the ID of a rule sent without one, as S3 does.
func newRuleID() string {
	b := make([]byte, 20)
	rand.Read(b)
	return strings.TrimRight(base32.StdEncoding.EncodeToString(b), "=")
}

// lifecycleConfigError is the S3 error for a refused configuration.
func lifecycleConfigError(err error) error {
	e, ok := lifecycle.IsError(err)
	if !ok {
		return err
	}
	switch e.Kind {
	case lifecycle.InvalidRequest:
		return s3core.ErrInvalidRequest.WithMessage("%s", e.Message)
	case lifecycle.InvalidArgument:
		return s3core.ErrInvalidArgument.WithMessage("%s", e.Message)
	case lifecycle.NotImplemented:
		return s3core.ErrNotImplemented.WithMessage("%s", e.Message)
	}
	return fmt.Errorf("%w: %v", s3core.ErrMalformedXML, e)
}
