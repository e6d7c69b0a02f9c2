package swift_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSwiftSymlinks(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/links", nil, "", 201)
	c.must("PUT", "/data", nil, "", 201)

	// A dynamic link may point at nothing yet; reading it is 404 naming the target.
	c.must("PUT", "/links/l1", map[string]string{"X-Symlink-Target": "data/obj", "Content-Length": "0"}, "", 201)
	resp, _ := c.must("GET", "/links/l1", nil, "", 404)
	if got := resp.Header.Get("Content-Location"); got != "/v1/AUTH_acme/data/obj" {
		t.Fatalf("Content-Location %q", got)
	}
	c.must("PUT", "/data/obj", map[string]string{"Content-Type": "text/plain", "X-Object-Meta-Color": "blue"}, "target body", 201)
	resp, body := c.must("GET", "/links/l1", nil, "", 200)
	if body != "target body" || resp.Header.Get("Content-Location") != "/v1/AUTH_acme/data/obj" || resp.Header.Get("X-Object-Meta-Color") != "blue" {
		t.Fatalf("GET through the link: %q %v", body, resp.Header)
	}
	if resp, body := c.must("GET", "/links/l1", map[string]string{"Range": "bytes=0-5"}, "", 206); body != "target" {
		t.Fatalf("ranged GET through the link: %q %v", body, resp.Header)
	}
	c.must("HEAD", "/links/l1", nil, "", 200)
	// ?symlink=get is the link itself.
	resp, body = c.must("GET", "/links/l1?symlink=get", nil, "", 200)
	if body != "" || resp.Header.Get("X-Symlink-Target") != "data/obj" || resp.Header.Get("Content-Type") != "application/symlink" {
		t.Fatalf("the link itself: %q %v", body, resp.Header)
	}

	// Refusals: a body, itself, a malformed target, POST setting a target.
	c.must("PUT", "/links/bad", map[string]string{"X-Symlink-Target": "data/obj"}, "x", 400)
	c.must("PUT", "/links/self", map[string]string{"X-Symlink-Target": "links/self", "Content-Length": "0"}, "", 400)
	c.must("PUT", "/links/bad", map[string]string{"X-Symlink-Target": "/data/obj", "Content-Length": "0"}, "", 412)
	c.must("PUT", "/links/bad", map[string]string{"X-Symlink-Target": "noslash", "Content-Length": "0"}, "", 412)
	c.must("POST", "/links/l1", map[string]string{"X-Symlink-Target": "data/other"}, "", 400)
	c.must("GET", "/links/bad?symlink=get", nil, "", 404)

	// POST applies to the link and answers 307 to the target.
	resp = noRedirect(t, "POST", c.store+"/links/l1", map[string]string{"X-Auth-Token": c.tok, "X-Object-Meta-Note": "on the link"})
	if resp.StatusCode != 307 || resp.Header.Get("Location") != "/v1/AUTH_acme/data/obj" {
		t.Fatalf("307 Location %q", resp.Header.Get("Location"))
	}
	if resp, _ := c.must("HEAD", "/links/l1?symlink=get", nil, "", 200); resp.Header.Get("X-Object-Meta-Note") != "on the link" {
		t.Fatalf("POST did not reach the link: %v", resp.Header)
	}

	// Static links: the target must exist with that ETag, now and on every read.
	c.must("PUT", "/links/st", map[string]string{"X-Symlink-Target": "data/obj", "X-Symlink-Target-Etag": md5hex("wrong"), "Content-Length": "0"}, "", 409)
	c.must("PUT", "/links/st", map[string]string{"X-Symlink-Target": "data/none", "X-Symlink-Target-Etag": md5hex("x"), "Content-Length": "0"}, "", 409)
	c.must("PUT", "/links/st", map[string]string{"X-Symlink-Target": "data/obj", "X-Symlink-Target-Etag": md5hex("target body"), "Content-Length": "0"}, "", 201)
	if resp, _ := c.must("HEAD", "/links/st?symlink=get", nil, "", 200); resp.Header.Get("Content-Type") != "text/plain" || resp.Header.Get("X-Symlink-Target-Bytes") != "11" {
		t.Fatalf("static link: %v", resp.Header)
	}
	c.must("GET", "/links/st", nil, "", 200)

	// Listings show where links point.
	_, body = c.must("GET", "/links?format=json", nil, "", 200)
	var entries []map[string]any
	if err := json.Unmarshal([]byte(body), &entries); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e["symlink_path"] != "/v1/AUTH_acme/data/obj" || e["hash"] != md5hex("") {
			t.Errorf("listing entry %v", e)
		}
		if e["name"] == "st" && (e["symlink_etag"] != md5hex("target body") || e["symlink_bytes"] != float64(11)) {
			t.Errorf("static link listing entry %v", e)
		}
	}
	if _, body := c.must("GET", "/links?format=xml", nil, "", 200); strings.Contains(body, "symlink_") {
		t.Errorf("XML listing shows symlink parameters: %s", body)
	}

	c.must("PUT", "/data/obj", nil, "changed", 201)
	c.must("GET", "/links/st", nil, "", 409) // the static link no longer matches
	if _, body := c.must("GET", "/links/l1", nil, "", 200); body != "changed" {
		t.Fatalf("dynamic link after the change: %q", body)
	}

	// Chains: two links in a row are followed, three are too many.
	c.must("PUT", "/links/l2", map[string]string{"X-Symlink-Target": "links/l1", "Content-Length": "0"}, "", 201)
	c.must("PUT", "/links/l3", map[string]string{"X-Symlink-Target": "links/l2", "Content-Length": "0"}, "", 201)
	if _, body := c.must("GET", "/links/l2", nil, "", 200); body != "changed" {
		t.Fatalf("two links: %q", body)
	}
	if _, body := c.must("GET", "/links/l3", nil, "", 409); body != "Too many levels of symbolic links, maximum allowed is 2" {
		t.Fatalf("three links: %q", body)
	}

	// COPY copies the target, or with ?symlink=get the link.
	c.must("COPY", "/links/l1", map[string]string{"Destination": "data/copy"}, "", 201)
	if _, body := c.must("GET", "/data/copy?symlink=get", nil, "", 200); body != "changed" {
		t.Fatalf("copy through a link: %q", body)
	}
	c.must("COPY", "/links/l1?symlink=get", map[string]string{"Destination": "data/linkcopy"}, "", 201)
	if resp, _ := c.must("HEAD", "/data/linkcopy?symlink=get", nil, "", 200); resp.Header.Get("X-Symlink-Target") != "data/obj" {
		t.Fatalf("copy of the link: %v", resp.Header)
	}

	// DELETE removes the link, never the target.
	c.must("DELETE", "/links/l1", nil, "", 204)
	c.must("GET", "/data/obj", nil, "", 200)

	// Reading through a link needs read access to the target.
	bob := s.client(t, "other:bob", "bob-key")
	bob.must("PUT", "/mine", nil, "", 201)
	bob.must("PUT", "/mine/peek", map[string]string{"X-Symlink-Target": "data/obj", "X-Symlink-Target-Account": "AUTH_acme", "Content-Length": "0"}, "", 201)
	bob.must("GET", "/mine/peek", nil, "", 403)
	c.must("POST", "/data", map[string]string{"X-Container-Read": "other:bob"}, "", 204)
	if _, body := bob.must("GET", "/mine/peek", nil, "", 200); body != "changed" {
		t.Fatalf("cross-account link with access: %q", body)
	}
}
