package objclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// newHTTPClient builds the one transport both protocols use, so that S3 and Swift numbers from
// the same benchmark differ only by protocol.
func newHTTPClient(cfg Config) *http.Client {
	tr := &http.Transport{
		Proxy: nil, // a benchmark measures the endpoint, never an environment-configured proxy
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		// One kept-alive connection per worker, so that a steady load never pays for new TCP
		// handshakes.
		MaxIdleConns:        cfg.Concurrency * 2,
		MaxIdleConnsPerHost: cfg.Concurrency,
		IdleConnTimeout:     90 * time.Second,
		// Objects are mostly incompressible; gzip negotiation would only add work on both
		// sides, and would make Content-Length differ from the bytes counted.
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 0,
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        64 << 10,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   cfg.Timeout,
		// A redirect would re-send a signed request elsewhere (and drop the body of a PUT);
		// stores do not redirect, so one is returned to the caller as the error it is.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// parseBase parses an already validated base URL and drops a trailing slash, so that paths can
// be appended with "/".
func parseBase(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("objclient: %q: %w", s, err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	if u.RawPath != "" && u.RawPath == u.Path {
		u.RawPath = ""
	}
	return u, nil
}

// newRequest builds a request for u keeping u's RawPath: http.NewRequest re-parses the URL
// string and may choose another escaping, and the bytes on the wire must be the ones we chose
// (and, for S3, signed).
//
// A body is sent with exactly size bytes and never closed: it is wrapped in io.NopCloser
// because the transport closes a ReadCloser body (an *os.File handed to Put would otherwise be
// closed behind the caller's back); net/http unwraps NopCloser, so a file body still goes out
// by sendfile.
func newRequest(ctx context.Context, method string, u *url.URL, hdr http.Header, body io.Reader, size int64) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, err
	}
	cp := *u
	req.URL = &cp
	for k, v := range hdr {
		req.Header[k] = v
	}
	switch {
	case size < 0:
		return nil, fmt.Errorf("objclient: size %d < 0", size)
	case size > 0 && body == nil:
		return nil, errNoBody
	case size > 0:
		req.ContentLength = size
		req.Body = io.NopCloser(body)
	case method == http.MethodPut || method == http.MethodPost:
		req.Body = http.NoBody // Content-Length: 0, never chunked
	}
	return req, nil
}

// drain reads what is left of a body and closes it, so the connection returns to the pool.
func drain(resp *http.Response) (int64, error) {
	n, err := io.Copy(io.Discard, resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// readError reads at most 64 KiB of an error answer's body and discards up to 1 MiB more, so
// that the connection stays reusable after an error with a modest body.
func readError(resp *http.Response) []byte {
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return raw
}

// rangeHeader is the Range header for opts, or "" for the whole object.
func rangeHeader(opts GetOptions) (string, error) {
	if !opts.Ranged {
		return "", nil
	}
	if opts.RangeStart < 0 {
		return "", fmt.Errorf("objclient: get: range start %d < 0", opts.RangeStart)
	}
	if opts.RangeEnd < 0 {
		return "bytes=" + strconv.FormatInt(opts.RangeStart, 10) + "-", nil
	}
	if opts.RangeEnd < opts.RangeStart {
		return "", fmt.Errorf("objclient: get: range end %d < start %d", opts.RangeEnd, opts.RangeStart)
	}
	return "bytes=" + strconv.FormatInt(opts.RangeStart, 10) + "-" + strconv.FormatInt(opts.RangeEnd, 10), nil
}

// writeErr remembers an error of the destination writer, so that a failing disk is not
// reported as a short body from the network.
type writeErr struct {
	w   io.Writer
	err error
}

func (w *writeErr) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// download reads a successful GET answer into opts.W and fills in the result. A body shorter
// than its Content-Length is ErrShortBody: a truncated GET must never count as a fast one.
func download(op, key string, resp *http.Response, ttfb time.Duration, opts GetOptions) (GetResult, error) {
	res := GetResult{
		TTFB:         ttfb,
		Size:         resp.ContentLength,
		ETag:         unquote(resp.Header.Get("Etag")),
		LastModified: parseHTTPTime(resp.Header.Get("Last-Modified")),
	}
	if resp.StatusCode == http.StatusPartialContent {
		res.Size = contentRangeTotal(resp.Header.Get("Content-Range"))
	}
	var n int64
	var err error
	w := &writeErr{}
	if opts.W == nil {
		// Straight into io.Discard, whose ReadFrom reuses pooled buffers: a benchmark's GET
		// must not allocate a copy buffer per request.
		n, err = io.Copy(io.Discard, resp.Body)
	} else {
		w.w = opts.W
		n, err = io.Copy(w, resp.Body)
	}
	resp.Body.Close()
	res.Bytes = n
	switch {
	case w.err != nil:
		return res, fmt.Errorf("objclient: %s %s: writing the body: %w", op, key, w.err)
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		if err != nil {
			return res, fmt.Errorf("objclient: %s %s: %d of %d bytes: %w (%v)", op, key, n, resp.ContentLength, ErrShortBody, err)
		}
		return res, fmt.Errorf("objclient: %s %s: %d of %d bytes: %w", op, key, n, resp.ContentLength, ErrShortBody)
	case err != nil:
		return res, fmt.Errorf("objclient: %s %s: reading the body: %w", op, key, err)
	}
	if res.Size < 0 && !opts.Ranged {
		res.Size = n // chunked answer: the whole body is the whole object
	}
	return res, nil
}

// contentRangeTotal returns the total of "bytes a-b/total", or -1 when it is unknown ("*") or
// the header is malformed.
func contentRangeTotal(v string) int64 {
	_, total, ok := strings.Cut(v, "/")
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// unquote strips the quotes S3 (always) and Swift (for large objects) put around ETags.
func unquote(etag string) string {
	etag = strings.TrimPrefix(etag, "W/")
	if len(etag) >= 2 && etag[0] == '"' && etag[len(etag)-1] == '"' {
		return etag[1 : len(etag)-1]
	}
	return etag
}

func parseHTTPTime(v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return time.Time{}
	}
	return t
}

// userMetadata collects the headers starting with prefix (canonical form, e.g.
// "X-Amz-Meta-"), names lower-cased without the prefix; nil when there are none.
func userMetadata(h http.Header, prefix string) map[string]string {
	var md map[string]string
	for name, vs := range h {
		if len(name) <= len(prefix) || !strings.EqualFold(name[:len(prefix)], prefix) || len(vs) == 0 {
			continue
		}
		if md == nil {
			md = make(map[string]string)
		}
		md[strings.ToLower(name[len(prefix):])] = vs[0]
	}
	return md
}

// setUserMetadata adds opts' metadata and content type to h.
func setUserMetadata(h http.Header, prefix string, opts PutOptions) error {
	for name, v := range opts.Metadata {
		if name == "" || strings.ContainsAny(name, " \t\r\n:") {
			return fmt.Errorf("objclient: metadata name %q is not a valid header name", name)
		}
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("objclient: metadata %q: value has a line break", name)
		}
		h.Set(prefix+name, v)
	}
	if opts.ContentType != "" {
		h.Set("Content-Type", opts.ContentType)
	}
	return nil
}

var errNoBody = errors.New("objclient: nil body with a non-zero size")

// checkNames rejects an empty bucket or key before it changes the meaning of a request: with
// path-style URLs, a PUT or DELETE of bucket/"" is a PUT or DELETE of the bucket itself.
func checkNames(op, bucket, key string, needKey bool) error {
	if bucket == "" {
		return fmt.Errorf("objclient: %s: empty bucket name", op)
	}
	if needKey && key == "" {
		return fmt.Errorf("objclient: %s: empty key", op)
	}
	return nil
}

// headInfo reads a HEAD answer's object description; metaPrefix is the protocol's user
// metadata header prefix (X-Amz-Meta- or X-Object-Meta-).
func headInfo(key string, resp *http.Response, metaPrefix string) ObjectInfo {
	return ObjectInfo{
		Key:          key,
		Size:         resp.ContentLength,
		ETag:         unquote(resp.Header.Get("Etag")),
		LastModified: parseHTTPTime(resp.Header.Get("Last-Modified")),
		ContentType:  resp.Header.Get("Content-Type"),
		Metadata:     userMetadata(resp.Header, metaPrefix),
	}
}

// rangeHeaders turns a download's range options into the request's Range header (nil for the
// whole object).
func rangeHeaders(opts GetOptions) (http.Header, error) {
	rng, err := rangeHeader(opts)
	if err != nil || rng == "" {
		return nil, err
	}
	return http.Header{"Range": {rng}}, nil
}
