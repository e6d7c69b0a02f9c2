package swift_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Segment ranges, inline data and nested manifests, end to end: sizes, ETags (Swift's
// "etag:range;" form), ranged reads, the stored manifest and its raw form.
func TestSwiftSLORangesDataNesting(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/segs", nil, "", 201)
	c.must("PUT", "/segs/a", nil, "abcdefghij", 201)
	c.must("PUT", "/segs/b", nil, "0123456789", 201)
	ea, eb := md5hex("abcdefghij"), md5hex("0123456789")
	data := base64.StdEncoding.EncodeToString([]byte("XY"))
	inner := fmt.Sprintf(`[{"path": "/segs/a", "range": "2-4"}, {"data": %q}, {"path": "/segs/b", "range": "-3", "etag": %q, "size_bytes": 10}]`, data, eb)
	resp, _ := c.must("PUT", "/segs/inner?multipart-manifest=put", nil, inner, 201)
	innerETag := md5hex(ea + ":2-4;" + md5hex("XY") + eb + ":7-9;")
	if resp.Header.Get("Etag") != `"`+innerETag+`"` {
		t.Fatalf("inner ETag %s, want %s", resp.Header.Get("Etag"), innerETag)
	}
	resp, body := c.must("GET", "/segs/inner", nil, "", 200)
	if body != "cdeXY789" || resp.Header.Get("X-Manifest-Etag") == "" {
		t.Fatalf("inner read %q %v", body, resp.Header)
	}
	// A range covering the whole segment is stored as none.
	outer := fmt.Sprintf(`[{"path": "/segs/inner", "etag": %q, "size_bytes": 8, "range": "1-6"}, {"path": "/segs/a", "range": "0-"}, {"path": "/segs/inner"}]`, innerETag)
	c.must("PUT", "/segs/outer?multipart-manifest=put", nil, outer, 201)
	want := "deXY78" + "abcdefghij" + "cdeXY789"
	resp, body = c.must("GET", "/segs/outer", nil, "", 200)
	if body != want || resp.ContentLength != int64(len(want)) || resp.Header.Get("Etag") != `"`+md5hex(innerETag+":1-6;"+ea+innerETag)+`"` {
		t.Fatalf("outer read %q %v", body, resp.Header)
	}
	for _, r := range [][2]int{{0, 0}, {4, 17}, {15, 23}, {20, 23}} {
		_, body = c.must("GET", "/segs/outer", map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", r[0], r[1])}, "", 206)
		if body != want[r[0]:r[1]+1] {
			t.Errorf("range %v: %q", r, body)
		}
	}
	resp, _ = c.must("HEAD", "/segs/outer", nil, "", 200)
	if resp.ContentLength != int64(len(want)) || resp.Header.Get("X-Static-Large-Object") != "True" {
		t.Errorf("HEAD %v", resp.Header)
	}
	// The stored manifest, with Swift's keys.
	_, body = c.must("GET", "/segs/outer?multipart-manifest=get", nil, "", 200)
	var got []map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got) != 3 {
		t.Fatalf("manifest %s %v", body, err)
	}
	if got[0]["name"] != "/segs/inner" || got[0]["range"] != "1-6" || got[0]["sub_slo"] != true || got[0]["bytes"].(float64) != 8 ||
		got[0]["hash"] != innerETag || got[1]["range"] != nil || got[1]["content_type"] == nil || got[1]["last_modified"] == nil {
		t.Errorf("manifest %s", body)
	}
	resp, body = c.must("GET", "/segs/inner?multipart-manifest=get&format=raw", nil, "", 200)
	if !strings.Contains(body, `{"data": "WFk="}`) || !strings.Contains(body, `"path": "/segs/b", "range": "7-9", "size_bytes": 10`) ||
		resp.Header.Get("Etag") != md5hex(body) {
		t.Errorf("raw manifest %s", body)
	}
	// The raw form is accepted back as a manifest of the same object.
	resp, _ = c.must("PUT", "/segs/again?multipart-manifest=put", nil, body, 201)
	if resp.Header.Get("Etag") != `"`+innerETag+`"` {
		t.Errorf("raw manifest PUT back: %s", resp.Header.Get("Etag"))
	}
}

// Every bad manifest is refused with Swift's text, and nothing is stored.
func TestSwiftSLOBadManifests(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/segs", nil, "", 201)
	c.must("PUT", "/segs/a", nil, "abc", 201)
	c.must("PUT", "/box", nil, "", 201)
	for _, tc := range []struct{ body, want string }{
		{`[{"path": "/segs/a", "range": "x"}]`, "Index 0: invalid range"},
		{`[{"path": "/segs/a", "range": "1-2,3-4"}]`, "Index 0: multiple ranges (only one allowed)"},
		{`[{"path": "/segs/a", "range": "9-", "size_bytes": 3}]`, "Index 0: unsatisfiable range"},
		{`[{"path": "/segs/a", "range": "9-"}]`, "/segs/a, Unsatisfiable Range"},
		{`[{"path": "/segs/a"}, {"data": "!!"}]`, "Index 1: data must be valid base64"},
		{`[{"data": "YQ=="}]`, "Inline data segments require at least one object-backed segment."},
		{`[{"path": "/box/m"}]`, "Index 0: manifest must not include itself as a segment"},
		{`[{"path": "/segs/a", "foo": 1}]`, `Index 0: extraneous keys "foo"`},
		{`[{"path": "/segs/a", "range": "0-0"}, {"path": "/segs/a"}]`, ""}, // valid: a 1-byte range
		{`[]`, ""}, // valid: an empty object, as Swift accepts it
	} {
		resp, body := c.do("PUT", "/box/m?multipart-manifest=put", nil, strings.NewReader(tc.body))
		if tc.want == "" {
			if resp.StatusCode != 201 {
				t.Errorf("%s: %d %q", tc.body, resp.StatusCode, body)
			}
			c.must("GET", "/box/m", nil, "", 200)
			c.must("DELETE", "/box/m", nil, "", 204)
			continue
		}
		if resp.StatusCode != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want 400 %q", tc.body, resp.StatusCode, body, tc.want)
		}
		c.must("HEAD", "/box/m", nil, "", 404)
	}
}

// heartbeat=on answers 202 at once, then the outcome in the body.
func TestSwiftSLOHeartbeat(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/segs", nil, "", 201)
	c.must("PUT", "/segs/a", nil, "abc", 201)
	resp, body := c.must("PUT", "/segs/m?multipart-manifest=put&heartbeat=on", nil, `[{"path": "/segs/a"}]`, 202)
	if !strings.HasPrefix(body, " \r\n\r\n") || !strings.Contains(body, "Response Status: 201 Created\n") ||
		!strings.Contains(body, "Etag: \""+md5hex(md5hex("abc"))+"\"\n") || !strings.Contains(body, "Last Modified: ") || resp.ContentLength != -1 {
		t.Errorf("heartbeat body %q (length %d)", body, resp.ContentLength)
	}
	_, body = c.must("PUT", "/segs/m2?multipart-manifest=put&heartbeat=on", nil, `[{"path": "/segs/nope"}]`, 202)
	if !strings.Contains(body, "Response Status: 400 Bad Request\n") || !strings.Contains(body, "/segs/nope, 404 Not Found") {
		t.Errorf("heartbeat error body %q", body)
	}
	c.must("HEAD", "/segs/m2", nil, "", 404)
}

// multipart-manifest=delete deletes nested manifests' segments too; a manifest COPY with
// multipart-manifest=get copies the manifest, checked in the destination account.
func TestSwiftSLODeleteNestedAndCopyManifest(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/segs", nil, "", 201)
	c.must("PUT", "/segs/a", nil, "abc", 201)
	c.must("PUT", "/segs/b", nil, "def", 201)
	c.must("PUT", "/segs/inner?multipart-manifest=put", nil, `[{"path": "/segs/a"}, {"data": "WA=="}]`, 201)
	c.must("PUT", "/segs/outer?multipart-manifest=put", nil, `[{"path": "/segs/inner"}, {"path": "/segs/b", "range": "1-1"}]`, 201)
	// Copy of the manifest: an SLO of the same segments.
	resp, _ := c.must("COPY", "/segs/outer?multipart-manifest=get", map[string]string{"Destination": "segs/copy"}, "", 201)
	resp, body := c.must("GET", "/segs/copy", nil, "", 200)
	if body != "abcXe" || resp.Header.Get("X-Static-Large-Object") != "True" {
		t.Errorf("manifest copy %q %v", body, resp.Header)
	}
	_, m1 := c.must("GET", "/segs/outer?multipart-manifest=get", nil, "", 200)
	_, m2 := c.must("GET", "/segs/copy?multipart-manifest=get", nil, "", 200)
	if m1 != m2 {
		t.Errorf("copied manifest differs:\n%s\n%s", m1, m2)
	}
	// Another account cannot read the segments: the copy there is refused.
	bob := s.client(t, "other:bob", "bob-key")
	bob.must("PUT", "/in", map[string]string{"X-Container-Write": "acme:alice"}, "", 201)
	resp, body = c.do("COPY", "/segs/outer?multipart-manifest=get", map[string]string{"Destination": "in/x", "Destination-Account": "AUTH_other"}, nil)
	if resp.StatusCode != 400 || strings.Count(body, "403 Forbidden") != 2 {
		t.Errorf("cross-account manifest copy: %d %q", resp.StatusCode, body)
	}
	c.must("DELETE", "/segs/copy", nil, "", 204)
	_, body = c.must("DELETE", "/segs/outer?multipart-manifest=delete", nil, "", 200)
	if !strings.HasPrefix(body, "Number Deleted: 4\n") {
		t.Errorf("nested delete %q", body)
	}
	for _, o := range []string{"a", "b", "inner", "outer"} {
		c.must("HEAD", "/segs/"+o, nil, "", 404)
	}
}

// A manifest readable through an ACL whose segments are not answers 409, as Swift's.
func TestSwiftSLOSegmentAccess(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/segs", nil, "", 201)
	c.must("PUT", "/pub", map[string]string{"X-Container-Read": ".r:*"}, "", 201)
	c.must("PUT", "/segs/a", nil, "abc", 201)
	c.must("PUT", "/pub/m?multipart-manifest=put", nil, `[{"path": "/segs/a"}]`, 201)
	anon := func(status int) string {
		resp, body := do(t, "GET", s.url+"/v1/AUTH_acme/pub/m", map[string]string{"Referer": "http://x.example.com"}, nil)
		expect(t, resp, body, status)
		return body
	}
	anon(409)
	// A copy reads the segments as its caller too.
	bob := s.client(t, "other:bob", "bob-key")
	bob.must("PUT", "/in", nil, "", 201)
	copyHdr := map[string]string{"X-Copy-From": "pub/m", "X-Copy-From-Account": "AUTH_acme"}
	resp, body := bob.do("PUT", "/in/x", copyHdr, nil)
	if resp.StatusCode != 409 {
		t.Errorf("copy of an SLO whose segments the caller may not read: %d %q", resp.StatusCode, body)
	}
	c.must("POST", "/segs", map[string]string{"X-Container-Read": ".r:*"}, "", 204)
	if body := anon(200); body != "abc" {
		t.Errorf("read through ACLs %q", body)
	}
	bob.must("PUT", "/in/x", copyHdr, "", 201)
	if _, body := bob.must("GET", "/in/x", nil, "", 200); body != "abc" {
		t.Errorf("copy %q", body)
	}
}

// Manifests nested deeper than Swift's limit of 10 are 409 on GET; 10 levels read.
func TestSwiftSLODepthLimit(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/segs", nil, "", 201)
	c.must("PUT", "/segs/m0", nil, "x", 201)
	for i := 1; i <= 11; i++ {
		c.must("PUT", fmt.Sprintf("/segs/m%d?multipart-manifest=put", i), nil, fmt.Sprintf(`[{"path": "/segs/m%d"}]`, i-1), 201)
	}
	if _, body := c.must("GET", "/segs/m10", nil, "", 200); body != "x" {
		t.Errorf("10 levels: %q", body)
	}
	// Swift's plain 409 (its SLO middleware logs the reason).
	_, body := c.must("GET", "/segs/m11", nil, "", 409)
	if !strings.Contains(body, "There was a conflict") {
		t.Errorf("11 levels: %q", body)
	}
	c.must("HEAD", "/segs/m11", nil, "", 200)
}

// A manifest long enough for its segment list to be stored apart from its record (so that a
// HEAD does not read it): HEAD answers what GET does, ranges read across segments, a POST keeps
// the list, and ?multipart-manifest=get still shows it whole.
func TestSwiftSLOLongManifest(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/segs", nil, "", 201)
	var entries []string
	var want strings.Builder
	for i := range 40 {
		name := fmt.Sprintf("/segs/%02d-%s", i, strings.Repeat("s", 800))
		data := strings.Repeat(string(rune('a'+i%26)), 10+i)
		c.must("PUT", name, nil, data, 201)
		want.WriteString(data)
		entries = append(entries, fmt.Sprintf(`{"path": %q, "etag": %q, "size_bytes": %d}`, name, md5hex(data), len(data)))
	}
	c.must("PUT", "/segs/long?multipart-manifest=put", nil, "["+strings.Join(entries, ",")+"]", 201)
	get, body := c.must("GET", "/segs/long", nil, "", 200)
	if body != want.String() {
		t.Fatalf("GET of the long manifest: %d bytes, want %d", len(body), want.Len())
	}
	check := func(when string) {
		t.Helper()
		head, _ := c.must("HEAD", "/segs/long", nil, "", 200)
		for _, h := range []string{"Etag", "X-Manifest-Etag", "Content-Length", "X-Static-Large-Object", "Content-Type"} {
			if head.Header.Get(h) != get.Header.Get(h) || head.Header.Get(h) == "" {
				t.Errorf("%s: HEAD %s %q, GET %q", when, h, head.Header.Get(h), get.Header.Get(h))
			}
		}
	}
	check("after PUT")
	_, part := c.must("GET", "/segs/long", map[string]string{"Range": "bytes=100-499"}, "", 206)
	if part != want.String()[100:500] {
		t.Errorf("ranged GET across segments: %q", part)
	}
	c.must("POST", "/segs/long", map[string]string{"X-Object-Meta-Color": "blue"}, "", 202)
	check("after POST")
	if head, _ := c.must("HEAD", "/segs/long", nil, "", 200); head.Header.Get("X-Object-Meta-Color") != "blue" {
		t.Errorf("metadata after POST: %v", head.Header)
	}
	if _, body := c.must("GET", "/segs/long", nil, "", 200); body != want.String() {
		t.Error("GET after POST differs")
	}
	_, manifest := c.must("GET", "/segs/long?multipart-manifest=get", nil, "", 200)
	var got []map[string]any
	if err := json.Unmarshal([]byte(manifest), &got); err != nil || len(got) != 40 {
		t.Fatalf("stored manifest: %d entries, %v", len(got), err)
	}
	if _, body := c.must("HEAD", "/segs/long?multipart-manifest=get", nil, "", 200); body != "" {
		t.Errorf("HEAD ?multipart-manifest=get with a body")
	}
}

func TestSwiftSLO(t *testing.T) {
	s := newStack(t)
	c := s.client(t, "acme:alice", "alice-key")
	c.must("PUT", "/segs", nil, "", 201)
	c.must("PUT", "/box", nil, "", 201)
	c.must("PUT", "/segs/1", nil, "abc", 201)
	c.must("PUT", "/segs/2", nil, "defg", 201)
	c.must("PUT", "/segs/empty", map[string]string{"Content-Length": "0"}, "", 201)
	sloETag := md5hex(md5hex("abc") + md5hex("defg"))
	manifest := fmt.Sprintf(`[{"path": "/segs/1", "etag": %q, "size_bytes": 3}, {"path": "segs/2", "etag": null, "size_bytes": null}]`, md5hex("abc"))

	// Refused manifests store nothing.
	for name, tc := range map[string]struct {
		body   string
		hdr    map[string]string
		status int
		want   string
	}{
		"missing segment": {`[{"path": "/segs/nope"}]`, nil, 400, "/segs/nope, 404 Not Found"},
		"size mismatch":   {`[{"path": "/segs/1", "size_bytes": 4}]`, nil, 400, "/segs/1, Size Mismatch"},
		"etag mismatch":   {`[{"path": "/segs/1", "etag": "00"}]`, nil, 400, "/segs/1, Etag Mismatch"},
		"empty segment":   {`[{"path": "/segs/empty"}, {"path": "/segs/1"}]`, nil, 400, "Too small"},
		"range":           {`[{"path": "/segs/1", "range": "5-"}]`, nil, 400, "/segs/1, Unsatisfiable Range"},
		"bad etag header": {manifest, map[string]string{"ETag": md5hex("x")}, 422, "Unprocessable"},
	} {
		resp, body := c.do("PUT", "/box/big?multipart-manifest=put", tc.hdr, strings.NewReader(tc.body))
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q", name, resp.StatusCode, body)
		}
	}
	c.must("HEAD", "/box/big", nil, "", 404)

	resp, _ := c.must("PUT", "/box/big?multipart-manifest=put", map[string]string{"X-Object-Meta-Kind": "slo", "Content-Type": "text/x-slo"}, manifest, 201)
	if resp.Header.Get("Etag") != `"`+sloETag+`"` {
		t.Errorf("manifest PUT Etag %q, want %q", resp.Header.Get("Etag"), sloETag)
	}
	resp, body := c.must("GET", "/box/big", nil, "", 200)
	if body != "abcdefg" || resp.Header.Get("X-Static-Large-Object") != "True" || resp.Header.Get("Etag") != `"`+sloETag+`"` ||
		resp.Header.Get("X-Object-Meta-Kind") != "slo" || resp.Header.Get("Content-Type") != "text/x-slo" {
		t.Errorf("SLO GET %q %v", body, resp.Header)
	}
	_, body = c.must("GET", "/box/big", map[string]string{"Range": "bytes=2-4"}, "", 206)
	if body != "cde" {
		t.Errorf("range across segments %q", body)
	}
	resp, _ = c.must("HEAD", "/box/big", nil, "", 200)
	if resp.ContentLength != 7 {
		t.Errorf("HEAD length %d", resp.ContentLength)
	}
	_, body = c.must("GET", "/box?format=json", nil, "", 200)
	mresp, _ := c.must("HEAD", "/box/big?multipart-manifest=get", nil, "", 200)
	if !strings.Contains(body, `"name":"big","hash":"`+mresp.Header.Get("Etag")+`","bytes":7`) || !strings.Contains(body, `"slo_etag":"\"`+sloETag+`\""`) {
		t.Errorf("listing %s", body)
	}
	resp, body = c.must("GET", "/box/big?multipart-manifest=get", nil, "", 200)
	var got []map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got) != 2 || got[1]["name"] != "/segs/2" || got[1]["bytes"].(float64) != 4 ||
		got[0]["hash"] != md5hex("abc") || resp.Header.Get("X-Static-Large-Object") != "True" {
		t.Errorf("manifest get %s %v", body, err)
	}
	_, body = c.must("GET", "/box/big?multipart-manifest=get&format=raw", nil, "", 200)
	if !strings.Contains(body, `"path": "/segs/1"`) || !strings.Contains(body, `"size_bytes": 3`) {
		t.Errorf("raw manifest %s", body)
	}
	// A copy is a plain object of the bytes.
	c.must("COPY", "/box/big", map[string]string{"Destination": "box/flat"}, "", 201)
	resp, body = c.must("GET", "/box/flat", nil, "", 200)
	if body != "abcdefg" || resp.Header.Get("X-Static-Large-Object") != "" || resp.Header.Get("Etag") != md5hex("abcdefg") {
		t.Errorf("copy of an SLO %q %v", body, resp.Header)
	}
	// A manifest of a manifest reads through (slo_test.go tests nesting further).
	c.must("PUT", "/box/nested?multipart-manifest=put", nil, `[{"path": "/box/big"}]`, 201)
	if _, body = c.must("GET", "/box/nested", nil, "", 200); body != "abcdefg" {
		t.Errorf("nested %q", body)
	}
	c.must("DELETE", "/box/nested", nil, "", 204)
	// A plain DELETE leaves the segments; multipart-manifest=delete removes them too.
	c.must("PUT", "/box/big2?multipart-manifest=put", nil, manifest, 201)
	c.must("DELETE", "/box/big2", nil, "", 204)
	c.must("HEAD", "/segs/1", nil, "", 200)
	resp, body = c.must("DELETE", "/box/big?multipart-manifest=delete", nil, "", 200)
	if !strings.HasPrefix(body, "Number Deleted: 3\nNumber Not Found: 0\n") || !strings.Contains(body, "Response Status: 200 OK") {
		t.Errorf("SLO delete %q", body)
	}
	c.must("HEAD", "/segs/1", nil, "", 404)
	c.must("HEAD", "/box/big", nil, "", 404)
	// JSON answer, and a plain object through multipart-manifest=delete.
	c.must("PUT", "/segs/3", nil, "hij", 201)
	c.must("PUT", "/box/big3?multipart-manifest=put", nil, `[{"path": "/segs/3"}, {"path": "/segs/gone-soon"}]`, 400)
	c.must("PUT", "/box/big3?multipart-manifest=put", nil, `[{"path": "/segs/3"}]`, 201)
	c.must("DELETE", "/segs/3", nil, "", 204)
	_, body = c.must("DELETE", "/box/big3?multipart-manifest=delete", map[string]string{"Accept": "application/json"}, "", 200)
	var res map[string]any
	if err := json.Unmarshal([]byte(body), &res); err != nil || res["Number Deleted"].(float64) != 1 || res["Number Not Found"].(float64) != 1 {
		t.Errorf("JSON SLO delete %s %v", body, err)
	}
	c.must("DELETE", "/box/flat?multipart-manifest=delete", nil, "", 204)
}
