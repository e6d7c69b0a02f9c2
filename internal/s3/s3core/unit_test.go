package s3core

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/checksum"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

func TestBucketNames(t *testing.T) {
	good := []string{"abc", "my-bucket.1", "a23456789012345678901234567890123456789012345678901234567890123"}
	bad := []string{"ab", "ABC", "a_b", "-ab", "ab-", "a..b", "10.0.0.1", "xn--abc", "abc-s3alias", "a b",
		"a234567890123456789012345678901234567890123456789012345678901234"}
	for _, n := range good {
		if err := CheckBucketNameForCreate(n); err != nil {
			t.Errorf("%q refused: %v", n, err)
		}
	}
	for _, n := range bad {
		if err := CheckBucketNameForCreate(n); !errors.Is(err, errInvalidBucketName) {
			t.Errorf("%q accepted (%v)", n, err)
		}
	}
	if err := CheckBucketNameForAccess("\x00mpu\x00b"); err == nil {
		t.Error("reserved container name accepted")
	}
}

func TestCheckKey(t *testing.T) {
	cases := []struct {
		key  string
		want *APIError
	}{
		{"ok/key", nil},
		{string(make([]byte, 1025)), errKeyTooLong},
		{"bad\xff", errInvalidURI},
		{"nul\x00", ErrInvalidArgument},
	}
	for _, c := range cases {
		err := CheckKey(c.key)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%q: %v", c.key, err)
		}
	}
}

func TestDecodeXML(t *testing.T) {
	var d s3xml.DeleteRequest
	if err := DecodeXML([]byte(`<?xml version="1.0"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet><Object><Key>a&amp;b</Key></Object><Object><Key>c</Key><VersionId>null</VersionId></Object></Delete>`), &d); err != nil {
		t.Fatal(err)
	}
	if !d.Quiet || len(d.Objects) != 2 || d.Objects[0].Key != "a&b" {
		t.Fatalf("%+v", d)
	}
	for _, bad := range []string{"", "<Delete>", "<Delete></Delete><Delete></Delete>", "<Other/>", "<Delete/>trailing"} {
		var d s3xml.DeleteRequest
		if err := DecodeXML([]byte(bad), &d); !errors.Is(err, ErrMalformedXML) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	var c s3xml.CompleteMultipartUpload
	if err := DecodeXML([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"e"</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part></CompleteMultipartUpload>`), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Parts) != 1 || c.Parts[0].ChecksumCRC32 != "AAAAAA==" || httpwire.TrimETag(c.Parts[0].ETag) != "e" {
		t.Fatalf("%+v", c)
	}
}

func TestS3URLEncode(t *testing.T) {
	if got := S3URLEncode("a b+c/ü~"); got != "a%20b%2Bc/%C3%BC~" {
		t.Fatal(got)
	}
}

func TestContinuationToken(t *testing.T) {
	for _, m := range []string{"", "a/b", "ü\x01"} {
		got, err := DecodeContinuationToken(EncodeContinuationToken(m))
		if err != nil || got != m {
			t.Errorf("%q: %q %v", m, got, err)
		}
	}
	if _, err := DecodeContinuationToken("!!!"); err == nil {
		t.Error("garbage token accepted")
	}
}

func TestErrorTable(t *testing.T) {
	cases := []struct {
		err  error
		code string
	}{
		{meta.ErrNoContainer, "NoSuchBucket"},
		{meta.ErrNotFound, "NoSuchKey"},
		{meta.ErrIncompleteBody, "IncompleteBody"},
		{meta.ErrUnavailable, "ServiceUnavailable"},
		{&checksum.MismatchError{Algorithm: checksum.CRC32}, "BadDigest"},
		{checksum.ErrInvalidDigest, "InvalidDigest"},
		{errors.New("anything else"), "InternalError"},
		{ErrNoSuchUpload.WithMessage("x"), "NoSuchUpload"},
		{fmt.Errorf("engine: reading body: %w", httpwire.ErrBodyTimeout), "RequestTimeout"},
	}
	for _, c := range cases {
		if got := ToAPIError(c.err).Code; got != c.code {
			t.Errorf("%v: %s, want %s", c.err, got, c.code)
		}
	}
}

func FuzzDecodeDelete(f *testing.F) {
	f.Add([]byte(`<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object></Delete>`))
	f.Add([]byte(`<Delete><Object><Key></Key><VersionId>x</VersionId></Object></Delete>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d s3xml.DeleteRequest
		_ = DecodeXML(b, &d)
	})
}

func FuzzDecodeComplete(f *testing.F) {
	f.Add([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"e"</ETag></Part></CompleteMultipartUpload>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c s3xml.CompleteMultipartUpload
		_ = DecodeXML(b, &c)
	})
}

func FuzzDecodeCreateBucket(f *testing.F) {
	f.Add([]byte(`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c s3xml.CreateBucketConfiguration
		_ = DecodeXML(b, &c)
	})
}
