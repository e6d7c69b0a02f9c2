package checksum

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Expected values computed independently with Python's awscrt.checksums
// (CRCs) and hashlib (SHA, MD5); 66560 x 'a' CRC32C is also the trailer
// value in the S3 docs' trailing-header example.
func TestSumVectors(t *testing.T) {
	tests := []struct {
		alg  Algorithm
		data string
		want string
	}{
		{CRC32, "", "AAAAAA=="},
		{CRC32, "123456789", "y/Q5Jg=="},
		{CRC32, "hello world", "DUoRhQ=="},
		{CRC32C, "123456789", "4waSgw=="},
		{CRC32C, "hello world", "yZRlqg=="},
		{CRC32C, strings.Repeat("a", 66560), "sOO8/Q=="},
		{CRC64NVME, "", "AAAAAAAAAAA="},
		{CRC64NVME, "123456789", "rosUhgp5mIg="}, // check value 0xae8b14860a799888
		{CRC64NVME, "hello world", "jSnVw/bqjr4="},
		{CRC64NVME, strings.Repeat("a", 66560), "pRf+emrnL+A="},
		{SHA1, "", "2jmj7l5rSw0yVb/vlWAYkK/YBwk="},
		{SHA1, "hello world", "Kq5sNclPz7QV2+lfQIuc6R7oRu0="},
		{SHA256, "", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
		{SHA256, "hello world", "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="},
	}
	for _, tc := range tests {
		if got := tc.alg.Sum([]byte(tc.data)); got != tc.want {
			t.Errorf("%s(%.20q) = %s, want %s", tc.alg, tc.data, got, tc.want)
		}
	}
}

func TestParseAlgorithm(t *testing.T) {
	for _, in := range []string{"crc32", "CRC32C", "Crc64Nvme", " sha1 ", "SHA256"} {
		if _, err := ParseAlgorithm(in); err != nil {
			t.Errorf("ParseAlgorithm(%q): %v", in, err)
		}
	}
	for _, in := range []string{"", "MD5", "CRC64", "sha-256"} {
		if _, err := ParseAlgorithm(in); !errors.Is(err, ErrInvalidChecksumRequest) {
			t.Errorf("ParseAlgorithm(%q) err = %v", in, err)
		}
	}
	if h := CRC64NVME.HeaderName(); h != "x-amz-checksum-crc64nvme" {
		t.Errorf("HeaderName = %s", h)
	}
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestFromHeaders(t *testing.T) {
	tests := []struct {
		name    string
		h       http.Header
		want    Spec
		wantErr error
	}{
		{name: "none", h: hdr()},
		{name: "md5", h: hdr("Content-MD5", "XrY7u+Ae7tCTyyK7j1rNww=="), want: Spec{ContentMD5: []byte{0x5e, 0xb6, 0x3b, 0xbb, 0xe0, 0x1e, 0xee, 0xd0, 0x93, 0xcb, 0x22, 0xbb, 0x8f, 0x5a, 0xcd, 0xc3}}},
		{name: "md5 bad base64", h: hdr("Content-MD5", "not base64!"), wantErr: ErrInvalidDigest},
		{name: "md5 wrong length", h: hdr("Content-MD5", "AAAA"), wantErr: ErrInvalidDigest},
		{name: "crc32 header", h: hdr("X-Amz-Checksum-Crc32", "DUoRhQ=="), want: Spec{Algorithm: CRC32, Value: "DUoRhQ=="}},
		{name: "header with matching sdk algorithm", h: hdr("X-Amz-Checksum-Sha256", "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=", "X-Amz-Sdk-Checksum-Algorithm", "sha256"), want: Spec{Algorithm: SHA256, Value: "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="}},
		{name: "algorithm only", h: hdr("X-Amz-Checksum-Algorithm", "CRC64NVME"), want: Spec{Algorithm: CRC64NVME}},
		{name: "trailer", h: hdr("X-Amz-Trailer", "x-amz-checksum-crc32c", "X-Amz-Sdk-Checksum-Algorithm", "CRC32C"), want: Spec{Algorithm: CRC32C, Trailer: true}},
		{name: "wrong length value", h: hdr("X-Amz-Checksum-Crc32", "AAAAAAAAAAA="), wantErr: ErrInvalidChecksumRequest},
		{name: "two checksum headers", h: hdr("X-Amz-Checksum-Crc32", "DUoRhQ==", "X-Amz-Checksum-Crc32c", "yZRlqg=="), wantErr: ErrInvalidChecksumRequest},
		{name: "header and trailer", h: hdr("X-Amz-Checksum-Crc32", "DUoRhQ==", "X-Amz-Trailer", "x-amz-checksum-crc32"), wantErr: ErrInvalidChecksumRequest},
		{name: "algorithm disagrees", h: hdr("X-Amz-Checksum-Crc32", "DUoRhQ==", "X-Amz-Sdk-Checksum-Algorithm", "SHA1"), wantErr: ErrInvalidChecksumRequest},
		{name: "unknown algorithm", h: hdr("X-Amz-Sdk-Checksum-Algorithm", "MD5"), wantErr: ErrInvalidChecksumRequest},
		{name: "unknown trailer", h: hdr("X-Amz-Trailer", "x-amz-meta-foo"), wantErr: ErrInvalidChecksumRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromHeaders(tc.h)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.ContentMD5, tc.want.ContentMD5) || got.Algorithm != tc.want.Algorithm || got.Value != tc.want.Value || got.Trailer != tc.want.Trailer {
				t.Fatalf("spec = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReaderVerify(t *testing.T) {
	const body = "hello world"
	tests := []struct {
		name     string
		h        http.Header
		trailers http.Header
		wantErr  error
		wantMsg  string
	}{
		{name: "no checks", h: hdr()},
		{name: "md5 ok", h: hdr("Content-MD5", "XrY7u+Ae7tCTyyK7j1rNww==")},
		{name: "md5 mismatch", h: hdr("Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg=="), wantErr: ErrBadDigest},
		{name: "crc32 ok", h: hdr("X-Amz-Checksum-Crc32", "DUoRhQ==")},
		{name: "crc32 mismatch", h: hdr("X-Amz-Checksum-Crc32", "y/Q5Jg=="), wantErr: ErrChecksumMismatch, wantMsg: "The CRC32 you specified did not match the calculated checksum."},
		{name: "crc64nvme ok", h: hdr("X-Amz-Checksum-Crc64nvme", "jSnVw/bqjr4=")},
		{name: "sha1 ok", h: hdr("X-Amz-Checksum-Sha1", "Kq5sNclPz7QV2+lfQIuc6R7oRu0=")},
		{name: "trailer ok", h: hdr("X-Amz-Trailer", "x-amz-checksum-crc32c"), trailers: hdr("X-Amz-Checksum-Crc32c", "yZRlqg==")},
		{name: "trailer mismatch", h: hdr("X-Amz-Trailer", "x-amz-checksum-crc32c"), trailers: hdr("X-Amz-Checksum-Crc32c", "4waSgw=="), wantErr: ErrChecksumMismatch, wantMsg: "The CRC32C you specified did not match the calculated checksum."},
		{name: "trailer missing", h: hdr("X-Amz-Trailer", "x-amz-checksum-crc32c"), wantErr: ErrInvalidChecksumRequest},
		{name: "trailer malformed", h: hdr("X-Amz-Trailer", "x-amz-checksum-crc32c"), trailers: hdr("X-Amz-Checksum-Crc32c", "@@"), wantErr: ErrInvalidChecksumRequest},
		{name: "compute only", h: hdr("X-Amz-Sdk-Checksum-Algorithm", "SHA256")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := FromHeaders(tc.h)
			if err != nil {
				t.Fatal(err)
			}
			r := NewReader(strings.NewReader(body), spec)
			if _, err := io.Copy(io.Discard, r); err != nil {
				t.Fatal(err)
			}
			err = r.Verify(tc.trailers)
			if tc.wantErr == nil && err != nil || !errors.Is(err, tc.wantErr) {
				t.Fatalf("Verify = %v, want %v", err, tc.wantErr)
			}
			var me *MismatchError
			if tc.wantMsg != "" && (!errors.As(err, &me) || me.S3Message() != tc.wantMsg) {
				t.Fatalf("mismatch message for %v", err)
			}
			if Encode(r.MD5()) != "XrY7u+Ae7tCTyyK7j1rNww==" || r.Len() != int64(len(body)) {
				t.Fatalf("MD5 %s len %d", Encode(r.MD5()), r.Len())
			}
		})
	}
}

func TestComposite(t *testing.T) {
	tests := []struct {
		alg   Algorithm
		parts []string
		want  string
	}{
		{CRC32, []string{"7qyTuQ==", "QGXPDQ==", "Brnfbw=="}, "MzmNHw==-3"},
		{CRC32C, []string{"c69jFw==", "Lg58xw==", "IOszxw=="}, "gFTJZg==-3"},
		{CRC64NVME, []string{"SCDhNqDp9PE=", "T+DOAYWjqTs=", "cvJl1dSg7s4="}, "QMoDS8b+uzY=-3"},
		{SHA256, []string{"7ZaOhA0Q0tMTqHC8ExpOLDEdetCb3zKzQYFHIh9RpuI=", "PnRLncOTibrwxaBmBYm4QC89u0m4mz518sk1WFKjxnc=", "Ln0sA6lQeuJl7PW1NWiFpTOTogKdJBOUmXJloaJa78Y="}, "82kvItkvRyzfLt7iqnfN72Vj654r3zeNZKavHmCseFw=-3"},
	}
	for _, tc := range tests {
		got, err := Composite(tc.alg, tc.parts)
		if err != nil || got != tc.want {
			t.Errorf("Composite(%s) = %q, %v; want %q", tc.alg, got, err, tc.want)
		}
	}
	// The per-part values above are the checksums of "aaaaa", "bbb", "c".
	for i, p := range []string{"aaaaa", "bbb", "c"} {
		if got := CRC64NVME.Sum([]byte(p)); got != tests[2].parts[i] {
			t.Errorf("part %d crc64nvme = %s", i, got)
		}
	}
	for _, bad := range [][]string{nil, {"DUoRhQ==", "bad"}, {"AAAAAAAAAAA="}} {
		if _, err := Composite(CRC32, bad); !errors.Is(err, ErrInvalidChecksumRequest) {
			t.Errorf("Composite(%q) err = %v", bad, err)
		}
	}
}
