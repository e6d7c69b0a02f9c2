package s3_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/ring"
	cairns3 "github.com/cairn-store/cairn/internal/s3"
	"github.com/cairn-store/cairn/internal/s3/postpolicy"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/storage"
)

// formField is one field of a POST form, in order.
type formField struct{ name, value string }

// signedV4 returns the SigV4 fields of a form whose policy has the given conditions (a JSON
// list's elements) and expiration, with the conditions on the SigV4 fields themselves added,
// signed with secret for access key ak.
func signedV4(ak, secret, conditions string, expires time.Time) []formField {
	now := time.Now().UTC()
	cred := ak + "/" + now.Format("20060102") + "/us-east-1/s3/aws4_request"
	date := now.Format("20060102T150405Z")
	doc := fmt.Sprintf(`{"expiration":%q,"conditions":[%s{"x-amz-algorithm":"AWS4-HMAC-SHA256"},{"x-amz-credential":%q},{"x-amz-date":%q}]}`,
		expires.UTC().Format("2006-01-02T15:04:05.000Z"), withComma(conditions), cred, date)
	policy := base64.StdEncoding.EncodeToString([]byte(doc))
	return []formField{{"X-Amz-Algorithm", "AWS4-HMAC-SHA256"}, {"X-Amz-Credential", cred}, {"X-Amz-Date", date},
		{"Policy", policy}, {"X-Amz-Signature", postpolicy.SignV4(secret, now.Format("20060102"), "us-east-1", policy)}}
}

func withComma(conds string) string {
	if conds == "" {
		return ""
	}
	return conds + ","
}

// signedV2 returns the SigV2 fields of a form whose policy is doc (JSON).
func signedV2(ak, secret, doc string) []formField {
	policy := base64.StdEncoding.EncodeToString([]byte(doc))
	return []formField{{"AWSAccessKeyId", ak}, {"policy", policy}, {"signature", postpolicy.SignV2(secret, policy)}}
}

// multipartForm builds a form: fields, then the file part (named "file").
func multipartForm(t *testing.T, fields []formField, filename string, file []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		mustOK(t, mw.WriteField(f.name, f.value))
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filename))
	h.Set("Content-Type", "application/octet-stream")
	w, err := mw.CreatePart(h)
	mustOK(t, err)
	w.Write(file)
	mustOK(t, mw.Close())
	return buf.Bytes(), mw.FormDataContentType()
}

type postResult struct {
	status int
	code   string
	body   string
	header http.Header
}

// postForm sends a form to url without following redirects.
func postForm(t *testing.T, url string, fields []formField, filename string, file []byte) postResult {
	t.Helper()
	body, ct := multipartForm(t, fields, filename, file)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	mustOK(t, err)
	req.Header.Set("Content-Type", ct)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	mustOK(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	res := postResult{status: resp.StatusCode, body: string(b), header: resp.Header}
	if i := strings.Index(res.body, "<Code>"); i >= 0 {
		res.code = res.body[i+6 : i+strings.Index(res.body[i:], "</Code>")]
	}
	return res
}

func fields(base []formField, more ...string) []formField {
	out := append([]formField{}, base...)
	for i := 0; i+1 < len(more); i += 2 {
		out = append(out, formField{more[i], more[i+1]})
	}
	return out
}

// TestPostObject covers the outcomes of a signed form against a real handler and store: every
// success status, and each refusal with S3's status and code, nothing stored by a refusal.
func TestPostObject(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("forms")})
	mustOK(t, err)
	url := st.srv.URL + "/forms"
	later := time.Now().Add(time.Hour)
	const conds = `{"bucket":"forms"},["starts-with","$key","up/"],["starts-with","$Content-Type","text/"],["content-length-range",1,1024]`
	v4 := signedV4(testAccessKey, testSecretKey, conds, later)

	t.Run("204 stores bytes, type and metadata", func(t *testing.T) {
		v4meta := signedV4(testAccessKey, testSecretKey, conds+`,["starts-with","$x-amz-meta-color",""],{"cache-control":"max-age=60"}`, later)
		r := postForm(t, url, fields(v4meta, "key", "up/a.txt", "Content-Type", "text/plain", "x-amz-meta-color", "blue", "Cache-Control", "max-age=60"), "a.txt", []byte("hello"))
		if r.status != 204 || r.header.Get("ETag") != `"`+md5hex([]byte("hello"))+`"` || r.header.Get("Location") != url+"/up/a.txt" {
			t.Fatalf("POST: %d %s %v", r.status, r.body, r.header)
		}
		got, out := get(t, c, &s3.GetObjectInput{Bucket: aws.String("forms"), Key: aws.String("up/a.txt")})
		if string(got) != "hello" || aws.ToString(out.ContentType) != "text/plain" || out.Metadata["color"] != "blue" || aws.ToString(out.CacheControl) != "max-age=60" {
			t.Fatalf("stored %q, type %q, meta %v, cache-control %q", got, aws.ToString(out.ContentType), out.Metadata, aws.ToString(out.CacheControl))
		}
	})
	t.Run("201 answers a PostResponse", func(t *testing.T) {
		v := signedV4(testAccessKey, testSecretKey, conds+`,{"success_action_status":"201"}`, later)
		r := postForm(t, url, fields(v, "key", "up/b.txt", "Content-Type", "text/plain", "success_action_status", "201"), "b", []byte("bee"))
		want := "<PostResponse><Location>" + url + "/up/b.txt</Location><Bucket>forms</Bucket><Key>up/b.txt</Key><ETag>&#34;" + md5hex([]byte("bee")) + "&#34;</ETag></PostResponse>"
		if r.status != 201 || !strings.Contains(r.body, want) {
			t.Fatalf("POST 201: %d %s", r.status, r.body)
		}
	})
	t.Run("200 and an invalid status", func(t *testing.T) {
		for status, want := range map[string]int{"200": 200, "404": 204} {
			v := signedV4(testAccessKey, testSecretKey, conds+`,["eq","$success_action_status","`+status+`"]`, later)
			r := postForm(t, url, fields(v, "key", "up/c.txt", "Content-Type", "text/plain", "success_action_status", status), "c", []byte("c"))
			if r.status != want || r.body != "" {
				t.Errorf("success_action_status %s: %d %q, want %d and no body", status, r.status, r.body, want)
			}
		}
	})
	t.Run("redirect", func(t *testing.T) {
		to := "http://example.com/done?x=1"
		v := signedV4(testAccessKey, testSecretKey, conds+`,{"success_action_redirect":"`+to+`"}`, later)
		r := postForm(t, url, fields(v, "key", "up/d e.txt", "Content-Type", "text/plain", "success_action_redirect", to), "d", []byte("dee"))
		want := to + "&bucket=forms&key=up%2Fd+e.txt&etag=%22" + md5hex([]byte("dee")) + "%22"
		if r.status != 303 || r.header.Get("Location") != want {
			t.Fatalf("redirect: %d Location %q, want 303 %q", r.status, r.header.Get("Location"), want)
		}
	})
	t.Run("${filename}", func(t *testing.T) {
		r := postForm(t, url, fields(v4, "key", "up/${filename}", "Content-Type", "text/plain"), "from-browser.txt", []byte("named"))
		if r.status != 204 {
			t.Fatalf("POST: %d %s", r.status, r.body)
		}
		if got, _ := get(t, c, &s3.GetObjectInput{Bucket: aws.String("forms"), Key: aws.String("up/from-browser.txt")}); string(got) != "named" {
			t.Fatalf("stored %q", got)
		}
	})
	t.Run("V2 signature", func(t *testing.T) {
		doc := `{"expiration":"` + later.UTC().Format(time.RFC3339) + `","conditions":[{"bucket":"forms"},["starts-with","$key","up/"],{"acl":"private"}]}`
		r := postForm(t, url, fields(signedV2(testAccessKey, testSecretKey, doc), "key", "up/v2", "acl", "private"), "", []byte("two"))
		if r.status != 204 {
			t.Fatalf("POST: %d %s", r.status, r.body)
		}
		bad := signedV2(testAccessKey, "wrong", doc)
		if r := postForm(t, url, fields(bad, "key", "up/v2bad", "acl", "private"), "", []byte("two")); r.status != 403 || r.code != "SignatureDoesNotMatch" {
			t.Fatalf("V2 with a wrong secret: %d %s", r.status, r.body)
		}
	})
	t.Run("acl field sets the object's ACL", func(t *testing.T) {
		v := signedV4(testAccessKey, testSecretKey, conds+`,{"acl":"public-read"}`, later)
		r := postForm(t, url, fields(v, "key", "up/public", "Content-Type", "text/plain", "acl", "public-read"), "", []byte("for all"))
		if r.status != 204 {
			t.Fatalf("POST: %d %s", r.status, r.body)
		}
		resp, body := rawRequest(t, st, "GET", "/forms/up/public", nil, nil, false)
		if resp.StatusCode != 200 || body != "for all" {
			t.Fatalf("anonymous GET of a public-read upload: %d %s", resp.StatusCode, body)
		}
		if resp, _ := rawRequest(t, st, "GET", "/forms/up/a.txt", nil, nil, false); resp.StatusCode != 403 {
			t.Fatalf("anonymous GET of a private upload: %d", resp.StatusCode)
		}
	})
	t.Run("checksums", func(t *testing.T) {
		good := "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=" // SHA-256 of "hello"
		r := postForm(t, url, fields(v4, "key", "up/sum", "Content-Type", "text/plain", "x-amz-checksum-sha256", good), "", []byte("hello"))
		if r.status != 204 {
			t.Fatalf("right checksum: %d %s", r.status, r.body)
		}
		r = postForm(t, url, fields(v4, "key", "up/badsum", "Content-Type", "text/plain", "x-amz-checksum-sha256", good), "", []byte("hellO"))
		if r.status != 400 || r.code != "BadDigest" {
			t.Fatalf("wrong checksum: %d %s", r.status, r.body)
		}
	})

	refusals := []struct {
		name, key    string
		fields       []formField
		file         string
		status       int
		code, detail string
	}{
		{"expired policy", "up/expired", fields(signedV4(testAccessKey, testSecretKey, conds, time.Now().Add(-time.Minute)), "key", "up/expired", "Content-Type", "text/plain"),
			"x", 403, "AccessDenied", "Invalid according to Policy: Policy expired."},
		{"extra field", "up/extra", fields(v4, "key", "up/extra", "Content-Type", "text/plain", "x-amz-meta-sneaky", "1"),
			"x", 403, "AccessDenied", "Extra input fields: x-amz-meta-sneaky"},
		{"field a condition requires is missing", "up/missing", fields(signedV4(testAccessKey, testSecretKey, conds+`,["starts-with","$x-amz-meta-foo","bar"]`, later), "key", "up/missing", "Content-Type", "text/plain"),
			"x", 403, "AccessDenied", `Policy Condition failed: ["starts-with", "$x-amz-meta-foo", "bar"]`},
		{"starts-with mismatch", "other/k", fields(v4, "key", "other/k", "Content-Type", "text/plain"),
			"x", 403, "AccessDenied", `["starts-with", "$key", "up/"]`},
		{"file larger than the range", "up/large", fields(v4, "key", "up/large", "Content-Type", "text/plain"),
			strings.Repeat("x", 1025), 400, "EntityTooLarge", ""},
		{"file smaller than the range", "up/small", fields(v4, "key", "up/small", "Content-Type", "text/plain"),
			"", 400, "EntityTooSmall", ""},
		{"bad signature", "up/badsig", fields(signedV4(testAccessKey, "not-the-secret", conds, later), "key", "up/badsig", "Content-Type", "text/plain"),
			"x", 403, "SignatureDoesNotMatch", ""},
		{"unknown access key", "up/badkey", fields(signedV4("NOSUCHKEY", testSecretKey, conds, later), "key", "up/badkey", "Content-Type", "text/plain"),
			"x", 403, "InvalidAccessKeyId", ""},
		{"policy without conditions", "up/nocond", fields(signedV2(testAccessKey, testSecretKey, `{"expiration":"2099-01-01T00:00:00Z"}`), "key", "up/nocond"),
			"x", 400, "InvalidPolicyDocument", "Policy missing conditions."},
		{"no key", "", fields(v4, "Content-Type", "text/plain"), "x", 400, "InvalidArgument", "a field named 'key'"},
		{"tagging", "up/tagged", fields(signedV4(testAccessKey, testSecretKey, conds+`,["starts-with","$tagging",""]`, later), "key", "up/tagged", "Content-Type", "text/plain", "tagging", "<Tagging/>"),
			"x", 501, "NotImplemented", ""},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			r := postForm(t, url, tc.fields, "f", []byte(tc.file))
			if r.status != tc.status || r.code != tc.code || !strings.Contains(html.UnescapeString(r.body), tc.detail) {
				t.Fatalf("got %d %s, want %d %s (%q)", r.status, r.body, tc.status, tc.code, tc.detail)
			}
			if tc.key == "" {
				return
			}
			if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("forms"), Key: aws.String(tc.key)}); err == nil {
				t.Fatalf("%s: the object was stored", tc.key)
			}
		})
	}

	t.Run("the policy's bucket is checked against the request's", func(t *testing.T) {
		_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("other")})
		mustOK(t, err)
		r := postForm(t, st.srv.URL+"/other", fields(v4, "key", "up/k", "Content-Type", "text/plain", "bucket", "forms"), "", []byte("x"))
		if r.status != 403 || r.code != "AccessDenied" {
			t.Fatalf("form of bucket forms posted to other: %d %s", r.status, r.body)
		}
	})
	t.Run("a POST that is not a form", func(t *testing.T) {
		resp, body := rawRequest(t, st, "POST", "/forms", []byte("k=v"), map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, true)
		if resp.StatusCode != 412 || !strings.Contains(body, "<Code>PreconditionFailed</Code>") {
			t.Fatalf("signed non-form POST: %d %s", resp.StatusCode, body)
		}
	})
}

// TestPostObjectAnonymous: without credentials a form is a write by everyone, allowed only
// where the bucket's ACL lets everyone write.
func TestPostObjectAnonymous(t *testing.T) {
	st := newStack(t)
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("private")})
	mustOK(t, err)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("public"), ACL: types.BucketCannedACLPublicReadWrite})
	mustOK(t, err)

	anon := []formField{{"key", "foo.txt"}, {"Content-Type", "text/plain"}}
	for _, b := range []string{"private", "missing"} {
		if r := postForm(t, st.srv.URL+"/"+b, anon, "", []byte("bar")); r.status != 403 || r.code != "AccessDenied" {
			t.Errorf("anonymous POST to %s bucket: %d %s", b, r.status, r.body)
		}
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("private"), Key: aws.String("foo.txt")}); err == nil {
		t.Fatal("anonymous POST to a private bucket stored the object")
	}
	r := postForm(t, st.srv.URL+"/public", append(anon, formField{"success_action_status", "201"}), "", []byte("bar"))
	if r.status != 201 || !strings.Contains(r.body, "<Key>foo.txt</Key>") {
		t.Fatalf("anonymous POST to a public-read-write bucket: %d %s", r.status, r.body)
	}
	if got, out := get(t, c, &s3.GetObjectInput{Bucket: aws.String("public"), Key: aws.String("foo.txt")}); string(got) != "bar" || aws.ToString(out.ContentType) != "text/plain" {
		t.Fatalf("stored %q, %q", got, aws.ToString(out.ContentType))
	}
	// Setting an ACL that grants anything takes what it takes on PUT.
	resp, putBody := rawRequest(t, st, "PUT", "/public/acl-put", []byte("x"), map[string]string{"X-Amz-Acl": "public-read"}, false)
	r = postForm(t, st.srv.URL+"/public", []formField{{"key", "acl-post"}, {"acl", "public-read"}}, "", []byte("x"))
	if r.status != resp.StatusCode && !(r.status == 204 && resp.StatusCode == 200) {
		t.Fatalf("anonymous acl public-read: POST %d %s, PUT %d %s", r.status, r.body, resp.StatusCode, putBody)
	}
	t.Logf("anonymous acl public-read into a public-read-write bucket: POST %d, PUT %d", r.status, resp.StatusCode)
	// A policy nobody signed is refused rather than ignored.
	unsigned := append(anon, formField{"policy", base64.StdEncoding.EncodeToString([]byte(`{"expiration":"2099-01-01T00:00:00Z","conditions":[]}`))})
	if r := postForm(t, st.srv.URL+"/public", unsigned, "", []byte("bar")); r.status != 400 || r.code != "InvalidArgument" {
		t.Fatalf("policy without signature: %d %s", r.status, r.body)
	}
}

// TestPostObjectClientGone: a client that stops sending in the middle of the file stores
// nothing, and the object it would have replaced is intact. Half-closed, the client still
// reads the answer (IncompleteBody), so the server's request is not cancelled and only the
// form reader's refusal of a file without its closing boundary keeps the half file out;
// fully closed, the request is cancelled too. The server's handler says when it has read into
// the file and when it has returned, so that the client leaves mid-file and the object is read
// only once the server is done with the form, however slow the machine.
func TestPostObjectClientGone(t *testing.T) {
	body, ct := multipartForm(t, []formField{{"key", "k"}}, "f", bytes.Repeat([]byte("z"), 1<<20))
	// 64 KiB into the file: past any buffer of the form reader's, the server is storing it.
	inFileAt := int64(bytes.Index(body, bytes.Repeat([]byte("z"), 1024)) + 64<<10)
	inFile, returned := make(chan struct{}, 1), make(chan struct{}, 1)
	st := newStackWrapped(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				h.ServeHTTP(w, r)
				return
			}
			defer func() { returned <- struct{}{} }()
			r.Body = &readWatcher{ReadCloser: r.Body, at: inFileAt, reached: inFile}
			h.ServeHTTP(w, r)
		})
	})
	waitFor := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(time.Minute): // only catches a server that hangs
			t.Fatalf("the server never %s", what)
		}
	}
	c, ctx := st.client, ctxT(t)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("gone"), ACL: types.BucketCannedACLPublicReadWrite})
	mustOK(t, err)
	put(t, c, "gone", "k", []byte("before"))

	for _, halfClose := range []bool{true, false} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(st.srv.URL, "http://"))
		mustOK(t, err)
		fmt.Fprintf(conn, "POST /gone HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", ct, len(body))
		conn.Write(body[:len(body)/2])
		if halfClose {
			mustOK(t, conn.(*net.TCPConn).CloseWrite())
			conn.SetReadDeadline(time.Now().Add(time.Minute)) // a safety net, not a threshold
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			mustOK(t, err)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 400 || !strings.Contains(string(b), "<Code>IncompleteBody</Code>") {
				t.Errorf("half a form, then the end of the stream: %d %s", resp.StatusCode, b)
			}
		} else {
			waitFor("read into the file", inFile)
		}
		conn.Close()
		waitFor("returned from the form", returned)
		select {
		case <-inFile: // the half-closed form's, not waited for
		default:
		}
		if got, _ := get(t, c, &s3.GetObjectInput{Bucket: aws.String("gone"), Key: aws.String("k")}); string(got) != "before" {
			t.Fatalf("after a client left mid-file (half-closed %v) the object reads %d bytes, want the old one", halfClose, len(got))
		}
	}
}

// readWatcher is a request body that signals reached (once, without blocking) when at bytes
// of it have been read.
type readWatcher struct {
	io.ReadCloser
	at      int64
	read    int64
	reached chan<- struct{}
}

func (r *readWatcher) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if r.read < r.at && r.read+int64(n) >= r.at {
		select {
		case r.reached <- struct{}{}:
		default:
		}
	}
	r.read += int64(n)
	return n, err
}

// TestPostObjectMaxObjectSize: without a policy (or with a wider range) the server's own
// object size limit bounds a form's file, as it bounds a PUT.
func TestPostObjectMaxObjectSize(t *testing.T) {
	node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: t.TempDir()}}})
	mustOK(t, err)
	t.Cleanup(func() { node.Close() })
	px, err := proxy.New(proxy.Config{Ring: ring.SingleDevice("local", "d0", 6, ""), Dialer: nodeclient.Local{Client: node}})
	mustOK(t, err)
	h, err := cairns3.New(cairns3.Config{Proxy: px, MaxObjectSize: 1000,
		Credentials: sigv4.StaticStore{testAccessKey: {AccessKey: testAccessKey, SecretKey: testSecretKey, Account: "acct", Admin: true}}})
	mustOK(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, ctx := newClient(srv.URL, testSecretKey), ctxT(t)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("lim"), ACL: types.BucketCannedACLPublicReadWrite})
	mustOK(t, err)

	if r := postForm(t, srv.URL+"/lim", []formField{{"key", "fits"}}, "", make([]byte, 1000)); r.status != 204 {
		t.Fatalf("file at the limit: %d %s", r.status, r.body)
	}
	if r := postForm(t, srv.URL+"/lim", []formField{{"key", "over"}}, "", make([]byte, 1001)); r.status != 400 || r.code != "EntityTooLarge" {
		t.Fatalf("file over the limit: %d %s", r.status, r.body)
	}
	wide := signedV4(testAccessKey, testSecretKey, `{"bucket":"lim"},["starts-with","$key",""],["content-length-range",0,5000]`, time.Now().Add(time.Hour))
	if r := postForm(t, srv.URL+"/lim", fields(wide, "key", "over2"), "", make([]byte, 1001)); r.status != 400 || r.code != "EntityTooLarge" {
		t.Fatalf("file over the limit, within the policy's range: %d %s", r.status, r.body)
	}
	for _, k := range []string{"over", "over2"} {
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("lim"), Key: aws.String(k)}); err == nil {
			t.Errorf("%s was stored", k)
		}
	}
}
