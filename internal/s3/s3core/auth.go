package s3core

import (
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/checksum"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// SysMeta keys under which the front end keeps verified checksums.
const (
	sysChecksumPrefix = "checksum-" // + lower-case algorithm: base64 value ("…-N" if composite)
	SysChecksumType   = "checksum-type"
)

// Checksum types as S3 names them.
const (
	ChecksumFullObject = "FULL_OBJECT"
	ChecksumComposite  = "COMPOSITE"
)

func SysChecksumKey(a checksum.Algorithm) string {
	return sysChecksumPrefix + strings.ToLower(string(a))
}

// StoredChecksum returns the checksum kept with an object, if any.
func StoredChecksum(obj *meta.Object) (alg checksum.Algorithm, value, typ string) {
	for _, a := range checksum.Algorithms {
		if v := obj.SysMeta[SysChecksumKey(a)]; v != "" {
			typ = obj.SysMeta[SysChecksumType]
			if typ == "" {
				typ = ChecksumFullObject
			}
			return a, v, typ
		}
	}
	return "", "", ""
}

// SetChecksumFields fills the ChecksumXXX element matching alg.
func SetChecksumFields(f *s3xml.ChecksumFields, alg checksum.Algorithm, value string) {
	switch alg {
	case checksum.CRC32:
		f.ChecksumCRC32 = value
	case checksum.CRC32C:
		f.ChecksumCRC32C = value
	case checksum.CRC64NVME:
		f.ChecksumCRC64NVME = value
	case checksum.SHA1:
		f.ChecksumSHA1 = value
	case checksum.SHA256:
		f.ChecksumSHA256 = value
	}
}

// ChecksumField returns the ChecksumXXX element matching alg.
func ChecksumField(f *s3xml.ChecksumFields, alg checksum.Algorithm) string {
	switch alg {
	case checksum.CRC32:
		return f.ChecksumCRC32
	case checksum.CRC32C:
		return f.ChecksumCRC32C
	case checksum.CRC64NVME:
		return f.ChecksumCRC64NVME
	case checksum.SHA1:
		return f.ChecksumSHA1
	case checksum.SHA256:
		return f.ChecksumSHA256
	}
	return ""
}

// VerifiedBody is a request body on its way to the proxy: the sigv4 layer checks the payload
// hash or chunk signatures, this layer computes the additional checksum, and beforeCommit
// compares everything once the engine has read the last byte, so that a body that fails any
// check is never stored.
type VerifiedBody struct {
	Body sigv4.Body
	Spec checksum.Spec
	Sum  hash.Hash // nil when no additional checksum is asked for
	eof  bool
	// Checksum is the verified value once beforeCommit succeeded.
	Checksum string
}

// OpenBody prepares the request body of a PUT-like operation. It returns the body and the
// object size (from Content-Length, or x-amz-decoded-content-length for aws-chunked). alg, if
// not empty, is computed even when the request names no checksum (multipart parts of an upload
// created with a checksum algorithm).
func (h *Front) OpenBody(r *http.Request, rq *Request, alg checksum.Algorithm) (*VerifiedBody, int64, error) {
	spec, err := checksum.FromHeaders(r.Header)
	if err != nil {
		return nil, 0, err
	}
	if spec.Algorithm == "" {
		spec.Algorithm = alg
	}
	size := r.ContentLength
	if rq.Auth.Payload.Streaming() {
		size = rq.Auth.DecodedContentLength
	}
	if size < 0 {
		return nil, 0, errMissingContentLength
	}
	if size > h.Cfg.MaxObjectSize {
		return nil, 0, ErrEntityTooLarge.WithMessage("Your proposed upload of %d bytes exceeds the maximum allowed size of %d bytes.", size, h.Cfg.MaxObjectSize)
	}
	b, err := rq.Auth.Body(r.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("request body: %w", err)
	}
	vb := &VerifiedBody{Body: b, Spec: spec}
	if spec.Algorithm != "" {
		vb.Sum = spec.Algorithm.New()
	}
	return vb, size, nil
}

func (v *VerifiedBody) Read(p []byte) (int, error) {
	n, err := v.Body.Read(p)
	if v.Sum != nil {
		v.Sum.Write(p[:n])
	}
	if err == io.EOF {
		v.eof = true
	}
	return n, err
}

// BeforeCommit is the proxy's BeforeCommit hook: obj.ETag is the hex MD5 the engine computed,
// so Content-MD5 is compared with it rather than hashing the body twice.
func (v *VerifiedBody) BeforeCommit(obj *meta.Object) error {
	if !v.eof {
		// The engine stopped at the declared length; the body must end there too, and only
		// its EOF proves that the payload hash and chunk signatures held.
		var one [1]byte
		n, err := v.Read(one[:])
		if n > 0 {
			return fmt.Errorf("body continues past its declared length: %w", meta.ErrBodyTooLong)
		}
		if err != io.EOF {
			if err == nil {
				err = io.ErrNoProgress
			}
			return fmt.Errorf("request body: %w", err)
		}
	}
	if v.Spec.ContentMD5 != nil && hex.EncodeToString(v.Spec.ContentMD5) != obj.ETag {
		return fmt.Errorf("Content-MD5 %s, body %s: %w", hex.EncodeToString(v.Spec.ContentMD5), obj.ETag, checksum.ErrBadDigest)
	}
	if v.Sum == nil {
		return nil
	}
	got := checksum.Encode(v.Sum.Sum(nil))
	want := v.Spec.Value
	if v.Spec.Trailer {
		want = strings.TrimSpace(v.Body.Trailers().Get(v.Spec.Algorithm.HeaderName()))
		if want == "" {
			return fmt.Errorf("%w: declared trailer %s is missing", checksum.ErrInvalidChecksumRequest, v.Spec.Algorithm.HeaderName())
		}
		if _, err := v.Spec.Algorithm.Decode(want); err != nil {
			return err
		}
	}
	if want != "" && want != got {
		return &checksum.MismatchError{Algorithm: v.Spec.Algorithm, Expected: want, Computed: got}
	}
	v.Checksum = got
	obj.SysMeta = maps.Clone(obj.SysMeta)
	if obj.SysMeta == nil {
		obj.SysMeta = map[string]string{}
	}
	obj.SysMeta[SysChecksumKey(v.Spec.Algorithm)] = got
	obj.SysMeta[SysChecksumType] = ChecksumFullObject
	return nil
}

// ReadSmallBody reads a request document (XML) of at most limit bytes, checked like any body:
// payload hash, chunk signatures, Content-MD5 and x-amz-checksum-*. requireIntegrity demands
// Content-MD5 or an x-amz-checksum, as S3 does for multi-object delete.
func (h *Front) ReadSmallBody(r *http.Request, rq *Request, limit int64, requireIntegrity bool) ([]byte, error) {
	spec, err := checksum.FromHeaders(r.Header)
	if err != nil {
		return nil, err
	}
	if requireIntegrity && spec.ContentMD5 == nil && spec.Algorithm == "" {
		return nil, ErrInvalidRequest.WithMessage("Missing required header for this request: Content-MD5 OR x-amz-checksum-*")
	}
	if r.ContentLength > limit || (rq.Auth.Payload.Streaming() && rq.Auth.DecodedContentLength > limit) {
		return nil, ErrMaxMessageLength.WithMessage("Your request was too big: at most %d bytes are accepted.", limit)
	}
	b, err := rq.Auth.Body(r.Body)
	if err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	cr := checksum.NewReader(io.LimitReader(b, limit+1), spec)
	data, err := io.ReadAll(cr)
	if err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, ErrMaxMessageLength.WithMessage("Your request was too big: at most %d bytes are accepted.", limit)
	}
	if err := cr.Verify(b.Trailers()); err != nil {
		return nil, err
	}
	return data, nil
}

// isClientGone reports whether err means the client went away mid-request.
func isClientGone(err error) bool {
	return errors.Is(err, meta.ErrIncompleteBody) || errors.Is(err, sigv4.ErrIncompleteBody)
}
