package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// sendForm POSTs fields (in name order, then extra in its order) and a file to url, the way a
// browser sends a form, without following redirects. It returns the status, the S3 error code
// if any, and the response.
func sendForm(t *testing.T, ctx context.Context, url string, fields map[string]string, extra [][2]string, filename string, file io.Reader) (int, string, *http.Response) {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		names := make([]string, 0, len(fields))
		for k := range fields {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			mw.WriteField(k, fields[k])
		}
		for _, f := range extra {
			mw.WriteField(f[0], f[1])
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filename))
		w, err := mw.CreatePart(h)
		if err == nil {
			_, err = io.Copy(w, file)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	b, _ := ReadAllClose(resp.Body)
	code := ""
	if i := strings.Index(string(b), "<Code>"); i >= 0 {
		code = string(b)[i+6 : i+strings.Index(string(b)[i:], "</Code>")]
	}
	return resp.StatusCode, code, resp
}

// TestPostObjectPresignedBySDK: forms made by the AWS SDK for Go v2's PresignPostObject, sent
// to the real server as a browser would (unsigned request, credentials in the form), upload
// through it, also a file far larger than any buffer; the policy's conditions and bounds hold.
func TestPostObjectPresignedBySDK(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client(NoRetries)
	bucket := newBucket(t, ctx, c, "post")
	pc := s3.NewPresignClient(c)

	presign := func(key string, conds ...any) *s3.PresignedPostRequest {
		t.Helper()
		p, err := pc.PresignPostObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}, func(o *s3.PresignPostOptions) {
			o.Expires = 10 * time.Minute
			o.Conditions = conds
		})
		if err != nil {
			t.Fatalf("PresignPostObject: %v", err)
		}
		return p
	}

	// 24 MiB: streamed through the form reader and the engine, never held whole.
	body := randBytes(11, 24<<20)
	p := presign("sdk/big.bin", []any{"content-length-range", 1, 32 << 20}, map[string]string{"x-amz-meta-origin": "sdk"},
		[]any{"starts-with", "$Content-Type", "application/"})
	if !strings.HasSuffix(p.URL, "/"+bucket) {
		t.Fatalf("presigned POST URL %q does not address the bucket path-style", p.URL)
	}
	status, code, resp := sendForm(t, ctx, p.URL, p.Values, [][2]string{{"x-amz-meta-origin", "sdk"}, {"Content-Type", "application/x-cairn"}}, "big.bin", bytes.NewReader(body))
	if status != http.StatusNoContent {
		t.Fatalf("POST of the SDK's form: %d %s", status, code)
	}
	if want := `"` + md5Hex(body) + `"`; resp.Header.Get("ETag") != want {
		t.Errorf("ETag %s, want %s", resp.Header.Get("ETag"), want)
	}
	got, out, err := getBytes(ctx, c, bucket, "sdk/big.bin")
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GET after POST: err %v, %d bytes, equal %v", err, len(got), bytes.Equal(got, body))
	}
	if out.Metadata["origin"] != "sdk" || aws.ToString(out.ContentType) != "application/x-cairn" {
		t.Errorf("metadata %v, type %q", out.Metadata, aws.ToString(out.ContentType))
	}

	// The SDK's policy pins the key: another one is refused, as is a file outside the range
	// and a field the policy does not name.
	p = presign("sdk/small", []any{"content-length-range", 1, 1000})
	fields := func(key string) map[string]string {
		f := map[string]string{}
		for k, v := range p.Values {
			f[k] = v
		}
		f["key"] = key
		return f
	}
	for _, tc := range []struct {
		name   string
		key    string
		extra  [][2]string
		size   int
		status int
		code   string
	}{
		{"another key", "sdk/other", nil, 10, 403, "AccessDenied"},
		{"too large", "sdk/small", nil, 1001, 400, "EntityTooLarge"},
		{"too small", "sdk/small", nil, 0, 400, "EntityTooSmall"},
		{"uncovered field", "sdk/small", [][2]string{{"x-amz-meta-extra", "1"}}, 10, 403, "AccessDenied"},
		{"fits", "sdk/small", nil, 1000, 204, ""},
	} {
		status, code, _ := sendForm(t, ctx, p.URL, fields(tc.key), tc.extra, "f", bytes.NewReader(make([]byte, tc.size)))
		if status != tc.status || code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, status, code, tc.status, tc.code)
		}
	}
	if _, _, err := getBytes(ctx, c, bucket, "sdk/other"); apiCode(err) != "NoSuchKey" {
		t.Errorf("refused POST stored its object (GET err %v)", err)
	}

	// Signed with a key the server does not know, or a wrong secret.
	other := s3.NewPresignClient(NewS3Client(srv.Endpoint, "NOSUCHKEY", srv.SecretKey))
	bad, err := other.PresignPostObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	if status, code, _ := sendForm(t, ctx, bad.URL, bad.Values, nil, "f", strings.NewReader("x")); status != 403 || code != "InvalidAccessKeyId" {
		t.Errorf("unknown access key: %d %s", status, code)
	}
	wrong := s3.NewPresignClient(NewS3Client(srv.Endpoint, srv.AccessKey, "not-the-secret"))
	bad, err = wrong.PresignPostObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	if status, code, _ := sendForm(t, ctx, bad.URL, bad.Values, nil, "f", strings.NewReader("x")); status != 403 || code != "SignatureDoesNotMatch" {
		t.Errorf("wrong secret: %d %s", status, code)
	}

	// Without credentials the bucket (private) refuses the form.
	anon := map[string]string{"key": "anon.txt"}
	if status, code, _ := sendForm(t, ctx, srv.Endpoint+"/"+bucket, anon, nil, "f", strings.NewReader("x")); status != 403 || code != "AccessDenied" {
		t.Errorf("anonymous POST to a private bucket: %d %s", status, code)
	}
}
