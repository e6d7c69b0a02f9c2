package swift_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSwiftAuth(t *testing.T) {
	s := newStack(t)
	tok, storage := s.login(t, "acme:alice", "alice-key")
	if want := s.url + "/v1/AUTH_acme"; storage != want {
		t.Fatalf("storage URL %q, want %q", storage, want)
	}
	// The X-Storage-* spelling works too, and the trailing-slash path.
	resp, body := do(t, "GET", s.url+"/auth/v1.0/", map[string]string{"X-Storage-User": "acme:alice", "X-Storage-Pass": "alice-key"}, nil)
	expect(t, resp, body, 200)
	if resp.Header.Get("X-Auth-Token-Expires") != "3600" {
		t.Errorf("X-Auth-Token-Expires %q", resp.Header.Get("X-Auth-Token-Expires"))
	}
	for _, h := range []map[string]string{
		{"X-Auth-User": "acme:alice", "X-Auth-Key": "wrong"},
		{"X-Auth-User": "acme:nobody", "X-Auth-Key": "alice-key"},
		{"X-Auth-User": "acme", "X-Auth-Key": "alice-key"},
		{"X-Auth-User": "acme:alice"},
		{},
	} {
		resp, body := do(t, "GET", s.url+"/auth/v1.0", h, nil)
		expect(t, resp, body, 401)
		if resp.Header.Get("X-Auth-Token") != "" || !strings.Contains(body, "Unauthorized") {
			t.Errorf("%v: token %q body %q", h, resp.Header.Get("X-Auth-Token"), body)
		}
	}
	acme := s.url + "/v1/AUTH_acme"
	for name, hdr := range map[string]map[string]string{
		"no token":      nil,
		"unknown token": {"X-Auth-Token": "AUTH_tkdeadbeef"},
	} {
		resp, body := do(t, "GET", acme, hdr, nil)
		expect(t, resp, body, 401)
		if !strings.HasPrefix(resp.Header.Get("Www-Authenticate"), "Swift realm=") {
			t.Errorf("%s: Www-Authenticate %q", name, resp.Header.Get("Www-Authenticate"))
		}
	}
	// X-Storage-Token is accepted like X-Auth-Token.
	resp, body = do(t, "HEAD", acme, map[string]string{"X-Storage-Token": tok}, nil)
	expect(t, resp, body, 204)
	// Another account's token: 403, and nothing is created there.
	bob := s.client(t, "other:bob", "bob-key")
	resp, body = do(t, "PUT", acme+"/stolen", map[string]string{"X-Auth-Token": bob.tok}, nil)
	expect(t, resp, body, 403)
	resp, body = do(t, "HEAD", acme+"/stolen", map[string]string{"X-Auth-Token": tok}, nil)
	expect(t, resp, body, 404)
	// Outside the AUTH_ prefix: 403.
	resp, body = do(t, "GET", s.url+"/v1/acme", map[string]string{"X-Auth-Token": tok}, nil)
	expect(t, resp, body, 403)
	// The root user may act on any account.
	root := s.client(t, "root:root", "root-key")
	resp, body = do(t, "PUT", acme+"/by-root", map[string]string{"X-Auth-Token": root.tok}, nil)
	expect(t, resp, body, 201)
	// Tokens expire.
	s.clock.advance(time.Hour + time.Second)
	resp, body = do(t, "HEAD", acme, map[string]string{"X-Auth-Token": tok}, nil)
	expect(t, resp, body, 401)
}

func TestSwiftInfo(t *testing.T) {
	s := newStack(t)
	resp, body := do(t, "GET", s.url+"/info", nil, nil)
	expect(t, resp, body, 200)
	var doc map[string]map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("info: %v: %s", err, body)
	}
	sw := doc["swift"]
	for _, k := range []string{"version", "max_file_size", "max_meta_name_length", "max_meta_value_length", "max_meta_count",
		"max_meta_overall_size", "max_header_size", "max_object_name_length", "container_listing_limit", "account_listing_limit",
		"max_account_name_length", "max_container_name_length", "extra_header_count", "valid_api_versions", "strict_cors_mode", "policies"} {
		if _, ok := sw[k]; !ok {
			t.Errorf("/info lacks swift.%s", k)
		}
	}
	if sw["max_file_size"].(float64) != testMaxObject {
		t.Errorf("max_file_size %v", sw["max_file_size"])
	}
	for _, k := range []string{"bulk_upload", "bulk_delete", "slo", "etag_quoter", "versioned_writes", "object_versioning", "staticweb", "symlink"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("/info lacks %s", k)
		}
	}
	for _, k := range []string{"dlo", "account_quotas"} {
		if _, ok := doc[k]; ok {
			t.Errorf("/info claims %s, which is not implemented", k)
		}
	}
	if _, ok := doc["tempauth"]; !ok {
		t.Error("/info lacks tempauth")
	}
	if slo := doc["slo"]; slo == nil || slo["max_manifest_segments"].(float64) != 1000 {
		t.Errorf("/info slo %v", slo)
	}
	resp, body = do(t, "POST", s.url+"/info", nil, nil)
	expect(t, resp, body, 405)
}

func TestSwiftAccount(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	resp, _ := c.must("HEAD", "", nil, "", 204)
	if resp.Header.Get("X-Account-Container-Count") != "0" || resp.Header.Get("X-Account-Bytes-Used") != "0" || resp.Header.Get("X-Timestamp") == "" {
		t.Errorf("empty account headers %v", resp.Header)
	}
	c.must("GET", "", nil, "", 204) // an empty plain listing has no body
	_, body := c.must("GET", "?format=json", nil, "", 200)
	if body != "[]" {
		t.Errorf("empty JSON listing %q", body)
	}
	for _, n := range []string{"a", "c", "d"} {
		c.must("PUT", "/"+n, nil, "", 201)
	}
	_, body = c.must("GET", "", nil, "", 200)
	if body != "a\nc\nd\n" {
		t.Fatalf("plain listing %q", body)
	}
	c.must("PUT", "/c/obj", map[string]string{"Content-Length": "5"}, "hello", 201)
	resp, body = c.must("GET", "?format=json", nil, "", 200)
	var list []map[string]any
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list) != 3 {
		t.Fatalf("json listing %v %s", err, body)
	}
	if list[1]["name"] != "c" || list[1]["count"].(float64) != 1 || list[1]["bytes"].(float64) != 5 || list[1]["last_modified"] == "" {
		t.Errorf("json entry %v", list[1])
	}
	if resp.Header.Get("X-Account-Object-Count") != "1" || resp.Header.Get("X-Account-Bytes-Used") != "5" || resp.Header.Get("X-Account-Container-Count") != "3" {
		t.Errorf("account headers %v", resp.Header)
	}
	_, body = c.must("GET", "?format=xml", nil, "", 200)
	if !strings.HasPrefix(body, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<account name="AUTH_acme"><container><name>a</name><count>0</count>`) {
		t.Errorf("xml listing %q", body)
	}
	resp, _ = c.must("GET", "", map[string]string{"Accept": "application/json"}, "", 200)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("Accept: json gave %q", resp.Header.Get("Content-Type"))
	}
	c.must("GET", "", map[string]string{"Accept": "image/png"}, "", 406)
	for q, want := range map[string]string{
		"?limit=2":               "a\nc\n",
		"?marker=a":              "c\nd\n",
		"?end_marker=d":          "a\nc\n",
		"?prefix=c":              "c\n",
		"?reverse=true":          "d\nc\na\n",
		"?reverse=on&limit=1":    "d\n",
		"?limit=x":               "a\nc\nd\n",
		"?marker=a&end_marker=d": "c\n",
		"?format=plain&prefix=d": "d\n",
	} {
		_, body := c.must("GET", q, nil, "", 200)
		if body != want {
			t.Errorf("GET %s: %q, want %q", q, body, want)
		}
	}
	_, body = c.must("GET", "?limit=10001", nil, "", 412)
	if body != "Maximum limit is 10000" {
		t.Errorf("412 body %q", body)
	}
	if _, body := c.must("GET", "?delimiter=c%00", nil, "", 200); body != "a\nc\nd\n" {
		t.Errorf("listing with a two-character delimiter: %q", body)
	}
	if _, body := c.must("GET", "?marker=a%00&reverse=on", nil, "", 200); body != "a\n" {
		t.Errorf("reverse listing below marker a\\x00: %q", body)
	}
	resp, _ = c.must("POST", "", map[string]string{"X-Account-Meta-Color": "blue", "X-Account-Meta-Shape": "round"}, "", 204)
	if resp.Header.Get("X-Account-Meta-Color") != "blue" {
		t.Errorf("POST answer headers %v", resp.Header)
	}
	c.must("POST", "", map[string]string{"X-Account-Meta-" + strings.Repeat("n", 129): "x", "X-Account-Meta-Color": "red"}, "", 400)
	c.must("POST", "", map[string]string{"X-Remove-Account-Meta-Shape": "x"}, "", 204)
	resp, _ = c.must("HEAD", "", nil, "", 204)
	if resp.Header.Get("X-Account-Meta-Color") != "blue" || resp.Header.Get("X-Account-Meta-Shape") != "" {
		t.Errorf("account metadata after a refused POST and a removal: %v", resp.Header)
	}
	// Another account's metadata is its own.
	resp, _ = s.client(t, "other:bob", "bob-key").must("HEAD", "", nil, "", 204)
	if resp.Header.Get("X-Account-Meta-Color") != "" {
		t.Errorf("other account sees acme's metadata: %v", resp.Header)
	}
	c.must("PUT", "", nil, "", 405)
	c.must("DELETE", "", nil, "", 405)
}

func TestSwiftContainer(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", map[string]string{"X-Container-Meta-Color": "red"}, "", 201)
	c.must("PUT", "/box", map[string]string{"X-Container-Meta-Size": "L"}, "", 202)
	resp, _ := c.must("HEAD", "/box", nil, "", 204)
	if resp.Header.Get("X-Container-Meta-Color") != "red" || resp.Header.Get("X-Container-Meta-Size") != "L" ||
		resp.Header.Get("X-Container-Object-Count") != "0" || resp.Header.Get("X-Timestamp") == "" {
		t.Errorf("container headers %v", resp.Header)
	}
	c.must("POST", "/box", map[string]string{"X-Remove-Container-Meta-Color": "x", "X-Container-Meta-Shape": "round"}, "", 204)
	resp, _ = c.must("HEAD", "/box", nil, "", 204)
	if resp.Header.Get("X-Container-Meta-Color") != "" || resp.Header.Get("X-Container-Meta-Shape") != "round" {
		t.Errorf("after POST %v", resp.Header)
	}
	c.must("POST", "/nobox", map[string]string{"X-Container-Meta-A": "b"}, "", 404)
	c.must("HEAD", "/nobox", nil, "", 404)
	c.must("GET", "/nobox", nil, "", 404)

	for _, n := range []string{"a/1", "a/2", "b", "a/x/3", "c d"} {
		c.must("PUT", "/box/"+n, map[string]string{"Content-Type": "text/x-test"}, "data-"+n, 201)
	}
	_, body := c.must("GET", "/box", nil, "", 200)
	if body != "a/1\na/2\na/x/3\nb\nc d\n" {
		t.Errorf("plain %q", body)
	}
	_, body = c.must("GET", "/box?delimiter=/&format=json", nil, "", 200)
	var items []map[string]any
	if err := json.Unmarshal([]byte(body), &items); err != nil || len(items) != 3 {
		t.Fatalf("json %v %s", err, body)
	}
	if items[0]["subdir"] != "a/" || items[1]["name"] != "b" || items[1]["hash"] != md5hex("data-b") ||
		items[1]["bytes"].(float64) != 6 || items[1]["content_type"] != "text/x-test" {
		t.Errorf("json items %v", items)
	}
	_, body = c.must("GET", "/box?prefix=a/&delimiter=/", nil, "", 200)
	if body != "a/1\na/2\na/x/\n" {
		t.Errorf("prefix+delimiter %q", body)
	}
	_, body = c.must("GET", "/box?delimiter=/&format=xml&reverse=1", nil, "", 200)
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<container name="box"><object><name>c d</name>`
	if !strings.HasPrefix(body, want) || !strings.Contains(body, `<subdir name="a/"><name>a/</name></subdir></container>`) {
		t.Errorf("xml %q", body)
	}
	c.must("GET", "/box?limit=10001", nil, "", 412)
	c.must("GET", "/box?limit=0", nil, "", 204)
	_, body = c.must("GET", "/box?path=a", nil, "", 200) // direct children only
	if body != "a/1\na/2\n" {
		t.Errorf("path=a %q", body)
	}
	resp, _ = c.must("OPTIONS", "/box", nil, "", 200)
	if resp.Header.Get("Allow") != "DELETE, GET, HEAD, POST, PUT, OPTIONS" {
		t.Errorf("OPTIONS Allow %q", resp.Header.Get("Allow"))
	}
	c.must("OPTIONS", "/box", map[string]string{"Origin": "http://example.com"}, "", 401)
	_, body = c.must("GET", "/box?limit=2&marker=a/1", nil, "", 200)
	if body != "a/2\na/x/3\n" {
		t.Errorf("marker page %q", body)
	}

	c.must("DELETE", "/box", nil, "", 409)
	c.must("DELETE", "/nobox", nil, "", 404)
	_, body = c.must("PUT", "/"+strings.Repeat("c", 257), nil, "", 400)
	if body != "Container name length of 257 longer than 256" {
		t.Errorf("long name body %q", body)
	}
	c.must("PUT", "/acl", map[string]string{"X-Container-Read": ".r:*,.rlistings"}, "", 201)
	c.must("PUT", "/badacl", map[string]string{"X-Container-Read": ".r:"}, "", 400)
	c.must("HEAD", "/badacl", nil, "", 404) // refused: nothing stored
	_, body = c.must("PUT", "/pol", map[string]string{"X-Storage-Policy": "gold"}, "", 400)
	if body != "Invalid X-Storage-Policy 'gold'" {
		t.Errorf("unknown policy body %q", body)
	}
	c.must("PUT", "/pol", map[string]string{"X-Storage-Policy": "policy-0"}, "", 201)
	c.must("POST", "/pol", map[string]string{"X-Storage-Policy": "gold"}, "", 204) // ignored, as Swift's
	if resp, _ := c.must("HEAD", "/pol", nil, "", 204); resp.Header.Get("X-Storage-Policy") != "Policy-0" {
		t.Errorf("X-Storage-Policy %q", resp.Header.Get("X-Storage-Policy"))
	}
	c.must("DELETE", "/pol", nil, "", 204)
	c.must("PUT", "/bad%FF", nil, "", 412)
	c.must("PUT", "/empty", nil, "", 201)
	c.must("DELETE", "/empty", nil, "", 204)
	c.must("HEAD", "/empty", nil, "", 404)
	c.must("PATCH", "/box", nil, "", 405)
}

func TestSwiftObject(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	c.must("PUT", "/nobox/o", nil, "x", 404)

	resp, _ := c.must("PUT", "/box/o.txt", map[string]string{"ETag": md5hex("hello world"), "X-Object-Meta-Color": "Blue",
		"Content-Disposition": "attachment", "Content-Type": "text/x-hello"}, "hello world", 201)
	if resp.Header.Get("Etag") != md5hex("hello world") || resp.Header.Get("Last-Modified") == "" {
		t.Errorf("PUT headers %v", resp.Header)
	}
	resp, body := c.must("GET", "/box/o.txt", nil, "", 200)
	if body != "hello world" || resp.Header.Get("X-Object-Meta-Color") != "Blue" || resp.Header.Get("Content-Type") != "text/x-hello" ||
		resp.Header.Get("Content-Disposition") != "attachment" || resp.Header.Get("Etag") != md5hex("hello world") ||
		resp.Header.Get("X-Timestamp") == "" || resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Errorf("GET %q %v", body, resp.Header)
	}
	resp, body = c.must("HEAD", "/box/o.txt", nil, "", 200)
	if body != "" || resp.ContentLength != 11 || resp.Header.Get("X-Object-Meta-Color") != "Blue" {
		t.Errorf("HEAD %q %v", body, resp.Header)
	}
	// No Content-Type: guessed from the name.
	resp, _ = c.must("PUT", "/box/page.html", map[string]string{"Content-Type": ""}, "<p>", 201)
	_ = resp
	resp, _ = c.must("HEAD", "/box/page.html", nil, "", 200)
	if resp.Header.Get("Content-Type") != "text/html" {
		t.Errorf("guessed type %q", resp.Header.Get("Content-Type"))
	}

	// Ranges.
	resp, body = c.must("GET", "/box/o.txt", map[string]string{"Range": "bytes=6-"}, "", 206)
	if body != "world" || resp.Header.Get("Content-Range") != "bytes 6-10/11" {
		t.Errorf("range %q %v", body, resp.Header.Get("Content-Range"))
	}
	_, body = c.must("GET", "/box/o.txt", map[string]string{"Range": "bytes=-5"}, "", 206)
	if body != "world" {
		t.Errorf("suffix range %q", body)
	}
	resp, _ = c.must("GET", "/box/o.txt", map[string]string{"Range": "bytes=100-200"}, "", 416)
	if resp.Header.Get("Content-Range") != "bytes */11" {
		t.Errorf("416 Content-Range %q", resp.Header.Get("Content-Range"))
	}
	resp, body = c.must("GET", "/box/o.txt", map[string]string{"Range": "bytes=0-1,3-4,100-200"}, "", 206)
	ct := resp.Header.Get("Content-Type")
	boundary, ok := strings.CutPrefix(ct, "multipart/byteranges;boundary=")
	want := "--" + boundary + "\r\nContent-Type: text/x-hello\r\nContent-Range: bytes 0-1/11\r\n\r\nhe\r\n" +
		"--" + boundary + "\r\nContent-Type: text/x-hello\r\nContent-Range: bytes 3-4/11\r\n\r\nlo\r\n--" + boundary + "--"
	if !ok || body != want || resp.ContentLength != int64(len(want)) {
		t.Errorf("multi-range: %q %q (length %d)", ct, body, resp.ContentLength)
	}
	// Of several ranges only one satisfiable: an ordinary 206. None: 416.
	resp, body = c.must("GET", "/box/o.txt", map[string]string{"Range": "bytes=2-3,50-60"}, "", 206)
	if body != "ll" || resp.Header.Get("Content-Range") != "bytes 2-3/11" {
		t.Errorf("one of two ranges: %q %v", body, resp.Header)
	}
	c.must("GET", "/box/o.txt", map[string]string{"Range": "bytes=20-30,50-60"}, "", 416)
	// A malformed part, or a HEAD: the whole object.
	_, body = c.must("GET", "/box/o.txt", map[string]string{"Range": "bytes=0-1,x"}, "", 200)
	if body != "hello world" {
		t.Errorf("malformed ranges served %q", body)
	}
	c.must("HEAD", "/box/o.txt", map[string]string{"Range": "bytes=0-1"}, "", 200)

	// Conditionals.
	etag := md5hex("hello world")
	c.must("GET", "/box/o.txt", map[string]string{"If-None-Match": etag}, "", 304)
	c.must("GET", "/box/o.txt", map[string]string{"If-None-Match": `"` + etag + `"`}, "", 304)
	c.must("GET", "/box/o.txt", map[string]string{"If-Match": "nope"}, "", 412)
	c.must("GET", "/box/o.txt", map[string]string{"If-Match": etag}, "", 200)
	c.must("HEAD", "/box/o.txt", map[string]string{"If-None-Match": "*"}, "", 304)
	future := s.clock.now().Add(time.Hour).UTC().Format(http.TimeFormat)
	past := s.clock.now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	c.must("GET", "/box/o.txt", map[string]string{"If-Modified-Since": future}, "", 304)
	c.must("GET", "/box/o.txt", map[string]string{"If-Modified-Since": past}, "", 200)
	c.must("GET", "/box/o.txt", map[string]string{"If-Unmodified-Since": past}, "", 412)
	// Swift checks each condition on its own.
	c.must("GET", "/box/o.txt", map[string]string{"If-None-Match": "other", "If-Modified-Since": future}, "", 304)

	// An empty metadata value is kept.
	c.must("PUT", "/box/empty-meta", map[string]string{"X-Object-Meta-Blank": ""}, "x", 201)
	resp, _ = c.must("HEAD", "/box/empty-meta", nil, "", 200)
	if v, ok := resp.Header["X-Object-Meta-Blank"]; !ok || v[0] != "" {
		t.Errorf("empty metadata value: %v", resp.Header)
	}

	// POST replaces user metadata, keeps bytes and content type.
	_, body = c.must("POST", "/box/o.txt", map[string]string{"X-Object-Meta-Shape": "round"}, "", 202)
	if !strings.Contains(body, "Accepted") {
		t.Errorf("POST body %q", body)
	}
	resp, body = c.must("GET", "/box/o.txt", nil, "", 200)
	if body != "hello world" || resp.Header.Get("X-Object-Meta-Color") != "" || resp.Header.Get("X-Object-Meta-Shape") != "round" ||
		resp.Header.Get("Content-Type") != "text/x-hello" {
		t.Errorf("after POST %q %v", body, resp.Header)
	}
	c.must("POST", "/box/none", map[string]string{"X-Object-Meta-A": "b"}, "", 404)

	// Chunked upload.
	resp, body = c.do("PUT", "/box/chunked", nil, io.MultiReader(strings.NewReader("abc"), strings.NewReader("def")))
	expect(t, resp, body, 201)
	if resp.Header.Get("Etag") != md5hex("abcdef") {
		t.Errorf("chunked ETag %q", resp.Header.Get("Etag"))
	}

	// COPY and X-Copy-From carry metadata; X-Fresh-Metadata drops it.
	resp, _ = c.must("COPY", "/box/o.txt", map[string]string{"Destination": "box/copy1", "X-Object-Meta-Extra": "1"}, "", 201)
	if resp.Header.Get("X-Copied-From") != "box/o.txt" || resp.Header.Get("X-Copied-From-Account") != "AUTH_acme" {
		t.Errorf("COPY headers %v", resp.Header)
	}
	resp, body = c.must("GET", "/box/copy1", nil, "", 200)
	if body != "hello world" || resp.Header.Get("X-Object-Meta-Shape") != "round" || resp.Header.Get("X-Object-Meta-Extra") != "1" ||
		resp.Header.Get("Content-Type") != "text/x-hello" {
		t.Errorf("copy1 %q %v", body, resp.Header)
	}
	c.must("PUT", "/box2", nil, "", 201)
	c.must("PUT", "/box2/copy2", map[string]string{"X-Copy-From": "/box/o.txt", "X-Fresh-Metadata": "true", "X-Object-Meta-New": "n"}, "", 201)
	resp, body = c.must("GET", "/box2/copy2", nil, "", 200)
	if body != "hello world" || resp.Header.Get("X-Object-Meta-Shape") != "" || resp.Header.Get("X-Object-Meta-New") != "n" {
		t.Errorf("copy2 %q %v", body, resp.Header)
	}
	c.must("PUT", "/box/copy3", map[string]string{"X-Copy-From": "box/missing"}, "", 404)
	c.must("PUT", "/box/copy3", map[string]string{"X-Copy-From": "nonsense"}, "", 412)
	c.must("COPY", "/box/o.txt", nil, "", 412)
	c.must("COPY", "/box/o.txt", map[string]string{"Destination": "box/x", "Destination-Account": "AUTH_other"}, "", 403)

	// DELETE.
	c.must("DELETE", "/box/copy1", nil, "", 204)
	c.must("DELETE", "/box/copy1", nil, "", 404)
	c.must("GET", "/box/copy1", nil, "", 404)
}

// TestSwiftRefusals checks that requests Swift refuses are refused with its status, and that
// nothing is stored by them.
func TestSwiftRefusals(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	manyMeta := map[string]string{}
	for i := range 91 {
		manyMeta[fmt.Sprintf("X-Object-Meta-K%d", i)] = "v"
	}
	bigMeta := map[string]string{}
	for i := range 20 {
		bigMeta[fmt.Sprintf("X-Object-Meta-K%d", i)] = strings.Repeat("v", 250)
	}
	for name, tc := range map[string]struct {
		path   string
		hdr    map[string]string
		status int
		body   string
	}{
		"bad etag":       {"/box/o1", map[string]string{"ETag": md5hex("other")}, 422, "<html><h1>Unprocessable Entity</h1>"},
		"meta name":      {"/box/o2", map[string]string{"X-Object-Meta-" + strings.Repeat("n", 129): "v"}, 400, "Metadata name too long: "},
		"meta value":     {"/box/o3", map[string]string{"X-Object-Meta-Long": strings.Repeat("v", 257)}, 400, "Metadata value longer than 256: "},
		"meta count":     {"/box/o4", manyMeta, 400, "Too many metadata items; max 90"},
		"meta size":      {"/box/o5", bigMeta, 400, "Total metadata too large; max 4096"},
		"delete-at past": {"/box/o6", map[string]string{"X-Delete-At": "5"}, 400, "X-Delete-At in past"},
		"delete-after":   {"/box/o7", map[string]string{"X-Delete-After": "soon"}, 400, "Non-integer X-Delete-After"},
		"dlo":            {"/box/o8", map[string]string{"X-Object-Manifest": "box"}, 400, "container/prefix"},
		"slo bad json":   {"/box/o9?multipart-manifest=put", nil, 400, "Manifest must be valid JSON."},
		"manifest verb":  {"/box/o9?multipart-manifest=get", nil, 400, "multipart-manifest must be put"},
		"long name":      {"/box/" + strings.Repeat("o", 1025), nil, 400, "Object name length of 1025 longer than 1024"},
		"bad utf8":       {"/box/bad%FFname", nil, 412, "Invalid UTF8 or contains NULL"},
		"nul":            {"/box/nul%00name", nil, 412, "Invalid UTF8 or contains NULL"},
		"huge header":    {"/box/o10", map[string]string{"X-Object-Meta-H": strings.Repeat("h", 9000)}, 400, "Header value too long"},
		"too large":      {"/box/o11", map[string]string{"Content-Length": fmt.Sprint(testMaxObject + 1)}, 413, "Your request is too large."},
	} {
		t.Run(name, func(t *testing.T) {
			hdr := map[string]string{"X-Auth-Token": c.tok}
			for k, v := range tc.hdr {
				hdr[k] = v
			}
			var body io.Reader = strings.NewReader("payload")
			if tc.status == 413 {
				body = bytes.NewReader(make([]byte, testMaxObject+1))
			}
			req, _ := http.NewRequest("PUT", c.store+tc.path, body)
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			if tc.status == 413 {
				req.ContentLength = testMaxObject + 1
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.body) {
				t.Fatalf("status %d body %q; want %d %q", resp.StatusCode, b, tc.status, tc.body)
			}
		})
	}
	// Nothing was stored by any refused request.
	c.must("GET", "/box", nil, "", 204)

	// A chunked body over the limit: 413, nothing stored.
	resp, body := c.do("PUT", "/box/big", nil, io.MultiReader(bytes.NewReader(make([]byte, testMaxObject)), strings.NewReader("x")))
	expect(t, resp, body, 413)
	c.must("HEAD", "/box/big", nil, "", 404)

	// No length at all: 411.
	u := strings.TrimPrefix(c.store, "http://")
	host, path, _ := strings.Cut(u, "/")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /%s/box/nolen HTTP/1.1\r\nHost: %s\r\nX-Auth-Token: %s\r\nConnection: close\r\n\r\n", path, host, c.tok)
	raw, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(raw), "HTTP/1.1 411 ") {
		t.Errorf("no length: %q", raw)
	}
	c.must("HEAD", "/box/nolen", nil, "", 404)

	// POST with bad metadata changes nothing.
	c.must("PUT", "/box/keep", map[string]string{"X-Object-Meta-A": "1"}, "x", 201)
	c.must("POST", "/box/keep", map[string]string{"X-Object-Meta-B": strings.Repeat("v", 257)}, "", 400)
	resp, _ = c.must("HEAD", "/box/keep", nil, "", 200)
	if resp.Header.Get("X-Object-Meta-A") != "1" {
		t.Errorf("refused POST changed metadata: %v", resp.Header)
	}
}

func TestSwiftExpiry(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	c.must("PUT", "/box/soon", map[string]string{"X-Delete-After": "60"}, "bye", 201)
	resp, _ := c.must("HEAD", "/box/soon", nil, "", 200)
	if resp.Header.Get("X-Delete-At") == "" {
		t.Fatalf("no X-Delete-At: %v", resp.Header)
	}
	at := fmt.Sprint(s.clock.now().Unix() + 120)
	c.must("PUT", "/box/later", map[string]string{"X-Delete-At": at}, "later", 201)
	// A POST without X-Delete-At removes the expiry, as in Swift.
	c.must("PUT", "/box/kept", map[string]string{"X-Delete-After": "60"}, "kept", 201)
	c.must("POST", "/box/kept", nil, "", 202)
	resp, _ = c.must("HEAD", "/box/kept", nil, "", 200)
	if resp.Header.Get("X-Delete-At") != "" {
		t.Errorf("POST kept X-Delete-At %q", resp.Header.Get("X-Delete-At"))
	}
	// X-If-Delete-At deletes only the version with that expiry (as Swift's expirer does).
	c.must("PUT", "/box/cond", map[string]string{"X-Delete-At": at}, "c", 201)
	c.must("DELETE", "/box/cond", map[string]string{"X-If-Delete-At": "12345"}, "", 412)
	c.must("DELETE", "/box/cond", map[string]string{"X-If-Delete-At": "soon"}, "", 400)
	c.must("DELETE", "/box/cond", map[string]string{"X-If-Delete-At": at}, "", 204)
	s.clock.advance(61 * time.Second)
	c.must("GET", "/box/soon", nil, "", 404)
	c.must("HEAD", "/box/soon", nil, "", 404)
	c.must("POST", "/box/soon", nil, "", 404)
	c.must("PUT", "/box/copy", map[string]string{"X-Copy-From": "box/soon"}, "", 404)
	c.must("GET", "/box/later", nil, "", 200)
	c.must("GET", "/box/kept", nil, "", 200)
	s.clock.advance(60 * time.Second)
	c.must("GET", "/box/later", nil, "", 404)
}

func TestSwiftMetrics(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	c.must("GET", "/nobox", nil, "", 404)
	mfs, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if mf.GetName() == "cairn_swift_requests_total" {
			n = len(mf.GetMetric())
		}
	}
	if n < 3 { // Auth 200, PutContainer 201, GetContainer 404
		t.Fatalf("cairn_swift_requests_total has %d series", n)
	}
}
