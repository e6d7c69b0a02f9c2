package s3core

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/s3/checksum"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

func TestMetaValueRFC2047(t *testing.T) {
	for _, tc := range []struct {
		name, sent, stored, answered string
	}{
		{"ASCII", "plain value", "plain value", "plain value"},
		{"empty", "", "", ""},
		{"tab", "a\tb", "a\tb", "a\tb"},
		{"UTF-8 as sent", "Hello Worldé", "Hello Worldé", "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?="},
		{"ISO-8859-1 as sent", "Hello World\xe9", "Hello Worldé", "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?="},
		{"B word", "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?=", "Hello Worldé", "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?="},
		{"Q word of a control character", "=?UTF-8?Q?=04mymeta?=", "\x04mymeta", "=?UTF-8?B?BG15bWV0YQ==?="},
		{"ISO-8859-1 word", "=?ISO-8859-1?Q?caf=E9?=", "café", "=?UTF-8?B?Y2Fmw6k=?="},
		{"words and text", "x =?UTF-8?B?w6k=?= y", "x é y", "=?UTF-8?B?eCDDqSB5?="},
		{"an unknown charset is left as sent", "=?KOI8-R?B?wc/Q?=", "=?KOI8-R?B?wc/Q?=", "=?KOI8-R?B?wc/Q?="},
		{"not a word", "a=?b", "a=?b", "a=?b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := decodeMetaValue(tc.sent)
			if stored != tc.stored {
				t.Fatalf("stored %q, want %q", stored, tc.stored)
			}
			if got := encodeMetaValue(stored); got != tc.answered {
				t.Fatalf("answered %q, want %q", got, tc.answered)
			}
			// What is answered is stored as the same value when sent back (a copy, a client
			// that writes back what it read).
			if again := decodeMetaValue(encodeMetaValue(stored)); again != stored {
				t.Fatalf("sent back, stored %q", again)
			}
		})
	}
}

func TestContentEncodingWithoutAWSChunked(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string // "": no Content-Encoding stored
	}{
		{[]string{"aws-chunked"}, ""},
		{[]string{"aws-chunked,gzip"}, "gzip"},
		{[]string{"gzip, aws-chunked"}, "gzip"},
		{[]string{"AWS-Chunked , gzip,br"}, "gzip, br"},
		{[]string{"deflate, gzip"}, "deflate, gzip"}, // as the client spelled it
		{[]string{"aws-chunked", "gzip"}, "gzip"},
		{[]string{"gzip"}, "gzip"},
		{[]string{" , "}, ""},
		{nil, ""},
	} {
		hdr := http.Header{}
		for _, l := range tc.lines {
			hdr.Add("Content-Encoding", l)
		}
		obj, err := ObjectMetaFromRequest(hdr)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := obj.Headers["Content-Encoding"]
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Content-Encoding %q: stored %q (%v), want %q", tc.lines, got, ok, tc.want)
		}
	}
}

func TestErrorTableTaskB(t *testing.T) {
	for _, tc := range []struct {
		err           error
		code, message string
		status        int
	}{
		{errUnresolvableByEmail, "UnresolvableGrantByEmailAddress", "does not match any account on record", 400},
		{&checksum.ValueError{Algorithm: checksum.SHA256}, "BadDigest", "Value for x-amz-checksum-sha256 header is invalid.", 400},
		{fmt.Errorf("wrapped: %w", &checksum.MismatchError{Algorithm: checksum.CRC32}), "BadDigest", "The CRC32 you specified did not match the calculated checksum.", 400},
		{checksum.ErrBadDigest, "BadDigest", "The Content-MD5 you specified did not match what we received.", 400},
		{checksum.ErrInvalidDigest, "InvalidDigest", "The Content-MD5 you specified is not valid.", 400},
		{checksum.ErrInvalidChecksumRequest, "InvalidRequest", "", 400},
		{&sigv4.MalformedError{Detail: "the authorization header requires three components: Credential, SignedHeaders, and Signature."}, "AuthorizationHeaderMalformed",
			"The authorization header is malformed; the authorization header requires three components: Credential, SignedHeaders, and Signature.", 400},
		{sigv4.ErrAuthorizationHeaderMalformed, "AuthorizationHeaderMalformed", "The authorization header is malformed.", 400},
		{sigv4.ErrUnsupportedAuthType, "InvalidArgument", "Unsupported Authorization Type", 400},
		{sigv4.ErrMalformedV2Header, "InvalidArgument", "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature", 400},
		{sigv4.ErrMissingDate, "AccessDenied", "", 403},
	} {
		api := ToAPIError(tc.err)
		if api.Code != tc.code || api.Status != tc.status || !strings.Contains(api.Message, tc.message) {
			t.Errorf("%v: %s %d %q, want %s %d %q", tc.err, api.Code, api.Status, api.Message, tc.code, tc.status, tc.message)
		}
	}
	// The elements S3 adds.
	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer x")
	var d *detailedError
	if err := AuthError(r, sigv4.ErrUnsupportedAuthType); !errors.As(err, &d) || d.fields.argumentName != "Authorization" || d.fields.argumentValue != "Bearer x" {
		t.Errorf("unsupported type: %+v", err)
	}
	if err := AuthError(r, &sigv4.MalformedError{Detail: "region", Region: "eu-west-1"}); !errors.As(err, &d) || d.fields.region != "eu-west-1" {
		t.Errorf("region: %+v", err)
	}
}
