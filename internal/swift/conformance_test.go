package swift_test

import (
	"testing"
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
