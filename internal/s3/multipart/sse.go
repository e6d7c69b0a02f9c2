package multipart

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/objects"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/sse"
)

// uploadKey opens the data key of an encrypted multipart upload (nil for one that is not
// encrypted). A part of an SSE-C upload must give the upload's key, as S3 requires.
func (h *Handler) uploadKey(ctx context.Context, r *http.Request, rq *s3core.Request, up *upload) (dk []byte, env *sse.Envelope, keyMD5 string, err error) {
	cust, keyMD5, env, err := h.CheckReadKey(ctx, r, s3core.HdrSSECPrefix, &up.marker, rq.Binding())
	if err != nil || env == nil {
		return nil, nil, "", err
	}
	dk, err = h.Cfg.Keys.OpenDataKey(ctx, env, cust, rq.Binding())
	if err != nil {
		return nil, nil, "", s3core.SSEAPIError(err)
	}
	return dk, env, keyMD5, nil
}

// encryptPart encrypts a part of an encrypted upload (env nil: the body as it is) as the
// stream named by the part's stored name.
func (h *Handler) encryptPart(env *sse.Envelope, dk []byte, body io.Reader, size int64, stream string, before func(*meta.Object) error) (io.Reader, int64, proxy.PutOptions, error) {
	if env == nil {
		return body, size, proxy.PutOptions{BeforeCommit: before}, nil
	}
	enc, err := h.EncryptWith(nil, env, dk, body, size, stream)
	if err != nil {
		return nil, 0, proxy.PutOptions{}, err
	}
	return enc, enc.StoredSize, proxy.PutOptions{BeforeCommit: enc.BeforeCommit(before, size, false)}, nil
}

// markCompletedEncrypted gives a completed multipart object of an encrypted upload its
// envelope (from the upload's marker) and its plaintext size (from its parts' stored sizes).
func markCompletedEncrypted(obj *meta.Object, marker *meta.Object) error {
	if !sse.Encrypted(marker) {
		return nil
	}
	env, err := sse.EnvelopeOf(marker)
	if err != nil {
		return err
	}
	var plain int64
	for _, s := range obj.Manifest {
		n, err := sse.PlainSize(s.Size)
		if err != nil {
			return fmt.Errorf("part %s: %w", s.Object, err)
		}
		plain += n
	}
	obj.SysMeta = sse.Mark(obj.SysMeta, env, plain, "")
	if marker.SysMeta[objects.SSEBucketKey] != "" {
		obj.SysMeta[objects.SSEBucketKey] = "1"
	}
	return nil
}

// partPlainSize is the plaintext size of a part of an upload, stored as storedSize bytes.
func partPlainSize(marker *meta.Object, storedSize int64) int64 {
	if !sse.Encrypted(marker) {
		return storedSize
	}
	if n, err := sse.PlainSize(storedSize); err == nil {
		return n
	}
	return storedSize
}
