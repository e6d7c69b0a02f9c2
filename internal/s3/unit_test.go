package s3

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/checksum"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

func TestResolveOperation(t *testing.T) {
	copyHdr := http.Header{"X-Amz-Copy-Source": {"b/k"}}
	cases := []struct {
		method, bucket, key, query string
		hdr                        http.Header
		want                       string
		wantErr                    *APIError
	}{
		{"GET", "", "", "", nil, OpListBuckets, nil},
		{"PUT", "", "", "", nil, OpUnknown, ErrMethodNotAllowed},
		{"PUT", "b", "", "", nil, OpCreateBucket, nil},
		{"PUT", "b", "", "versioning", nil, OpPutBucketVersioning, nil},
		{"GET", "b", "", "versions", nil, OpListObjectVersions, nil},
		{"PUT", "b", "", "acl", nil, OpPutBucketACL, nil},
		{"PUT", "b", "", "policy", nil, OpPutBucketPolicy, nil},
		{"DELETE", "b", "", "policy", nil, OpDeleteBucketPolicy, nil},
		{"GET", "b", "", "policyStatus", nil, OpGetBucketPolicyStatus, nil},
		{"PUT", "b", "", "cors", nil, OpPutBucketCors, nil},
		{"DELETE", "b", "", "cors", nil, OpDeleteBucketCors, nil},
		{"PUT", "b", "k", "cors", nil, OpUnknown, ErrNotImplemented},
		{"GET", "b", "", "", nil, OpListObjects, nil},
		{"GET", "b", "", "list-type=2&x-id=ListObjectsV2", nil, OpListObjectsV2, nil},
		{"GET", "b", "", "list-type=3", nil, OpUnknown, ErrInvalidArgument},
		{"GET", "b", "", "location", nil, OpGetBucketLocation, nil},
		{"GET", "b", "", "versioning", nil, OpGetBucketVersioning, nil},
		{"GET", "b", "", "acl", nil, OpGetBucketACL, nil},
		{"GET", "b", "", "policy", nil, OpGetBucketPolicy, nil},
		{"GET", "b", "", "cors", nil, OpGetBucketCors, nil},
		{"GET", "b", "", "uploads", nil, OpListMultipartUploads, nil},
		{"GET", "b", "", "inventory", nil, OpUnknown, ErrNotImplemented},
		{"HEAD", "b", "", "", nil, OpHeadBucket, nil},
		{"DELETE", "b", "", "", nil, OpDeleteBucket, nil},
		{"DELETE", "b", "", "lifecycle", nil, OpDeleteBucketLifecycle, nil},
		{"PUT", "b", "", "lifecycle", nil, OpPutBucketLifecycle, nil},
		{"GET", "b", "", "lifecycle", nil, OpGetBucketLifecycle, nil},
		{"PUT", "b", "k", "lifecycle", nil, OpUnknown, ErrNotImplemented},
		{"POST", "b", "", "delete", nil, OpDeleteObjects, nil},
		{"POST", "b", "", "", nil, OpUnknown, ErrPreconditionFailed},
		{"POST", "b", "", "", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, OpUnknown, ErrPreconditionFailed},
		{"POST", "b", "", "", http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, OpPostObject, nil},
		{"POST", "b", "", "", http.Header{"Content-Type": {"Multipart/Form-Data; boundary=x"}}, OpPostObject, nil},
		{"POST", "b", "", "cors", http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, OpUnknown, ErrNotImplemented},
		{"PUT", "b", "k", "x-id=PutObject", nil, OpPutObject, nil},
		{"PUT", "b", "k", "", copyHdr, OpCopyObject, nil},
		{"PUT", "b", "k", "partNumber=1&uploadId=u", nil, OpUploadPart, nil},
		{"PUT", "b", "k", "partNumber=1&uploadId=u", copyHdr, OpUploadPartCopy, nil},
		{"PUT", "b", "k", "tagging", nil, OpPutObjectTagging, nil},
		{"GET", "b", "k", "tagging", nil, OpGetObjectTagging, nil},
		{"GET", "b", "k", "tagging&versionId=null", nil, OpGetObjectTagging, nil},
		{"DELETE", "b", "k", "tagging", nil, OpDeleteObjectTagging, nil},
		{"PUT", "b", "k", "tagging", copyHdr, OpPutObjectTagging, nil},
		{"HEAD", "b", "k", "tagging", nil, OpHeadObject, nil},
		{"POST", "b", "k", "tagging", nil, OpUnknown, ErrNotImplemented},
		{"GET", "b", "k", "attributes", nil, OpGetObjectAttributes, nil},
		{"PUT", "b", "k", "attributes", nil, OpUnknown, ErrNotImplemented},
		{"GET", "b", "", "tagging", nil, OpGetBucketTagging, nil},
		{"PUT", "b", "", "tagging", nil, OpPutBucketTagging, nil},
		{"DELETE", "b", "", "tagging", nil, OpDeleteBucketTagging, nil},
		{"GET", "b", "k", "", nil, OpGetObject, nil},
		{"GET", "b", "k", "acl", nil, OpGetObjectACL, nil},
		{"PUT", "b", "k", "acl", nil, OpPutObjectACL, nil},
		{"PUT", "b", "k", "policy", nil, OpUnknown, ErrNotImplemented},
		{"GET", "b", "k", "uploadId=u", nil, OpListParts, nil},
		{"GET", "b", "k", "torrent", nil, OpUnknown, ErrNotImplemented},
		{"HEAD", "b", "k", "", nil, OpHeadObject, nil},
		{"DELETE", "b", "k", "", nil, OpDeleteObject, nil},
		{"DELETE", "b", "k", "uploadId=u", nil, OpAbortMultipartUpload, nil},
		{"POST", "b", "k", "uploads", nil, OpCreateMultipartUpload, nil},
		{"POST", "b", "k", "uploadId=u", nil, OpCompleteMultipartUpload, nil},
		{"POST", "b", "k", "restore", nil, OpUnknown, ErrNotImplemented},
		{"PATCH", "b", "k", "", nil, OpUnknown, ErrMethodNotAllowed},
	}
	for _, c := range cases {
		q, _ := url.ParseQuery(c.query)
		hdr := c.hdr
		if hdr == nil {
			hdr = http.Header{}
		}
		got, err := resolveOperation(c.method, Target{Bucket: c.bucket, Key: c.key}, q, hdr)
		if got != c.want || (c.wantErr == nil) != (err == nil) || (c.wantErr != nil && !errors.Is(err, c.wantErr)) {
			t.Errorf("%s /%s/%s?%s: got %s, %v; want %s, %v", c.method, c.bucket, c.key, c.query, got, err, c.want, c.wantErr)
		}
	}
}

func TestParseTarget(t *testing.T) {
	domains := []string{"s3.example.com"}
	cases := []struct{ host, path, bucket, key string }{
		{"localhost:8787", "/", "", ""},
		{"localhost:8787", "/b", "b", ""},
		{"localhost:8787", "/b/", "b", ""},
		{"localhost:8787", "/b/a//c/../d/", "b", "a//c/../d/"},
		{"b.s3.example.com", "/k/x", "b", "k/x"},
		{"B.S3.Example.com:443", "/", "b", ""},
		{"s3.example.com", "/b/k", "b", "k"},
	}
	for _, c := range cases {
		r := &http.Request{Host: c.host, URL: &url.URL{Path: c.path}}
		got := ParseTarget(r, domains)
		if got.Bucket != c.bucket || got.Key != c.key {
			t.Errorf("%s%s: got %+v", c.host, c.path, got)
		}
	}
}

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

func TestParseRange(t *testing.T) {
	cases := []struct {
		h    string
		want *meta.Range
		err  bool
	}{
		{"", nil, false},
		{"bytes=0-9", &meta.Range{Start: 0, End: 9}, false},
		{"bytes=5-", &meta.Range{Start: 5, End: -1}, false},
		{"bytes=-3", &meta.Range{Suffix: 3}, false},
		{"bytes=-0", nil, true},
		{"bytes=9-5", nil, false},     // invalid: ignored
		{"bytes=0-1,4-5", nil, false}, // several ranges: ignored
		{"items=0-1", nil, false},
		{"bytes=a-b", nil, false},
	}
	for _, c := range cases {
		got, err := parseRange(c.h)
		if (err != nil) != c.err || (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%q: got %+v, %v", c.h, got, err)
		}
	}
}

func TestConditions(t *testing.T) {
	lm := time.Date(2025, 5, 1, 12, 0, 0, 500, time.UTC)
	before, after := lm.Add(-time.Hour).Format(http.TimeFormat), lm.Add(time.Hour).Format(http.TimeFormat)
	same := lm.Format(http.TimeFormat)
	cases := []struct {
		c    conditions
		want *APIError
	}{
		{conditions{}, nil},
		{conditions{ifMatch: `"abc"`}, nil},
		{conditions{ifMatch: `"x", "abc"`}, nil},
		{conditions{ifMatch: "*"}, nil},
		{conditions{ifMatch: `"x"`}, ErrPreconditionFailed},
		{conditions{ifUnmodifiedSince: before}, ErrPreconditionFailed},
		{conditions{ifUnmodifiedSince: same}, nil},
		{conditions{ifMatch: `"abc"`, ifUnmodifiedSince: before}, nil}, // If-Match wins
		{conditions{ifNoneMatch: `"abc"`}, ErrNotModified},
		{conditions{ifNoneMatch: `"x"`}, nil},
		{conditions{ifModifiedSince: after}, ErrNotModified},
		{conditions{ifModifiedSince: same}, ErrNotModified},
		{conditions{ifModifiedSince: before}, nil},
		{conditions{ifNoneMatch: `"x"`, ifModifiedSince: after}, nil}, // If-None-Match wins
		{conditions{ifModifiedSince: "garbage"}, nil},
		{conditions{ifMatch: `"x"`, ifNoneMatch: `"abc"`}, ErrPreconditionFailed},
	}
	for i, c := range cases {
		err := c.c.evaluate("abc", lm, ErrNotModified)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("case %d %+v: %v", i, c.c, err)
		}
	}
}

func TestMultipartETag(t *testing.T) {
	// Two parts whose MD5s are those of "a" and "b".
	got, err := multipartETag([]string{"0cc175b9c0f1b6a831c399e269772661", "92eb5ffee6ae2fec3ad71c777531578f"})
	// hex(md5(md5("a") || md5("b"))), computed independently.
	if err != nil || got != "96e024ba2074fe77e8e965ba43a704be-2" {
		t.Fatalf("multipartETag: %q %v", got, err)
	}
	if _, err := multipartETag([]string{"nothex"}); !errors.Is(err, ErrInvalidPart) {
		t.Fatalf("bad part ETag: %v", err)
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

func FuzzParseRange(f *testing.F) {
	f.Add("bytes=0-1")
	f.Add("bytes=-5")
	f.Fuzz(func(t *testing.T, h string) {
		r, err := parseRange(h)
		if r != nil && err != nil {
			t.Fatal("range and error")
		}
		if r != nil {
			_, _, _ = r.Resolve(100)
		}
	})
}
