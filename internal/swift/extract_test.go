package swift_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strings"
	"testing"
)

func tarball(t *testing.T, gz bool, files map[string]string, pax map[string]map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	var w *tar.Writer
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = tar.NewWriter(zw)
	} else {
		w = tar.NewWriter(&buf)
	}
	for name, body := range files {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg, PAXRecords: pax[name]}
		if strings.HasSuffix(name, "/") {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if err := w.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			w.Write([]byte(body))
		}
	}
	w.Close()
	if zw != nil {
		zw.Close()
	}
	return buf.String()
}

func TestSwiftExtractArchive(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	files := map[string]string{"box/a.txt": "alpha", "box/d/b": "beta", "other/c": "gamma", "top-level-file": "ignored", "box/dir/": ""}
	pax := map[string]map[string]string{"box/a.txt": {"SCHILY.xattr.user.mime_type": "text/x-alpha", "SCHILY.xattr.user.meta.color": "red"}}
	resp, body := c.must("PUT", "?extract-archive=tar", map[string]string{"Accept": "application/json", "X-Object-Meta-Batch": "7"},
		tarball(t, false, files, pax), 200)
	var ans map[string]any
	if err := json.Unmarshal([]byte(body), &ans); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	if ans["Number Files Created"].(float64) != 3 || ans["Response Status"] != "201 Created" || len(ans["Errors"].([]any)) != 0 {
		t.Errorf("answer %v (%v)", ans, resp.Header)
	}
	resp, got := c.must("GET", "/box/a.txt", nil, "", 200)
	if got != "alpha" || resp.Header.Get("Content-Type") != "text/x-alpha" || resp.Header.Get("X-Object-Meta-Color") != "red" || resp.Header.Get("X-Object-Meta-Batch") != "7" {
		t.Errorf("extracted object %q %v", got, resp.Header)
	}
	if _, got := c.must("GET", "/other/c", nil, "", 200); got != "gamma" {
		t.Errorf("object in a container the archive named: %q", got)
	}
	// Into a container's path, gzipped, with a name too long among them.
	files = map[string]string{"x": "1", "sub/y": "2", strings.Repeat("n", 1100): "3"}
	_, body = c.must("PUT", "/box/pre?extract-archive=tar.gz", nil, tarball(t, true, files, nil), 200)
	if !strings.Contains(body, "Number Files Created: 2\n") || !strings.Contains(body, "Response Status: 400 Bad Request\n") ||
		!strings.Contains(body, ", 400 Bad Request\n") {
		t.Errorf("plain answer %q", body)
	}
	if _, got := c.must("GET", "/box/pre/sub/y", nil, "", 200); got != "2" {
		t.Errorf("object under the URL's path: %q", got)
	}
	// Not a tar file: the answer says so, nothing is stored.
	_, body = c.must("PUT", "/fresh?extract-archive=tar", map[string]string{"Accept": "application/xml"}, "this is not a tar file at all, not even close.......", 200)
	if !strings.Contains(body, "<response_status>400 Bad Request</response_status>") || !strings.Contains(body, "Invalid Tar File") {
		t.Errorf("xml answer %q", body)
	}
	c.must("HEAD", "/fresh", nil, "", 404)
	c.must("PUT", "?extract-archive=zip", nil, "x", 400)
	// Another account's token cannot extract into this one.
	bob := s.client(t, "other:bob", "bob-key")
	resp, b := do(t, "PUT", c.store+"?extract-archive=tar", map[string]string{"X-Auth-Token": bob.tok}, strings.NewReader(tarball(t, false, map[string]string{"box/evil": "x"}, nil)))
	if resp.StatusCode != 200 || !strings.Contains(b, "box/evil, 403 Forbidden") {
		t.Errorf("foreign token: %d %q", resp.StatusCode, b)
	}
	c.must("HEAD", "/box/evil", nil, "", 404)
}
