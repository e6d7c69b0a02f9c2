package swift_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// listing returns a container's JSON listing (names and content types, in order).
func (c *client) listing(t *testing.T, path string) (names, types []string) {
	t.Helper()
	_, body := c.must("GET", path+"?format=json", nil, "", 200)
	var entries []struct {
		Name        string `json:"name"`
		ContentType string `json:"content_type"`
	}
	if err := json.Unmarshal([]byte(body), &entries); err != nil {
		t.Fatalf("listing %s: %v: %s", path, err, body)
	}
	for _, e := range entries {
		names, types = append(names, e.Name), append(types, e.ContentType)
	}
	return names, types
}

func TestSwiftVersionsLocation(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/archive", nil, "", 201)
	c.must("PUT", "/docs", map[string]string{"X-Versions-Location": "archive"}, "", 201)
	resp, _ := c.must("HEAD", "/docs", nil, "", 204)
	if got := resp.Header.Get("X-Versions-Location"); got != "archive" {
		t.Fatalf("X-Versions-Location %q", got)
	}

	for i, v := range []string{"v1", "v2", "v3"} {
		c.must("PUT", "/docs/report", map[string]string{"Content-Type": "text/" + v, "X-Object-Meta-Version": v}, v, 201)
		names, _ := c.listing(t, "/archive")
		if len(names) != i {
			t.Fatalf("after %d writes the archive holds %q", i+1, names)
		}
	}
	// POST changes metadata without a new version.
	c.must("POST", "/docs/report", map[string]string{"X-Object-Meta-Version": "v3b"}, "", 202)
	names, types := c.listing(t, "/archive")
	if len(names) != 2 || types[0] != "text/v1" || types[1] != "text/v2" || !strings.HasPrefix(names[0], fmt.Sprintf("%03x%s/", 6, "report")) {
		t.Fatalf("archive %q %q", names, types)
	}
	resp, body := c.must("GET", "/archive/"+names[0], nil, "", 200)
	if body != "v1" || resp.Header.Get("X-Object-Meta-Version") != "v1" {
		t.Fatalf("archived v1: %q %v", body, resp.Header)
	}

	// Each DELETE brings back the version before, metadata and all, until none is left.
	for _, want := range []string{"v2", "v1"} {
		c.must("DELETE", "/docs/report", nil, "", 204)
		resp, body := c.must("GET", "/docs/report", nil, "", 200)
		if body != want || resp.Header.Get("Content-Type") != "text/"+want || resp.Header.Get("X-Object-Meta-Version") != want {
			t.Fatalf("after DELETE: %q %v, want %s", body, resp.Header, want)
		}
	}
	if names, _ := c.listing(t, "/archive"); len(names) != 0 {
		t.Fatalf("archive after restoring everything: %q", names)
	}
	c.must("DELETE", "/docs/report", nil, "", 204)
	c.must("GET", "/docs/report", nil, "", 404)

	// A copy onto a versioned object archives it too.
	c.must("PUT", "/docs/a", nil, "old", 201)
	c.must("PUT", "/docs/b", nil, "new", 201)
	c.must("COPY", "/docs/b", map[string]string{"Destination": "docs/a"}, "", 201)
	if names, _ := c.listing(t, "/archive"); len(names) != 1 {
		t.Fatalf("archive after a copy: %q", names)
	}

	// Without its archive container, a write that would archive is refused and changes nothing.
	c.must("PUT", "/lost", map[string]string{"X-Versions-Location": "nowhere"}, "", 201)
	c.must("PUT", "/lost/o", nil, "first", 201) // nothing to archive yet
	c.must("PUT", "/lost/o", nil, "second", 412)
	if _, body := c.must("GET", "/lost/o", nil, "", 200); body != "first" {
		t.Fatalf("a refused versioned write changed the object: %q", body)
	}

	// Clearing the setting: an empty value, or X-Remove-Versions-Location.
	c.must("POST", "/docs", map[string]string{"X-Versions-Location": ""}, "", 204)
	if resp, _ := c.must("HEAD", "/docs", nil, "", 204); resp.Header.Get("X-Versions-Location") != "" {
		t.Fatal("X-Versions-Location still set")
	}
	c.must("POST", "/docs", map[string]string{"X-Versions-Location": "archive"}, "", 204)
	c.must("POST", "/docs", map[string]string{"X-Remove-Versions-Location": "x"}, "", 204)
	c.must("PUT", "/docs/a", nil, "unversioned", 201)
	if names, _ := c.listing(t, "/archive"); len(names) != 1 {
		t.Fatalf("an unversioned container archived: %q", names)
	}
}

func TestSwiftHistoryLocation(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/history", nil, "", 201)
	c.must("PUT", "/docs", map[string]string{"X-History-Location": "history"}, "", 201)
	if resp, _ := c.must("HEAD", "/docs", nil, "", 204); resp.Header.Get("X-History-Location") != "history" || resp.Header.Get("X-Versions-Location") != "" {
		t.Fatalf("history headers: %v", resp.Header)
	}
	c.must("PUT", "/docs/o", nil, "one", 201)
	c.must("PUT", "/docs/o", nil, "two", 201)
	c.must("DELETE", "/docs/o", nil, "", 204)
	c.must("GET", "/docs/o", nil, "", 404)
	names, types := c.listing(t, "/history")
	if len(names) != 3 || types[2] != "application/x-deleted;swift_versions_deleted=1" {
		t.Fatalf("history %q %q", names, types)
	}
	for i, want := range []string{"one", "two"} {
		if _, body := c.must("GET", "/history/"+names[i], nil, "", 200); body != want {
			t.Errorf("history entry %d: %q, want %q", i, body, want)
		}
	}

	// One mode at a time; an empty one beside the other is ignored.
	c.must("POST", "/docs", map[string]string{"X-History-Location": "history", "X-Versions-Location": "history"}, "", 400)
	c.must("POST", "/docs", map[string]string{"X-History-Location": "", "X-Versions-Location": "history"}, "", 204)
	if resp, _ := c.must("HEAD", "/docs", nil, "", 204); resp.Header.Get("X-Versions-Location") != "history" || resp.Header.Get("X-History-Location") != "" {
		t.Fatalf("switching modes: %v", resp.Header)
	}
	c.must("POST", "/docs", map[string]string{"X-Versions-Location": "a/b"}, "", 204) // the part before '/' names it
	c.must("POST", "/docs", map[string]string{"X-Versions-Location": "%2Fx"}, "", 412)
}
