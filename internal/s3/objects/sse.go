package objects

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/sse"
)

// customerKey reads the SSE-C headers under prefix: nil and no error when there are none.
// keyMD5 is the header's value, which answers repeat.
func (h *Handler) customerKey(r *http.Request, prefix string) (key []byte, keyMD5 string, err error) {
	alg, k, m := r.Header.Get(prefix+"Algorithm"), r.Header.Get(prefix+"Key"), r.Header.Get(prefix+"Key-Md5")
	if alg == "" && k == "" && m == "" {
		return nil, "", nil
	}
	if h.Cfg.Keys == nil {
		return nil, "", s3core.ErrSSEOff
	}
	if r.TLS == nil && !h.Cfg.SSECAllowHTTP {
		return nil, "", s3core.ErrSSECInsecure
	}
	switch {
	case alg != "AES256":
		return nil, "", s3core.ErrSSECAlgorithm
	case k == "":
		return nil, "", s3core.ErrSSECNoKey
	case m == "":
		return nil, "", s3core.ErrSSECNoMD5
	}
	key, err = base64.StdEncoding.DecodeString(k)
	if err != nil || len(key) != sse.KeySize {
		return nil, "", s3core.ErrSSECBadKey
	}
	sum := md5.Sum(key)
	if base64.StdEncoding.EncodeToString(sum[:]) != m {
		return nil, "", s3core.ErrSSECMD5Mismatch
	}
	return key, m, nil
}

// sseWrite is how a write encrypts: nil for not at all.
type sseWrite struct {
	Req       sse.Request
	KeyMD5    string // SSE-C: as the request gave it
	BucketKey bool
}

// SSEForWrite reads how a write (PutObject, CopyObject's destination, CreateMultipartUpload,
// POST object) asks to be encrypted, falling back on the bucket's default encryption.
func (h *Handler) SSEForWrite(r *http.Request, rq *s3core.Request) (*sseWrite, error) {
	alg := r.Header.Get(s3core.HdrSSE)
	kmsID, ctxv := r.Header.Get(s3core.HdrSSEKMSKeyID), r.Header.Get(s3core.HdrSSEContext)
	switch alg {
	case "", string(sse.ModeS3), string(sse.ModeKMS):
	default:
		return nil, s3core.ErrSSEMethod
	}
	if (kmsID != "" || ctxv != "") && alg != string(sse.ModeKMS) {
		return nil, s3core.ErrKMSWithoutKMS
	}
	if ctxv != "" {
		if b, err := base64.StdEncoding.DecodeString(ctxv); err != nil || !strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
			return nil, s3core.ErrInvalidArgument.WithMessage("The header 'x-amz-server-side-encryption-context' shall be Base64-encoded UTF-8 string holding JSON which represents a string-string map")
		}
	}
	cust, keyMD5, err := h.customerKey(r, s3core.HdrSSECPrefix)
	if err != nil {
		if alg != "" && !errors.Is(err, s3core.ErrSSEOff) {
			return nil, s3core.ErrSSECAndSSE
		}
		return nil, err
	}
	if cust != nil {
		if alg != "" {
			return nil, s3core.ErrSSECAndSSE
		}
		return &sseWrite{Req: sse.Request{Mode: sse.ModeC, CustomerKey: cust}, KeyMD5: keyMD5}, nil
	}
	bucketKey := strings.EqualFold(r.Header.Get(s3core.HdrSSEBucketKey), "true")
	if alg == "" {
		if rq.Encryption == nil {
			return nil, nil
		}
		alg, kmsID, bucketKey = string(rq.Encryption.Mode), rq.Encryption.KMSKeyID, rq.Encryption.BucketKey
	}
	if h.Cfg.Keys == nil {
		return nil, s3core.ErrSSEOff
	}
	return &sseWrite{Req: sse.Request{Mode: sse.Mode(alg), KMSKeyID: kmsID, Context: ctxv}, BucketKey: bucketKey && alg == string(sse.ModeKMS)}, nil
}

// encryptingBody is a write's body encrypted: its stored size, and the BeforeCommit that
// checks the plaintext's digests and records the envelope.
type encryptingBody struct {
	*sse.Encrypter
	w          *sseWrite
	env        *sse.Envelope
	StoredSize int64
}

// encrypt makes a data key for a new object (or part: stream names it) and encrypts body.
func (h *Handler) encrypt(ctx context.Context, w *sseWrite, b sse.Binding, body io.Reader, size int64, stream string) (*encryptingBody, error) {
	dk, env, err := h.Cfg.Keys.NewDataKey(ctx, w.Req, b)
	if err != nil {
		return nil, s3core.SSEAPIError(err)
	}
	return h.EncryptWith(w, env, dk, body, size, stream)
}

func (h *Handler) EncryptWith(w *sseWrite, env *sse.Envelope, dk []byte, body io.Reader, size int64, stream string) (*encryptingBody, error) {
	e, err := sse.NewEncrypter(body, size, dk, stream)
	if err != nil {
		return nil, err
	}
	// The plaintext's MD5 is an SSE-S3 object's ETag, and what Content-MD5 is checked against;
	// SSE-KMS and SSE-C objects' ETags are the stored bytes', as AWS's are not the MD5.
	if vb, ok := body.(*s3core.VerifiedBody); env.Mode != sse.ModeS3 && (!ok || vb.Spec.ContentMD5 == nil) {
		e.SkipMD5()
	}
	stored := int64(-1)
	if size >= 0 {
		stored = sse.CipherSize(size)
	}
	return &encryptingBody{Encrypter: e, w: w, env: env, StoredSize: stored}, nil
}

// BeforeCommit wraps a plaintext body's check (Content-MD5 is the plaintext's) and marks the
// object encrypted, with its plaintext size and (SSE-S3) its plaintext MD5 as ETag.
// mark is false for a part of a multipart upload (the completed object carries the envelope).
func (e *encryptingBody) BeforeCommit(inner func(*meta.Object) error, plainSize int64, mark bool) func(*meta.Object) error {
	return func(obj *meta.Object) error {
		stored := obj.ETag
		if m := e.PlainMD5(); m != "" {
			obj.ETag = m // what Content-MD5 is compared with
		}
		var err error
		if inner != nil {
			err = inner(obj)
		}
		obj.ETag = stored
		if err != nil || !mark {
			return err
		}
		if plainSize < 0 {
			plainSize = e.PlainSize()
		}
		etag := ""
		if e.env.Mode == sse.ModeS3 {
			etag = e.PlainMD5() // SSE-KMS and SSE-C: the stored bytes' MD5, which says nothing of the plaintext
		}
		obj.SysMeta = sse.Mark(obj.SysMeta, e.env, plainSize, etag)
		return nil
	}
}

// servedETag is the ETag a write of this body answers with.
func (e *encryptingBody) servedETag(stored string) string {
	if e.env.Mode != sse.ModeS3 {
		return stored
	}
	return e.PlainMD5()
}

// WriteSSEHeaders says how an object is encrypted, as S3's answers do.
func WriteSSEHeaders(hdr http.Header, env *sse.Envelope, keyMD5 string, bucketKey bool) {
	if env == nil {
		return
	}
	switch env.Mode {
	case sse.ModeS3:
		hdr.Set(s3core.HdrSSE, string(sse.ModeS3))
	case sse.ModeKMS:
		hdr.Set(s3core.HdrSSE, string(sse.ModeKMS))
		hdr.Set(s3core.HdrSSEKMSKeyID, env.KMSKeyID)
		if env.Context != "" {
			hdr.Set(s3core.HdrSSEContext, env.Context)
		}
		if bucketKey {
			hdr.Set(s3core.HdrSSEBucketKey, "true")
		}
	case sse.ModeC:
		hdr.Set(s3core.HdrSSECPrefix+"Algorithm", "AES256")
		hdr.Set(s3core.HdrSSECPrefix+"Key-Md5", keyMD5)
	}
}

// SSEBucketKey is the SysMeta key recording that a write asked for an S3 Bucket Key (accepted
// and reported; Cairn's KMS is local, so there is nothing for a bucket key to save).
const SSEBucketKey = "sse-bucket-key"

// CheckReadKey checks the SSE-C headers of a read (GET, HEAD, a copy's source under
// hdrCopySSECPrefix) against an object: they are required for an SSE-C object and refused for
// others, as S3 does. It returns the customer key and its MD5, and the envelope.
func (h *Handler) CheckReadKey(ctx context.Context, r *http.Request, prefix string, obj *meta.Object, b sse.Binding) (cust []byte, keyMD5 string, env *sse.Envelope, err error) {
	cust, keyMD5, err = h.customerKey(r, prefix)
	if err != nil {
		return nil, "", nil, err
	}
	if !sse.Encrypted(obj) {
		if cust != nil {
			return nil, "", nil, s3core.ErrSSECNotEncrypted
		}
		return nil, "", nil, nil
	}
	if h.Cfg.Keys == nil {
		return nil, "", nil, fmt.Errorf("object is encrypted and no keyring is configured: %w", s3core.ErrInternal)
	}
	if env, err = sse.EnvelopeOf(obj); err != nil {
		return nil, "", nil, err
	}
	if env.Mode != sse.ModeC && cust != nil {
		return nil, "", nil, s3core.ErrSSECNotEncrypted
	}
	if _, err := h.Cfg.Keys.OpenDataKey(ctx, env, cust, b); err != nil {
		return nil, "", nil, s3core.SSEAPIError(err)
	}
	return cust, keyMD5, env, nil
}

// decrypted replaces an open object that is encrypted by its plaintext: rng is the range the
// client asked for (nil: all), name where the object is stored. rd is left open and must still
// be closed by the caller; the returned reader must be closed too. For an object that is not
// encrypted, rd itself is returned.
func (h *Handler) decrypted(ctx context.Context, r *http.Request, prefix string, b sse.Binding, name meta.ObjectName, rd *proxy.ObjectReader, rng *meta.Range) (*proxy.ObjectReader, *sse.Envelope, string, error) {
	obj := rd.Object
	if !sse.Encrypted(&obj) {
		_, _, _, err := h.CheckReadKey(ctx, r, prefix, &obj, b)
		return rd, nil, "", err
	}
	if obj.Manifest == nil && obj.Summary != nil {
		full, err := h.Proxy.HeadObject(ctx, name)
		if err != nil {
			return nil, nil, "", err
		}
		obj = full
	}
	// The SSE-C headers are checked as checkReadKey does; the data key is opened once, by Open.
	cust, keyMD5, err := h.customerKey(r, prefix)
	if err != nil {
		return nil, nil, "", err
	}
	if h.Cfg.Keys == nil {
		return nil, nil, "", fmt.Errorf("object is encrypted and no keyring is configured: %w", s3core.ErrInternal)
	}
	env, err := sse.EnvelopeOf(&obj)
	if err != nil {
		return nil, nil, "", err
	}
	if env.Mode != sse.ModeC && cust != nil {
		return nil, nil, "", s3core.ErrSSECNotEncrypted
	}
	whole := rd.Offset == 0 && rd.Length == rd.Object.Size
	open := func(ctx context.Context, crng *meta.Range) (io.ReadCloser, error) {
		if whole && crng.Start == 0 && crng.End == rd.Length-1 {
			return io.NopCloser(rd), nil // the bytes already open are the ones needed
		}
		next, err := h.Proxy.GetObject(ctx, name, crng)
		if err != nil {
			return nil, err
		}
		return next, nil
	}
	pt, err := h.Cfg.Keys.Open(ctx, &obj, cust, b, rng, open)
	if err != nil {
		return nil, nil, "", s3core.SSEAPIError(err)
	}
	return &proxy.ObjectReader{Object: sse.Served(obj), Offset: pt.Offset, Length: pt.Length, ReadCloser: pt}, env, keyMD5, nil
}

// SetBucketKey records that a write asked for an S3 Bucket Key, to report it on reads.
func SetBucketKey(obj *meta.Object, w *sseWrite) {
	if !w.BucketKey {
		return
	}
	if obj.SysMeta == nil {
		obj.SysMeta = map[string]string{}
	}
	obj.SysMeta[SSEBucketKey] = "1"
}

// sseRequested reports whether a request's headers ask for encryption (not a bucket default).
func sseRequested(hdr http.Header) bool {
	return hdr.Get(s3core.HdrSSE) != "" || hdr.Get(s3core.HdrSSECPrefix+"Algorithm") != "" || hdr.Get(s3core.HdrSSECPrefix+"Key") != ""
}

// closeBoth closes a decrypted reader and the stored object it reads.
type closeBoth struct {
	io.ReadCloser
	under io.Closer
}

func (c closeBoth) Close() error {
	err := c.ReadCloser.Close()
	if uerr := c.under.Close(); err == nil {
		err = uerr
	}
	return err
}
