package badinput

import (
	"net/http"
	"testing"
)

// TestUnsupportedOperations: subresources and headers that ask for features Cairn lacks get 501
// NotImplemented, and are never served as the plain operation they resemble (a DELETE
// ?website must not delete the bucket). Supported subresources with a bad document (a PUT
// ?tagging or ?cors that does not validate) are refused and never stored as the object.
// Methods that mean nothing get 405 MethodNotAllowed.
func TestUnsupportedOperations(t *testing.T) {
	s := startServer(t, "")
	const bucket = "unsupported"
	s.createBucket(bucket)
	s.createBucket("empty-bucket") // an empty bucket is one a misrouted DELETE would remove
	old := []byte("the object")
	s.put(bucket, "victim", old)
	before := s.snapshot(bucket)

	badTagging := []byte(`<Tagging><TagSet><Tag><Key>aws:k</Key><Value>v</Value></Tag></TagSet></Tagging>`)
	cases := []struct {
		method, bucket, key, query string
		body                       []byte
		hdr                        []string
		status                     int
		code                       string
	}{
		// ACLs, policies and tags are supported; a bad one is refused, never stored as the object.
		{http.MethodPut, bucket, "victim", "tagging", badTagging, nil, 400, "InvalidTag"},
		{http.MethodPut, bucket, "victim", "tagging", []byte("<Tagging/>"), nil, 400, "MalformedXML"},
		{http.MethodPut, bucket, "victim", "acl", []byte("<AccessControlPolicy/>"), nil, 400, "MalformedACLError"},
		// Object Lock requests on a bucket without it are refused, and change nothing.
		{http.MethodPut, bucket, "victim", "retention", []byte("<Retention/>"), nil, 400, "InvalidRequest"},
		{http.MethodPut, bucket, "victim", "legal-hold", []byte("<LegalHold><Status>ON</Status></LegalHold>"), nil, 400, "InvalidRequest"},
		{http.MethodPut, bucket, "victim", "legal-hold", []byte("<LegalHold/>"), nil, 400, "MalformedXML"},
		{http.MethodPost, bucket, "victim", "restore", []byte("<RestoreRequest><Days>1</Days></RestoreRequest>"), nil, 501, "NotImplemented"},
		{http.MethodPost, bucket, "victim", "select&select-type=2", []byte("<SelectObjectContentRequest/>"), nil, 501, "NotImplemented"},
		{http.MethodPost, bucket, "victim", "", []byte("x"), nil, 501, "NotImplemented"},
		{http.MethodGet, bucket, "victim", "torrent", nil, nil, 501, "NotImplemented"},
		{http.MethodPut, bucket, "victim", "renameObject", nil, []string{"X-Amz-Rename-Source", "/" + bucket + "/other"}, 501, "NotImplemented"},
		{http.MethodPut, bucket, "victim", "", []byte("tagged"), []string{"X-Amz-Tagging", "k=1&k=2"}, 400, "InvalidArgument"},
		{http.MethodPut, bucket, "victim", "", []byte("public"), []string{"X-Amz-Acl", "aws-exec-read"}, 501, "NotImplemented"},
		{http.MethodPut, bucket, "victim", "", []byte("locked"), []string{"X-Amz-Object-Lock-Mode", "GOVERNANCE"}, 400, "InvalidRequest"},
		{http.MethodPut, bucket, "victim", "", []byte("conditional"), []string{"If-None-Match", `"abc"`}, 501, "NotImplemented"},
		// Bucket lifecycle is supported; a configuration without an integrity header is refused.
		{http.MethodPut, bucket, "", "lifecycle", []byte("<LifecycleConfiguration/>"), nil, 400, "InvalidRequest"},
		{http.MethodPut, bucket, "", "policy", []byte(`{"Statement":[]}`), nil, 400, "MalformedPolicy"},
		// Bucket CORS is supported; a configuration without an integrity header is refused.
		{http.MethodPut, bucket, "", "cors", []byte("<CORSConfiguration/>"), nil, 400, "InvalidRequest"},
		{http.MethodPut, bucket, "", "versioning", []byte("<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>"), nil, 501, "NotImplemented"},
		{http.MethodPut, bucket, "", "versioning", []byte("<VersioningConfiguration><Status>On</Status></VersioningConfiguration>"), nil, 400, "MalformedXML"},
		{http.MethodPut, bucket, "", "tagging", badTagging, nil, 400, "InvalidTag"},
		{http.MethodPut, bucket, "", "website", []byte("<WebsiteConfiguration/>"), nil, 501, "NotImplemented"},
		{http.MethodPut, bucket, "", "notification", []byte("<NotificationConfiguration/>"), nil, 501, "NotImplemented"},
		{http.MethodPut, "new-bucket", "", "", nil, []string{"X-Amz-Acl", "log-delivery-write"}, 501, "NotImplemented"},
		{http.MethodDelete, "empty-bucket", "", "website", nil, nil, 501, "NotImplemented"},
		// A bucket POST that is not a browser form (multipart/form-data) is refused as S3 refuses it.
		{http.MethodPost, "empty-bucket", "", "", []byte("x"), nil, 412, "PreconditionFailed"},
		{http.MethodGet, bucket, "", "inventory", nil, nil, 501, "NotImplemented"},
		{http.MethodGet, bucket, "", "notification", nil, nil, 501, "NotImplemented"},
		{"PATCH", bucket, "victim", "", []byte("x"), nil, 405, "MethodNotAllowed"},
		{"PATCH", bucket, "", "", nil, nil, 405, "MethodNotAllowed"},
		{http.MethodPut, "", "", "", nil, nil, 405, "MethodNotAllowed"},
		{http.MethodDelete, "", "", "", nil, nil, 405, "MethodNotAllowed"},
	}
	for _, c := range cases {
		what := c.method + " " + c.bucket + "/" + c.key + "?" + c.query
		r := s.call(c.method, c.bucket, c.key, c.query, c.body, c.hdr...)
		expectError(t, what, r, c.status, c.code)
	}
	// DeleteBucketCors, DeleteBucketLifecycle and DeleteBucketEncryption are served, and
	// delete no bucket.
	for _, sub := range []string{"cors", "lifecycle", "encryption"} {
		if r := s.call(http.MethodDelete, "empty-bucket", "", sub, nil); r.Status != http.StatusNoContent {
			t.Errorf("DELETE ?%s: %s, want 204", sub, r)
		}
	}
	s.expectUnchanged("after unsupported operations", bucket, before)
	// DELETE ?tagging is served: it removes the bucket's tags, never the bucket.
	if r := s.call(http.MethodDelete, "empty-bucket", "", "tagging", nil); r.Status != http.StatusNoContent {
		t.Errorf("DELETE empty-bucket?tagging: %s, want 204", r)
	}
	for _, b := range []struct {
		name   string
		status int
	}{{"empty-bucket", http.StatusOK}, {"new-bucket", http.StatusNotFound}} {
		if r := s.call(http.MethodHead, b.name, "", "", nil); r.Status != b.status {
			t.Errorf("HEAD bucket %s: %s, want %d", b.name, r, b.status)
		}
	}
}
