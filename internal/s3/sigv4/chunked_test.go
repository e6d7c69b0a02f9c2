package sigv4

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func testAuth(mode PayloadMode, decoded int64, trailers ...string) *Auth {
	return &Auth{
		Payload:              mode,
		DecodedContentLength: decoded,
		DeclaredTrailers:     trailers,
		signature:            strings.Repeat("ab", 32),
		amzDate:              "20260301T120000Z",
		scope:                "20260301/us-east-1/s3/aws4_request",
		key:                  signingKey("secret", "20260301", "us-east-1"),
		maxChunkSize:         1 << 20,
	}
}

// encodeChunked frames chunks as aws-chunked for a's mode, signing them
// when the mode is signed. Trailers are "name:value" strings.
func encodeChunked(a *Auth, chunks []string, trailers ...string) string {
	var b strings.Builder
	prev := a.signature
	signed := a.Payload != PayloadStreamingUnsignedTrailer
	for _, c := range append(chunks, "") {
		fmt.Fprintf(&b, "%x", len(c))
		if signed {
			h := sha256Hex(c)
			prev = signHex(a.key, chunkStringPrefix+"\n"+a.amzDate+"\n"+a.scope+"\n"+prev+"\n"+emptySHA256+"\n"+h)
			b.WriteString(";chunk-signature=" + prev)
		}
		b.WriteString("\r\n")
		if c != "" {
			b.WriteString(c + "\r\n")
		}
	}
	if a.Payload == PayloadStreamingSigned {
		return b.String() + "\r\n"
	}
	var canon strings.Builder
	for _, t := range trailers {
		b.WriteString(t + "\r\n")
		canon.WriteString(t + "\n")
	}
	if signed {
		sig := signHex(a.key, trailerStringPrefx+"\n"+a.amzDate+"\n"+a.scope+"\n"+prev+"\n"+sha256Hex(canon.String()))
		b.WriteString(trailerSigHeader + ":" + sig + "\r\n")
	}
	return b.String() + "\r\n"
}

func TestChunkedReader(t *testing.T) {
	signedA := testAuth(PayloadStreamingSigned, 11)
	signedT := testAuth(PayloadStreamingSignedTrailer, 11, "x-amz-checksum-crc32")
	unsT := testAuth(PayloadStreamingUnsignedTrailer, 11, "x-amz-checksum-crc32")
	good := encodeChunked(signedA, []string{"hello", " world"})
	goodT := encodeChunked(signedT, []string{"hello", " world"}, "x-amz-checksum-crc32:DUoRhQ==")
	goodU := encodeChunked(unsT, []string{"hello", " world"}, "x-amz-checksum-crc32:DUoRhQ==")
	tests := []struct {
		name    string
		a       *Auth
		body    string
		want    error
		trailer string
	}{
		{name: "signed", a: signedA, body: good},
		{name: "signed trailer", a: signedT, body: goodT, trailer: "DUoRhQ=="},
		{name: "unsigned trailer", a: unsT, body: goodU, trailer: "DUoRhQ=="},
		{name: "unsigned trailer, SDK framing", a: unsT, body: "5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n", trailer: "DUoRhQ=="},
		{name: "unsigned trailer, blank line before trailers", a: unsT, body: "b\r\nhello world\r\n0\r\n\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n", trailer: "DUoRhQ=="},
		{name: "unsigned trailer, no final blank line", a: unsT, body: "b\r\nhello world\r\n0\r\nx-amz-checksum-crc32: DUoRhQ==\r\n", trailer: "DUoRhQ=="},
		{name: "unsigned trailer ignores extensions", a: unsT, body: "b;foo=bar\r\nhello world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n", trailer: "DUoRhQ=="},
		{name: "decoded length short", a: testAuth(PayloadStreamingSigned, 12), body: encodeChunked(testAuth(PayloadStreamingSigned, 12), []string{"hello world"}), want: ErrIncompleteBody},
		{name: "decoded length long", a: testAuth(PayloadStreamingSigned, 10), body: encodeChunked(testAuth(PayloadStreamingSigned, 10), []string{"hello world"}), want: ErrIncompleteBody},
		{name: "truncated in data", a: signedA, body: good[:100], want: ErrIncompleteBody},
		{name: "truncated before final", a: signedA, body: good[:strings.LastIndex(good, "0;")], want: ErrIncompleteBody},
		{name: "empty body", a: signedA, body: "", want: ErrIncompleteBody},
		{name: "bad hex", a: unsT, body: "zz\r\nhello\r\n0\r\n\r\n", want: ErrMalformedChunkedEncoding},
		{name: "negative-looking size", a: unsT, body: "-5\r\nhello\r\n0\r\n\r\n", want: ErrMalformedChunkedEncoding},
		{name: "huge size", a: unsT, body: "ffffffffffffffff\r\nx", want: ErrMalformedChunkedEncoding},
		{name: "too many hex digits", a: unsT, body: "00000000000000000b\r\nhello world\r\n", want: ErrMalformedChunkedEncoding},
		{name: "chunk over limit", a: unsT, body: "100001\r\n", want: ErrMalformedChunkedEncoding},
		{name: "bare LF", a: unsT, body: "b\nhello world\r\n0\r\n\r\n", want: ErrMalformedChunkedEncoding},
		{name: "missing CRLF after data", a: unsT, body: "5\r\nhelloXX0\r\n\r\n", want: ErrMalformedChunkedEncoding},
		{name: "long line", a: unsT, body: strings.Repeat("1", 5000) + "\r\n", want: ErrMalformedChunkedEncoding},
		{name: "signed chunk without signature", a: signedA, body: "b\r\nhello world\r\n0\r\n\r\n", want: ErrMalformedChunkedEncoding},
		{name: "tampered data", a: signedA, body: strings.Replace(good, "hello", "jello", 1), want: ErrSignatureDoesNotMatch},
		{name: "trailer tampered", a: signedT, body: strings.Replace(goodT, "DUoRhQ==", "AAAAAA==", 1), want: ErrSignatureDoesNotMatch},
		{name: "trailer signature missing", a: signedT, body: goodT[:strings.Index(goodT, trailerSigHeader)] + "\r\n", want: ErrMalformedTrailer},
		{name: "undeclared trailer", a: unsT, body: "b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\nx-amz-meta-x:1\r\n\r\n", want: ErrMalformedTrailer},
		{name: "declared trailer missing", a: unsT, body: "b\r\nhello world\r\n0\r\n\r\n", want: ErrMalformedTrailer},
		{name: "trailer without colon", a: unsT, body: "b\r\nhello world\r\n0\r\nnocolon\r\n\r\n", want: ErrMalformedTrailer},
		{name: "data after end", a: signedA, body: good + "junk", want: ErrMalformedChunkedEncoding},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, wrap := range []func(io.Reader) io.Reader{
				func(r io.Reader) io.Reader { return r },
				iotest.OneByteReader,
			} {
				cr, err := NewChunkedReader(wrap(strings.NewReader(tc.body)), tc.a)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(cr)
				if tc.want != nil {
					if !errors.Is(err, tc.want) {
						t.Fatalf("err = %v, want %v", err, tc.want)
					}
					if cr.Trailers() != nil {
						t.Fatal("trailers exposed after an error")
					}
					continue
				}
				if err != nil || string(got) != "hello world" {
					t.Fatalf("got %q, %v", got, err)
				}
				if v := cr.Trailers().Get("X-Amz-Checksum-Crc32"); v != tc.trailer {
					t.Fatalf("trailer = %q, want %q", v, tc.trailer)
				}
			}
		})
	}
}

func TestChunkedReaderRejectsNonStreaming(t *testing.T) {
	if _, err := NewChunkedReader(strings.NewReader(""), testAuth(PayloadSigned, -1)); err == nil {
		t.Fatal("accepted a non-streaming Auth")
	}
}

// FuzzChunkedReader: the decoder never panics, never returns more bytes
// than the chunks it framed claim, and a clean EOF implies exactly the
// declared decoded length.
func FuzzChunkedReader(f *testing.F) {
	a := testAuth(PayloadStreamingUnsignedTrailer, 11, "x-amz-checksum-crc32")
	f.Add(encodeChunked(a, []string{"hello", " world"}, "x-amz-checksum-crc32:DUoRhQ=="), uint8(0))
	s := testAuth(PayloadStreamingSigned, 11)
	f.Add(encodeChunked(s, []string{"hello world"}), uint8(1))
	st := testAuth(PayloadStreamingSignedTrailer, 11, "x-amz-checksum-crc32")
	f.Add(encodeChunked(st, []string{"hello wor", "ld"}, "x-amz-checksum-crc32:DUoRhQ=="), uint8(2))
	f.Add("ffffffff\r\n", uint8(0))
	f.Fuzz(func(t *testing.T, body string, mode uint8) {
		auth := []*Auth{a, s, st}[int(mode)%3]
		cr, err := NewChunkedReader(strings.NewReader(body), auth)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		_, err = io.Copy(&out, io.LimitReader(cr, 1<<21))
		if out.Len() > len(body) {
			t.Fatalf("decoded %d bytes from a %d-byte body", out.Len(), len(body))
		}
		if out.Len() > int(auth.DecodedContentLength) {
			t.Fatalf("decoded %d bytes, more than declared %d", out.Len(), auth.DecodedContentLength)
		}
		if err == nil && out.Len() != int(auth.DecodedContentLength) {
			t.Fatalf("clean EOF after %d bytes, declared %d (%s)", out.Len(), auth.DecodedContentLength, hex.EncodeToString([]byte(body)))
		}
	})
}
