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
		wantErr                    *apiError
	}{
		{"GET", "", "", "", nil, opListBuckets, nil},
		{"PUT", "", "", "", nil, opUnknown, errMethodNotAllowed},
		{"PUT", "b", "", "", nil, opCreateBucket, nil},
		{"PUT", "b", "", "versioning", nil, opPutBucketVersioning, nil},
		{"GET", "b", "", "versions", nil, opListObjectVersions, nil},
		{"PUT", "b", "", "acl", nil, opPutBucketACL, nil},
		{"PUT", "b", "", "policy", nil, opPutBucketPolicy, nil},
		{"DELETE", "b", "", "policy", nil, opDeleteBucketPolicy, nil},
		{"GET", "b", "", "policyStatus", nil, opGetBucketPolicyStatus, nil},
		{"PUT", "b", "", "cors", nil, opPutBucketCors, nil},
		{"DELETE", "b", "", "cors", nil, opDeleteBucketCors, nil},
		{"PUT", "b", "k", "cors", nil, opUnknown, errNotImplemented},
		{"GET", "b", "", "", nil, opListObjects, nil},
		{"GET", "b", "", "list-type=2&x-id=ListObjectsV2", nil, opListObjectsV2, nil},
		{"GET", "b", "", "list-type=3", nil, opUnknown, errInvalidArgument},
		{"GET", "b", "", "location", nil, opGetBucketLocation, nil},
		{"GET", "b", "", "versioning", nil, opGetBucketVersioning, nil},
		{"GET", "b", "", "acl", nil, opGetBucketACL, nil},
		{"GET", "b", "", "policy", nil, opGetBucketPolicy, nil},
		{"GET", "b", "", "cors", nil, opGetBucketCors, nil},
		{"GET", "b", "", "uploads", nil, opListMultipartUploads, nil},
		{"GET", "b", "", "inventory", nil, opUnknown, errNotImplemented},
		{"HEAD", "b", "", "", nil, opHeadBucket, nil},
		{"DELETE", "b", "", "", nil, opDeleteBucket, nil},
		{"DELETE", "b", "", "lifecycle", nil, opDeleteBucketLifecycle, nil},
		{"PUT", "b", "", "lifecycle", nil, opPutBucketLifecycle, nil},
		{"GET", "b", "", "lifecycle", nil, opGetBucketLifecycle, nil},
		{"PUT", "b", "k", "lifecycle", nil, opUnknown, errNotImplemented},
		{"POST", "b", "", "delete", nil, opDeleteObjects, nil},
		{"POST", "b", "", "", nil, opUnknown, errPreconditionFailed},
		{"POST", "b", "", "", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, opUnknown, errPreconditionFailed},
		{"POST", "b", "", "", http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, opPostObject, nil},
		{"POST", "b", "", "", http.Header{"Content-Type": {"Multipart/Form-Data; boundary=x"}}, opPostObject, nil},
		{"POST", "b", "", "cors", http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, opUnknown, errNotImplemented},
		{"PUT", "b", "k", "x-id=PutObject", nil, opPutObject, nil},
		{"PUT", "b", "k", "", copyHdr, opCopyObject, nil},
		{"PUT", "b", "k", "partNumber=1&uploadId=u", nil, opUploadPart, nil},
		{"PUT", "b", "k", "partNumber=1&uploadId=u", copyHdr, opUploadPartCopy, nil},
		{"PUT", "b", "k", "tagging", nil, opPutObjectTagging, nil},
		{"GET", "b", "k", "tagging", nil, opGetObjectTagging, nil},
		{"GET", "b", "k", "tagging&versionId=null", nil, opGetObjectTagging, nil},
		{"DELETE", "b", "k", "tagging", nil, opDeleteObjectTagging, nil},
		{"PUT", "b", "k", "tagging", copyHdr, opPutObjectTagging, nil},
		{"HEAD", "b", "k", "tagging", nil, opHeadObject, nil},
		{"POST", "b", "k", "tagging", nil, opUnknown, errNotImplemented},
		{"GET", "b", "k", "attributes", nil, opGetObjectAttributes, nil},
		{"PUT", "b", "k", "attributes", nil, opUnknown, errNotImplemented},
		{"GET", "b", "", "tagging", nil, opGetBucketTagging, nil},
		{"PUT", "b", "", "tagging", nil, opPutBucketTagging, nil},
		{"DELETE", "b", "", "tagging", nil, opDeleteBucketTagging, nil},
		{"GET", "b", "k", "", nil, opGetObject, nil},
		{"GET", "b", "k", "acl", nil, opGetObjectACL, nil},
		{"PUT", "b", "k", "acl", nil, opPutObjectACL, nil},
		{"PUT", "b", "k", "policy", nil, opUnknown, errNotImplemented},
		{"GET", "b", "k", "uploadId=u", nil, opListParts, nil},
		{"GET", "b", "k", "torrent", nil, opUnknown, errNotImplemented},
		{"HEAD", "b", "k", "", nil, opHeadObject, nil},
		{"DELETE", "b", "k", "", nil, opDeleteObject, nil},
		{"DELETE", "b", "k", "uploadId=u", nil, opAbortMultipartUpload, nil},
		{"POST", "b", "k", "uploads", nil, opCreateMultipartUpload, nil},
		{"POST", "b", "k", "uploadId=u", nil, opCompleteMultipartUpload, nil},
		{"POST", "b", "k", "restore", nil, opUnknown, errNotImplemented},
		{"PATCH", "b", "k", "", nil, opUnknown, errMethodNotAllowed},
	}
	for _, c := range cases {
		q, _ := url.ParseQuery(c.query)
		hdr := c.hdr
		if hdr == nil {
			hdr = http.Header{}
		}
		got, err := resolveOperation(c.method, target{bucket: c.bucket, key: c.key}, q, hdr)
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
		got := parseTarget(r, domains)
		if got.bucket != c.bucket || got.key != c.key {
			t.Errorf("%s%s: got %+v", c.host, c.path, got)
		}
	}
}

func TestBucketNames(t *testing.T) {
	good := []string{"abc", "my-bucket.1", "a23456789012345678901234567890123456789012345678901234567890123"}
	bad := []string{"ab", "ABC", "a_b", "-ab", "ab-", "a..b", "10.0.0.1", "xn--abc", "abc-s3alias", "a b",
		"a234567890123456789012345678901234567890123456789012345678901234"}
	for _, n := range good {
		if err := checkBucketNameForCreate(n); err != nil {
			t.Errorf("%q refused: %v", n, err)
		}
	}
	for _, n := range bad {
		if err := checkBucketNameForCreate(n); !errors.Is(err, errInvalidBucketName) {
			t.Errorf("%q accepted (%v)", n, err)
		}
	}
	if err := checkBucketNameForAccess("\x00mpu\x00b"); err == nil {
		t.Error("reserved container name accepted")
	}
}

func TestCheckKey(t *testing.T) {
	cases := []struct {
		key  string
		want *apiError
	}{
		{"ok/key", nil},
		{string(make([]byte, 1025)), errKeyTooLong},
		{"bad\xff", errInvalidURI},
		{"nul\x00", errInvalidArgument},
	}
	for _, c := range cases {
		err := checkKey(c.key)
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
		want *apiError
	}{
		{conditions{}, nil},
		{conditions{ifMatch: `"abc"`}, nil},
		{conditions{ifMatch: `"x", "abc"`}, nil},
		{conditions{ifMatch: "*"}, nil},
		{conditions{ifMatch: `"x"`}, errPreconditionFailed},
		{conditions{ifUnmodifiedSince: before}, errPreconditionFailed},
		{conditions{ifUnmodifiedSince: same}, nil},
		{conditions{ifMatch: `"abc"`, ifUnmodifiedSince: before}, nil}, // If-Match wins
		{conditions{ifNoneMatch: `"abc"`}, errNotModified},
		{conditions{ifNoneMatch: `"x"`}, nil},
		{conditions{ifModifiedSince: after}, errNotModified},
		{conditions{ifModifiedSince: same}, errNotModified},
		{conditions{ifModifiedSince: before}, nil},
		{conditions{ifNoneMatch: `"x"`, ifModifiedSince: after}, nil}, // If-None-Match wins
		{conditions{ifModifiedSince: "garbage"}, nil},
		{conditions{ifMatch: `"x"`, ifNoneMatch: `"abc"`}, errPreconditionFailed},
	}
	for i, c := range cases {
		err := c.c.evaluate("abc", lm, errNotModified)
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
	if _, err := multipartETag([]string{"nothex"}); !errors.Is(err, errInvalidPart) {
		t.Fatalf("bad part ETag: %v", err)
	}
}

func TestDecodeXML(t *testing.T) {
	var d s3xml.DeleteRequest
	if err := decodeXML([]byte(`<?xml version="1.0"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet><Object><Key>a&amp;b</Key></Object><Object><Key>c</Key><VersionId>null</VersionId></Object></Delete>`), &d); err != nil {
		t.Fatal(err)
	}
	if !d.Quiet || len(d.Objects) != 2 || d.Objects[0].Key != "a&b" {
		t.Fatalf("%+v", d)
	}
	for _, bad := range []string{"", "<Delete>", "<Delete></Delete><Delete></Delete>", "<Other/>", "<Delete/>trailing"} {
		var d s3xml.DeleteRequest
		if err := decodeXML([]byte(bad), &d); !errors.Is(err, errMalformedXML) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	var c s3xml.CompleteMultipartUpload
	if err := decodeXML([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"e"</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part></CompleteMultipartUpload>`), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Parts) != 1 || c.Parts[0].ChecksumCRC32 != "AAAAAA==" || httpwire.TrimETag(c.Parts[0].ETag) != "e" {
		t.Fatalf("%+v", c)
	}
}

func TestS3URLEncode(t *testing.T) {
	if got := s3URLEncode("a b+c/ü~"); got != "a%20b%2Bc/%C3%BC~" {
		t.Fatal(got)
	}
}

func TestContinuationToken(t *testing.T) {
	for _, m := range []string{"", "a/b", "ü\x01"} {
		got, err := decodeContinuationToken(encodeContinuationToken(m))
		if err != nil || got != m {
			t.Errorf("%q: %q %v", m, got, err)
		}
	}
	if _, err := decodeContinuationToken("!!!"); err == nil {
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
		{errNoSuchUpload.withMessage("x"), "NoSuchUpload"},
		{fmt.Errorf("engine: reading body: %w", httpwire.ErrBodyTimeout), "RequestTimeout"},
	}
	for _, c := range cases {
		if got := toAPIError(c.err).code; got != c.code {
			t.Errorf("%v: %s, want %s", c.err, got, c.code)
		}
	}
}

func FuzzDecodeDelete(f *testing.F) {
	f.Add([]byte(`<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object></Delete>`))
	f.Add([]byte(`<Delete><Object><Key></Key><VersionId>x</VersionId></Object></Delete>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d s3xml.DeleteRequest
		_ = decodeXML(b, &d)
	})
}

func FuzzDecodeComplete(f *testing.F) {
	f.Add([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"e"</ETag></Part></CompleteMultipartUpload>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c s3xml.CompleteMultipartUpload
		_ = decodeXML(b, &c)
	})
}

func FuzzDecodeCreateBucket(f *testing.F) {
	f.Add([]byte(`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c s3xml.CreateBucketConfiguration
		_ = decodeXML(b, &c)
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
