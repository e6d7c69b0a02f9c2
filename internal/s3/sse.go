package s3

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
	"github.com/cairn-store/cairn/internal/sse"
)

// Server-side encryption (package sse holds the keys and the format): the request headers of
// SSE-S3 (x-amz-server-side-encryption: AES256), SSE-KMS (aws:kms, with
// -aws-kms-key-id and -context) and SSE-C (-customer-algorithm, -customer-key,
// -customer-key-MD5), the bucket's default encryption (sse_bucket.go), and the response
// headers that say how an object is encrypted.

const (
	HdrSSE          = "X-Amz-Server-Side-Encryption"
	HdrSSEKMSKeyID  = "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id"
	HdrSSEContext   = "X-Amz-Server-Side-Encryption-Context"
	HdrSSEBucketKey = "X-Amz-Server-Side-Encryption-Bucket-Key-Enabled"
	// The SSE-C headers of a request's own object, and of a copy's source.
	HdrSSECPrefix     = "X-Amz-Server-Side-Encryption-Customer-"
	HdrCopySSECPrefix = "X-Amz-Copy-Source-Server-Side-Encryption-Customer-"
)

var (
	ErrSSEMethod        = ErrInvalidArgument.WithMessage("The encryption method specified is not supported")
	ErrSSECInsecure     = ErrInvalidRequest.WithMessage("Requests specifying Server Side Encryption with Customer provided keys must be made over a secure connection.")
	ErrSSECAndSSE       = ErrInvalidArgument.WithMessage("Server Side Encryption with Customer provided key is incompatible with the encryption method specified")
	ErrSSECAlgorithm    = &APIError{"InvalidEncryptionAlgorithmError", http.StatusBadRequest, "The encryption request you specified is not valid. Supported value: AES256."}
	ErrSSECNoKey        = ErrInvalidArgument.WithMessage("Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.")
	ErrSSECNoMD5        = ErrInvalidArgument.WithMessage("Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.")
	ErrSSECBadKey       = ErrInvalidArgument.WithMessage("The secret key was invalid for the specified algorithm.")
	ErrSSECMD5Mismatch  = ErrInvalidArgument.WithMessage("The calculated MD5 hash of the key did not match the hash that was provided.")
	ErrSSECNotEncrypted = ErrInvalidRequest.WithMessage("The encryption parameters are not applicable to this object.")
	ErrKMSWithoutKMS    = ErrInvalidArgument.WithMessage("Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms")
	ErrSSEOff           = ErrNotImplemented.WithMessage("Server-side encryption is not configured on this server.")
	errKMSNotFound      = &APIError{"KMS.NotFoundException", http.StatusBadRequest, "Invalid keyId"}
	errKMSDisabled      = &APIError{"KMS.DisabledException", http.StatusBadRequest, "The KMS key is disabled."}
	errSSECRequired     = ErrInvalidRequest.WithMessage("The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")
	errSSECWrongKey     = ErrAccessDenied.WithMessage("The provided customer key does not match the key the object was encrypted with.")
)

// sseAPIError translates package sse's errors; others pass through.
func SseAPIError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sse.ErrCustomerKeyRequired):
		return fmt.Errorf("%w: %w", errSSECRequired, err)
	case errors.Is(err, sse.ErrCustomerKeyMismatch):
		return fmt.Errorf("%w: %w", errSSECWrongKey, err)
	case errors.Is(err, sse.ErrKMSKeyNotFound):
		return fmt.Errorf("%w: %w", errKMSNotFound, err)
	case errors.Is(err, sse.ErrKMSKeyDisabled):
		return fmt.Errorf("%w: %w", errKMSDisabled, err)
	case errors.Is(err, sse.ErrNoKMS):
		return fmt.Errorf("%w: %w", ErrSSEOff, err)
	}
	return err
}

// customerKey reads the SSE-C headers under prefix: nil and no error when there are none.
// keyMD5 is the header's value, which answers repeat.
func (h *objectsHandler) customerKey(r *http.Request, prefix string) (key []byte, keyMD5 string, err error) {
	alg, k, m := r.Header.Get(prefix+"Algorithm"), r.Header.Get(prefix+"Key"), r.Header.Get(prefix+"Key-Md5")
	if alg == "" && k == "" && m == "" {
		return nil, "", nil
	}
	if h.Cfg.Keys == nil {
		return nil, "", ErrSSEOff
	}
	if r.TLS == nil && !h.Cfg.SSECAllowHTTP {
		return nil, "", ErrSSECInsecure
	}
	switch {
	case alg != "AES256":
		return nil, "", ErrSSECAlgorithm
	case k == "":
		return nil, "", ErrSSECNoKey
	case m == "":
		return nil, "", ErrSSECNoMD5
	}
	key, err = base64.StdEncoding.DecodeString(k)
	if err != nil || len(key) != sse.KeySize {
		return nil, "", ErrSSECBadKey
	}
	sum := md5.Sum(key)
	if base64.StdEncoding.EncodeToString(sum[:]) != m {
		return nil, "", ErrSSECMD5Mismatch
	}
	return key, m, nil
}

// sseWrite is how a write encrypts: nil for not at all.
type sseWrite struct {
	Req       sse.Request
	KeyMD5    string // SSE-C: as the request gave it
	BucketKey bool
}

// sseForWrite reads how a write (PutObject, CopyObject's destination, CreateMultipartUpload,
// POST object) asks to be encrypted, falling back on the bucket's default encryption.
func (h *objectsHandler) SseForWrite(r *http.Request, rq *Request) (*sseWrite, error) {
	alg := r.Header.Get(HdrSSE)
	kmsID, ctxv := r.Header.Get(HdrSSEKMSKeyID), r.Header.Get(HdrSSEContext)
	switch alg {
	case "", string(sse.ModeS3), string(sse.ModeKMS):
	default:
		return nil, ErrSSEMethod
	}
	if (kmsID != "" || ctxv != "") && alg != string(sse.ModeKMS) {
		return nil, ErrKMSWithoutKMS
	}
	if ctxv != "" {
		if b, err := base64.StdEncoding.DecodeString(ctxv); err != nil || !strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
			return nil, ErrInvalidArgument.WithMessage("The header 'x-amz-server-side-encryption-context' shall be Base64-encoded UTF-8 string holding JSON which represents a string-string map")
		}
	}
	cust, keyMD5, err := h.customerKey(r, HdrSSECPrefix)
	if err != nil {
		if alg != "" && !errors.Is(err, ErrSSEOff) {
			return nil, ErrSSECAndSSE
		}
		return nil, err
	}
	if cust != nil {
		if alg != "" {
			return nil, ErrSSECAndSSE
		}
		return &sseWrite{Req: sse.Request{Mode: sse.ModeC, CustomerKey: cust}, KeyMD5: keyMD5}, nil
	}
	bucketKey := strings.EqualFold(r.Header.Get(HdrSSEBucketKey), "true")
	if alg == "" {
		if rq.Encryption == nil {
			return nil, nil
		}
		alg, kmsID, bucketKey = string(rq.Encryption.Mode), rq.Encryption.KmsKeyID, rq.Encryption.BucketKey
	}
	if h.Cfg.Keys == nil {
		return nil, ErrSSEOff
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
func (h *objectsHandler) encrypt(ctx context.Context, w *sseWrite, b sse.Binding, body io.Reader, size int64, stream string) (*encryptingBody, error) {
	dk, env, err := h.Cfg.Keys.NewDataKey(ctx, w.Req, b)
	if err != nil {
		return nil, SseAPIError(err)
	}
	return h.EncryptWith(w, env, dk, body, size, stream)
}

func (h *objectsHandler) EncryptWith(w *sseWrite, env *sse.Envelope, dk []byte, body io.Reader, size int64, stream string) (*encryptingBody, error) {
	e, err := sse.NewEncrypter(body, size, dk, stream)
	if err != nil {
		return nil, err
	}
	// The plaintext's MD5 is an SSE-S3 object's ETag, and what Content-MD5 is checked against;
	// SSE-KMS and SSE-C objects' ETags are the stored bytes', as AWS's are not the MD5.
	if vb, ok := body.(*VerifiedBody); env.Mode != sse.ModeS3 && (!ok || vb.Spec.ContentMD5 == nil) {
		e.SkipMD5()
	}
	stored := int64(-1)
	if size >= 0 {
		stored = sse.CipherSize(size)
	}
	return &encryptingBody{Encrypter: e, w: w, env: env, StoredSize: stored}, nil
}

// beforeCommit wraps a plaintext body's check (Content-MD5 is the plaintext's) and marks the
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

// writeSSEHeaders says how an object is encrypted, as S3's answers do.
func WriteSSEHeaders(hdr http.Header, env *sse.Envelope, keyMD5 string, bucketKey bool) {
	if env == nil {
		return
	}
	switch env.Mode {
	case sse.ModeS3:
		hdr.Set(HdrSSE, string(sse.ModeS3))
	case sse.ModeKMS:
		hdr.Set(HdrSSE, string(sse.ModeKMS))
		hdr.Set(HdrSSEKMSKeyID, env.KMSKeyID)
		if env.Context != "" {
			hdr.Set(HdrSSEContext, env.Context)
		}
		if bucketKey {
			hdr.Set(HdrSSEBucketKey, "true")
		}
	case sse.ModeC:
		hdr.Set(HdrSSECPrefix+"Algorithm", "AES256")
		hdr.Set(HdrSSECPrefix+"Key-Md5", keyMD5)
	}
}

// sseBucketKey is the SysMeta key recording that a write asked for an S3 Bucket Key (accepted
// and reported; Cairn's KMS is local, so there is nothing for a bucket key to save).
const SseBucketKey = "sse-bucket-key"

// checkReadKey checks the SSE-C headers of a read (GET, HEAD, a copy's source under
// hdrCopySSECPrefix) against an object: they are required for an SSE-C object and refused for
// others, as S3 does. It returns the customer key and its MD5, and the envelope.
func (h *objectsHandler) CheckReadKey(ctx context.Context, r *http.Request, prefix string, obj *meta.Object, b sse.Binding) (cust []byte, keyMD5 string, env *sse.Envelope, err error) {
	cust, keyMD5, err = h.customerKey(r, prefix)
	if err != nil {
		return nil, "", nil, err
	}
	if !sse.Encrypted(obj) {
		if cust != nil {
			return nil, "", nil, ErrSSECNotEncrypted
		}
		return nil, "", nil, nil
	}
	if h.Cfg.Keys == nil {
		return nil, "", nil, fmt.Errorf("object is encrypted and no keyring is configured: %w", ErrInternal)
	}
	if env, err = sse.EnvelopeOf(obj); err != nil {
		return nil, "", nil, err
	}
	if env.Mode != sse.ModeC && cust != nil {
		return nil, "", nil, ErrSSECNotEncrypted
	}
	if _, err := h.Cfg.Keys.OpenDataKey(ctx, env, cust, b); err != nil {
		return nil, "", nil, SseAPIError(err)
	}
	return cust, keyMD5, env, nil
}

// decrypted replaces an open object that is encrypted by its plaintext: rng is the range the
// client asked for (nil: all), name where the object is stored. rd is left open and must still
// be closed by the caller; the returned reader must be closed too. For an object that is not
// encrypted, rd itself is returned.
func (h *objectsHandler) decrypted(ctx context.Context, r *http.Request, prefix string, b sse.Binding, name meta.ObjectName, rd *proxy.ObjectReader, rng *meta.Range) (*proxy.ObjectReader, *sse.Envelope, string, error) {
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
		return nil, nil, "", fmt.Errorf("object is encrypted and no keyring is configured: %w", ErrInternal)
	}
	env, err := sse.EnvelopeOf(&obj)
	if err != nil {
		return nil, nil, "", err
	}
	if env.Mode != sse.ModeC && cust != nil {
		return nil, nil, "", ErrSSECNotEncrypted
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
		return nil, nil, "", SseAPIError(err)
	}
	return &proxy.ObjectReader{Object: sse.Served(obj), Offset: pt.Offset, Length: pt.Length, ReadCloser: pt}, env, keyMD5, nil
}

// binding is what a request's object's data key is bound to: its bucket and key.
func (rq *Request) Binding() sse.Binding { return sse.Binding{Bucket: rq.Bucket, Key: rq.Key} }

// setBucketKey records that a write asked for an S3 Bucket Key, to report it on reads.
func SetBucketKey(obj *meta.Object, w *sseWrite) {
	if !w.BucketKey {
		return
	}
	if obj.SysMeta == nil {
		obj.SysMeta = map[string]string{}
	}
	obj.SysMeta[SseBucketKey] = "1"
}

// sseRequested reports whether a request's headers ask for encryption (not a bucket default).
func sseRequested(hdr http.Header) bool {
	return hdr.Get(HdrSSE) != "" || hdr.Get(HdrSSECPrefix+"Algorithm") != "" || hdr.Get(HdrSSECPrefix+"Key") != ""
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

// uploadKey opens the data key of an encrypted multipart upload (nil for one that is not
// encrypted). A part of an SSE-C upload must give the upload's key, as S3 requires.
func (h *multipartHandler) uploadKey(ctx context.Context, r *http.Request, rq *Request, up *upload) (dk []byte, env *sse.Envelope, keyMD5 string, err error) {
	cust, keyMD5, env, err := h.CheckReadKey(ctx, r, HdrSSECPrefix, &up.marker, rq.Binding())
	if err != nil || env == nil {
		return nil, nil, "", err
	}
	dk, err = h.Cfg.Keys.OpenDataKey(ctx, env, cust, rq.Binding())
	if err != nil {
		return nil, nil, "", SseAPIError(err)
	}
	return dk, env, keyMD5, nil
}

// encryptPart encrypts a part of an encrypted upload (env nil: the body as it is) as the
// stream named by the part's stored name.
func (h *multipartHandler) encryptPart(env *sse.Envelope, dk []byte, body io.Reader, size int64, stream string, before func(*meta.Object) error) (io.Reader, int64, proxy.PutOptions, error) {
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
	if marker.SysMeta[SseBucketKey] != "" {
		obj.SysMeta[SseBucketKey] = "1"
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
