package swiftcore

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/sse"
)

// Objects encrypted at rest through the S3 API (package sse) read through Swift as their
// plaintext, transparently, as Swift's own encryption middleware serves them: SSE-S3 and
// SSE-KMS objects decrypt with the server's keys. An SSE-C object needs its customer's key,
// which Swift has no way to send: reading one is refused.

var errSSECObject = ErrBadRequest.WithText("The object is encrypted with a customer-provided key (S3 SSE-C); read it through the S3 API with its key.")

// sseBinding is the name an object's data key is bound to: the container and object a client
// names, also when the bytes are read from a version kept elsewhere.
func (rq *Request) sseBinding() sse.Binding {
	if rq.SSEBucket != "" {
		return sse.Binding{Bucket: rq.SSEBucket, Key: rq.SSEKey}
	}
	return sse.Binding{Bucket: rq.Container, Key: rq.Object}
}

// sseError translates package sse's errors.
func sseError(err error) error {
	switch {
	case errors.Is(err, sse.ErrCustomerKeyRequired), errors.Is(err, sse.ErrCustomerKeyMismatch):
		return fmt.Errorf("%w: %w", errSSECObject, err)
	case errors.Is(err, sse.ErrKMSKeyDisabled), errors.Is(err, sse.ErrKMSKeyNotFound):
		return fmt.Errorf("%w: %w", ErrForbidden.WithText("The object's KMS key is disabled or missing."), err)
	}
	return err
}

// Plaintext opens rng (nil: all) of an encrypted object's plaintext; obj is the object as
// stored (with its full segment list), rd the stored bytes already open (nil: none), reused
// when they are the ones needed. Objects that are not encrypted are returned as rd.
func (h *Server) Plaintext(ctx context.Context, rq *Request, obj meta.Object, rd *proxy.ObjectReader, rng *meta.Range) (*proxy.ObjectReader, error) {
	if !sse.Encrypted(&obj) {
		return rd, nil
	}
	if h.Keys == nil {
		return nil, fmt.Errorf("object %q is encrypted and no keyring is configured: %w", rq.Object, errInternal)
	}
	if obj.Manifest == nil && obj.Summary != nil {
		full, err := h.Proxy.HeadObject(ctx, rq.ObjectName())
		if err != nil {
			return nil, err
		}
		obj = full
	}
	open := func(ctx context.Context, crng *meta.Range) (io.ReadCloser, error) {
		if rd != nil && rd.Offset == 0 && rd.Length == rd.Object.Size && crng.Start == 0 && crng.End == rd.Length-1 {
			return io.NopCloser(rd), nil
		}
		return h.Proxy.GetObject(ctx, rq.ObjectName(), crng)
	}
	pt, err := h.Keys.Open(ctx, &obj, nil, rq.sseBinding(), rng, open)
	if err != nil {
		return nil, sseError(err)
	}
	return &proxy.ObjectReader{Object: sse.Served(obj), Offset: pt.Offset, Length: pt.Length, ReadCloser: pt}, nil
}
