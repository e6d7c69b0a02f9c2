package swift_test

import (
	"net/http"
	"strings"
	"testing"
)

// noRedirect sends a request without following redirects.
func noRedirect(t *testing.T, method, url string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestSwiftStaticWeb(t *testing.T) {
	s := newStack(t)
	alice := s.client(t, "acme:alice", "alice-key")
	alice.must("PUT", "/site", map[string]string{"X-Container-Read": ".r:*,.rlistings"}, "", 201)
	for name, body := range map[string]string{"index.html": "top index", "docs/a.txt": "a", "docs/deep/b.txt": "b", "404err.html": "custom not found", "style.css": "css"} {
		alice.must("PUT", "/site/"+name, nil, body, 201)
	}
	alice.must("PUT", "/site/docs", map[string]string{"Content-Type": "application/directory", "Content-Length": "0"}, "", 201)

	// Not a web site yet: a plain anonymous listing (JSON/plain), no index.
	if _, body := alice.anon("GET", "/site", nil, 200); strings.Contains(body, "<html") {
		t.Fatalf("listing before web settings: %q", body)
	}

	alice.must("POST", "/site", map[string]string{"X-Container-Meta-Web-Index": "index.html", "X-Container-Meta-Web-Error": "err.html"}, "", 204)
	resp := noRedirect(t, "GET", alice.store+"/site", nil)
	if resp.StatusCode != 301 || !strings.HasSuffix(resp.Header.Get("Location"), "/v1/AUTH_acme/site/") || !strings.HasPrefix(resp.Header.Get("Location"), "http://") {
		t.Fatalf("container without slash: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, body := alice.anon("GET", "/site/", nil, 200); body != "top index" {
		t.Fatalf("index: %q", body)
	}
	// The owner sees the site only with X-Web-Mode.
	if _, body := alice.must("GET", "/site/", map[string]string{"X-Web-Mode": "true"}, "", 200); body != "top index" {
		t.Fatalf("index in web mode: %q", body)
	}
	if _, body := alice.must("GET", "/site/", nil, "", 200); strings.Contains(body, "top index") {
		t.Fatalf("the owner's plain listing served the index: %q", body)
	}
	// A missing object gets the error page, with 404; an object is served as it is.
	if _, body := alice.anon("GET", "/site/nothing", nil, 404); body != "custom not found" {
		t.Fatalf("error page: %q", body)
	}
	if _, body := alice.anon("GET", "/site/docs/a.txt", nil, 200); body != "a" {
		t.Fatalf("object: %q", body)
	}
	// A directory (its marker object, or a pseudo-directory) without an index and with
	// listings off: 404.
	alice.anon("GET", "/site/docs/", nil, 404)

	alice.must("POST", "/site", map[string]string{"X-Container-Meta-Web-Listings": "true", "X-Container-Meta-Web-Listings-Css": "style.css"}, "", 204)
	if resp := noRedirect(t, "GET", alice.store+"/site/docs", nil); resp.StatusCode != 301 {
		t.Fatalf("directory marker without slash: %d", resp.StatusCode)
	}
	_, body := alice.anon("GET", "/site/docs/", nil, 200)
	for _, want := range []string{"Listing of /v1/AUTH_acme/site/docs/", `<a href="a.txt">a.txt</a>`, `<a href="deep/">deep/</a>`, `<a href="../">../</a>`, `href="../style.css"`} {
		if !strings.Contains(body, want) {
			t.Errorf("listing lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "b.txt") || strings.Contains(body, "index.html") {
		t.Errorf("listing shows what is not in the directory:\n%s", body)
	}
	alice.anon("GET", "/site/docs/none/", nil, 404)
	if resp, _ := alice.anon("HEAD", "/site/docs/", nil, 200); resp.Header.Get("Content-Type") != "text/html; charset=UTF-8" {
		t.Errorf("HEAD of a listing: %v", resp.Header)
	}

	// Without read access, no web site either.
	alice.must("POST", "/site", map[string]string{"X-Container-Read": ""}, "", 204)
	alice.anon("GET", "/site/", nil, 401)
	alice.anon("GET", "/site/docs/", nil, 401)
}
