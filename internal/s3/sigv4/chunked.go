package sigv4

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
)

const (
	// maxLineLen bounds a chunk header or trailer line. A signed chunk
	// header is about 100 bytes; trailers carry base64 checksums.
	maxLineLen = 4096
	// maxTrailers bounds the number of trailing header lines.
	maxTrailers = 32
	// maxHexDigits bounds the chunk-size field (16 hex digits = 2^64).
	maxHexDigits = 16

	chunkSigPrefix     = "chunk-signature="
	trailerSigHeader   = "x-amz-trailer-signature"
	chunkStringPrefix  = "AWS4-HMAC-SHA256-PAYLOAD"
	trailerStringPrefx = "AWS4-HMAC-SHA256-TRAILER"
)

// ChunkedReader decodes an aws-chunked body (Content-Encoding: aws-chunked)
// and verifies it as it goes:
//
//	STREAMING-AWS4-HMAC-SHA256-PAYLOAD:
//	  hex-size;chunk-signature=<sig>\r\n <data> \r\n ... 0;chunk-signature=<sig>\r\n \r\n
//	STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER: as above, but after the
//	  final chunk come "name:value\r\n" trailers, then
//	  "x-amz-trailer-signature:<sig>\r\n", then "\r\n"
//	STREAMING-UNSIGNED-PAYLOAD-TRAILER:
//	  hex-size\r\n <data> \r\n ... 0\r\n, trailers, "\r\n"
//
// Chunk n's signature is HMAC(key, "AWS4-HMAC-SHA256-PAYLOAD\n" + date +
// "\n" + scope + "\n" + sig(n-1) + "\n" + sha256("") + "\n" +
// sha256(data n)), with sig(0) = the request's seed signature; the trailer
// signature chains on the final (empty) chunk's signature.
//
// Chunk data is streamed, not buffered, so memory stays bounded whatever
// the chunk size; the price is that a chunk's bytes are handed out before
// its signature is checked, which is why Body's contract says that data
// returned before an error must be discarded.
type ChunkedReader struct {
	br       *bufio.Reader
	a        *Auth
	signed   bool // per-chunk signatures present
	trailers bool // trailer section expected
	maxChunk int64

	prevSig   string
	chunkSig  string    // expected signature of the current chunk
	remaining int64     // data bytes left in the current chunk
	inChunk   bool      // between a chunk header and its data CRLF
	h         hash.Hash // SHA-256 of the current chunk's data
	decoded   int64

	trailer http.Header
	err     error // sticky; io.EOF once done
}

// NewChunkedReader returns a decoder for a body authenticated by a, whose
// Payload must be one of the streaming modes.
func NewChunkedReader(body io.Reader, a *Auth) (*ChunkedReader, error) {
	if a == nil || !a.Payload.Streaming() {
		return nil, fmt.Errorf("%w: request is not aws-chunked", ErrInvalidContentSHA256)
	}
	maxChunk := a.maxChunkSize
	if maxChunk <= 0 {
		maxChunk = DefaultMaxChunkSize
	}
	return &ChunkedReader{
		br:       bufio.NewReaderSize(body, maxLineLen),
		a:        a,
		signed:   a.Payload != PayloadStreamingUnsignedTrailer,
		trailers: a.Payload != PayloadStreamingSigned,
		maxChunk: maxChunk,
		prevSig:  a.signature,
		h:        sha256.New(),
	}, nil
}

// Trailers implements Body.
func (c *ChunkedReader) Trailers() http.Header {
	if c.err != io.EOF {
		return nil
	}
	return c.trailer
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformedChunkedEncoding}, args...)...)
}

// Read implements io.Reader.
func (c *ChunkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !c.inChunk {
		if err := c.nextChunk(); err != nil {
			c.err = err // io.EOF after a verified final chunk
			return 0, err
		}
	}
	limit := c.remaining
	if d := c.a.DecodedContentLength; d >= 0 && d-c.decoded < limit {
		// Never hand out bytes beyond the declared length: fail as soon
		// as a chunk claims more.
		if limit = d - c.decoded; limit == 0 {
			c.err = fmt.Errorf("%w: more than x-amz-decoded-content-length (%d) bytes", ErrIncompleteBody, d)
			return 0, c.err
		}
	}
	if int64(len(p)) > limit {
		p = p[:limit]
	}
	n, err := c.br.Read(p)
	c.h.Write(p[:n])
	c.remaining -= int64(n)
	c.decoded += int64(n)
	if err != nil && (c.remaining > 0 || err != io.EOF) {
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			c.err = fmt.Errorf("%w: body ended inside a chunk", ErrIncompleteBody)
		} else {
			c.err = err
		}
		return n, c.err
	}
	if c.remaining == 0 {
		if err := c.endChunk(); err != nil {
			c.err = err
			return n, err
		}
	}
	return n, nil
}

// readLine returns the next CRLF-terminated line without its CRLF.
// atEOF is true when the stream ended cleanly before any byte of a line.
func (c *ChunkedReader) readLine(what string) (line string, atEOF bool, err error) {
	b, err := c.br.ReadSlice('\n')
	switch {
	case err == bufio.ErrBufferFull:
		return "", false, malformed("%s line longer than %d bytes", what, maxLineLen)
	case err == io.EOF && len(b) == 0:
		return "", true, nil
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return "", false, fmt.Errorf("%w: body ended inside %s line", ErrIncompleteBody, what)
	case err != nil:
		return "", false, err
	}
	if len(b) < 2 || b[len(b)-2] != '\r' {
		return "", false, malformed("%s line not terminated by CRLF", what)
	}
	return string(b[:len(b)-2]), false, nil
}

// nextChunk reads a chunk header. For the final (size 0) chunk it runs the
// end-of-body checks and returns io.EOF or the failure; otherwise it
// returns nil with c.inChunk set.
func (c *ChunkedReader) nextChunk() error {
	line, atEOF, err := c.readLine("chunk header")
	if err != nil {
		return err
	}
	if atEOF {
		return fmt.Errorf("%w: body ended before the final chunk", ErrIncompleteBody)
	}
	sizeStr, ext, hasExt := strings.Cut(line, ";")
	if len(sizeStr) == 0 || len(sizeStr) > maxHexDigits {
		return malformed("chunk size %.20q", sizeStr)
	}
	size, err := strconv.ParseUint(sizeStr, 16, 64)
	if err != nil {
		return malformed("chunk size %.20q is not hex", sizeStr)
	}
	if size > uint64(c.maxChunk) {
		return malformed("chunk of %d bytes exceeds limit %d", size, c.maxChunk)
	}
	c.chunkSig = ""
	if c.signed {
		if !hasExt || !strings.HasPrefix(ext, chunkSigPrefix) || !isLowerHex(ext[len(chunkSigPrefix):], 64) {
			return malformed("chunk header %.120q lacks chunk-signature", line)
		}
		c.chunkSig = ext[len(chunkSigPrefix):]
	}
	// Unsigned chunks may carry extensions; they mean nothing to us.
	c.h.Reset()
	if size == 0 {
		c.err = c.finish()
		return c.err
	}
	c.remaining = int64(size)
	c.inChunk = true
	return nil
}

// endChunk consumes the CRLF after a chunk's data and checks its signature.
func (c *ChunkedReader) endChunk() error {
	c.inChunk = false
	var crlf [2]byte
	if _, err := io.ReadFull(c.br, crlf[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("%w: body ended after chunk data", ErrIncompleteBody)
		}
		return err
	}
	if crlf != [2]byte{'\r', '\n'} {
		return malformed("chunk data not followed by CRLF")
	}
	return c.checkChunkSig()
}

func (c *ChunkedReader) checkChunkSig() error {
	if !c.signed {
		return nil
	}
	sts := chunkStringPrefix + "\n" + c.a.amzDate + "\n" + c.a.scope + "\n" + c.prevSig + "\n" +
		emptySHA256 + "\n" + hex.EncodeToString(c.h.Sum(nil))
	want := signHex(c.a.key, sts)
	if !sigEqual(want, c.chunkSig) {
		return fmt.Errorf("%w: chunk signature after %d decoded bytes", ErrSignatureDoesNotMatch, c.decoded)
	}
	c.prevSig = c.chunkSig
	return nil
}

// finish handles everything after the final chunk header.
func (c *ChunkedReader) finish() error {
	if err := c.checkChunkSig(); err != nil {
		return err
	}
	if c.trailers {
		if err := c.readTrailers(); err != nil {
			return err
		}
	} else {
		line, atEOF, err := c.readLine("final")
		if err != nil {
			return err
		}
		if atEOF || line != "" {
			return malformed("final chunk not followed by an empty line")
		}
	}
	if n := c.a.DecodedContentLength; n >= 0 && c.decoded != n {
		return fmt.Errorf("%w: decoded %d bytes, x-amz-decoded-content-length is %d", ErrIncompleteBody, c.decoded, n)
	}
	if _, err := c.br.Peek(1); err == nil {
		return malformed("data after the end of the aws-chunked body")
	}
	return io.EOF
}

// readTrailers parses "name:value" lines up to an empty line (or a clean
// end of body). Clients disagree on whether an empty line separates the
// final chunk from the trailers, so one leading empty line is skipped.
func (c *ChunkedReader) readTrailers() error {
	type kv struct{ k, v string }
	var (
		list       []kv
		sig        string
		skipped    bool
		afterSig   bool
		sawTrailer bool
	)
	for {
		line, atEOF, err := c.readLine("trailer")
		if err != nil {
			return err
		}
		if atEOF {
			break
		}
		if line == "" {
			if !sawTrailer && !skipped {
				skipped = true
				continue
			}
			break
		}
		sawTrailer = true
		if afterSig {
			return fmt.Errorf("%w: trailer after %s", ErrMalformedTrailer, trailerSigHeader)
		}
		if len(list) >= maxTrailers {
			return fmt.Errorf("%w: more than %d trailers", ErrMalformedTrailer, maxTrailers)
		}
		name, value, ok := strings.Cut(line, ":")
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.Trim(value, " \t")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return fmt.Errorf("%w: line %.80q", ErrMalformedTrailer, line)
		}
		if name == trailerSigHeader {
			sig, afterSig = strings.ToLower(value), true
			continue
		}
		for _, e := range list {
			if e.k == name {
				return fmt.Errorf("%w: duplicate trailer %s", ErrMalformedTrailer, name)
			}
		}
		list = append(list, kv{name, value})
	}

	c.trailer = make(http.Header, len(list))
	var canon strings.Builder
	for _, e := range list {
		if !contains(c.a.DeclaredTrailers, e.k) {
			return fmt.Errorf("%w: trailer %s not declared in x-amz-trailer", ErrMalformedTrailer, e.k)
		}
		c.trailer.Set(e.k, e.v)
		canon.WriteString(e.k + ":" + e.v + "\n")
	}
	for _, d := range c.a.DeclaredTrailers {
		if c.trailer.Get(d) == "" {
			return fmt.Errorf("%w: declared trailer %s missing", ErrMalformedTrailer, d)
		}
	}
	if !c.signed {
		return nil
	}
	if sig == "" {
		return fmt.Errorf("%w: missing %s", ErrMalformedTrailer, trailerSigHeader)
	}
	sts := trailerStringPrefx + "\n" + c.a.amzDate + "\n" + c.a.scope + "\n" + c.prevSig + "\n" + sha256Hex(canon.String())
	if want := signHex(c.a.key, sts); !sigEqual(want, sig) {
		return fmt.Errorf("%w: trailer signature", ErrSignatureDoesNotMatch)
	}
	return nil
}

// compile-time check that both readers satisfy Body.
var (
	_ Body = (*ChunkedReader)(nil)
	_ Body = (*HashingReader)(nil)
)
