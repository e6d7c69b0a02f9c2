package swift_test

import (
	"crypto/md5"
	"encoding/hex"
	"testing"
)

func TestSwiftDLO(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/segs", nil, "", 201)
	c.must("PUT", "/box", nil, "", 201)
	for name, body := range map[string]string{"part/01": "aaaa", "part/02": "bbbb", "part/03": "cc", "other": "zz"} {
		c.must("PUT", "/segs/"+name, nil, body, 201)
	}
	c.must("PUT", "/box/big", map[string]string{"X-Object-Manifest": "segs/part/", "Content-Type": "text/x-big"}, "", 201)
	sum := md5.Sum([]byte(md5hex("aaaa") + md5hex("bbbb") + md5hex("cc")))
	wantETag := `"` + hex.EncodeToString(sum[:]) + `"`

	resp, body := c.must("GET", "/box/big", nil, "", 200)
	if body != "aaaabbbbcc" || resp.Header.Get("Etag") != wantETag || resp.Header.Get("X-Object-Manifest") != "segs/part/" ||
		resp.Header.Get("Content-Type") != "text/x-big" {
		t.Errorf("DLO GET %q %v", body, resp.Header)
	}
	resp, _ = c.must("HEAD", "/box/big", nil, "", 200)
	if resp.Header.Get("Content-Length") != "10" || resp.Header.Get("Etag") != wantETag {
		t.Errorf("DLO HEAD %v", resp.Header)
	}
	for rng, want := range map[string]string{"bytes=3-5": "abb", "bytes=-3": "bcc", "bytes=8-": "cc"} {
		if _, body := c.must("GET", "/box/big", map[string]string{"Range": rng}, "", 206); body != want {
			t.Errorf("Range %s: %q", rng, body)
		}
	}
	c.must("GET", "/box/big", map[string]string{"Range": "bytes=10-20"}, "", 416)
	c.must("GET", "/box/big", map[string]string{"If-Match": wantETag}, "", 200)
	c.must("GET", "/box/big", map[string]string{"If-None-Match": wantETag}, "", 304)
	// The manifest itself.
	resp, body = c.must("GET", "/box/big?multipart-manifest=get", nil, "", 200)
	if body != "" || resp.Header.Get("X-Object-Manifest") != "segs/part/" {
		t.Errorf("manifest GET %q %v", body, resp.Header)
	}
	// Segments added later are part of the next read.
	c.must("PUT", "/segs/part/04", nil, "d", 201)
	if _, body := c.must("GET", "/box/big", nil, "", 200); body != "aaaabbbbccd" {
		t.Errorf("after a new segment: %q", body)
	}
	// A copy is the bytes; with ?multipart-manifest=get, the manifest.
	c.must("COPY", "/box/big", map[string]string{"Destination": "box/flat"}, "", 201)
	resp, body = c.must("GET", "/box/flat", nil, "", 200)
	if body != "aaaabbbbccd" || resp.Header.Get("X-Object-Manifest") != "" || resp.Header.Get("Etag") != md5hex("aaaabbbbccd") {
		t.Errorf("copy of a DLO: %q %v", body, resp.Header)
	}
	c.must("COPY", "/box/big?multipart-manifest=get", map[string]string{"Destination": "box/man2"}, "", 201)
	if _, body := c.must("GET", "/box/man2", nil, "", 200); body != "aaaabbbbccd" {
		t.Errorf("copied manifest: %q", body)
	}
	// A POST without the header makes it a plain object again.
	c.must("POST", "/box/man2", map[string]string{"X-Object-Meta-A": "b"}, "", 202)
	if _, body := c.must("GET", "/box/man2", nil, "", 200); body != "" {
		t.Errorf("after POST: %q", body)
	}
	// A manifest over nothing (or a missing container) is empty.
	c.must("PUT", "/box/none", map[string]string{"X-Object-Manifest": "nosuch/x"}, "", 201)
	resp, body = c.must("GET", "/box/none", nil, "", 200)
	if body != "" || resp.Header.Get("Etag") != `"`+md5hex("")+`"` {
		t.Errorf("empty DLO %q %v", body, resp.Header)
	}
	// Bad manifest headers: 400, nothing stored.
	for _, bad := range []string{"nocontainer", "/x", "c/", "c//x", "c/x?y", "c/x&y"} {
		c.must("PUT", "/box/bad", map[string]string{"X-Object-Manifest": bad}, "", 400)
	}
	c.must("HEAD", "/box/bad", nil, "", 404)
	// Another account cannot read the segments through its own manifest.
	bob := s.client(t, "other:bob", "bob-key")
	bob.must("PUT", "/mine", nil, "", 201)
	bob.must("PUT", "/mine/steal", map[string]string{"X-Object-Manifest": "segs/part/"}, "", 201)
	if _, body := bob.must("GET", "/mine/steal", nil, "", 200); body != "" {
		t.Errorf("bob's manifest read acme's segments? %q", body) // it lists bob's own (absent) container
	}
}
