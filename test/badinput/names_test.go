package badinput

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestInvalidBucketNames tries to create buckets S3's naming rules forbid (InvalidBucketName,
// nothing created) and to address buckets by names that cannot name one at all.
func TestInvalidBucketNames(t *testing.T) {
	s := startServer(t, "")
	s.createBucket("existing")
	listBuckets := func() string {
		r := s.call(http.MethodGet, "", "", "", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("ListBuckets: %s", r)
		}
		var l struct {
			Names []string `xml:"Buckets>Bucket>Name"`
		}
		if err := xml.Unmarshal(r.Body, &l); err != nil {
			t.Fatalf("ListBuckets: %v", err)
		}
		return strings.Join(l.Names, ",")
	}
	before := listBuckets()
	for _, name := range []string{
		"ab", strings.Repeat("a", 64), "Upper", "under_score", "-start", "end-", ".start", "end.",
		"a..b", "192.168.1.1", "xn--abc", "sthree-abc", "amzn-s3-demo-x", "abc-s3alias", "abc--ol-s3",
		"abc.mrap", "abc--x-s3", "abc--table-s3", "sp ace", "ünïcode", "semi;colon", "a%b", "a+b",
		"tab\tname", "new\nline", strings.Repeat("a", 300),
	} {
		r := s.call(http.MethodPut, name, "", "", nil)
		expectError(t, fmt.Sprintf("CreateBucket %q", name), r, http.StatusBadRequest, "InvalidBucketName")
	}
	// Names that cannot be any bucket, on any operation.
	for _, name := range []string{"nul\x00name", "bad\xffutf8", strings.Repeat("b", 256), "\x00mpu\x00existing"} {
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
			r := s.call(m, name, "", "", nil)
			expectError(t, fmt.Sprintf("%s bucket %q", m, name), r, http.StatusBadRequest, "InvalidBucketName")
			r = s.call(m, name, "key", "", nil)
			expectError(t, fmt.Sprintf("%s object in bucket %q", m, name), r, http.StatusBadRequest, "InvalidBucketName")
		}
	}
	if after := listBuckets(); after != before {
		t.Errorf("buckets changed: %q, was %q", after, before)
	}
}

// TestInvalidKeys: keys over 1024 bytes get KeyTooLongError, keys that are not UTF-8 InvalidURI,
// keys with NUL InvalidArgument; on every operation, and nothing is stored.
func TestInvalidKeys(t *testing.T) {
	s := startServer(t, "")
	const bucket = "keys"
	s.createBucket(bucket)
	max := strings.Repeat("k", 1024)
	s.put(bucket, max, []byte("the longest key"))
	before := s.snapshot(bucket)
	if _, ok := before[max]; !ok {
		t.Fatalf("a 1024-byte key is not listed")
	}

	cases := []struct {
		name, key, code string
	}{
		{"1025 bytes", strings.Repeat("k", 1025), "KeyTooLongError"},
		{"1026 bytes of 3-byte runes", strings.Repeat("€", 342), "KeyTooLongError"},
		{"64 KiB", strings.Repeat("k", 64*KiB), "KeyTooLongError"},
		{"invalid UTF-8", "bad\xff\xfekey", "InvalidURI"},
		{"truncated UTF-8", "bad\xe2\x82", "InvalidURI"},
		{"NUL", "a\x00b", "InvalidArgument"},
		{"only NUL", "\x00", "InvalidArgument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, op := range []struct{ method, query string }{
				{http.MethodPut, ""}, {http.MethodGet, ""}, {http.MethodHead, ""}, {http.MethodDelete, ""},
				{http.MethodPost, "uploads"},
			} {
				r := s.call(op.method, bucket, c.key, op.query, []byte("x"))
				what := op.method + " " + op.query
				if op.method == http.MethodHead { // no body to carry the code
					expectStatus(t, what, r, http.StatusBadRequest)
					continue
				}
				expectError(t, what, r, http.StatusBadRequest, c.code)
			}
			// Copying to and from such a key.
			r := s.call(http.MethodPut, bucket, c.key, "", nil, "X-Amz-Copy-Source", "/"+bucket+"/"+escapePath(max))
			expectError(t, "CopyObject to it", r, http.StatusBadRequest, c.code)
		})
	}
	r := s.call(http.MethodGet, bucket, "", "uploads", nil)
	if r.Status != http.StatusOK || strings.Contains(string(r.Body), "<Upload>") {
		t.Errorf("ListMultipartUploads after refused initiations: %s", r)
	}
	s.expectUnchanged("after invalid keys", bucket, before)
}

// hostileKeys are legal S3 keys that look like paths, escapes or encodings. They must be stored
// and listed exactly as sent.
func hostileKeys(escapeTarget string) []string {
	return []string{
		"../../etc/passwd", "../../../../../../../../.." + escapeTarget, "/leading-slash", "a//b", "./x", "x/./y", "x/../y",
		".", "..", "...", "....//....//", "trailing/", "////", `..\..\windows\system32`, "%2F", "a%2Fb", "%252F", "%",
		"100%", "%zz", "a+b", "+", "with space", " leading and trailing ", "tab\there", "new\nline", "cr\rlf",
		"ctl\x01\x1f\x7fchars", "unicode ✓ ключ 鍵 😀", "e\u0301 vs \u00e9", "\u202eright-to-left", "\ufeffbom", "?query=1&x", "#fragment", "a;b=c",
		`quote'"<xml>&amp;`, "~tilde", "*", "aux", "con.txt", strings.Repeat("d/", 500), strings.Repeat("é", 512),
	}
}

// TestHostileKeysWork stores every hostile key with its own content, reads each back, lists
// them exactly (also after a restart), and checks that nothing was written outside the data
// directory and that no key became a file name.
func TestHostileKeysWork(t *testing.T) {
	parent := t.TempDir()
	data := filepath.Join(parent, "data")
	s := startServer(t, data)
	const bucket = "hostile"
	s.createBucket(bucket)
	escapeTarget := filepath.Join(os.TempDir(), fmt.Sprintf("cairn-badinput-escape-%d", time.Now().UnixNano()))
	keys := hostileKeys(escapeTarget)
	content := func(k string) []byte { return []byte("content of " + k) }
	for _, k := range keys {
		if r := s.call(http.MethodPut, bucket, k, "", content(k)); r.Status != http.StatusOK {
			t.Errorf("PUT %q: %s", k, r)
		}
	}
	// Keys also go through the query string and through XML; both must survive intact.
	r := s.call(http.MethodPut, bucket, "copied", "", nil, "X-Amz-Copy-Source", "/"+bucket+"/"+escapePath("../../etc/passwd"))
	if r.Status != http.StatusOK {
		t.Errorf("CopyObject from %q: %s", "../../etc/passwd", r)
	}
	keys = append(keys, "copied")

	check := func(when string) {
		for _, k := range keys {
			want := content(k)
			if k == "copied" {
				want = content("../../etc/passwd")
			}
			s.expectObject(when, bucket, k, want)
		}
		// Control characters cannot travel in XML 1.0, so the plain listing cannot show them
		// exactly; clients ask for encoding-type=url, which must be exact for every key.
		listed := s.listKeysEncoded(bucket, true)
		plain := s.listKeys(bucket)
		for _, k := range keys {
			if _, ok := plain[k]; !ok && !strings.ContainsAny(k, "\x01\x1f\x7f") {
				t.Errorf("%s: %q not in the plain listing", when, k)
			}
		}
		var got []string
		for k := range listed {
			got = append(got, k)
		}
		want := slices.Clone(keys)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			for _, k := range want {
				if _, ok := listed[k]; !ok {
					t.Errorf("%s: %q not listed", when, k)
				}
			}
			for _, k := range got {
				if !slices.Contains(want, k) {
					t.Errorf("%s: %q listed but never stored", when, k)
				}
			}
		}
		// Listing by a hostile prefix finds exactly its keys.
		r := s.call(http.MethodGet, bucket, "", "list-type=2&prefix="+escapePath("../"), nil)
		var l listResult
		if r.Status != http.StatusOK || xml.Unmarshal(r.Body, &l) != nil {
			t.Fatalf("%s: ListObjectsV2 prefix ../: %s", when, r)
		}
		if len(l.Contents) != 2 {
			t.Errorf("%s: ListObjectsV2 prefix ../ found %d keys, want 2", when, len(l.Contents))
		}
	}
	check("after PUT")
	s.restart()
	check("after a restart")

	if _, err := os.Lstat(escapeTarget); err == nil {
		os.Remove(escapeTarget)
		t.Errorf("a key escaped the data directory: %s exists", escapeTarget)
	}
	// Beside the data directory there is only the master key of server-side encryption, kept
	// outside it on purpose (docs/operations.md, "Encryption at rest").
	ents, _ := os.ReadDir(parent)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"data", "data.master-key"}) {
		t.Errorf("files appeared beside the data directory: %v", names)
	}
	for _, f := range dataFiles(t, data) {
		for _, bad := range []string{"passwd", "system32", "leading-slash", "fragment"} {
			if strings.Contains(f, bad) {
				t.Errorf("a key became a file name: %s", f)
			}
		}
	}

	// And they delete exactly.
	for _, k := range keys {
		if r := s.call(http.MethodDelete, bucket, k, "", nil); r.Status != http.StatusNoContent {
			t.Errorf("DELETE %q: %s", k, r)
		}
	}
	if left := s.listKeys(bucket); len(left) != 0 {
		t.Errorf("keys left after deleting them all: %v", left)
	}
}
