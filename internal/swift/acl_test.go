package swift_test

import (
	"net/http"
	"strings"
	"testing"
)

// as is another user of the same server using an owner's storage URL, as Swift's cross-account
// ACL users do.
func (c *client) as(other *client) *client {
	return &client{t: c.t, tok: other.tok, store: c.store}
}

// anon sends a request without a token to a client's storage URL.
func (c *client) anon(method, path string, hdr map[string]string, status int) (*http.Response, string) {
	c.t.Helper()
	resp, body := do(c.t, method, c.store+path, hdr, nil)
	expect(c.t, resp, body, status)
	return resp, body
}

// TestSwiftACLNonAdmin: an ordinary user of an account can do nothing there (tempauth's rule)
// until a container ACL names it or its account.
func TestSwiftACLNonAdmin(t *testing.T) {
	s := newStack(t)
	alice := s.client(t, "acme:alice", "alice-key")
	carol := s.client(t, "acme:carol", "carol-key")
	alice.must("PUT", "/box", nil, "", 201)
	alice.must("PUT", "/box/o", nil, "data", 201)

	carol.must("GET", "", nil, "", 403)
	carol.must("HEAD", "", nil, "", 403)
	carol.must("POST", "", map[string]string{"X-Account-Meta-X": "1"}, "", 403)
	carol.must("PUT", "/mine", nil, "", 403)
	carol.must("GET", "/box", nil, "", 403)
	carol.must("HEAD", "/box", nil, "", 403)
	carol.must("GET", "/box/o", nil, "", 403)
	carol.must("PUT", "/box/n", nil, "x", 403)
	carol.must("DELETE", "/box/o", nil, "", 403)
	carol.must("POST", "/box", map[string]string{"X-Container-Read": "acme:carol"}, "", 403)
	carol.must("GET", "/nobox", nil, "", 403)

	alice.must("POST", "/box", map[string]string{"X-Container-Read": "acme:carol"}, "", 204)
	_, body := carol.must("GET", "/box", nil, "", 200)
	if body != "o\n" {
		t.Errorf("carol's listing %q", body)
	}
	resp, _ := carol.must("HEAD", "/box", nil, "", 204)
	if v := resp.Header.Get("X-Container-Read"); v != "" {
		t.Errorf("a reader sees X-Container-Read %q", v)
	}
	resp, _ = alice.must("HEAD", "/box", nil, "", 204)
	if v := resp.Header.Get("X-Container-Read"); v != "acme:carol" {
		t.Errorf("the owner sees X-Container-Read %q", v)
	}
	carol.must("GET", "/box/o", nil, "", 200)
	carol.must("PUT", "/box/n", nil, "x", 403)

	// The account entry covers every user of the account.
	alice.must("POST", "/box", map[string]string{"X-Container-Write": "acme"}, "", 204)
	carol.must("PUT", "/box/n", nil, "x", 201)
	carol.must("DELETE", "/box/n", nil, "", 204)
	carol.must("DELETE", "/box", nil, "", 403) // container writes stay the owner's

	alice.must("POST", "/box", map[string]string{"X-Remove-Container-Read": "x", "X-Container-Write": ""}, "", 204)
	resp, _ = alice.must("HEAD", "/box", nil, "", 204)
	if resp.Header.Get("X-Container-Read") != "" || resp.Header.Get("X-Container-Write") != "" {
		t.Errorf("ACLs left after removal: %v", resp.Header)
	}
	carol.must("GET", "/box/o", nil, "", 403)
}

// TestSwiftACLCrossAccount: another account's user reads and writes through the owner's
// storage URL only what the ACLs grant; copies are decided on both sides.
func TestSwiftACLCrossAccount(t *testing.T) {
	s := newStack(t)
	alice := s.client(t, "acme:alice", "alice-key")
	bob := s.client(t, "other:bob", "bob-key")
	bobAtAcme := alice.as(bob)
	alice.must("PUT", "/box", nil, "", 201)
	alice.must("PUT", "/box/o", nil, "data", 201)
	bob.must("PUT", "/mine", nil, "", 201)

	bobAtAcme.must("GET", "/box", nil, "", 403)
	bobAtAcme.must("GET", "/box/o", nil, "", 403)
	bob.must("PUT", "/mine/c", map[string]string{"X-Copy-From": "box/o", "X-Copy-From-Account": "AUTH_acme"}, "", 403)

	alice.must("POST", "/box", map[string]string{"X-Container-Read": "other"}, "", 204)
	bobAtAcme.must("GET", "/box", nil, "", 200)
	_, body := bobAtAcme.must("GET", "/box/o", nil, "", 200)
	if body != "data" {
		t.Errorf("bob reads %q", body)
	}
	bobAtAcme.must("PUT", "/box/b", nil, "x", 403)
	bobAtAcme.must("GET", "", nil, "", 403) // the account listing is the owner's
	bob.must("PUT", "/mine/c", map[string]string{"X-Copy-From": "box/o", "X-Copy-From-Account": "AUTH_acme"}, "", 201)
	bob.must("COPY", "/mine/c", map[string]string{"Destination": "box/c", "Destination-Account": "AUTH_acme"}, "", 403)

	alice.must("POST", "/box", map[string]string{"X-Container-Write": "other:bob"}, "", 204)
	bobAtAcme.must("PUT", "/box/b", nil, "x", 201)
	bob.must("COPY", "/mine/c", map[string]string{"Destination": "box/c", "Destination-Account": "AUTH_acme"}, "", 201)
	bobAtAcme.must("DELETE", "/box/b", nil, "", 204)
	bobAtAcme.must("POST", "/box", map[string]string{"X-Container-Read": ""}, "", 403)
}

// TestSwiftACLReferrers: requests without a token are let in where a .r: entry allows them
// (401 otherwise), listing only with .rlistings.
func TestSwiftACLReferrers(t *testing.T) {
	s := newStack(t)
	alice := s.client(t, "acme:alice", "alice-key")
	alice.must("PUT", "/pub", nil, "", 201)
	alice.must("PUT", "/pub/o", nil, "data", 201)

	alice.anon("GET", "/pub/o", nil, 401)
	alice.anon("GET", "", nil, 401)
	alice.must("POST", "/pub", map[string]string{"X-Container-Read": ".r:*"}, "", 204)
	_, body := alice.anon("GET", "/pub/o", nil, 200)
	if body != "data" {
		t.Errorf("anonymous read %q", body)
	}
	alice.anon("GET", "/pub", nil, 401)
	alice.anon("PUT", "/pub/x", nil, 401)
	alice.anon("DELETE", "/pub/o", nil, 401)
	alice.must("POST", "/pub", map[string]string{"X-Container-Read": ".r:*,.rlistings"}, "", 204)
	alice.anon("GET", "/pub", nil, 200)
	resp, _ := alice.anon("HEAD", "/pub", nil, 204)
	if v := resp.Header.Get("X-Container-Read"); v != "" {
		t.Errorf("anonymous caller sees X-Container-Read %q", v)
	}

	alice.must("POST", "/pub", map[string]string{"X-Container-Read": ".r:.example.com,.r:-bad.example.com"}, "", 204)
	alice.anon("GET", "/pub/o", map[string]string{"Referer": "http://www.example.com/x"}, 200)
	alice.anon("GET", "/pub/o", map[string]string{"Referer": "http://bad.example.com/x"}, 401)
	alice.anon("GET", "/pub/o", nil, 401)
}

// TestSwiftACLBadValues: an ACL that does not parse is 400 and changes nothing.
func TestSwiftACLBadValues(t *testing.T) {
	s := newStack(t)
	alice := s.client(t, "acme:alice", "alice-key")
	alice.must("PUT", "/box", map[string]string{"X-Container-Read": "acme:carol"}, "", 201)
	for _, c := range []struct{ header, value string }{
		{"X-Container-Read", ".r:"},
		{"X-Container-Read", ".unknown:x"},
		{"X-Container-Read", "a b"},
		{"X-Container-Write", ".r:*"},
		{"X-Container-Write", ".rlistings"},
	} {
		for _, m := range []string{"PUT", "POST"} {
			alice.must(m, "/box", map[string]string{c.header: c.value}, "", 400)
			alice.must(m, "/new", map[string]string{c.header: c.value}, "", 400)
		}
	}
	alice.must("HEAD", "/new", nil, "", 404)
	resp, _ := alice.must("HEAD", "/box", nil, "", 204)
	if v := resp.Header.Get("X-Container-Read"); v != "acme:carol" || resp.Header.Get("X-Container-Write") != "" {
		t.Errorf("ACLs after refusals: read %q write %q", v, resp.Header.Get("X-Container-Write"))
	}
	// Cleaned as Swift cleans: spaces go, *.example.com is .example.com.
	alice.must("POST", "/box", map[string]string{"X-Container-Read": " .r:*.example.com , acme:carol "}, "", 204)
	resp, _ = alice.must("HEAD", "/box", nil, "", 204)
	if v := resp.Header.Get("X-Container-Read"); !strings.HasPrefix(v, ".r:.example.com") {
		t.Errorf("cleaned read ACL %q", v)
	}
}

// TestSwiftAccountQuotaHeader: as with Swift's account_quotas, only a reseller admin (Cairn's
// root user) may send X-Account-Meta-Quota-Bytes; account administrators are 403 and nothing
// changes.
func TestSwiftAccountQuotaHeader(t *testing.T) {
	s := newStack(t)
	alice := s.client(t, "acme:alice", "alice-key")
	root := s.client(t, "root:root", "root-key")
	rootAtAcme := alice.as(root)
	alice.must("POST", "", map[string]string{"X-Account-Meta-Quota-Bytes": "10"}, "", 403)
	alice.must("POST", "", map[string]string{"X-Remove-Account-Meta-Quota-Bytes": "x"}, "", 403)
	resp, _ := alice.must("HEAD", "", nil, "", 204)
	if v := resp.Header.Get("X-Account-Meta-Quota-Bytes"); v != "" {
		t.Errorf("quota header stored after a refusal: %q", v)
	}
	rootAtAcme.must("POST", "", map[string]string{"X-Account-Meta-Quota-Bytes": "ten"}, "", 400)
	rootAtAcme.must("POST", "", map[string]string{"X-Account-Meta-Quota-Bytes": "10"}, "", 204)
	alice.must("PUT", "/box", nil, "", 201)
	alice.must("PUT", "/box/o", nil, "more than ten bytes", 201) // the tenant store's quota is the one enforced
}
