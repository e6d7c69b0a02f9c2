package s3core

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/access"
)

func TestConditionContext(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := httptest.NewRequest("GET", "/b?list-type=2&prefix=home%2F&max-keys=7&versionId=v1", nil)
	r.RemoteAddr = "192.0.2.7:4444"
	r.TLS = &tls.ConnectionState{}
	r.Header.Set("X-Amz-Acl", "private")
	r.Header.Set("X-Amz-Tagging", "team=blue&env=prod")
	r.Header.Set("X-Amz-Copy-Source", "/src/k")
	r.Header.Set("X-Forwarded-For", "10.9.9.9") // never trusted
	rq := &Request{Op: OpListObjectsV2, Query: r.URL.Query(), Who: access.Identity{Account: "acme", User: "bob"}}
	c := conditionContext(r, rq, now)
	want := map[string][]string{
		access.KeySourceIP: {"192.0.2.7"}, access.KeySecureTransport: {"true"}, access.KeyPrefix: {"home/"},
		access.KeyMaxKeys: {"7"}, access.KeyACL: {"private"}, access.KeyVersionID: {"v1"}, access.KeyCopySource: {"/src/k"},
		access.KeyRequestObjectTag + "team": {"blue"}, access.KeyRequestObjectTag + "env": {"prod"},
		access.KeyRequestObjectTagKeys: {"team", "env"}, access.KeyPrincipalAccount: {"acme"},
	}
	for k, v := range want {
		got, ok := c.Get(k)
		if !ok || len(got) != len(v) {
			t.Errorf("%s: %v, want %v", k, got, v)
			continue
		}
		for i := range v {
			if got[i] != v[i] {
				t.Errorf("%s: %v, want %v", k, got, v)
			}
		}
	}
	if _, ok := c.Get(access.KeyDelimiter); ok {
		t.Error("delimiter present without the parameter")
	}
	// The listing keys belong to listings only.
	rq.Op = OpGetObject
	if _, ok := conditionContext(r, rq, now).Get(access.KeyPrefix); ok {
		t.Error("s3:prefix offered to GetObject")
	}
}
