package sigv4

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
)

// Body is a request body as it must be consumed after Verify: the decoded
// object bytes, with integrity checks applied while reading.
//
// Contract: a Body returns io.EOF only after every check passed (payload
// hash, chunk and trailer signatures, decoded length). Bytes delivered
// before a non-EOF error are unverified and must be discarded: the caller
// aborts the write instead of committing it.
type Body interface {
	io.Reader
	// Trailers returns the trailing headers of an aws-chunked body with
	// canonical (http.CanonicalHeaderKey) names, x-amz-trailer-signature
	// removed. Valid only after Read returned io.EOF; nil if none.
	Trailers() http.Header
}

// Body wraps the raw request body according to a.Payload:
//   - PayloadSigned: a reader that fails with ErrContentSHA256Mismatch at
//     EOF when the SHA-256 differs from x-amz-content-sha256;
//   - PayloadUnsigned: the body itself (short bodies still surface as
//     ErrIncompleteBody);
//   - streaming modes: the aws-chunked decoder (see NewChunkedReader).
func (a *Auth) Body(body io.Reader) (Body, error) {
	switch a.Payload {
	case PayloadSigned:
		return NewHashingReader(body, a.PayloadSHA256)
	case PayloadUnsigned:
		return &plainReader{r: body}, nil
	default:
		return NewChunkedReader(body, a)
	}
}

// plainReader passes an unsigned body through, translating a truncated
// transfer into ErrIncompleteBody.
type plainReader struct{ r io.Reader }

func (p *plainReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	return n, incomplete(err)
}

func (p *plainReader) Trailers() http.Header { return nil }

// incomplete maps a transport-level truncation (net/http reports a body
// shorter than Content-Length as io.ErrUnexpectedEOF) onto ErrIncompleteBody.
func incomplete(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %v", ErrIncompleteBody, err)
	}
	return err
}

// HashingReader checks a body against an expected hex SHA-256.
type HashingReader struct {
	r    io.Reader
	h    hash.Hash
	want string
	err  error
}

// NewHashingReader returns a reader over body that reports
// ErrContentSHA256Mismatch instead of io.EOF when the content's SHA-256 is
// not wantHex (64 hex digits, any case).
func NewHashingReader(body io.Reader, wantHex string) (*HashingReader, error) {
	want, err := hex.DecodeString(wantHex)
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("%w: %.80q", ErrInvalidContentSHA256, wantHex)
	}
	return &HashingReader{r: body, h: sha256.New(), want: hex.EncodeToString(want)}, nil
}

// Read implements io.Reader.
func (h *HashingReader) Read(p []byte) (int, error) {
	if h.err != nil {
		return 0, h.err
	}
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	if err == io.EOF {
		if got := hex.EncodeToString(h.h.Sum(nil)); got != h.want {
			err = fmt.Errorf("%w: computed %s, header %s", ErrContentSHA256Mismatch, got, h.want)
		}
	}
	if err != nil {
		h.err = incomplete(err)
	}
	return n, h.err
}

// Trailers implements Body; plain bodies have none.
func (h *HashingReader) Trailers() http.Header { return nil }
