package bench

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// ClientConfig configures the load client.
type ClientConfig struct {
	Endpoint  string // e.g. http://127.0.0.1:8787; path-style requests go to Endpoint/bucket/key
	AccessKey string
	SecretKey string
	Region    string // default us-east-1
	// Concurrency sizes the idle-connection pool: one kept-alive connection per worker, so
	// that a steady load never pays for new TCP handshakes. Default 16.
	Concurrency int
	// Timeout bounds one request including reading its body. Default 2 minutes.
	Timeout time.Duration
}

// Validate checks the configuration and fills in defaults.
func (c *ClientConfig) Validate() error {
	if c.Endpoint == "" {
		return errors.New("bench: no endpoint")
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		return fmt.Errorf("bench: endpoint %q: %w", c.Endpoint, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("bench: endpoint %q: want http://host:port or https://host:port", c.Endpoint)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("bench: endpoint %q: must not have a query or fragment", c.Endpoint)
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return errors.New("bench: access key and secret key are required")
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.Concurrency == 0 {
		c.Concurrency = 16
	}
	if c.Concurrency < 0 {
		return fmt.Errorf("bench: concurrency %d < 1", c.Concurrency)
	}
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Minute
	}
	return nil
}

// Client is a lean S3 client for load generation: path-style URLs, SigV4 with
// UNSIGNED-PAYLOAD (hashing every body would make the client, not the server, the bottleneck),
// no retries (a retried request would hide the failure we are measuring) and a connection pool
// as large as the number of workers. It is safe for concurrent use.
type Client struct {
	base   *url.URL
	cred   sigv4.Credential
	region string
	hc     *http.Client
}

// NewClient builds a client; it does not contact the endpoint (see Check).
func NewClient(cfg ClientConfig) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := url.Parse(cfg.Endpoint)
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawPath = ""
	tr := &http.Transport{
		Proxy: nil, // a benchmark measures the endpoint, never an environment-configured proxy
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:        cfg.Concurrency * 2,
		MaxIdleConnsPerHost: cfg.Concurrency,
		IdleConnTimeout:     90 * time.Second,
		// Objects are random bytes; gzip negotiation would only add work on both sides.
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 0,
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        64 << 10,
	}
	return &Client{
		base:   base,
		cred:   sigv4.Credential{AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey},
		region: cfg.Region,
		hc:     &http.Client{Transport: tr, Timeout: cfg.Timeout},
	}, nil
}

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Endpoint is the base URL requests go to.
func (c *Client) Endpoint() string { return c.base.String() }

// S3Error is a non-success answer from the endpoint.
type S3Error struct {
	Op      string // put, get, list, create-bucket
	Status  int
	Code    string // S3 error code from the XML body; empty for HEAD or non-S3 answers
	Message string
}

func (e *S3Error) Error() string {
	s := fmt.Sprintf("bench: %s: HTTP %d", e.Op, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// ErrorKind names the class of a failed request for error counting: "403 SignatureDoesNotMatch",
// "503 SlowDown", "connection refused", "timeout", ... Low cardinality on purpose, so that a
// million failures make one line of the report, not a million.
func ErrorKind(err error) string {
	var s3e *S3Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &s3e):
		if s3e.Code != "" {
			return strconv.Itoa(s3e.Status) + " " + s3e.Code
		}
		return strconv.Itoa(s3e.Status) + " " + http.StatusText(s3e.Status)
	case errors.Is(err, errShortBody):
		return "short body"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection reset"
	default:
		var dns *net.DNSError
		if errors.As(err, &dns) {
			return "dns"
		}
		return "network"
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

var errShortBody = errors.New("response body shorter than Content-Length")

// objectURL builds the path-style URL of bucket/key. Path holds the raw key and RawPath its
// S3 encoding (every byte but A-Z a-z 0-9 - _ . ~ and '/' percent-encoded), so that the bytes
// on the wire are exactly what the signature covers, whatever the key contains ('+', ' ', '%',
// UTF-8, ...).
func (c *Client) objectURL(bucket, key string, query string) *url.URL {
	u := *c.base
	u.Path = c.base.Path + "/" + bucket
	u.RawPath = escapePath(c.base.Path) + "/" + escapePath(bucket)
	if key != "" {
		u.Path += "/" + key
		u.RawPath += "/" + escapePath(key)
	}
	u.RawQuery = query
	return &u
}

// escapePath percent-encodes s as SigV4's canonical URI does for S3, keeping '/'.
func escapePath(s string) string { return sigv4.URIEncode(s, false) }

// do signs and sends one request and returns the response for the caller to read; a non-2xx
// answer is drained, closed and returned as *S3Error.
func (c *Client) do(ctx context.Context, op, method string, u *url.URL, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", op, err)
	}
	// NewRequest re-parses the string; keep our RawPath so the escaping is ours, not Go's.
	req.URL.Path, req.URL.RawPath = u.Path, u.RawPath
	if body != nil && len(body) == 0 {
		req.Body = http.NoBody // send Content-Length: 0, not chunked
	}
	if err := sigv4.SignRequest(req, c.cred, c.region, time.Now()); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", op, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", op, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		e := &S3Error{Op: op, Status: resp.StatusCode}
		var doc struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // keep the connection reusable
		if xml.Unmarshal(raw, &doc) == nil {
			e.Code, e.Message = doc.Code, doc.Message
		}
		return nil, e
	}
	return resp, nil
}

// drain reads the body to the end and closes it, so the connection returns to the pool.
func drain(resp *http.Response) (int64, error) {
	n, err := io.Copy(io.Discard, resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// PutObject uploads body as bucket/key.
func (c *Client) PutObject(ctx context.Context, bucket, key string, body []byte) error {
	if body == nil {
		body = []byte{}
	}
	resp, err := c.do(ctx, "put", http.MethodPut, c.objectURL(bucket, key, ""), body)
	if err != nil {
		return err
	}
	if _, err := drain(resp); err != nil {
		return fmt.Errorf("bench: put %s: reading response: %w", key, err)
	}
	return nil
}

// GetObject downloads bucket/key, discarding the bytes, and returns how many arrived. A body
// shorter than its Content-Length is an error: a truncated GET must not count as a fast one.
func (c *Client) GetObject(ctx context.Context, bucket, key string) (int64, error) {
	resp, err := c.do(ctx, "get", http.MethodGet, c.objectURL(bucket, key, ""), nil)
	if err != nil {
		return 0, err
	}
	n, err := drain(resp)
	if err != nil {
		return n, fmt.Errorf("bench: get %s: %w", key, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return n, fmt.Errorf("bench: get %s: %d of %d bytes: %w", key, n, resp.ContentLength, errShortBody)
	}
	return n, nil
}

// CreateBucket creates bucket; a bucket the caller already owns is not an error, so that a
// benchmark can be rerun against the same bucket.
func (c *Client) CreateBucket(ctx context.Context, bucket string) error {
	resp, err := c.do(ctx, "create-bucket", http.MethodPut, c.objectURL(bucket, "", ""), []byte{})
	var s3e *S3Error
	if errors.As(err, &s3e) && s3e.Code == "BucketAlreadyOwnedByYou" {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = drain(resp)
	return err
}

// ListPage is one ListObjectsV2 answer, reduced to what a load test needs.
type ListPage struct {
	Keys      []string
	Truncated bool
	NextToken string
}

// ListObjectsV2 lists one page of bucket after token (empty for the first page).
func (c *Client) ListObjectsV2(ctx context.Context, bucket, prefix, token string, maxKeys int) (ListPage, error) {
	q := url.Values{}
	q.Set("list-type", "2")
	q.Set("max-keys", strconv.Itoa(maxKeys))
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if token != "" {
		q.Set("continuation-token", token)
	}
	// url.Values encodes spaces as '+', which SigV4 canonicalisation reads back as a space, and
	// every other reserved byte as %XX; both sides therefore agree on the canonical query.
	resp, err := c.do(ctx, "list", http.MethodGet, c.objectURL(bucket, "", q.Encode()), nil)
	if err != nil {
		return ListPage{}, err
	}
	defer resp.Body.Close()
	var doc struct {
		IsTruncated           bool   `xml:"IsTruncated"`
		NextContinuationToken string `xml:"NextContinuationToken"`
		Contents              []struct {
			Key string `xml:"Key"`
		} `xml:"Contents"`
	}
	if err := xml.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return ListPage{}, fmt.Errorf("bench: list %s: decoding ListBucketResult: %w", bucket, err)
	}
	io.Copy(io.Discard, resp.Body)
	p := ListPage{Truncated: doc.IsTruncated, NextToken: doc.NextContinuationToken, Keys: make([]string, len(doc.Contents))}
	for i, o := range doc.Contents {
		p.Keys[i] = o.Key
	}
	if p.Truncated && p.NextToken == "" {
		return p, fmt.Errorf("bench: list %s: truncated page without NextContinuationToken", bucket)
	}
	return p, nil
}

// Check makes one request before any load so that a wrong endpoint or key fails in one clear
// line instead of as a million counted errors. With create it creates the bucket (fill), else
// it lists one key, which requires the bucket to exist (list, get). A GET rather than a HEAD,
// because only an answer with a body names the S3 error (SignatureDoesNotMatch,
// InvalidAccessKeyId, NoSuchBucket).
func (c *Client) Check(ctx context.Context, bucket string, create bool) error {
	var err error
	if create {
		err = c.CreateBucket(ctx, bucket)
	} else {
		_, err = c.ListObjectsV2(ctx, bucket, "", "", 1)
	}
	if err == nil {
		return nil
	}
	var s3e *S3Error
	if errors.As(err, &s3e) {
		switch {
		case s3e.Status == http.StatusForbidden || s3e.Code == "InvalidAccessKeyId" || s3e.Code == "SignatureDoesNotMatch":
			return fmt.Errorf("%s rejected the credentials (%s); check --access-key, --secret-key and --region", c.Endpoint(), ErrorKind(err))
		case s3e.Status == http.StatusNotFound:
			return fmt.Errorf("bucket %q does not exist at %s (run `cairn bench fill` first)", bucket, c.Endpoint())
		}
		return fmt.Errorf("%s answered the first request with %s", c.Endpoint(), ErrorKind(err))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is already in the message
	}
	return fmt.Errorf("cannot reach %s: %w", c.Endpoint(), err)
}
