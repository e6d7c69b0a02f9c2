package swift_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSwiftBulkDelete(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/box", nil, "", 201)
	c.must("PUT", "/full", nil, "", 201)
	c.must("PUT", "/gone", nil, "", 201)
	for _, n := range []string{"a", "b c", "d/e"} {
		c.must("PUT", "/box/"+n, nil, n, 201)
	}
	c.must("PUT", "/full/keep", nil, "k", 201)
	body := "/box/a\n/box/b%20c\nbox/d/e\n/box/missing\n/gone\n/full\n\n/bad%FF\n"
	resp, out := c.must("POST", "?bulk-delete", map[string]string{"Content-Type": "text/plain", "Accept": "application/json"}, body, 200)
	var res struct {
		Deleted  int        `json:"Number Deleted"`
		NotFound int        `json:"Number Not Found"`
		Status   string     `json:"Response Status"`
		Errors   [][]string `json:"Errors"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("bulk delete answer %q: %v", out, err)
	}
	if res.Deleted != 4 || res.NotFound != 1 || res.Status != "400 Bad Request" || len(res.Errors) != 2 ||
		res.Errors[0][0] != "/full" || res.Errors[0][1] != "409 Conflict" || res.Errors[1][1] != "412 Precondition Failed" {
		t.Errorf("bulk delete result %+v", res)
	}
	c.must("GET", "/box", nil, "", 204)
	c.must("HEAD", "/gone", nil, "", 404)
	c.must("HEAD", "/full/keep", nil, "", 200)
	// Plain-text answer; DELETE works too.
	_, out = c.must("DELETE", "?bulk-delete", nil, "/full/keep\n/full\n", 200)
	if !strings.HasPrefix(out, "Number Deleted: 2\nNumber Not Found: 0\nResponse Body: \nResponse Status: 200 OK\n") {
		t.Errorf("plain answer %q", out)
	}
	// Refused as a whole: 200 with the status in the body, as Swift answers.
	_, out = c.must("POST", "?bulk-delete", nil, "\n", 200)
	if !strings.Contains(out, "Response Body: Invalid bulk delete.\nResponse Status: 400 Bad Request\nErrors:\n") {
		t.Errorf("empty bulk delete %q", out)
	}
	_, out = c.must("POST", "?bulk-delete", nil, strings.Repeat("/x/y\n", maxDeletes+1), 200)
	if !strings.Contains(out, "Response Status: 413 Request Entity Too Large") {
		t.Errorf("too many deletes %q", out)
	}
	// Another tenant's token deletes nothing here: each item is refused as its own DELETE
	// would be (Swift's answer is still 200, with the failures listed).
	c.must("PUT", "/keep", nil, "", 201)
	c.must("PUT", "/keep/o", nil, "x", 201)
	bob := s.client(t, "other:bob", "bob-key")
	resp, out = do(t, "POST", c.store+"?bulk-delete", map[string]string{"X-Auth-Token": bob.tok}, strings.NewReader("/keep/o\n/keep\n"))
	expect(t, resp, out, 200)
	if !strings.Contains(out, "/keep/o, 403 Forbidden") || !strings.Contains(out, "/keep, 403 Forbidden") {
		t.Errorf("foreign bulk delete answer %q", out)
	}
	c.must("HEAD", "/keep/o", nil, "", 200)
	resp, out = do(t, "POST", c.store+"?bulk-delete", nil, strings.NewReader("/keep/o\n"))
	expect(t, resp, out, 401)
}

const maxDeletes = 10000
