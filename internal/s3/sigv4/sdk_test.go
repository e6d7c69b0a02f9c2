package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go/encoding/httpbinding"
)

// These tests sign with the AWS SDK for Go v2 signer, an independent
// implementation, send the request over a loopback HTTP server (so Go's
// server-side parsing of Host, Content-Length, RawPath applies), and check
// that Verify accepts it.

const (
	sdkAK     = "AKIDCAIRNTEST"
	sdkSecret = "cairn/secret+key=="
)

var sdkStore = StaticStore{sdkAK: {AccessKey: sdkAK, SecretKey: sdkSecret, Account: "acct-1"}}

type verifyResult struct {
	auth *Auth
	body []byte
	err  error
}

// verifyServer runs Verify and reads the body for each request it gets.
func verifyServer(t *testing.T, now time.Time) (*httptest.Server, chan verifyResult) {
	t.Helper()
	results := make(chan verifyResult, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, err := Verify(r.Context(), r, sdkStore, now, nil)
		res := verifyResult{auth: auth, err: err}
		if err == nil {
			var body Body
			if body, err = auth.Body(r.Body); err == nil {
				res.body, err = io.ReadAll(body)
			}
			res.err = err
		}
		results <- res
	}))
	t.Cleanup(srv.Close)
	return srv, results
}

func send(t *testing.T, req *http.Request, results chan verifyResult) verifyResult {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	resp.Body.Close()
	return <-results
}

// sdkRequest builds a request the way the S3 client does: the path is
// escaped once by the SDK's own EscapePath and the signer is told not to
// escape again.
func sdkRequest(t *testing.T, base, method, key, rawQuery string, body []byte) *http.Request {
	t.Helper()
	u := base + httpbinding.EscapePath(key, false)
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

var sdkCreds = aws.Credentials{AccessKeyID: sdkAK, SecretAccessKey: sdkSecret}

func noDoubleEscape(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }

func TestSDKSignedHeaderAuth(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	srv, results := verifyServer(t, now)
	tests := []struct {
		name     string
		method   string
		key      string
		rawQuery string
		headers  [][2]string
		body     string
		unsigned bool
	}{
		{name: "simple", method: "GET", key: "/bucket/key"},
		{name: "space in key", method: "PUT", key: "/bucket/my file.txt", body: "hello"},
		{name: "unicode key", method: "PUT", key: "/bucket/日本語/ファイル ü.txt", body: "x"},
		{name: "reserved chars", method: "PUT", key: "/bucket/a+b=c~d!$&'()*,;:@.txt", body: "x"},
		{name: "percent and hash", method: "GET", key: "/bucket/100%/#frag?"},
		{name: "double slash and dots kept", method: "GET", key: "/bucket//a/./b/../c"},
		{name: "trailing slash", method: "GET", key: "/bucket/dir/"},
		{name: "root", method: "GET", key: "/"},
		{name: "empty query values", method: "GET", key: "/bucket", rawQuery: "acl&uploads=&prefix=a%20b&delimiter=%2F"},
		{name: "query sorting and duplicates", method: "GET", key: "/bucket", rawQuery: "z=1&a=2&a=1&A=3&key=%E2%82%AC&plus=%2B"},
		{name: "duplicate headers", method: "PUT", key: "/bucket/k", headers: [][2]string{{"X-Amz-Meta-Dup", "one"}, {"X-Amz-Meta-Dup", "two"}}, body: "d"},
		{name: "header spaces collapsed", method: "PUT", key: "/bucket/k", headers: [][2]string{{"X-Amz-Meta-Sp", "  a   b    c "}, {"Content-Type", "text/plain;   charset=utf-8"}}, body: "d"},
		{name: "unsigned payload", method: "PUT", key: "/bucket/u", body: "unsigned body", unsigned: true},
		{name: "empty body PUT", method: "PUT", key: "/bucket/empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := sdkRequest(t, srv.URL, tc.method, tc.key, tc.rawQuery, []byte(tc.body))
			for _, h := range tc.headers {
				req.Header.Add(h[0], h[1])
			}
			sum := sha256.Sum256([]byte(tc.body))
			payload := hex.EncodeToString(sum[:])
			if tc.unsigned {
				payload = UnsignedPayload
			}
			req.Header.Set("X-Amz-Content-Sha256", payload)
			if err := v4.NewSigner().SignHTTP(context.Background(), sdkCreds, req, payload, "s3", "eu-west-3", now, noDoubleEscape); err != nil {
				t.Fatal(err)
			}
			res := send(t, req, results)
			if res.err != nil {
				t.Fatalf("Verify: %v", res.err)
			}
			if string(res.body) != tc.body || res.auth.Credential.Account != "acct-1" || res.auth.Region != "eu-west-3" {
				t.Fatalf("body %q auth %+v", res.body, res.auth)
			}
		})
	}
}

func TestSDKSignedPayloadMismatch(t *testing.T) {
	now := time.Now().UTC()
	srv, results := verifyServer(t, now)
	req := sdkRequest(t, srv.URL, "PUT", "/bucket/k", "", []byte("actual body"))
	sum := sha256.Sum256([]byte("another body"))
	payload := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", payload)
	if err := v4.NewSigner().SignHTTP(context.Background(), sdkCreds, req, payload, "s3", "us-east-1", now, noDoubleEscape); err != nil {
		t.Fatal(err)
	}
	if res := send(t, req, results); !errors.Is(res.err, ErrContentSHA256Mismatch) {
		t.Fatalf("err = %v, want ErrContentSHA256Mismatch", res.err)
	}
}

func TestSDKPresign(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	tests := []struct {
		name     string
		key      string
		rawQuery string
		expires  int
		verifyAt time.Time
		want     error
	}{
		{name: "get", key: "/bucket/key with space+plus", expires: 3600, verifyAt: now},
		{name: "extra query", key: "/bucket/k", rawQuery: "response-content-type=text%2Fplain&versionId=", expires: 60, verifyAt: now},
		{name: "unicode", key: "/bucket/é/€", expires: 60, verifyAt: now.Add(59 * time.Second)},
		{name: "expired", key: "/bucket/k", expires: 60, verifyAt: now.Add(61 * time.Second), want: ErrRequestExpired},
		{name: "seven days", key: "/bucket/k", expires: 604800, verifyAt: now.Add(6 * 24 * time.Hour)},
		{name: "over seven days", key: "/bucket/k", expires: 604801, verifyAt: now, want: ErrExpiresTooLong},
		{name: "negative", key: "/bucket/k", expires: -1, verifyAt: now, want: ErrExpiresNegative},
		{name: "zero", key: "/bucket/k", expires: 0, verifyAt: now.Add(time.Second), want: ErrRequestExpired},
		{name: "future", key: "/bucket/k", expires: 3600, verifyAt: now.Add(-20 * time.Minute), want: ErrRequestNotYetValid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, results := verifyServer(t, tc.verifyAt)
			q := "X-Amz-Expires=" + strconv.Itoa(tc.expires)
			if tc.rawQuery != "" {
				q = tc.rawQuery + "&" + q
			}
			req := sdkRequest(t, srv.URL, "GET", tc.key, q, nil)
			signed, hdr, err := v4.NewSigner().PresignHTTP(context.Background(), sdkCreds, req, UnsignedPayload, "s3", "us-west-2", now, noDoubleEscape)
			if err != nil {
				t.Fatal(err)
			}
			preq, err := http.NewRequest("GET", signed, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range hdr {
				if k != "Host" {
					preq.Header[k] = v
				}
			}
			res := send(t, preq, results)
			if !errors.Is(res.err, tc.want) && !(tc.want == nil && res.err == nil) {
				t.Fatalf("err = %v, want %v\nurl %s", res.err, tc.want, signed)
			}
			if tc.want == nil && (!res.auth.Presigned || res.auth.Expires != now.Add(time.Duration(tc.expires)*time.Second)) {
				t.Fatalf("auth = %+v", res.auth)
			}
		})
	}
}

// TestSDKStreamingChunks signs the seed with SignHTTP and each chunk with
// the SDK's StreamSigner (whose string-to-sign with no event headers is the
// S3 chunk string-to-sign), then decodes through a real HTTP server.
func TestSDKStreamingChunks(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	srv, results := verifyServer(t, now)
	for _, sizes := range [][]int{{0}, {1}, {8192, 8192, 17}, {65536, 100}} {
		t.Run(fmt.Sprint(sizes), func(t *testing.T) {
			var payload []byte
			for i, n := range sizes {
				payload = append(payload, bytes.Repeat([]byte{byte('a' + i)}, n)...)
			}
			req := sdkRequest(t, srv.URL, "PUT", "/bucket/stream obj", "", nil)
			req.Header.Set("X-Amz-Content-Sha256", StreamingPayload)
			req.Header.Set("Content-Encoding", "aws-chunked")
			req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(len(payload)))
			if err := v4.NewSigner().SignHTTP(context.Background(), sdkCreds, req, StreamingPayload, "s3", "us-east-1", now, noDoubleEscape); err != nil {
				t.Fatal(err)
			}
			_, seedHex, _ := strings.Cut(req.Header.Get("Authorization"), "Signature=")
			seed, _ := hex.DecodeString(seedHex)
			ss := v4.NewStreamSigner(sdkCreds, "s3", "us-east-1", seed)
			var body bytes.Buffer
			off := 0
			for _, n := range append(sizes, 0) {
				if n == 0 && off < len(payload) {
					continue
				}
				chunk := payload[off : off+n]
				off += n
				sig, err := ss.GetSignature(context.Background(), nil, chunk, now)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&body, "%x;chunk-signature=%x\r\n", n, sig)
				body.Write(chunk)
				body.WriteString("\r\n")
				if n == 0 {
					break
				}
			}
			req.Body = io.NopCloser(&body)
			req.ContentLength = int64(body.Len())
			res := send(t, req, results)
			if res.err != nil {
				t.Fatalf("err = %v", res.err)
			}
			if !bytes.Equal(res.body, payload) {
				t.Fatalf("decoded %d bytes, want %d", len(res.body), len(payload))
			}
		})
	}
}
