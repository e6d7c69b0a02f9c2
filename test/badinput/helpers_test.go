package badinput

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/server"
)

const (
	accessKey = "BADINPUTROOTKEY"
	secretKey = "badinput-root-secret-0123456789abcdef"
	region    = "us-east-1"

	KiB = 1 << 10
	MiB = 1 << 20
)

var rootCred = sigv4.Credential{AccessKey: accessKey, SecretKey: secretKey}

// testServer is a Cairn server running in this process on 127.0.0.1:0, restartable on the same
// data directory.
type testServer struct {
	t        testing.TB
	data     string // the data directory
	endpoint string // http://127.0.0.1:PORT
	host     string // 127.0.0.1:PORT
	cancel   context.CancelFunc
	done     chan error
	client   *http.Client
	tune     func(*server.Config) // changes the configuration of every start (nil: none)
}

// startServer starts a server on data (a fresh temp dir when empty), stopped when the test ends.
func startServer(t testing.TB, data string) *testServer {
	t.Helper()
	return startTuned(t, data, nil)
}

// startTuned is startServer with tune applied to the server's configuration.
func startTuned(t testing.TB, data string, tune func(*server.Config)) *testServer {
	t.Helper()
	if data == "" {
		data = filepath.Join(t.TempDir(), "data")
	}
	s := &testServer{t: t, data: data, tune: tune}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *testServer) start() {
	s.t.Helper()
	cfg := server.Config{
		DataDir: s.data, Listen: "127.0.0.1:0", RootAccessKey: accessKey, RootSecretKey: secretKey,
	}
	if s.tune != nil {
		s.tune(&cfg)
	}
	srv, err := server.Start(cfg)
	if err != nil {
		s.t.Fatalf("server.Start: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan error, 1)
	go func() { s.done <- srv.Serve(ctx) }()
	s.endpoint = srv.Endpoint()
	s.host = strings.TrimPrefix(s.endpoint, "http://")
	s.client = newClient()
}

// newClient returns the HTTP client of the tests. Big bodies go with Expect: 100-continue (see
// send), so that a request the server refuses before reading its body gets its answer instead
// of a connection reset; the timeout is only how long to wait for a 100 before sending anyway.
func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true, ExpectContinueTimeout: time.Minute}}
}

// attach returns a testServer for a server running elsewhere (the real binary).
func attach(t testing.TB, endpoint, data string) *testServer {
	return &testServer{t: t, data: data, endpoint: endpoint, host: strings.TrimPrefix(endpoint, "http://"), client: newClient()}
}

// stop shuts the server down gracefully and waits for it (and its storage) to close.
func (s *testServer) stop() {
	if s.cancel == nil {
		return
	}
	s.client.CloseIdleConnections()
	s.cancel()
	err := <-s.done
	s.cancel = nil
	if err != nil {
		s.t.Errorf("server shutdown: %v", err)
	}
}

// restart stops the server and starts a new one on the same data directory.
func (s *testServer) restart() {
	s.t.Helper()
	s.stop()
	s.start()
}

// escapePath escapes a bucket/key path as the AWS SDKs do: every byte outside A-Z a-z 0-9 - . _ ~
// as %XX, slashes kept.
func escapePath(p string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// url returns the path-style URL of bucket/key (key may be empty) with an optional raw query.
func (s *testServer) url(bucket, key, query string) string {
	p := "/" + bucket
	if key != "" {
		p += "/" + key
	}
	u := s.endpoint + escapePath(p)
	if query != "" {
		u += "?" + query
	}
	return u
}

// newRequest builds a request for rawURL with body (nil: none). It is not signed.
func newRequest(t testing.TB, method, rawURL string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("new request %s %s: %v", method, rawURL, err)
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	return req
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func md5B64(b []byte) string {
	sum := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

func crc32B64(b []byte) string {
	var out [4]byte
	v := crc32.ChecksumIEEE(b)
	out[0], out[1], out[2], out[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	return base64.StdEncoding.EncodeToString(out[:])
}

// sign signs req for cred at now, with body's SHA-256 as the payload hash unless the caller set
// X-Amz-Content-Sha256 already.
func sign(t testing.TB, req *http.Request, cred sigv4.Credential, now time.Time, body []byte) {
	t.Helper()
	if req.Header.Get("X-Amz-Content-Sha256") == "" {
		req.Header.Set("X-Amz-Content-Sha256", sha256Hex(body))
	}
	if err := sigv4.SignRequest(req, cred, region, now); err != nil {
		t.Fatalf("sign: %v", err)
	}
}

// response is what came back, with the S3 error code and message parsed from an error body.
type response struct {
	Status  int
	Code    string
	Message string
	Header  http.Header
	Body    []byte
}

func (r response) String() string {
	if r.Code != "" {
		return fmt.Sprintf("%d %s (%s)", r.Status, r.Code, r.Message)
	}
	b := r.Body
	if len(b) > 300 {
		b = b[:300]
	}
	return fmt.Sprintf("%d %q", r.Status, b)
}

func parseResponse(resp *http.Response) (response, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	r := response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	if err != nil {
		return r, err
	}
	if resp.StatusCode >= 300 && len(body) > 0 {
		var doc struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		}
		if xml.Unmarshal(body, &doc) == nil {
			r.Code, r.Message = doc.Code, doc.Message
		}
	}
	return r, nil
}

// send sends req as it is, with Expect: 100-continue for a body over 64 KiB or of unknown length.
func (s *testServer) send(req *http.Request) response {
	s.t.Helper()
	if req.Body != nil && req.Body != http.NoBody && (req.ContentLength > 64*KiB || req.ContentLength < 0) {
		req.Header.Set("Expect", "100-continue")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	r, err := parseResponse(resp)
	if err != nil {
		s.t.Fatalf("%s %s: reading the response: %v", req.Method, req.URL, err)
	}
	return r
}

// call sends a request signed by the root key with body's SHA-256; hdr pairs are set first.
func (s *testServer) call(method, bucket, key, query string, body []byte, hdr ...string) response {
	s.t.Helper()
	req := newRequest(s.t, method, s.url(bucket, key, query), body)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	sign(s.t, req, rootCred, time.Now(), body)
	return s.send(req)
}

// expectError asserts an S3 error of exactly this status and code.
func expectError(t testing.TB, what string, r response, status int, code string) {
	t.Helper()
	if r.Status != status || r.Code != code {
		t.Errorf("%s: got %s, want %d %s", what, r, status, code)
	}
}

func expectStatus(t testing.TB, what string, r response, status int) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s: got %s, want %d", what, r, status)
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func (s *testServer) createBucket(bucket string) {
	s.t.Helper()
	if r := s.call(http.MethodPut, bucket, "", "", nil); r.Status != http.StatusOK {
		s.t.Fatalf("CreateBucket %s: %s", bucket, r)
	}
}

func (s *testServer) put(bucket, key string, data []byte) {
	s.t.Helper()
	if r := s.call(http.MethodPut, bucket, key, "", data); r.Status != http.StatusOK {
		s.t.Fatalf("PUT %s/%q (%d bytes): %s", bucket, key, len(data), r)
	}
}

// listResult is the part of ListObjectsV2's answer the tests look at.
type listResult struct {
	Contents []struct {
		Key  string `xml:"Key"`
		Size int64  `xml:"Size"`
		ETag string `xml:"ETag"`
	} `xml:"Contents"`
	IsTruncated           bool   `xml:"IsTruncated"`
	NextContinuationToken string `xml:"NextContinuationToken"`
}

// listKeys lists every key of bucket (ListObjectsV2, all pages) with its size.
func (s *testServer) listKeys(bucket string) map[string]int64 {
	return s.listKeysEncoded(bucket, false)
}

// listKeysEncoded lists with encoding-type=url when urlEncoded (as SDKs do, for keys XML cannot
// carry), decoding the keys as the SDKs do.
func (s *testServer) listKeysEncoded(bucket string, urlEncoded bool) map[string]int64 {
	s.t.Helper()
	keys := map[string]int64{}
	token := ""
	for {
		q := "list-type=2"
		if urlEncoded {
			q += "&encoding-type=url"
		}
		if token != "" {
			q += "&continuation-token=" + url.QueryEscape(token)
		}
		r := s.call(http.MethodGet, bucket, "", q, nil)
		if r.Status != http.StatusOK {
			s.t.Fatalf("ListObjectsV2 %s: %s", bucket, r)
		}
		var l listResult
		if err := xml.Unmarshal(r.Body, &l); err != nil {
			s.t.Fatalf("ListObjectsV2 %s: %v\n%s", bucket, err, r.Body)
		}
		for _, c := range l.Contents {
			k := c.Key
			if urlEncoded {
				var err error
				if k, err = url.QueryUnescape(k); err != nil {
					s.t.Fatalf("ListObjectsV2 %s: key %q is not URL-encoded: %v", bucket, c.Key, err)
				}
			}
			keys[k] = c.Size
		}
		if !l.IsTruncated {
			return keys
		}
		token = l.NextContinuationToken
	}
}

// snapshot is what a bucket holds: every listed key and the SHA-256 of what GET returns for it.
type snapshot map[string]string

func (s *testServer) snapshot(bucket string) snapshot {
	s.t.Helper()
	snap := snapshot{}
	for k, size := range s.listKeys(bucket) {
		r := s.call(http.MethodGet, bucket, k, "", nil)
		if r.Status != http.StatusOK {
			s.t.Fatalf("GET %s/%q (listed): %s", bucket, k, r)
		}
		if int64(len(r.Body)) != size {
			s.t.Fatalf("GET %s/%q: %d bytes, listed with %d", bucket, k, len(r.Body), size)
		}
		snap[k] = sha256Hex(r.Body)
	}
	return snap
}

// expectUnchanged asserts that bucket holds exactly what want recorded, byte for byte.
func (s *testServer) expectUnchanged(what, bucket string, want snapshot) {
	s.t.Helper()
	got := s.snapshot(bucket)
	for k, h := range want {
		switch g, ok := got[k]; {
		case !ok:
			s.t.Errorf("%s: %s/%q is gone", what, bucket, k)
		case g != h:
			s.t.Errorf("%s: %s/%q changed", what, bucket, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			s.t.Errorf("%s: %s/%q appeared", what, bucket, k)
		}
	}
}

// expectObject asserts that bucket/key reads back exactly data.
func (s *testServer) expectObject(what, bucket, key string, data []byte) {
	s.t.Helper()
	r := s.call(http.MethodGet, bucket, key, "", nil)
	if r.Status != http.StatusOK {
		s.t.Errorf("%s: GET %s/%q: %s", what, bucket, key, r)
		return
	}
	if !bytes.Equal(r.Body, data) {
		s.t.Errorf("%s: GET %s/%q returned %d bytes (sha256 %s), want the %d bytes stored before (sha256 %s)",
			what, bucket, key, len(r.Body), sha256Hex(r.Body)[:12], len(data), sha256Hex(data)[:12])
	}
}

// expectNoKey asserts that GET bucket/key answers 404 NoSuchKey.
func (s *testServer) expectNoKey(what, bucket, key string) {
	s.t.Helper()
	expectError(s.t, what+": GET "+bucket+"/"+key, s.call(http.MethodGet, bucket, key, "", nil), http.StatusNotFound, "NoSuchKey")
}

// opCount returns how many requests of an S3 operation the server has finished serving (the
// front end counts a request after its handler returned, cleanup included).
func (s *testServer) opCount(op string) float64 {
	s.t.Helper()
	return s.metricSum(`cairn_s3_requests_total{operation="` + op + `",`)
}

// metricSum adds up the /metrics samples whose line starts with prefix.
func (s *testServer) metricSum(prefix string) float64 {
	s.t.Helper()
	resp, err := s.client.Get(s.endpoint + "/metrics")
	if err != nil {
		s.t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	var n float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*KiB), MiB)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			s.t.Fatalf("metrics line %q: %v", line, err)
		}
		n += v
	}
	return n
}

// waitOpCount waits until the server has finished at least n requests of op. It is how a test
// knows the server is done with a request whose client went away; the bound is only a safety net.
func (s *testServer) waitOpCount(op string, n float64) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for s.opCount(op) < n {
		if time.Now().After(deadline) {
			s.t.Fatalf("the server has not finished a %s request within 60s (count %v, want %v)", op, s.opCount(op), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// tmpDir is where the engine keeps data files being written.
func (s *testServer) tmpDir() string { return filepath.Join(s.data, "devices", "d0", "objects", "tmp") }

// tmpFiles lists the engine's temp files.
func (s *testServer) tmpFiles() []string {
	s.t.Helper()
	ents, err := os.ReadDir(s.tmpDir())
	if err != nil {
		s.t.Fatalf("temp directory: %v", err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// dataFiles lists every regular file under the data directory (relative paths), sorted.
func dataFiles(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	sort.Strings(files)
	return files
}

// rawHead renders req's request line and headers for a raw connection, with Content-Length:
// declared (negative: no Content-Length). The request must have been signed already.
func rawHead(req *http.Request, declared int64) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), req.URL.Host)
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	if declared >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", declared)
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// dial opens a raw connection to the server.
func (s *testServer) dial() *net.TCPConn {
	s.t.Helper()
	c, err := net.Dial("tcp", s.host)
	if err != nil {
		s.t.Fatalf("dial %s: %v", s.host, err)
	}
	return c.(*net.TCPConn)
}

// readRawResponse reads one HTTP response from a raw connection.
func readRawResponse(t testing.TB, c net.Conn, req *http.Request) (response, error) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		return response{}, err
	}
	return parseResponse(resp)
}

// Signed aws-chunked bodies (STREAMING-AWS4-HMAC-SHA256-PAYLOAD), framed as the AWS SDKs do.

const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func hmacSHA256(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// chunkSigner signs the chunks of a streaming upload, chaining on the request's seed signature.
type chunkSigner struct {
	key     []byte
	amzDate string
	scope   string
	prev    string
}

// newChunkSigner prepares a streaming PUT of decoded bytes: it sets the streaming headers, signs
// req (whose ContentLength must be the framed body's length) and returns the chunk signer.
func newChunkSigner(t testing.TB, req *http.Request, decoded int, now time.Time) *chunkSigner {
	t.Helper()
	req.Header.Set("X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
	req.Header.Set("Content-Encoding", "aws-chunked")
	req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(decoded))
	sign(t, req, rootCred, now, nil)
	auth := req.Header.Get("Authorization")
	i := strings.Index(auth, "Signature=")
	if i < 0 {
		t.Fatalf("no signature in %q", auth)
	}
	now = now.UTC()
	date := now.Format("20060102")
	key := hmacSHA256([]byte("AWS4"+secretKey), date)
	key = hmacSHA256(key, region)
	key = hmacSHA256(key, "s3")
	key = hmacSHA256(key, "aws4_request")
	return &chunkSigner{
		key: key, amzDate: now.Format("20060102T150405Z"),
		scope: date + "/" + region + "/s3/aws4_request", prev: auth[i+len("Signature="):],
	}
}

// chunk frames one chunk (an empty one ends the body).
func (c *chunkSigner) chunk(data []byte) []byte {
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.amzDate + "\n" + c.scope + "\n" + c.prev + "\n" + emptySHA256 + "\n" + sha256Hex(data)
	sig := hex.EncodeToString(hmacSHA256(c.key, sts))
	c.prev = sig
	var b bytes.Buffer
	fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n", len(data), sig)
	b.Write(data)
	b.WriteString("\r\n")
	return b.Bytes()
}

// chunkedLength is the framed length of data sent in chunks of size chunk, final chunk included.
func chunkedLength(data, chunk int) int {
	n := 0
	frame := func(size int) int { return len(fmt.Sprintf("%x;chunk-signature=", size)) + 64 + 2 + size + 2 }
	for off := 0; off < data; off += chunk {
		n += frame(min(chunk, data-off))
	}
	return n + frame(0)
}
