package s3

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/cairn-store/cairn/internal/s3/s3core"
)

func TestResolveOperation(t *testing.T) {
	copyHdr := http.Header{"X-Amz-Copy-Source": {"b/k"}}
	cases := []struct {
		method, bucket, key, query string
		hdr                        http.Header
		want                       string
		wantErr                    *s3core.APIError
	}{
		{"GET", "", "", "", nil, s3core.OpListBuckets, nil},
		{"PUT", "", "", "", nil, s3core.OpUnknown, s3core.ErrMethodNotAllowed},
		{"PUT", "b", "", "", nil, s3core.OpCreateBucket, nil},
		{"PUT", "b", "", "versioning", nil, s3core.OpPutBucketVersioning, nil},
		{"GET", "b", "", "versions", nil, s3core.OpListObjectVersions, nil},
		{"PUT", "b", "", "acl", nil, s3core.OpPutBucketACL, nil},
		{"PUT", "b", "", "policy", nil, s3core.OpPutBucketPolicy, nil},
		{"DELETE", "b", "", "policy", nil, s3core.OpDeleteBucketPolicy, nil},
		{"GET", "b", "", "policyStatus", nil, s3core.OpGetBucketPolicyStatus, nil},
		{"PUT", "b", "", "cors", nil, s3core.OpPutBucketCors, nil},
		{"DELETE", "b", "", "cors", nil, s3core.OpDeleteBucketCors, nil},
		{"PUT", "b", "k", "cors", nil, s3core.OpUnknown, s3core.ErrNotImplemented},
		{"GET", "b", "", "", nil, s3core.OpListObjects, nil},
		{"GET", "b", "", "list-type=2&x-id=ListObjectsV2", nil, s3core.OpListObjectsV2, nil},
		{"GET", "b", "", "list-type=3", nil, s3core.OpUnknown, s3core.ErrInvalidArgument},
		{"GET", "b", "", "location", nil, s3core.OpGetBucketLocation, nil},
		{"GET", "b", "", "versioning", nil, s3core.OpGetBucketVersioning, nil},
		{"GET", "b", "", "acl", nil, s3core.OpGetBucketACL, nil},
		{"GET", "b", "", "policy", nil, s3core.OpGetBucketPolicy, nil},
		{"GET", "b", "", "cors", nil, s3core.OpGetBucketCors, nil},
		{"GET", "b", "", "uploads", nil, s3core.OpListMultipartUploads, nil},
		{"GET", "b", "", "inventory", nil, s3core.OpUnknown, s3core.ErrNotImplemented},
		{"HEAD", "b", "", "", nil, s3core.OpHeadBucket, nil},
		{"DELETE", "b", "", "", nil, s3core.OpDeleteBucket, nil},
		{"DELETE", "b", "", "lifecycle", nil, s3core.OpDeleteBucketLifecycle, nil},
		{"PUT", "b", "", "lifecycle", nil, s3core.OpPutBucketLifecycle, nil},
		{"GET", "b", "", "lifecycle", nil, s3core.OpGetBucketLifecycle, nil},
		{"PUT", "b", "k", "lifecycle", nil, s3core.OpUnknown, s3core.ErrNotImplemented},
		{"POST", "b", "", "delete", nil, s3core.OpDeleteObjects, nil},
		{"POST", "b", "", "", nil, s3core.OpUnknown, s3core.ErrPreconditionFailed},
		{"POST", "b", "", "", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, s3core.OpUnknown, s3core.ErrPreconditionFailed},
		{"POST", "b", "", "", http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, s3core.OpPostObject, nil},
		{"POST", "b", "", "", http.Header{"Content-Type": {"Multipart/Form-Data; boundary=x"}}, s3core.OpPostObject, nil},
		{"POST", "b", "", "cors", http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, s3core.OpUnknown, s3core.ErrNotImplemented},
		{"PUT", "b", "k", "x-id=PutObject", nil, s3core.OpPutObject, nil},
		{"PUT", "b", "k", "", copyHdr, s3core.OpCopyObject, nil},
		{"PUT", "b", "k", "partNumber=1&uploadId=u", nil, s3core.OpUploadPart, nil},
		{"PUT", "b", "k", "partNumber=1&uploadId=u", copyHdr, s3core.OpUploadPartCopy, nil},
		{"PUT", "b", "k", "tagging", nil, s3core.OpPutObjectTagging, nil},
		{"GET", "b", "k", "tagging", nil, s3core.OpGetObjectTagging, nil},
		{"GET", "b", "k", "tagging&versionId=null", nil, s3core.OpGetObjectTagging, nil},
		{"DELETE", "b", "k", "tagging", nil, s3core.OpDeleteObjectTagging, nil},
		{"PUT", "b", "k", "tagging", copyHdr, s3core.OpPutObjectTagging, nil},
		{"HEAD", "b", "k", "tagging", nil, s3core.OpHeadObject, nil},
		{"POST", "b", "k", "tagging", nil, s3core.OpUnknown, s3core.ErrNotImplemented},
		{"GET", "b", "k", "attributes", nil, s3core.OpGetObjectAttributes, nil},
		{"PUT", "b", "k", "attributes", nil, s3core.OpUnknown, s3core.ErrNotImplemented},
		{"GET", "b", "", "tagging", nil, s3core.OpGetBucketTagging, nil},
		{"PUT", "b", "", "tagging", nil, s3core.OpPutBucketTagging, nil},
		{"DELETE", "b", "", "tagging", nil, s3core.OpDeleteBucketTagging, nil},
		{"GET", "b", "k", "", nil, s3core.OpGetObject, nil},
		{"GET", "b", "k", "acl", nil, s3core.OpGetObjectACL, nil},
		{"PUT", "b", "k", "acl", nil, s3core.OpPutObjectACL, nil},
		{"PUT", "b", "k", "policy", nil, s3core.OpUnknown, s3core.ErrNotImplemented},
		{"GET", "b", "k", "uploadId=u", nil, s3core.OpListParts, nil},
		{"GET", "b", "k", "torrent", nil, s3core.OpUnknown, s3core.ErrNotImplemented},
		{"HEAD", "b", "k", "", nil, s3core.OpHeadObject, nil},
		{"DELETE", "b", "k", "", nil, s3core.OpDeleteObject, nil},
		{"DELETE", "b", "k", "uploadId=u", nil, s3core.OpAbortMultipartUpload, nil},
		{"POST", "b", "k", "uploads", nil, s3core.OpCreateMultipartUpload, nil},
		{"POST", "b", "k", "uploadId=u", nil, s3core.OpCompleteMultipartUpload, nil},
		{"POST", "b", "k", "restore", nil, s3core.OpUnknown, s3core.ErrNotImplemented},
		{"PATCH", "b", "k", "", nil, s3core.OpUnknown, s3core.ErrMethodNotAllowed},
	}
	for _, c := range cases {
		q, _ := url.ParseQuery(c.query)
		hdr := c.hdr
		if hdr == nil {
			hdr = http.Header{}
		}
		got, err := resolveOperation(c.method, s3core.Target{Bucket: c.bucket, Key: c.key}, q, hdr)
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
		got := s3core.ParseTarget(r, domains)
		if got.Bucket != c.bucket || got.Key != c.key {
			t.Errorf("%s%s: got %+v", c.host, c.path, got)
		}
	}
}
