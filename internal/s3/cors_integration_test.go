package s3_test

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// corsAnswer is what a plain (browser-like) request got back.
type corsAnswer struct {
	status int
	hdr    http.Header
	body   string
}

func (a corsAnswer) code() string {
	i := strings.Index(a.body, "<Code>")
	j := strings.Index(a.body, "</Code>")
	if i < 0 || j < i {
		return ""
	}
	return a.body[i+len("<Code>") : j]
}

// plain sends an unsigned request with the given headers, as a browser would.
func plain(t *testing.T, method, url string, hdr map[string]string) corsAnswer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	mustOK(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	mustOK(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return corsAnswer{status: resp.StatusCode, hdr: resp.Header, body: string(b)}
}

func corsRule(origins, methods []string, more func(*types.CORSRule)) types.CORSRule {
	r := types.CORSRule{AllowedOrigins: origins, AllowedMethods: methods}
	if more != nil {
		more(&r)
	}
	return r
}

// TestCORSConfiguration: PutBucketCors, GetBucketCors and DeleteBucketCors through the SDK,
// S3's refusals of bad configurations, and who may read and change one.
func TestCORSConfiguration(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("site")})
	mustOK(t, err)

	_, err = ts.a.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("site")})
	wantStatus(t, "GetBucketCors without one", err, http.StatusNotFound)
	wantCode(t, err, "NoSuchCORSConfiguration")
	_, err = ts.a.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("nosuchbucket")})
	wantCode(t, err, "NoSuchBucket")

	rules := []types.CORSRule{
		corsRule([]string{"https://app.example", "https://*.app.example"}, []string{"GET", "PUT"}, func(r *types.CORSRule) {
			r.ID = aws.String("app")
			r.AllowedHeaders = []string{"x-amz-*", "Content-Type"}
			r.ExposeHeaders = []string{"ETag", "x-amz-meta-color"}
			r.MaxAgeSeconds = aws.Int32(3000)
		}),
		corsRule([]string{"*"}, []string{"GET"}, nil),
	}
	_, err = ts.a.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("site"), CORSConfiguration: &types.CORSConfiguration{CORSRules: rules}})
	mustOK(t, err)
	out, err := ts.a.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("site")})
	mustOK(t, err)
	if len(out.CORSRules) != 2 {
		t.Fatalf("rules: %+v", out.CORSRules)
	}
	got := out.CORSRules[0]
	if aws.ToString(got.ID) != "app" || aws.ToInt32(got.MaxAgeSeconds) != 3000 ||
		strings.Join(got.AllowedOrigins, " ") != "https://app.example https://*.app.example" ||
		strings.Join(got.AllowedMethods, " ") != "GET PUT" || strings.Join(got.AllowedHeaders, " ") != "x-amz-* Content-Type" ||
		strings.Join(got.ExposeHeaders, " ") != "ETag x-amz-meta-color" {
		t.Fatalf("rule 1 came back as %+v", got)
	}
	if second := out.CORSRules[1]; second.ID != nil || second.MaxAgeSeconds != nil || len(second.AllowedHeaders) != 0 || second.AllowedOrigins[0] != "*" {
		t.Fatalf("rule 2 came back with members it was not given: %+v", second)
	}

	// S3's refusals; each leaves the configuration as it was.
	many := make([]types.CORSRule, 101)
	for i := range many {
		many[i] = corsRule([]string{"*"}, []string{"GET"}, nil)
	}
	for _, tc := range []struct {
		name  string
		rules []types.CORSRule
		code  string
		msg   string
	}{
		{"method PATCH", []types.CORSRule{corsRule([]string{"*"}, []string{"PATCH"}, nil)}, "InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is PATCH"},
		{"two wildcards in an origin", []types.CORSRule{corsRule([]string{"http://*.*.example"}, []string{"GET"}, nil)}, "InvalidRequest", `AllowedOrigin "http://*.*.example" can not have more than one wildcard.`},
		{"two wildcards in a header", []types.CORSRule{corsRule([]string{"*"}, []string{"GET"}, func(r *types.CORSRule) { r.AllowedHeaders = []string{"*-*"} })}, "InvalidRequest", `AllowedHeader "*-*" can not have more than one wildcard.`},
		{"wildcard in an exposed header", []types.CORSRule{corsRule([]string{"*"}, []string{"GET"}, func(r *types.CORSRule) { r.ExposeHeaders = []string{"x-*"} })}, "InvalidRequest", "We currently do not support wildcard for ExposeHeader."},
		{"ID of 256", []types.CORSRule{corsRule([]string{"*"}, []string{"GET"}, func(r *types.CORSRule) { r.ID = aws.String(strings.Repeat("i", 256)) })}, "InvalidArgument", "255"},
		{"negative max age", []types.CORSRule{corsRule([]string{"*"}, []string{"GET"}, func(r *types.CORSRule) { r.MaxAgeSeconds = aws.Int32(-1) })}, "InvalidArgument", "negative"},
		{"101 rules", many, "MalformedXML", ""},
	} {
		_, err := ts.a.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("site"), CORSConfiguration: &types.CORSConfiguration{CORSRules: tc.rules}})
		wantStatus(t, tc.name, err, http.StatusBadRequest)
		wantCode(t, err, tc.code)
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want the message %q", tc.name, err, tc.msg)
		}
	}
	if out, err := ts.a.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("site")}); err != nil || len(out.CORSRules) != 2 {
		t.Fatalf("after refusals: %v %+v", err, out)
	}

	// Another tenant may neither read nor change it (the name is claimed, so beta finds the
	// bucket and is refused, rather than told it does not exist), nor anyone anonymous.
	_, err = ts.b.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("site")})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("site"), CORSConfiguration: &types.CORSConfiguration{CORSRules: rules[1:]}})
	wantCode(t, err, "AccessDenied")
	_, err = ts.b.DeleteBucketCors(ctx, &s3.DeleteBucketCorsInput{Bucket: aws.String("site")})
	wantCode(t, err, "AccessDenied")
	if st, code, _ := ts.anon(t, "GET", "/site?cors", nil); st != http.StatusForbidden || code != "AccessDenied" {
		t.Fatalf("anonymous GET ?cors: %d %s", st, code)
	}
	// A policy can grant it: s3:GetBucketCORS to beta, and nothing more.
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"beta"},"Action":"s3:GetBucketCORS","Resource":"arn:aws:s3:::site"}]}`
	_, err = ts.a.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("site"), Policy: &policy})
	mustOK(t, err)
	if out, err := ts.b.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("site")}); err != nil || len(out.CORSRules) != 2 {
		t.Fatalf("beta with s3:GetBucketCORS: %v", err)
	}
	_, err = ts.b.DeleteBucketCors(ctx, &s3.DeleteBucketCorsInput{Bucket: aws.String("site")})
	wantCode(t, err, "AccessDenied")

	// DeleteBucketCors is 204, also when there is none.
	for i := 0; i < 2; i++ {
		_, err = ts.a.DeleteBucketCors(ctx, &s3.DeleteBucketCorsInput{Bucket: aws.String("site")})
		mustOK(t, err)
	}
	_, err = ts.a.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("site")})
	wantCode(t, err, "NoSuchCORSConfiguration")
	if st, _, _ := ts.anon(t, "DELETE", "/site?cors", nil); st != http.StatusForbidden {
		t.Fatalf("anonymous DELETE ?cors: %d", st)
	}
}

// TestCORSPutNeedsIntegrity: PutBucketCors without Content-MD5 or a checksum is refused, as
// S3 refuses it; with a Content-MD5 it is taken.
func TestCORSPutNeedsIntegrity(t *testing.T) {
	st := newStack(t)
	_, err := st.client.CreateBucket(ctxT(t), &s3.CreateBucketInput{Bucket: aws.String("bkt")})
	mustOK(t, err)
	doc := []byte(`<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>`)
	resp, body := rawRequest(t, st, "PUT", "/bkt?cors", doc, nil, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "<Code>InvalidRequest</Code>") || !strings.Contains(body, "Content-MD5") {
		t.Fatalf("without an integrity header: %d %s", resp.StatusCode, body)
	}
	resp, body = rawRequest(t, st, "PUT", "/bkt?cors", doc, map[string]string{"Content-MD5": md5b64(doc)}, true)
	if resp.StatusCode != 200 {
		t.Fatalf("with Content-MD5: %d %s", resp.StatusCode, body)
	}
	resp, body = rawRequest(t, st, "PUT", "/bkt?cors", doc, map[string]string{"Content-MD5": md5b64([]byte("other"))}, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "<Code>BadDigest</Code>") {
		t.Fatalf("with a wrong Content-MD5: %d %s", resp.StatusCode, body)
	}
	empty := []byte(`<CORSConfiguration/>`)
	resp, body = rawRequest(t, st, "PUT", "/bkt?cors", empty, map[string]string{"Content-MD5": md5b64(empty)}, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "<Code>MalformedXML</Code>") {
		t.Fatalf("no rules: %d %s", resp.StatusCode, body)
	}
	noOrigin := []byte(`<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>`)
	resp, body = rawRequest(t, st, "PUT", "/bkt?cors", noOrigin, map[string]string{"Content-MD5": md5b64(noOrigin)}, true)
	if resp.StatusCode != 400 || !strings.Contains(body, "<Code>MalformedXML</Code>") {
		t.Fatalf("a rule without an origin: %d %s", resp.StatusCode, body)
	}
	resp, body = rawRequest(t, st, "GET", "/bkt?cors", nil, nil, true)
	if resp.StatusCode != 200 || !strings.Contains(body, "<AllowedOrigin>*</AllowedOrigin>") || !strings.Contains(body, `xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`) {
		t.Fatalf("GET ?cors: %d %s", resp.StatusCode, body)
	}
}

// TestCORSPreflightAndActual replays s3-tests' test_cors_origin_response,
// test_cors_origin_wildcard and test_cors_header_option against a public-read bucket, and
// checks the headers S3 sends with an allowed answer.
func TestCORSPreflightAndActual(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("pub"), ACL: types.BucketCannedACLPublicRead})
	mustOK(t, err)
	url := ts.endpoint + "/pub"
	obj := url + "/bar" // does not exist

	// No configuration: preflights are refused, actual requests get no CORS headers.
	if a := plain(t, "OPTIONS", obj, map[string]string{"Origin": "foo.suffix", "Access-Control-Request-Method": "GET"}); a.status != 403 ||
		a.code() != "AccessForbidden" || !strings.Contains(a.body, "<Message>CORSResponse: CORS is not enabled for this bucket.</Message><Method>GET</Method><ResourceType>BUCKET</ResourceType>") {
		t.Fatalf("preflight without a configuration: %d %s", a.status, a.body)
	}
	if a := plain(t, "OPTIONS", url, map[string]string{"Origin": "foo.suffix"}); a.status != 403 || !strings.Contains(a.body, "<Method>OPTIONS</Method>") {
		t.Fatalf("preflight without a configuration nor a method: %d %s", a.status, a.body)
	}
	if a := plain(t, "GET", url, map[string]string{"Origin": "foo.suffix"}); a.status != 200 || a.hdr.Get("Access-Control-Allow-Origin") != "" || a.hdr.Get("Vary") != "" {
		t.Fatalf("GET without a configuration: %d %v", a.status, a.hdr)
	}
	if a := plain(t, "OPTIONS", ts.endpoint+"/nosuchbucket/k", map[string]string{"Origin": "x", "Access-Control-Request-Method": "GET"}); a.status != 403 ||
		!strings.Contains(a.body, "CORSResponse: Bucket not found") {
		t.Fatalf("preflight to a bucket that does not exist: %d %s", a.status, a.body)
	}

	_, err = ts.a.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("pub"), CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{
		corsRule([]string{"*suffix"}, []string{"GET"}, nil),
		corsRule([]string{"start*end"}, []string{"GET"}, nil),
		corsRule([]string{"prefix*"}, []string{"GET"}, nil),
		corsRule([]string{"*.put"}, []string{"PUT"}, nil),
	}}})
	mustOK(t, err)

	for _, tc := range []struct {
		method, url string
		hdr         map[string]string
		status      int
		origin      string // Access-Control-Allow-Origin; "": none
		methods     string // Access-Control-Allow-Methods
	}{
		{"GET", url, nil, 200, "", ""},
		{"GET", url, map[string]string{"Origin": "foo.suffix"}, 200, "foo.suffix", "GET"},
		{"GET", url, map[string]string{"Origin": "foo.bar"}, 200, "", ""},
		{"GET", url, map[string]string{"Origin": "foo.suffix.get"}, 200, "", ""},
		{"GET", url, map[string]string{"Origin": "startend"}, 200, "startend", "GET"},
		{"GET", url, map[string]string{"Origin": "start1end"}, 200, "start1end", "GET"},
		{"GET", url, map[string]string{"Origin": "start12end"}, 200, "start12end", "GET"},
		{"GET", url, map[string]string{"Origin": "0start12end"}, 200, "", ""},
		{"GET", url, map[string]string{"Origin": "prefix"}, 200, "prefix", "GET"},
		{"GET", url, map[string]string{"Origin": "prefix.suffix"}, 200, "prefix.suffix", "GET"},
		{"GET", url, map[string]string{"Origin": "bla.prefix"}, 200, "", ""},
		// Errors carry the headers too.
		{"GET", obj, map[string]string{"Origin": "foo.suffix"}, 404, "foo.suffix", "GET"},
		{"PUT", obj, map[string]string{"Origin": "foo.suffix", "Access-Control-Request-Method": "GET"}, 403, "foo.suffix", "GET"},
		{"PUT", obj, map[string]string{"Origin": "foo.suffix", "Access-Control-Request-Method": "PUT"}, 403, "", ""},
		{"PUT", obj, map[string]string{"Origin": "foo.suffix", "Access-Control-Request-Method": "DELETE"}, 403, "", ""},
		{"PUT", obj, map[string]string{"Origin": "foo.suffix"}, 403, "", ""},
		{"PUT", obj, map[string]string{"Origin": "foo.put"}, 403, "foo.put", "PUT"},
		{"HEAD", obj, map[string]string{"Origin": "foo.suffix"}, 404, "", ""}, // no rule allows HEAD
		// Preflights.
		{"OPTIONS", url, nil, 400, "", ""},
		{"OPTIONS", url, map[string]string{"Origin": "foo.suffix"}, 400, "", ""},
		{"OPTIONS", url, map[string]string{"Origin": "bla"}, 400, "", ""},
		{"OPTIONS", obj, map[string]string{"Origin": "foo.suffix", "Access-Control-Request-Method": "GET"}, 200, "foo.suffix", "GET"},
		{"OPTIONS", url, map[string]string{"Origin": "foo.bar", "Access-Control-Request-Method": "GET"}, 403, "", ""},
		{"OPTIONS", url, map[string]string{"Origin": "foo.suffix.get", "Access-Control-Request-Method": "GET"}, 403, "", ""},
		{"OPTIONS", url, map[string]string{"Origin": "startend", "Access-Control-Request-Method": "GET"}, 200, "startend", "GET"},
		{"OPTIONS", url, map[string]string{"Origin": "start1end", "Access-Control-Request-Method": "GET"}, 200, "start1end", "GET"},
		{"OPTIONS", url, map[string]string{"Origin": "start12end", "Access-Control-Request-Method": "GET"}, 200, "start12end", "GET"},
		{"OPTIONS", url, map[string]string{"Origin": "0start12end", "Access-Control-Request-Method": "GET"}, 403, "", ""},
		{"OPTIONS", url, map[string]string{"Origin": "prefix", "Access-Control-Request-Method": "GET"}, 200, "prefix", "GET"},
		{"OPTIONS", url, map[string]string{"Origin": "prefix.suffix", "Access-Control-Request-Method": "GET"}, 200, "prefix.suffix", "GET"},
		{"OPTIONS", url, map[string]string{"Origin": "bla.prefix", "Access-Control-Request-Method": "GET"}, 403, "", ""},
		{"OPTIONS", url, map[string]string{"Origin": "foo.put", "Access-Control-Request-Method": "GET"}, 403, "", ""},
		{"OPTIONS", url, map[string]string{"Origin": "foo.put", "Access-Control-Request-Method": "PUT"}, 200, "foo.put", "PUT"},
	} {
		a := plain(t, tc.method, tc.url, tc.hdr)
		if a.status != tc.status || a.hdr.Get("Access-Control-Allow-Origin") != tc.origin || a.hdr.Get("Access-Control-Allow-Methods") != tc.methods {
			t.Errorf("%s %s %v: %d, origin %q, methods %q; want %d %q %q (%s)", tc.method, tc.url, tc.hdr, a.status,
				a.hdr.Get("Access-Control-Allow-Origin"), a.hdr.Get("Access-Control-Allow-Methods"), tc.status, tc.origin, tc.methods, a.body)
		}
		allowed := tc.origin != ""
		if allowed != (a.hdr.Get("Vary") != "") || allowed != (a.hdr.Get("Access-Control-Allow-Credentials") == "true") {
			t.Errorf("%s %s %v: Vary %q, Allow-Credentials %q", tc.method, tc.url, tc.hdr, a.hdr.Get("Vary"), a.hdr.Get("Access-Control-Allow-Credentials"))
		}
	}
	// The bodies of the refusals, as S3 writes them.
	a := plain(t, "OPTIONS", obj, map[string]string{"Origin": "foo.bar", "Access-Control-Request-Method": "GET"})
	if a.code() != "AccessForbidden" || !strings.Contains(a.body, "<Message>CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource&#39;s CORS spec.</Message><Method>GET</Method><ResourceType>OBJECT</ResourceType>") {
		t.Errorf("no rule: %s", a.body)
	}
	if a := plain(t, "OPTIONS", url, map[string]string{"Origin": "foo.suffix"}); a.code() != "BadRequest" || !strings.Contains(a.body, "Invalid Access-Control-Request-Method: null") {
		t.Errorf("no method: %s", a.body)
	}
	if a := plain(t, "OPTIONS", url, nil); a.code() != "BadRequest" || !strings.Contains(a.body, "Insufficient information. Origin request header needed.") {
		t.Errorf("no origin: %s", a.body)
	}

	// test_cors_origin_wildcard and test_cors_header_option, and the other headers.
	_, err = ts.a.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("pub"), CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{
		corsRule([]string{"https://app.example"}, []string{"PUT", "DELETE"}, func(r *types.CORSRule) {
			r.AllowedHeaders = []string{"x-amz-*", "content-type"}
			r.ExposeHeaders = []string{"ETag", "x-amz-request-id"}
			r.MaxAgeSeconds = aws.Int32(600)
		}),
		corsRule([]string{"*"}, []string{"GET"}, func(r *types.CORSRule) { r.ExposeHeaders = []string{"x-amz-meta-header1"} }),
	}}})
	mustOK(t, err)
	if a := plain(t, "GET", url, map[string]string{"Origin": "example.origin"}); a.status != 200 || a.hdr.Get("Access-Control-Allow-Origin") != "*" ||
		a.hdr.Get("Access-Control-Allow-Credentials") != "" || a.hdr.Get("Access-Control-Expose-Headers") != "x-amz-meta-header1" {
		t.Errorf("wildcard origin: %d %v", a.status, a.hdr)
	}
	if a := plain(t, "OPTIONS", obj, map[string]string{"Origin": "example.origin", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-amz-meta-header2"}); a.status != 403 {
		t.Errorf("a header no rule allows: %d %v", a.status, a.hdr)
	}
	a = plain(t, "OPTIONS", obj, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "X-Amz-Date,Content-Type"})
	want := map[string]string{
		"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Allow-Credentials": "true",
		"Access-Control-Allow-Methods": "PUT, DELETE", "Access-Control-Allow-Headers": "x-amz-date, content-type",
		"Access-Control-Expose-Headers": "ETag, x-amz-request-id", "Access-Control-Max-Age": "600",
		"Vary": "Origin, Access-Control-Request-Headers, Access-Control-Request-Method", "Content-Length": "0",
	}
	if a.status != 200 || a.body != "" {
		t.Errorf("preflight with headers: %d %s", a.status, a.body)
	}
	for k, v := range want {
		if a.hdr.Get(k) != v {
			t.Errorf("preflight: %s = %q, want %q", k, a.hdr.Get(k), v)
		}
	}

	// A private bucket with CORS: its preflights are answered (the configuration claimed its
	// name), its objects stay private.
	_, err = ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("private-cors")})
	mustOK(t, err)
	putOK(t, ts.a, "private-cors", "k", "secret")
	if a := plain(t, "OPTIONS", ts.endpoint+"/private-cors/k", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET"}); a.status != 403 ||
		!strings.Contains(a.body, "Bucket not found") {
		t.Fatalf("preflight to a private bucket without CORS: %d %s", a.status, a.body)
	}
	_, err = ts.a.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("private-cors"), CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{
		corsRule([]string{"https://app.example"}, []string{"GET"}, nil)}}})
	mustOK(t, err)
	if a := plain(t, "OPTIONS", ts.endpoint+"/private-cors/k", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET"}); a.status != 200 {
		t.Fatalf("preflight to a private bucket with CORS: %d %s", a.status, a.body)
	}
	if a := plain(t, "GET", ts.endpoint+"/private-cors/k", map[string]string{"Origin": "https://app.example"}); a.status != 403 || a.code() != "AccessDenied" ||
		a.hdr.Get("Access-Control-Allow-Origin") != "https://app.example" || strings.Contains(a.body, "secret") {
		t.Fatalf("anonymous GET of a private object: %d %v %s", a.status, a.hdr, a.body)
	}
	// Another tenant's bucket of the same name is its own: beta's preflight to its own name
	// goes nowhere else. Sharing a name another account's CORS claimed is BucketAlreadyExists.
	_, err = ts.b.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("private-cors")})
	mustOK(t, err)
	_, err = ts.b.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("private-cors"), CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{
		corsRule([]string{"*"}, []string{"GET"}, nil)}}})
	wantCode(t, err, "BucketAlreadyExists")
}

// TestCORSPresigned: s3-tests' test_cors_presigned_*: a preflight for a presigned URL (whose
// query is signed for GET or PUT, not OPTIONS) is answered from the configuration, and the
// presigned request itself gets the CORS headers; so does one whose signature fails.
func TestCORSPresigned(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("uploads")})
	mustOK(t, err)
	putOK(t, ts.a, "uploads", "foo", "hello")
	pre := s3.NewPresignClient(ts.a)
	getURL, err := pre.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("uploads"), Key: aws.String("foo")}, s3.WithPresignExpires(time.Hour))
	mustOK(t, err)
	putURL, err := pre.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("uploads"), Key: aws.String("up")}, s3.WithPresignExpires(time.Hour))
	mustOK(t, err)

	for _, u := range []string{getURL.URL, putURL.URL} {
		if a := plain(t, "OPTIONS", u, nil); a.status != 400 {
			t.Fatalf("preflight without headers: %d %s", a.status, a.body)
		}
	}
	_, err = ts.a.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("uploads"), CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{
		corsRule([]string{"example"}, []string{"GET", "PUT"}, func(r *types.CORSRule) { r.ExposeHeaders = []string{"ETag"} })}}})
	mustOK(t, err)
	for _, tc := range []struct{ url, method string }{{getURL.URL, "GET"}, {putURL.URL, "PUT"}} {
		a := plain(t, "OPTIONS", tc.url, map[string]string{"Origin": "example", "Access-Control-Request-Method": tc.method})
		if a.status != 200 || a.hdr.Get("Access-Control-Allow-Origin") != "example" || a.hdr.Get("Access-Control-Allow-Methods") != "GET, PUT" {
			t.Fatalf("preflight of presigned %s: %d %v %s", tc.method, a.status, a.hdr, a.body)
		}
	}

	// The presigned requests themselves.
	req, _ := http.NewRequest("GET", getURL.URL, nil)
	req.Header.Set("Origin", "example")
	resp, err := http.DefaultClient.Do(req)
	mustOK(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello" || resp.Header.Get("Access-Control-Allow-Origin") != "example" || resp.Header.Get("Access-Control-Expose-Headers") != "ETag" {
		t.Fatalf("presigned GET: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	req, _ = http.NewRequest("PUT", putURL.URL, bytes.NewReader([]byte("uploaded")))
	req.Header.Set("Origin", "example")
	resp, err = http.DefaultClient.Do(req)
	mustOK(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "example" {
		t.Fatalf("presigned PUT: %d %v", resp.StatusCode, resp.Header)
	}
	if got, err := getString(ctx, ts.a, "uploads", "up"); err != nil || got != "uploaded" {
		t.Fatalf("after the presigned PUT: %q %v", got, err)
	}
	// A presigned URL whose signature fails is refused, with the CORS headers all the same.
	i := strings.Index(getURL.URL, "X-Amz-Signature=") + len("X-Amz-Signature=")
	flip := map[byte]string{'0': "1"}[getURL.URL[i]]
	if flip == "" {
		flip = "0"
	}
	bad := getURL.URL[:i] + flip + getURL.URL[i+1:]
	if a := plain(t, "GET", bad, map[string]string{"Origin": "example"}); a.status != 403 || a.code() != "SignatureDoesNotMatch" || a.hdr.Get("Access-Control-Allow-Origin") != "example" {
		t.Fatalf("presigned GET with a bad signature: %d %v %s", a.status, a.hdr, a.body)
	}
	// Another origin gets no CORS headers, and the object all the same (CORS is the browser's
	// business; the URL's signature is what lets the request in).
	if a := plain(t, "GET", getURL.URL, map[string]string{"Origin": "elsewhere"}); a.status != 200 || a.hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("presigned GET from another origin: %d %v", a.status, a.hdr)
	}
}

// TestCORSLeavesSwiftAlone: OPTIONS under /v1/ is still the Swift API's, answered from the
// container's X-Container-Meta-Access-Control-* settings, and S3's configuration of the same
// bucket is no Swift setting (nor the other way round).
func TestCORSLeavesSwiftAlone(t *testing.T) {
	ts := newTenants(t)
	ctx := ctxT(t)
	_, err := ts.a.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("both")})
	mustOK(t, err)
	_, err = ts.a.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String("both"), CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{
		corsRule([]string{"https://s3.example"}, []string{"GET"}, nil)}}})
	mustOK(t, err)
	sw := swiftLogin(t, ts.endpoint, "alpha:u", ts.swiftKey["alpha"])

	// Swift's preflight of the container: no Swift CORS setting, so Swift's 401.
	a := plain(t, "OPTIONS", sw.url+"/both/k", map[string]string{"Origin": "https://s3.example", "Access-Control-Request-Method": "GET"})
	if a.status != http.StatusUnauthorized || a.hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("Swift preflight with only an S3 configuration: %d %v %s", a.status, a.hdr, a.body)
	}
	req, _ := http.NewRequest("POST", sw.url+"/both", nil)
	req.Header.Set("X-Auth-Token", sw.token)
	req.Header.Set("X-Container-Meta-Access-Control-Allow-Origin", "https://swift.example")
	resp, err := http.DefaultClient.Do(req)
	mustOK(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("Swift POST: %d", resp.StatusCode)
	}
	a = plain(t, "OPTIONS", sw.url+"/both/k", map[string]string{"Origin": "https://swift.example", "Access-Control-Request-Method": "GET"})
	if a.status != 200 || a.hdr.Get("Access-Control-Allow-Origin") != "https://swift.example" {
		t.Fatalf("Swift preflight: %d %v %s", a.status, a.hdr, a.body)
	}
	// S3's preflight of the same bucket answers from S3's configuration only.
	if a := plain(t, "OPTIONS", ts.endpoint+"/both/k", map[string]string{"Origin": "https://swift.example", "Access-Control-Request-Method": "GET"}); a.status != 403 {
		t.Fatalf("S3 preflight from Swift's origin: %d %v", a.status, a.hdr)
	}
	if a := plain(t, "OPTIONS", ts.endpoint+"/both/k", map[string]string{"Origin": "https://s3.example", "Access-Control-Request-Method": "GET"}); a.status != 200 {
		t.Fatalf("S3 preflight: %d %v %s", a.status, a.hdr, a.body)
	}
	// Swift's container metadata does not show S3's configuration.
	req, _ = http.NewRequest("HEAD", sw.url+"/both", nil)
	req.Header.Set("X-Auth-Token", sw.token)
	resp, err = http.DefaultClient.Do(req)
	mustOK(t, err)
	resp.Body.Close()
	for k := range resp.Header {
		if strings.Contains(strings.ToLower(k), "cors") {
			t.Errorf("Swift shows %s", k)
		}
	}
}

func md5b64(b []byte) string {
	s := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(s[:])
}
