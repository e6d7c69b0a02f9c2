// Package checksum owns S3 object integrity checks for Cairn's S3 front end:
// the additional checksums (CRC32, CRC32C, CRC64NVME, SHA1, SHA256) as S3
// transmits them (base64 of the big-endian digest in x-amz-checksum-<alg>,
// or in an aws-chunked trailer), Content-MD5, and the multipart composite
// checksum ("checksum of checksums", suffixed "-N"). It is pure: it hashes
// what it is given and reports sentinel errors mapped to S3 codes.
//
// Typical PutObject use (trailers come from sigv4's Body after EOF):
//
//	spec, err := checksum.FromHeaders(r.Header)
//	if err != nil { writeS3Error(w, err); return } // InvalidDigest / InvalidRequest
//	cr := checksum.NewReader(body, spec)
//	if _, err := io.Copy(objectWriter, cr); err != nil { abort(); return }
//	if err := cr.Verify(body.Trailers()); err != nil { abort(); writeS3Error(w, err); return }
//	etag := hex.EncodeToString(cr.MD5())
//	alg, value := cr.Checksum() // store with the object; "" if none requested
//
// and CompleteMultipartUpload:
//
//	whole, err := checksum.Composite(checksum.CRC32, partValues) // "base64-3"
package checksum

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"strings"
)

// Algorithm is an S3 checksum algorithm name as used in
// x-amz-checksum-algorithm / x-amz-sdk-checksum-algorithm.
type Algorithm string

// The algorithms S3 supports for additional checksums.
const (
	CRC32     Algorithm = "CRC32"
	CRC32C    Algorithm = "CRC32C"
	CRC64NVME Algorithm = "CRC64NVME"
	SHA1      Algorithm = "SHA1"
	SHA256    Algorithm = "SHA256"
)

// Algorithms lists every supported algorithm.
var Algorithms = []Algorithm{CRC32, CRC32C, CRC64NVME, SHA1, SHA256}

// Sentinel errors; each maps to one S3 error code (Code / HTTP status).
var (
	// ErrBadDigest: the body's MD5 differs from Content-MD5.
	// S3: BadDigest / 400 ("The Content-MD5 you specified did not match
	// what we received.").
	ErrBadDigest = errors.New("checksum: Content-MD5 mismatch")

	// ErrInvalidDigest: Content-MD5 is not base64 of 16 bytes.
	// S3: InvalidDigest / 400 ("The Content-MD5 you specified is not
	// valid.").
	ErrInvalidDigest = errors.New("checksum: invalid Content-MD5")

	// ErrChecksumMismatch: an x-amz-checksum-* value (header or trailer)
	// differs from the computed one. Returned as a *MismatchError, whose
	// S3Message gives the exact text. S3: BadDigest / 400 ("The CRC32
	// you specified did not match the calculated checksum.").
	ErrChecksumMismatch = errors.New("checksum: x-amz-checksum mismatch")

	// ErrInvalidChecksumRequest: checksum headers are malformed or
	// contradictory (unknown algorithm, bad base64 or length, several
	// x-amz-checksum-* headers, header and trailer both given, declared
	// trailer missing). S3: InvalidRequest / 400.
	ErrInvalidChecksumRequest = errors.New("checksum: invalid checksum request")
)

// ValueError is an x-amz-checksum-* value (header or trailer) that is not base64 of a digest
// of its algorithm's size. It matches ErrInvalidChecksumRequest with errors.Is. AWS has been
// seen to answer it InvalidRequest ("Value for x-amz-checksum-sha256 header is invalid."),
// s3-tests (test_object_checksum_sha256, test_multipart_checksum_sha256) expect BadDigest: the
// front end answers BadDigest with AWS's text (S3Message).
type ValueError struct {
	Algorithm Algorithm
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%v: value for %s is invalid", ErrInvalidChecksumRequest, e.Algorithm.HeaderName())
}

// Is makes errors.Is(err, ErrInvalidChecksumRequest) true.
func (e *ValueError) Is(target error) bool { return target == ErrInvalidChecksumRequest }

// S3Message is AWS's text for this value.
func (e *ValueError) S3Message() string {
	return "Value for " + e.Algorithm.HeaderName() + " header is invalid."
}

// MismatchError reports which algorithm failed. It matches
// ErrChecksumMismatch with errors.Is.
type MismatchError struct {
	Algorithm          Algorithm
	Expected, Computed string // base64
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("checksum: %s mismatch: expected %s, computed %s", e.Algorithm, e.Expected, e.Computed)
}

// Is makes errors.Is(err, ErrChecksumMismatch) true.
func (e *MismatchError) Is(target error) bool { return target == ErrChecksumMismatch }

// S3Message is the message S3 sends with BadDigest for this mismatch.
func (e *MismatchError) S3Message() string {
	return "The " + string(e.Algorithm) + " you specified did not match the calculated checksum."
}

// crc64NVMETable uses the bit-reversed form of the CRC-64/NVME polynomial
// 0xAD93D23594C935A9, because Go's crc64 works on reflected polynomials
// (and, like CRC-64/NVME, uses init and xorout of all ones).
var crc64NVMETable = crc64.MakeTable(0x9A6C9329AC4BC9B5)

var crc32cTable = crc32.MakeTable(crc32.Castagnoli)

// ParseAlgorithm parses an algorithm name, case-insensitively as S3 does.
func ParseAlgorithm(s string) (Algorithm, error) {
	a := Algorithm(strings.ToUpper(strings.TrimSpace(s)))
	for _, x := range Algorithms {
		if a == x {
			return a, nil
		}
	}
	return "", fmt.Errorf("%w: unknown checksum algorithm %.40q", ErrInvalidChecksumRequest, s)
}

// HeaderName is the lower-case header (and trailer) carrying the value,
// e.g. "x-amz-checksum-crc64nvme".
func (a Algorithm) HeaderName() string { return "x-amz-checksum-" + strings.ToLower(string(a)) }

// New returns a fresh hash whose Sum is the big-endian digest S3 encodes.
func (a Algorithm) New() hash.Hash {
	switch a {
	case CRC32:
		return crc32.NewIEEE()
	case CRC32C:
		return crc32.New(crc32cTable)
	case CRC64NVME:
		return crc64.New(crc64NVMETable)
	case SHA1:
		return sha1.New()
	case SHA256:
		return sha256.New()
	}
	panic("checksum: New on unknown algorithm " + string(a))
}

// Size is the digest length in bytes.
func (a Algorithm) Size() int {
	switch a {
	case CRC32, CRC32C:
		return 4
	case CRC64NVME:
		return 8
	case SHA1:
		return sha1.Size
	case SHA256:
		return sha256.Size
	}
	return 0
}

// Sum returns the base64 checksum of data.
func (a Algorithm) Sum(data []byte) string {
	h := a.New()
	h.Write(data)
	return Encode(h.Sum(nil))
}

// Encode is the wire form of a digest: standard padded base64.
func Encode(digest []byte) string { return base64.StdEncoding.EncodeToString(digest) }

// Decode parses a wire value for a and checks its length.
func (a Algorithm) Decode(v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil || len(b) != a.Size() {
		return nil, &ValueError{Algorithm: a}
	}
	return b, nil
}
