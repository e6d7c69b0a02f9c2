package swift_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Behaviours that Swift's own functional tests check, one test each, so that a regression names
// itself here before the functional suite runs.

func TestSwiftPutIfNoneMatch(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	star := map[string]string{"If-None-Match": "*", "Content-Length": "1"}
	c.must("PUT", "/box/o", star, "a", 201)
	c.must("PUT", "/box/o", star, "b", 412)
	_, body := c.must("GET", "/box/o", nil, "", 200)
	if body != "a" {
		t.Errorf("a refused PUT changed the object: %q", body)
	}
	_, body = c.must("PUT", "/box/o", map[string]string{"If-None-Match": "abc", "Content-Length": "1"}, "c", 400)
	if body != "If-None-Match only supports *" {
		t.Errorf("400 body %q", body)
	}
	c.must("DELETE", "/box/o", nil, "", 204)
	c.must("PUT", "/box/o", star, "d", 201)
}

func TestSwiftRangeWithWhitespace(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	c.must("PUT", "/box/o", nil, "0123456789", 201)
	for _, r := range []string{"BYTES=0-3", "bytes = 0-3", "BYTES = 0 - 3", "bytes=0 - 3", "bytes=0-3 "} {
		_, body := c.must("GET", "/box/o", map[string]string{"Range": r}, "", 206)
		if body != "0123" {
			t.Errorf("Range %q: %q", r, body)
		}
	}
}

func TestSwiftCopyRange(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	c.must("PUT", "/box/src", map[string]string{"X-Object-Meta-Kept": "yes"}, "0123456789", 201)
	resp, _ := c.must("COPY", "/box/src", map[string]string{"Destination": "box/part", "Range": "bytes=2-5"}, "", 201)
	if resp.Header.Get("Etag") != md5hex("2345") {
		t.Errorf("ranged copy ETag %q, want the MD5 of the range", resp.Header.Get("Etag"))
	}
	resp, body := c.must("GET", "/box/part", nil, "", 200)
	if body != "2345" || resp.Header.Get("X-Object-Meta-Kept") != "yes" {
		t.Errorf("ranged copy: %q %v", body, resp.Header)
	}
	c.must("PUT", "/box/tail", map[string]string{"X-Copy-From": "box/src", "Range": "bytes=-3"}, "", 201)
	if _, body := c.must("GET", "/box/tail", nil, "", 200); body != "789" {
		t.Errorf("suffix-range copy: %q", body)
	}
	c.must("COPY", "/box/src", map[string]string{"Destination": "box/none", "Range": "bytes=20-30"}, "", 416)
	c.must("HEAD", "/box/none", nil, "", 404)
}

func TestSwiftEdgePaths(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	resp, body := do(t, "PUT", s.url+"/v1", map[string]string{"X-Auth-Token": c.tok}, nil)
	expect(t, resp, body, 412)
	if body != "Bad URL" {
		t.Errorf("/v1 body %q", body)
	}
	// The realm of a 401 is quoted: a crafted account name cannot add header lines.
	resp, body = do(t, "GET", s.url+"/v1/AUTH_x%22%0AContent-Length%3A%201%0A%0Ab", nil, nil)
	expect(t, resp, body, 401)
	if got := resp.Header.Get("Www-Authenticate"); got != `Swift realm="AUTH_x%22%0AContent-Length%3A%201%0A%0Ab"` {
		t.Errorf("WWW-Authenticate %q", got)
	}
	resp, _ = c.must("HEAD", "", map[string]string{"Connection": "keep-alive"}, "", 204)
	if resp.Header.Get("Connection") != "keep-alive" {
		t.Errorf("Connection: keep-alive not answered: %v", resp.Header)
	}
}

func TestSwiftMergedMetadataLimits(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	// Each POST is within the limits alone; the second would take the stored total past 4096.
	big := strings.Repeat("v", 250)
	for _, path := range []string{"", "/box"} {
		kind := "Account"
		if path != "" {
			kind = "Container"
		}
		first, second := map[string]string{}, map[string]string{}
		for i := 0; i < 10; i++ {
			first[fmt.Sprintf("X-%s-Meta-A%02d", kind, i)] = big
			second[fmt.Sprintf("X-%s-Meta-B%02d", kind, i)] = big
		}
		c.must("POST", path, first, "", 204)
		_, body := c.must("POST", path, second, "", 400)
		if body != "Total metadata too large; max 4096" {
			t.Errorf("%s: body %q", kind, body)
		}
		resp, _ := c.must("HEAD", path, nil, "", 204)
		if resp.Header.Get("X-"+kind+"-Meta-B00") != "" || resp.Header.Get("X-"+kind+"-Meta-A00") != big {
			t.Errorf("%s: a refused POST changed the metadata", kind)
		}
		// Replacing a value keeps the total the same: allowed.
		c.must("POST", path, map[string]string{"X-" + kind + "-Meta-A00": strings.Repeat("w", 250)}, "", 204)
	}
}

func TestSwiftContainerLastModified(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	lm := func() string {
		resp, _ := c.must("HEAD", "/box", nil, "", 204)
		return resp.Header.Get("Last-Modified")
	}
	t0 := lm()
	s.clock.advance(2 * time.Second)
	c.must("POST", "/box", map[string]string{"X-Container-Meta-A": "b"}, "", 204)
	t1 := lm()
	if t1 == t0 {
		t.Errorf("POST left Last-Modified at %s", t0)
	}
	s.clock.advance(2 * time.Second)
	c.must("PUT", "/box", nil, "", 202)
	t2 := lm()
	if t2 == t1 {
		t.Errorf("PUT of an existing container left Last-Modified at %s", t1)
	}
	s.clock.advance(2 * time.Second)
	c.must("PUT", "/box/o", nil, "x", 201)
	c.must("POST", "/box/o", map[string]string{"X-Object-Meta-A": "b"}, "", 202)
	if t3 := lm(); t3 != t2 {
		t.Errorf("object writes moved the container's Last-Modified: %s, then %s", t2, t3)
	}
}

func TestSwiftListingPath(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	for _, n := range []string{"file1", "dir1/", "dir1/file2", "dir1/sub1/", "dir1/sub1/f", "dir1/sub2/x", "/top", "/d/"} {
		c.must("PUT", "/box/"+n, nil, "x", 201)
	}
	for path, want := range map[string]string{
		"":      "dir1/\nfile1\n",
		"dir1":  "dir1/file2\ndir1/sub1/\n", // sub2 has no marker object: not listed
		"dir1/": "dir1/file2\ndir1/sub1/\n",
		"/":     "/d/\n/top\n",
		"none":  "",
	} {
		status := 200
		if want == "" {
			status = 204
		}
		if _, body := c.must("GET", "/box?path="+path, nil, "", status); body != want {
			t.Errorf("path=%q: %q, want %q", path, body, want)
		}
	}
}

func TestSwiftDeleteAtFarFuture(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	c.must("PUT", "/box/far", map[string]string{"X-Delete-At": strings.Repeat("1", 100)}, "x", 201)
	resp, _ := c.must("HEAD", "/box/far", nil, "", 200)
	if got := resp.Header.Get("X-Delete-At"); got != "9999999999" {
		t.Errorf("X-Delete-At %q, want it clamped to 9999999999", got)
	}
	c.must("PUT", "/box/f", map[string]string{"X-Delete-At": "12.5e"}, "x", 400)
	c.must("PUT", "/box/f", map[string]string{"X-Delete-At": "-5"}, "x", 400)
	c.must("HEAD", "/box/f", nil, "", 404)
}

func TestSwiftDoubledSlashPath(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	resp, body := do(t, "GET", s.url+"//v1/AUTH_acme", map[string]string{"X-Auth-Token": c.tok}, nil)
	expect(t, resp, body, 404)
}

func TestSwiftCORS(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", map[string]string{"X-Container-Meta-Access-Control-Allow-Origin": "*",
		"X-Container-Meta-Access-Control-Max-Age": "60"}, "", 201)
	c.must("PUT", "/box/cat", map[string]string{"X-Object-Meta-Color": "red"}, "test", 201)
	anon := func(method string, hdr map[string]string) *http.Response {
		resp, body := do(t, method, c.store+"/box/cat", hdr, nil)
		_ = body
		return resp
	}
	if resp := anon("OPTIONS", map[string]string{"Origin": "http://m.com"}); resp.StatusCode != 401 {
		t.Errorf("preflight without a method: %d", resp.StatusCode)
	}
	resp := anon("OPTIONS", map[string]string{"Origin": "http://m.com", "Access-Control-Request-Method": "GET",
		"Access-Control-Request-Headers": "x-auth-token, range"})
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Max-Age") != "60" ||
		resp.Header.Get("Access-Control-Allow-Headers") != "x-auth-token, range" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "GET") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = c.must("GET", "/box/cat", map[string]string{"Origin": "http://m.com"}, "", 200)
	if resp.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "x-object-meta-color") {
		t.Errorf("GET with Origin: %v", resp.Header)
	}
	// An allow list without "*": only the listed origin, echoed, gets CORS headers.
	c.must("POST", "/box", map[string]string{"X-Container-Meta-Access-Control-Allow-Origin": "http://secret.com"}, "", 204)
	if resp := anon("OPTIONS", map[string]string{"Origin": "http://m.com", "Access-Control-Request-Method": "GET"}); resp.StatusCode != 401 {
		t.Errorf("preflight from an origin not allowed: %d", resp.StatusCode)
	}
	resp, _ = c.must("GET", "/box/cat", map[string]string{"Origin": "http://m.com"}, "", 200)
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("an origin not allowed got CORS headers: %v", resp.Header)
	}
	resp, _ = c.must("GET", "/box/cat", map[string]string{"Origin": "http://secret.com"}, "", 200)
	if resp.Header.Get("Access-Control-Allow-Origin") != "http://secret.com" || resp.Header.Get("Vary") != "Origin" {
		t.Errorf("allowed origin: %v", resp.Header)
	}
	// Preflights for a container without CORS settings, or an account, say no / nothing.
	c.must("PUT", "/plain", nil, "", 201)
	if resp, _ := do(t, "OPTIONS", c.store+"/plain", map[string]string{"Origin": "http://m.com", "Access-Control-Request-Method": "GET"}, nil); resp.StatusCode != 401 {
		t.Errorf("preflight on a container without CORS: %d", resp.StatusCode)
	}
}

func TestSwiftEtagQuoter(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	c.must("PUT", "/box/o", nil, "test", 201)
	etag := func() string {
		resp, _ := c.must("HEAD", "/box/o", nil, "", 200)
		return resp.Header.Get("Etag")
	}
	bare := md5hex("test")
	if e := etag(); e != bare {
		t.Errorf("default ETag %q", e)
	}
	c.must("POST", "/box", map[string]string{"X-Container-Rfc-Compliant-Etags": "t"}, "", 204)
	if e := etag(); e != `"`+bare+`"` {
		t.Errorf("container on: ETag %q", e)
	}
	resp, _ := c.must("HEAD", "/box", nil, "", 204)
	if resp.Header.Get("X-Container-Rfc-Compliant-Etags") != "True" {
		t.Errorf("container setting not shown: %v", resp.Header)
	}
	c.must("POST", "", map[string]string{"X-Account-Rfc-Compliant-Etags": "t"}, "", 204)
	c.must("POST", "/box", map[string]string{"X-Container-Rfc-Compliant-Etags": ""}, "", 204)
	if e := etag(); e != `"`+bare+`"` {
		t.Errorf("account on, container unset: ETag %q", e)
	}
	c.must("POST", "/box", map[string]string{"X-Container-Rfc-Compliant-Etags": "f"}, "", 204)
	if e := etag(); e != bare {
		t.Errorf("account on, container off: ETag %q", e)
	}
	resp, _ = c.must("PUT", "/box/p", nil, "x", 201)
	if resp.Header.Get("Etag") != md5hex("x") {
		t.Errorf("PUT answer ETag %q", resp.Header.Get("Etag"))
	}
}

func TestSwiftContainerQuotas(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", map[string]string{"X-Container-Meta-Quota-Bytes": "x"}, "", 400)
	c.must("HEAD", "/box", nil, "", 404)
	c.must("PUT", "/box", map[string]string{"X-Container-Meta-Quota-Bytes": "10", "X-Container-Meta-Quota-Count": "3"}, "", 201)
	c.must("PUT", "/box/a", nil, "123456", 201)
	_, body := c.must("PUT", "/box/b", nil, "12345", 413)
	if body != "Upload exceeds quota." {
		t.Errorf("413 body %q", body)
	}
	c.must("HEAD", "/box/b", nil, "", 404)
	c.must("PUT", "/box/b", nil, "1234", 201)
	c.must("COPY", "/box/a", map[string]string{"Destination": "box/c"}, "", 413)
	c.must("POST", "/box", map[string]string{"X-Container-Meta-Quota-Bytes": ""}, "", 204)
	c.must("PUT", "/box/c", nil, "123", 201)
	c.must("PUT", "/box/d", nil, "1", 413) // the count quota: 3 objects
	c.must("POST", "/box", map[string]string{"X-Container-Meta-Quota-Count": "zz"}, "", 400)
}

func TestSwiftAccountACLs(t *testing.T) {
	s := newStack(t)
	alice := s.client(t, "acme:alice", "alice-key")
	carol := s.client(t, "acme:carol", "carol-key")
	bob := s.client(t, "other:bob", "bob-key")
	alice.must("PUT", "/box", nil, "", 201)
	alice.must("PUT", "/box/o", nil, "data", 201)
	acct := alice.store
	as := func(c *client, method, path string, hdr map[string]string, body string, want int) http.Header {
		t.Helper()
		h := map[string]string{"X-Auth-Token": c.tok}
		for k, v := range hdr {
			h[k] = v
		}
		resp, b := do(t, method, acct+path, h, strings.NewReader(body))
		if resp.StatusCode != want {
			t.Fatalf("%s %s as %s: %d, want %d (%s)", method, path, c.tok[:10], resp.StatusCode, want, b)
		}
		return resp.Header
	}
	as(carol, "GET", "", nil, "", 403)
	as(carol, "GET", "/box/o", nil, "", 403)
	for _, bad := range []string{"{", `{"owner":["x"]}`, `{"admin":"x"}`, `{"admin":[1]}`} {
		alice.must("POST", "", map[string]string{"X-Account-Access-Control": bad}, "", 400)
	}
	alice.must("POST", "", map[string]string{"X-Account-Access-Control": `{"read-only":["acme:carol"]}`, "X-Account-Meta-Temp-Url-Key": "k"}, "", 204)
	h := as(carol, "HEAD", "", nil, "", 204)
	if h.Get("X-Account-Access-Control") != "" || h.Get("X-Account-Meta-Temp-Url-Key") != "" {
		t.Errorf("a read-only user sees privileged account metadata: %v", h)
	}
	as(carol, "GET", "/box", nil, "", 200)
	as(carol, "GET", "/box/o", nil, "", 200)
	as(carol, "PUT", "/box/new", nil, "x", 403)
	as(carol, "POST", "", nil, "", 403)
	alice.must("POST", "", map[string]string{"X-Account-Access-Control": `{"read-write":["acme"]}`}, "", 204)
	as(carol, "PUT", "/box/new", nil, "x", 201)
	as(carol, "PUT", "/made", map[string]string{"X-Container-Read": ".r:*"}, "", 201)
	if resp, _ := alice.must("HEAD", "/made", nil, "", 204); resp.Header.Get("X-Container-Read") != "" {
		t.Errorf("a read-write user set a container ACL: %v", resp.Header)
	}
	as(carol, "POST", "", map[string]string{"X-Account-Meta-X": "y"}, "", 403)
	// An administrator by ACL, from another account, is an owner here.
	alice.must("POST", "", map[string]string{"X-Account-Access-Control": `{"admin":["other:bob"]}`}, "", 204)
	as(carol, "GET", "/box/o", nil, "", 403) // no longer granted
	h = as(bob, "HEAD", "", nil, "", 204)
	if h.Get("X-Account-Access-Control") != `{"admin":["other:bob"]}` {
		t.Errorf("an ACL admin does not see the ACL: %v", h)
	}
	as(bob, "PUT", "/bobs", nil, "", 201)
}

func TestSwiftCopyFromMissingContainer(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	c.must("COPY", "/nosuch/o", map[string]string{"Destination": "box/x", "Destination-Account": "AUTH_acme"}, "", 404)
	c.must("COPY", "/box/nosuch", map[string]string{"Destination": "/box/x", "Destination-Account": "AUTH_acme"}, "", 404)
}

func TestSwiftCopyAcrossAccounts(t *testing.T) {
	s := newStack(t)
	alice := s.client(t, "acme:alice", "alice-key")
	bob := s.client(t, "other:bob", "bob-key")
	alice.must("PUT", "/box", nil, "", 201)
	alice.must("PUT", "/box/src", nil, "data", 201)
	bob.must("PUT", "/drop", map[string]string{"X-Container-Write": "acme:alice", "X-Container-Read": "acme:alice"}, "", 201)
	dst := map[string]string{"Destination": "drop/x", "Destination-Account": "AUTH_other"}
	alice.must("COPY", "/nosuch/o", dst, "", 404)
	alice.must("COPY", "/box/nosuch", dst, "", 404)
	alice.must("COPY", "/box/src", dst, "", 201)
	alice.must("COPY", "/box/src", map[string]string{"Destination": "nosuch/x", "Destination-Account": "AUTH_other"}, "", 403)
	alice.must("COPY", "/nosuch/o", map[string]string{"Destination": "nosuch/x", "Destination-Account": "AUTH_other"}, "", 404) // the source first
	if _, body := bob.must("GET", "/drop/x", nil, "", 200); body != "data" {
		t.Errorf("copied %q", body)
	}
}
