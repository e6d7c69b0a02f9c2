package sigv4

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Example credentials used throughout the AWS S3 SigV4 documentation.
const (
	docAK     = "AKIAIOSFODNN7EXAMPLE"
	docSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

var (
	docTime  = time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	docStore = StaticStore{docAK: {AccessKey: docAK, SecretKey: docSecret, Account: "example"}}
)

func docAuthz(signed, sig string) string {
	return "AWS4-HMAC-SHA256 Credential=" + docAK + "/20130524/us-east-1/s3/aws4_request,SignedHeaders=" + signed + ",Signature=" + sig
}

// TestDocVectors replays the examples of "Signature Calculations for the
// Authorization Header: Transferring Payload in a Single Chunk" and
// "Authenticating Requests: Using Query Parameters" from the S3 API docs.
func TestDocVectors(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		url     string
		headers map[string]string
		body    string
		mode    PayloadMode
	}{
		{
			name:   "GET object with range",
			method: "GET", url: "http://examplebucket.s3.amazonaws.com/test.txt",
			headers: map[string]string{
				"Range":                "bytes=0-9",
				"X-Amz-Content-Sha256": emptySHA256,
				"X-Amz-Date":           "20130524T000000Z",
				"Authorization":        docAuthz("host;range;x-amz-content-sha256;x-amz-date", "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"),
			},
			mode: PayloadSigned,
		},
		{
			name:   "PUT object with $ in key and Date header",
			method: "PUT", url: "http://examplebucket.s3.amazonaws.com/test$file.text",
			headers: map[string]string{
				"Date":                 "Fri, 24 May 2013 00:00:00 GMT",
				"X-Amz-Storage-Class":  "REDUCED_REDUNDANCY",
				"X-Amz-Content-Sha256": "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
				"X-Amz-Date":           "20130524T000000Z",
				"Authorization":        docAuthz("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class", "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"),
			},
			body: "Welcome to Amazon S3.",
			mode: PayloadSigned,
		},
		{
			name:   "GET bucket lifecycle (valueless query)",
			method: "GET", url: "http://examplebucket.s3.amazonaws.com/?lifecycle",
			headers: map[string]string{
				"X-Amz-Content-Sha256": emptySHA256,
				"X-Amz-Date":           "20130524T000000Z",
				"Authorization":        docAuthz("host;x-amz-content-sha256;x-amz-date", "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"),
			},
			mode: PayloadSigned,
		},
		{
			name:   "list objects (query sorting)",
			method: "GET", url: "http://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J",
			headers: map[string]string{
				"X-Amz-Content-Sha256": emptySHA256,
				"X-Amz-Date":           "20130524T000000Z",
				"Authorization":        docAuthz("host;x-amz-content-sha256;x-amz-date", "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
			},
			mode: PayloadSigned,
		},
		{
			name:   "presigned GET",
			method: "GET",
			url: "http://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256" +
				"&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request" +
				"&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host" +
				"&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
			mode: PayloadUnsigned,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.url, strings.NewReader(tc.body))
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			auth, err := Verify(context.Background(), r, docStore, docTime, nil)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if auth.Credential.Account != "example" || auth.Region != "us-east-1" || auth.Payload != tc.mode {
				t.Fatalf("auth = %+v", auth)
			}
			body, err := auth.Body(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(body)
			if err != nil || string(got) != tc.body {
				t.Fatalf("body %q, %v", got, err)
			}
		})
	}
}

// docChunkedRequest is the request of "Example: PUT Object" in "Transferring
// Payload in Multiple Chunks": 66560 bytes of 'a' in a 64 KiB and a 1 KiB
// chunk. Chunk signatures are the documented ones.
func docChunkedRequest(sigs [3]string) *http.Request {
	var b bytes.Buffer
	b.WriteString("10000;chunk-signature=" + sigs[0] + "\r\n")
	b.Write(bytes.Repeat([]byte{'a'}, 65536))
	b.WriteString("\r\n400;chunk-signature=" + sigs[1] + "\r\n")
	b.Write(bytes.Repeat([]byte{'a'}, 1024))
	b.WriteString("\r\n0;chunk-signature=" + sigs[2] + "\r\n\r\n")
	r := httptest.NewRequest("PUT", "http://s3.amazonaws.com/examplebucket/chunkObject.txt", &b)
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	r.Header.Set("X-Amz-Content-Sha256", StreamingPayload)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
	r.Header.Set("Content-Length", "66824")
	r.Header.Set("Authorization", docAuthz("content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class",
		"4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"))
	return r
}

var docChunkSigs = [3]string{
	"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
	"0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
	"b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
}

func TestDocChunkedVector(t *testing.T) {
	tamper := func(i int) [3]string {
		s := docChunkSigs
		s[i] = strings.Repeat("0", 64)
		return s
	}
	tests := []struct {
		name string
		sigs [3]string
		want error
	}{
		{"valid", docChunkSigs, nil},
		{"bad first chunk", tamper(0), ErrSignatureDoesNotMatch},
		{"bad second chunk", tamper(1), ErrSignatureDoesNotMatch},
		{"bad final chunk", tamper(2), ErrSignatureDoesNotMatch},
		{"chunks reordered", [3]string{docChunkSigs[1], docChunkSigs[0], docChunkSigs[2]}, ErrSignatureDoesNotMatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := docChunkedRequest(tc.sigs)
			auth, err := Verify(context.Background(), r, docStore, docTime.Add(5*time.Minute), nil)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if auth.Payload != PayloadStreamingSigned || auth.DecodedContentLength != 66560 {
				t.Fatalf("auth = %+v", auth)
			}
			body, err := auth.Body(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(body)
			if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
				t.Fatalf("ReadAll err = %v, want %v", err, tc.want)
			}
			if tc.want == nil && !bytes.Equal(got, bytes.Repeat([]byte{'a'}, 66560)) {
				t.Fatalf("decoded %d bytes", len(got))
			}
		})
	}
}

// TestDocTrailerChain checks the chunk and trailer signature chain of the
// S3 doc example "Signature calculations for trailing headers" (seed
// 106e2a8a…, trailer x-amz-checksum-crc32c:sOO8/Q==).
func TestDocTrailerChain(t *testing.T) {
	build := func(trailerSig string) *bytes.Buffer {
		var b bytes.Buffer
		b.WriteString("10000;chunk-signature=b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2\r\n")
		b.Write(bytes.Repeat([]byte{'a'}, 65536))
		b.WriteString("\r\n400;chunk-signature=1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7\r\n")
		b.Write(bytes.Repeat([]byte{'a'}, 1024))
		b.WriteString("\r\n0;chunk-signature=2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992\r\n")
		b.WriteString("x-amz-checksum-crc32c:sOO8/Q==\r\n")
		b.WriteString("x-amz-trailer-signature:" + trailerSig + "\r\n\r\n")
		return &b
	}
	auth := &Auth{
		Payload:              PayloadStreamingSignedTrailer,
		DecodedContentLength: 66560,
		DeclaredTrailers:     []string{"x-amz-checksum-crc32c"},
		signature:            "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e",
		amzDate:              "20130524T000000Z",
		scope:                "20130524/us-east-1/s3/aws4_request",
		key:                  signingKey(docSecret, "20130524", "us-east-1"),
	}
	for _, tc := range []struct {
		name string
		sig  string
		want error
	}{
		{"valid", "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435", nil},
		{"bad trailer signature", strings.Repeat("1", 64), ErrSignatureDoesNotMatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr, err := NewChunkedReader(build(tc.sig), auth)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(cr)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if cr.Trailers() != nil {
					t.Fatal("trailers exposed after failure")
				}
				return
			}
			if err != nil || len(got) != 66560 {
				t.Fatalf("got %d bytes, %v", len(got), err)
			}
			if v := cr.Trailers().Get("X-Amz-Checksum-Crc32c"); v != "sOO8/Q==" {
				t.Fatalf("trailer = %q", v)
			}
		})
	}
}
