package swift_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/url"
	"strings"
	"testing"
	"time"
)

func tempSig(newHash func() hash.Hash, key, method string, expires int64, path string) []byte {
	m := hmac.New(newHash, []byte(key))
	fmt.Fprintf(m, "%s\n%d\n%s", method, expires, path)
	return m.Sum(nil)
}

func TestSwiftTempURL(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("POST", "", map[string]string{"X-Account-Meta-Temp-URL-Key": "acct-secret"}, "", 204)
	c.must("PUT", "/box", map[string]string{"X-Container-Meta-Temp-URL-Key-2": "box-secret"}, "", 201)
	c.must("PUT", "/box/a b.txt", map[string]string{"X-Object-Meta-Private": "p", "X-Object-Meta-Public-Tag": "t"}, "hello", 201)
	c.must("PUT", "/other", nil, "", 201)
	c.must("PUT", "/other/x", nil, "other", 201)

	exp := s.clock.now().Add(time.Hour).Unix()
	objPath := "/v1/AUTH_acme/box/a b.txt"
	url := func(sig string, expires any, extra string) string {
		return s.url + "/v1/AUTH_acme/box/a%20b.txt?temp_url_sig=" + url.QueryEscape(sig) + fmt.Sprintf("&temp_url_expires=%v", expires) + extra
	}
	hexSig := func(h func() hash.Hash, key, method string, e int64, p string) string {
		return hex.EncodeToString(tempSig(h, key, method, e, p))
	}
	// GET with each digest and key; no token.
	for _, sig := range []string{
		hexSig(sha1.New, "acct-secret", "GET", exp, objPath),
		hexSig(sha256.New, "box-secret", "GET", exp, objPath),
		hexSig(sha512.New, "acct-secret", "GET", exp, objPath),
		"sha512:" + base64.RawURLEncoding.EncodeToString(tempSig(sha512.New, "acct-secret", "GET", exp, objPath)),
	} {
		resp, body := do(t, "GET", url(sig, exp, ""), nil, nil)
		expect(t, resp, body, 200)
		if body != "hello" || resp.Header.Get("X-Object-Meta-Private") != "" || resp.Header.Get("X-Object-Meta-Public-Tag") != "t" ||
			!strings.HasPrefix(resp.Header.Get("Content-Disposition"), `attachment; filename="a b.txt"`) || resp.Header.Get("Expires") == "" {
			t.Errorf("temp URL GET: %q %v", body, resp.Header)
		}
	}
	get := hexSig(sha256.New, "acct-secret", "GET", exp, objPath)
	// A HEAD may use the GET signature; inline and filename shape Content-Disposition.
	resp, body := do(t, "HEAD", url(get, exp, ""), nil, nil)
	expect(t, resp, body, 200)
	resp, body = do(t, "GET", url(get, exp, "&inline"), nil, nil)
	expect(t, resp, body, 200)
	if resp.Header.Get("Content-Disposition") != "inline" {
		t.Errorf("inline: %v", resp.Header)
	}
	resp, body = do(t, "GET", url(get, exp, "&filename=r%C3%A9sum%C3%A9.txt"), nil, nil)
	expect(t, resp, body, 200)
	if resp.Header.Get("Content-Disposition") != `attachment; filename="r%C3%A9sum%C3%A9.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt` {
		t.Errorf("filename: %q", resp.Header.Get("Content-Disposition"))
	}
	// ISO 8601 expiry.
	iso := time.Unix(exp, 0).UTC().Format("2006-01-02T15:04:05Z")
	resp, body = do(t, "GET", url(get, iso, ""), nil, nil)
	expect(t, resp, body, 200)
	// Refusals: 401 "Temp URL invalid", nothing else revealed.
	for name, u := range map[string]string{
		"wrong method":  url(get, exp, "") + "",
		"expired":       url(hexSig(sha256.New, "acct-secret", "GET", 1000, objPath), 1000, ""),
		"other object":  strings.Replace(url(get, exp, ""), "a%20b.txt", "x", 1),
		"bad signature": url(strings.Repeat("0", 64), exp, ""),
		"no expiry":     s.url + "/v1/AUTH_acme/box/a%20b.txt?temp_url_sig=" + get,
		"md5 digest":    url("md5:"+base64.StdEncoding.EncodeToString(make([]byte, 16)), exp, ""),
	} {
		method := "GET"
		if name == "wrong method" {
			method = "DELETE"
		}
		resp, body := do(t, method, u, nil, nil)
		if resp.StatusCode != 401 || (method == "GET" && body != "401 Unauthorized: Temp URL invalid\n") {
			t.Errorf("%s: %d %q", name, resp.StatusCode, body)
		}
	}
	c.must("GET", "/box/a b.txt", nil, "", 200) // untouched
	// PUT with a PUT signature; not with headers that would point elsewhere.
	put := hexSig(sha256.New, "box-secret", "PUT", exp, "/v1/AUTH_acme/box/new")
	putURL := s.url + "/v1/AUTH_acme/box/new?temp_url_sig=" + put + fmt.Sprintf("&temp_url_expires=%d", exp)
	resp, body = do(t, "PUT", putURL, nil, strings.NewReader("uploaded"))
	expect(t, resp, body, 201)
	resp, body = do(t, "PUT", putURL, map[string]string{"X-Copy-From": "other/x"}, strings.NewReader(""))
	expect(t, resp, body, 400)
	resp, body = do(t, "PUT", putURL, map[string]string{"X-Object-Manifest": "other/x"}, strings.NewReader(""))
	expect(t, resp, body, 400)
	if _, body := c.must("GET", "/box/new", nil, "", 200); body != "uploaded" {
		t.Errorf("temp URL PUT stored %q", body)
	}
	// A prefix signature covers the objects under it.
	pre := hexSig(sha256.New, "acct-secret", "GET", exp, "prefix:/v1/AUTH_acme/box/a ")
	resp, body = do(t, "GET", url(pre, exp, "&temp_url_prefix=a%20"), nil, nil)
	expect(t, resp, body, 200)
	resp, body = do(t, "GET", strings.Replace(url(pre, exp, "&temp_url_prefix=a%20"), "a%20b.txt", "new", 1), nil, nil)
	expect(t, resp, body, 401)
	// A reader of the container does not see its temp URL key; its administrator does.
	resp, _ = c.must("HEAD", "/box", nil, "", 204)
	if resp.Header.Get("X-Container-Meta-Temp-Url-Key-2") != "box-secret" {
		t.Errorf("admin does not see the key: %v", resp.Header)
	}
	c.must("POST", "/box", map[string]string{"X-Container-Read": "other"}, "", 204)
	bob := s.client(t, "other:bob", "bob-key")
	resp, body = do(t, "HEAD", c.store+"/box", map[string]string{"X-Auth-Token": bob.tok}, nil)
	expect(t, resp, body, 204)
	if resp.Header.Get("X-Container-Meta-Temp-Url-Key-2") != "" {
		t.Errorf("a reader sees the temp URL key: %v", resp.Header)
	}
}
