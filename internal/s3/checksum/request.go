package checksum

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Spec is what a request asks to be verified or computed.
type Spec struct {
	// ContentMD5 is the decoded Content-MD5, nil when absent.
	ContentMD5 []byte
	// Algorithm is the additional checksum to compute, "" for none.
	Algorithm Algorithm
	// Value is the expected base64 checksum from x-amz-checksum-<alg>;
	// empty when Trailer is set or when only the algorithm was named
	// (S3 then computes and stores the checksum without checking it).
	Value string
	// Trailer: the value arrives as an aws-chunked trailing header
	// (declared in x-amz-trailer).
	Trailer bool
}

// FromHeaders reads Content-MD5, x-amz-checksum-<alg>,
// x-amz-sdk-checksum-algorithm / x-amz-checksum-algorithm and x-amz-trailer.
// S3 allows one additional checksum per request; a named algorithm must
// agree with the header or trailer that carries the value.
func FromHeaders(h http.Header) (Spec, error) {
	var s Spec
	if v, ok := h["Content-Md5"]; ok {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(strings.Join(v, "")))
		if err != nil || len(b) != md5.Size || len(v) != 1 {
			return Spec{}, fmt.Errorf("%w: Content-MD5 %.40q", ErrInvalidDigest, strings.Join(v, ","))
		}
		s.ContentMD5 = b
	}
	for _, a := range Algorithms {
		v := h.Values(a.HeaderName())
		if len(v) == 0 {
			continue
		}
		if s.Algorithm != "" || len(v) > 1 {
			return Spec{}, fmt.Errorf("%w: expecting a single x-amz-checksum- header; multiple checksum types are not allowed", ErrInvalidChecksumRequest)
		}
		if _, err := a.Decode(v[0]); err != nil {
			return Spec{}, err
		}
		s.Algorithm, s.Value = a, strings.TrimSpace(v[0])
	}
	for _, t := range h.Values("X-Amz-Trailer") {
		for _, name := range strings.Split(t, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			a, err := algorithmForHeader(name)
			if err != nil {
				return Spec{}, err
			}
			if s.Algorithm != "" {
				return Spec{}, fmt.Errorf("%w: more than one checksum in header and x-amz-trailer", ErrInvalidChecksumRequest)
			}
			s.Algorithm, s.Trailer = a, true
		}
	}
	for _, hdr := range []string{"X-Amz-Sdk-Checksum-Algorithm", "X-Amz-Checksum-Algorithm"} {
		v := h.Get(hdr)
		if v == "" {
			continue
		}
		a, err := ParseAlgorithm(v)
		if err != nil {
			return Spec{}, err
		}
		if s.Algorithm != "" && s.Algorithm != a {
			return Spec{}, fmt.Errorf("%w: %s %s does not match the %s checksum sent", ErrInvalidChecksumRequest, strings.ToLower(hdr), a, s.Algorithm)
		}
		s.Algorithm = a
	}
	return s, nil
}

func algorithmForHeader(name string) (Algorithm, error) {
	for _, a := range Algorithms {
		if a.HeaderName() == name {
			return a, nil
		}
	}
	return "", fmt.Errorf("%w: unsupported trailer %.60q", ErrInvalidChecksumRequest, name)
}

// Reader hashes what passes through it: always MD5 (S3's ETag for simple
// uploads) and the Spec's additional checksum, if any.
type Reader struct {
	r    io.Reader
	spec Spec
	md5  hash.Hash
	sum  hash.Hash
	n    int64
}

// NewReader wraps r; spec usually comes from FromHeaders.
func NewReader(r io.Reader, spec Spec) *Reader {
	cr := &Reader{r: r, spec: spec, md5: md5.New()}
	if spec.Algorithm != "" {
		cr.sum = spec.Algorithm.New()
	}
	return cr
}

// Read implements io.Reader.
func (c *Reader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.md5.Write(p[:n])
	if c.sum != nil {
		c.sum.Write(p[:n])
	}
	c.n += int64(n)
	return n, err
}

// Len is the number of bytes read so far.
func (c *Reader) Len() int64 { return c.n }

// MD5 is the raw MD5 of the bytes read so far.
func (c *Reader) MD5() []byte { return c.md5.Sum(nil) }

// Checksum is the computed additional checksum (base64), or "", "" when
// the request named none.
func (c *Reader) Checksum() (Algorithm, string) {
	if c.sum == nil {
		return "", ""
	}
	return c.spec.Algorithm, Encode(c.sum.Sum(nil))
}

// Verify checks the body read so far (call it after EOF) against
// Content-MD5 and the expected checksum. trailers are the aws-chunked
// trailing headers (sigv4 Body.Trailers()); nil when there are none.
func (c *Reader) Verify(trailers http.Header) error {
	if c.spec.ContentMD5 != nil {
		if got := c.MD5(); !bytes.Equal(got, c.spec.ContentMD5) {
			return fmt.Errorf("%w: computed %s", ErrBadDigest, Encode(got))
		}
	}
	if c.sum == nil {
		return nil
	}
	want := c.spec.Value
	if c.spec.Trailer {
		want = trailers.Get(c.spec.Algorithm.HeaderName())
		if want == "" {
			return fmt.Errorf("%w: trailer %s missing", ErrInvalidChecksumRequest, c.spec.Algorithm.HeaderName())
		}
		if _, err := c.spec.Algorithm.Decode(want); err != nil {
			return err
		}
		want = strings.TrimSpace(want)
	}
	if want == "" {
		return nil // compute-only request
	}
	_, got := c.Checksum()
	if got != want {
		return &MismatchError{Algorithm: c.spec.Algorithm, Expected: want, Computed: got}
	}
	return nil
}

// Composite computes a multipart upload's COMPOSITE checksum: the
// algorithm applied to the concatenated binary part checksums, base64,
// suffixed with "-<number of parts>". parts are the per-part base64
// values in part-number order.
func Composite(a Algorithm, parts []string) (string, error) {
	if a.Size() == 0 {
		return "", fmt.Errorf("%w: unknown checksum algorithm %q", ErrInvalidChecksumRequest, a)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("%w: composite checksum of zero parts", ErrInvalidChecksumRequest)
	}
	h := a.New()
	for i, p := range parts {
		b, err := a.Decode(p)
		if err != nil {
			return "", fmt.Errorf("part %d: %w", i+1, err)
		}
		h.Write(b)
	}
	return Encode(h.Sum(nil)) + "-" + strconv.Itoa(len(parts)), nil
}
