package objclient

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// s3Client speaks S3 with path-style URLs and SigV4 over UNSIGNED-PAYLOAD: hashing every body
// would make the client, not the server, the bottleneck of a benchmark.
type s3Client struct {
	base     *url.URL
	cred     sigv4.Credential
	region   string
	location string // CreateBucket's LocationConstraint ("": none)
	hc       *http.Client
}

func newS3(cfg Config) (*s3Client, error) {
	base, err := parseBase(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	return &s3Client{
		base:     base,
		cred:     sigv4.Credential{AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey},
		region:   cfg.Region,
		location: cfg.BucketLocation,
		hc:       newHTTPClient(cfg),
	}, nil
}

func (c *s3Client) Protocol() string { return ProtocolS3 }
func (c *s3Client) Endpoint() string { return c.base.String() }
func (c *s3Client) Close()           { c.hc.CloseIdleConnections() }

// url builds the path-style URL of bucket/key. Path holds the raw key and RawPath its S3
// encoding (every byte but A-Z a-z 0-9 - _ . ~ and '/' percent-encoded), so that the bytes on
// the wire are exactly what the signature covers, whatever the key contains.
func (c *s3Client) url(bucket, key, query string) *url.URL {
	u := *c.base
	u.Path = c.base.Path + "/" + bucket
	u.RawPath = sigv4.URIEncode(c.base.Path, false) + "/" + sigv4.URIEncode(bucket, false)
	if key != "" {
		u.Path += "/" + key
		u.RawPath += "/" + sigv4.URIEncode(key, false)
	}
	u.RawQuery = query
	return &u
}

// do signs and sends one request; a non-2xx answer is drained, closed and returned as *Error.
// The duration is that of hc.Do alone (request out, response headers in): the TTFB.
func (c *s3Client) do(ctx context.Context, op, method string, u *url.URL, hdr http.Header, body io.Reader, size int64) (*http.Response, time.Duration, error) {
	req, err := newRequest(ctx, method, u, hdr, body, size)
	if err != nil {
		return nil, 0, fmt.Errorf("objclient: %s: %w", op, err)
	}
	if err := sigv4.SignRequest(req, c.cred, c.region, time.Now()); err != nil {
		return nil, 0, fmt.Errorf("objclient: %s: %w", op, err)
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	ttfb := time.Since(start)
	if err != nil {
		return nil, ttfb, fmt.Errorf("objclient: %s: %w", op, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, ttfb, s3Error(op, resp.StatusCode, readError(resp))
	}
	return resp, ttfb, nil
}

// s3Error builds the Error of an answer from its body: S3's XML <Error>, or whatever text a
// proxy in front of the store sent.
func s3Error(op string, status int, raw []byte) *Error {
	e := &Error{Op: op, Status: status}
	var doc struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(raw, &doc) == nil && doc.Code != "" {
		e.Code, e.Message = doc.Code, truncate(doc.Message, maxMessage)
	} else if len(raw) > 0 {
		e.Message = textMessage(raw)
	}
	return e
}

// simple sends a request whose answer body does not matter.
func (c *s3Client) simple(ctx context.Context, op, method string, u *url.URL) error {
	resp, _, err := c.do(ctx, op, method, u, nil, nil, 0)
	if err != nil {
		return err
	}
	if _, err := drain(resp); err != nil {
		return fmt.Errorf("objclient: %s: reading the answer: %w", op, err)
	}
	return nil
}

// decodeBody decodes an XML answer into v and closes the body.
func decodeBody(op string, resp *http.Response, v any) error {
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("objclient: %s: reading the answer: %w", op, err)
	}
	if err := xml.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("objclient: %s: decoding the answer: %w", op, err)
	}
	return nil
}

// Check: see Client. A GET rather than a HEAD, because only an answer with a body names the
// S3 error (SignatureDoesNotMatch, InvalidAccessKeyId, NoSuchBucket).
func (c *s3Client) Check(ctx context.Context, bucket string, create bool) error {
	if create && bucket == "" {
		return fmt.Errorf("objclient: check: creating needs a bucket name")
	}
	var err error
	switch {
	case create:
		err = c.CreateBucket(ctx, bucket)
	case bucket != "":
		_, err = c.List(ctx, bucket, ListOptions{Limit: 1})
	default:
		_, err = c.ListBuckets(ctx)
	}
	if err == nil {
		return nil
	}
	var oe *Error
	if errors.As(err, &oe) {
		switch {
		case oe.Status == http.StatusForbidden || oe.Code == "InvalidAccessKeyId" || oe.Code == "SignatureDoesNotMatch":
			return fmt.Errorf("%s rejected the credentials (%s); check --access-key, --secret-key and --region", c.Endpoint(), ErrorKind(err))
		case oe.Status == http.StatusNotFound && bucket != "":
			return fmt.Errorf("bucket %q does not exist at %s", bucket, c.Endpoint())
		}
		return fmt.Errorf("%s answered the first request with %s", c.Endpoint(), ErrorKind(err))
	}
	return cannotReach(c.Endpoint(), err)
}

// cannotReach is Check's message for an error that is not an answer.
func cannotReach(endpoint string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is already in the message
	}
	return fmt.Errorf("cannot reach %s: %w", endpoint, err)
}

// CreateBucket: a bucket the caller already owns is not an error, so that a benchmark can be
// rerun against the same bucket.
func (c *s3Client) CreateBucket(ctx context.Context, bucket string) error {
	if err := checkNames("create-bucket", bucket, "", false); err != nil {
		return err
	}
	var err error
	if c.location == "" {
		err = c.simple(ctx, "create-bucket", http.MethodPut, c.url(bucket, "", ""))
	} else {
		var doc bytes.Buffer
		doc.WriteString(`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>`)
		xml.EscapeText(&doc, []byte(c.location))
		doc.WriteString(`</LocationConstraint></CreateBucketConfiguration>`)
		var resp *http.Response
		if resp, _, err = c.do(ctx, "create-bucket", http.MethodPut, c.url(bucket, "", ""), nil, bytes.NewReader(doc.Bytes()), int64(doc.Len())); err == nil {
			_, err = drain(resp)
		}
	}
	var oe *Error
	if errors.As(err, &oe) && oe.Code == "BucketAlreadyOwnedByYou" {
		return nil
	}
	return err
}

func (c *s3Client) DeleteBucket(ctx context.Context, bucket string) error {
	if err := checkNames("delete-bucket", bucket, "", false); err != nil {
		return err
	}
	return c.simple(ctx, "delete-bucket", http.MethodDelete, c.url(bucket, "", ""))
}

type listBucketsDoc struct {
	Buckets []struct {
		Name string `xml:"Name"`
	} `xml:"Buckets>Bucket"`
	ContinuationToken string `xml:"ContinuationToken"`
}

func decodeListBuckets(raw []byte) (listBucketsDoc, error) {
	var doc listBucketsDoc
	err := xml.Unmarshal(raw, &doc)
	return doc, err
}

func (c *s3Client) ListBuckets(ctx context.Context) ([]string, error) {
	var names []string
	token := ""
	for {
		u := c.url("", "", "") // the service: base + "/"
		if token != "" {
			u.RawQuery = url.Values{"continuation-token": {token}}.Encode()
		}
		resp, _, err := c.do(ctx, "list-buckets", http.MethodGet, u, nil, nil, 0)
		if err != nil {
			return names, err
		}
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil {
			return names, fmt.Errorf("objclient: list-buckets: reading the answer: %w", err)
		}
		doc, err := decodeListBuckets(raw)
		if err != nil {
			return names, fmt.Errorf("objclient: list-buckets: decoding ListAllMyBucketsResult: %w", err)
		}
		for _, b := range doc.Buckets {
			names = append(names, b.Name)
		}
		// A token that does not advance would loop forever against a faulty server.
		if doc.ContinuationToken == "" || doc.ContinuationToken == token || len(doc.Buckets) == 0 {
			return names, nil
		}
		token = doc.ContinuationToken
	}
}

func (c *s3Client) Put(ctx context.Context, bucket, key string, body io.Reader, size int64, opts PutOptions) (PutResult, error) {
	if err := checkNames("put", bucket, key, true); err != nil {
		return PutResult{}, err
	}
	hdr := http.Header{}
	if err := setUserMetadata(hdr, "X-Amz-Meta-", opts); err != nil {
		return PutResult{}, err
	}
	resp, _, err := c.do(ctx, "put", http.MethodPut, c.url(bucket, key, ""), hdr, body, size)
	if err != nil {
		return PutResult{}, err
	}
	if _, err := drain(resp); err != nil {
		return PutResult{}, fmt.Errorf("objclient: put %s: reading the answer: %w", key, err)
	}
	return PutResult{ETag: unquote(resp.Header.Get("Etag"))}, nil
}

func (c *s3Client) Get(ctx context.Context, bucket, key string, opts GetOptions) (GetResult, error) {
	if err := checkNames("get", bucket, key, true); err != nil {
		return GetResult{}, err
	}
	hdr, err := rangeHeaders(opts)
	if err != nil {
		return GetResult{}, err
	}
	resp, ttfb, err := c.do(ctx, "get", http.MethodGet, c.url(bucket, key, ""), hdr, nil, 0)
	if err != nil {
		return GetResult{TTFB: ttfb}, err
	}
	return download("get", key, resp, ttfb, opts)
}

func (c *s3Client) Head(ctx context.Context, bucket, key string) (ObjectInfo, error) {
	if err := checkNames("head", bucket, key, true); err != nil {
		return ObjectInfo{}, err
	}
	resp, _, err := c.do(ctx, "head", http.MethodHead, c.url(bucket, key, ""), nil, nil, 0)
	if err != nil {
		return ObjectInfo{}, err
	}
	resp.Body.Close()
	return headInfo(key, resp, "X-Amz-Meta-"), nil
}

// Delete: S3 already answers 204 for a missing key; a 404 other than NoSuchBucket (a store that
// does answer 404) is treated the same way.
func (c *s3Client) Delete(ctx context.Context, bucket, key string) error {
	if err := checkNames("delete", bucket, key, true); err != nil {
		return err
	}
	err := c.simple(ctx, "delete", http.MethodDelete, c.url(bucket, key, ""))
	var oe *Error
	if errors.As(err, &oe) && oe.Status == http.StatusNotFound && oe.Code != "NoSuchBucket" {
		return nil
	}
	return err
}

type listV2Doc struct {
	EncodingType string `xml:"EncodingType"`
	IsTruncated  bool   `xml:"IsTruncated"`
	Contents     []struct {
		Key          string `xml:"Key"`
		Size         int64  `xml:"Size"`
		ETag         string `xml:"ETag"`
		LastModified string `xml:"LastModified"`
	} `xml:"Contents"`
	CommonPrefixes []struct {
		Prefix string `xml:"Prefix"`
	} `xml:"CommonPrefixes"`
}

// decodeListV2 turns a ListBucketResult into a ListPage. Keys are asked for with
// encoding-type=url (XML 1.0 cannot carry every byte a key may hold) and decoded as a query
// component: AWS writes a space as '+', Cairn as %20, and both escape a literal '+'.
func decodeListV2(raw []byte) (ListPage, error) {
	var doc listV2Doc
	if err := xml.Unmarshal(raw, &doc); err != nil {
		return ListPage{}, fmt.Errorf("decoding ListBucketResult: %w", err)
	}
	dec := func(s string) (string, error) { return s, nil }
	if doc.EncodingType == "url" {
		dec = url.QueryUnescape
	}
	p := ListPage{Truncated: doc.IsTruncated}
	for _, o := range doc.Contents {
		k, err := dec(o.Key)
		if err != nil {
			return ListPage{}, fmt.Errorf("decoding key %q: %w", o.Key, err)
		}
		lm, _ := time.Parse(time.RFC3339Nano, o.LastModified)
		p.Objects = append(p.Objects, ObjectInfo{Key: k, Size: o.Size, ETag: unquote(o.ETag), LastModified: lm})
	}
	for _, cp := range doc.CommonPrefixes {
		s, err := dec(cp.Prefix)
		if err != nil {
			return ListPage{}, fmt.Errorf("decoding prefix %q: %w", cp.Prefix, err)
		}
		p.Prefixes = append(p.Prefixes, s)
	}
	if p.Truncated {
		// Keys and common prefixes interleave in name order, so the page ends with the greater
		// of the last of each. A common prefix as start-after continues past all its keys
		// (that is also how V1's NextMarker works).
		if n := len(p.Objects); n > 0 {
			p.Next = p.Objects[n-1].Key
		}
		if n := len(p.Prefixes); n > 0 && p.Prefixes[n-1] > p.Next {
			p.Next = p.Prefixes[n-1]
		}
		if p.Next == "" {
			return ListPage{}, errors.New("truncated page without keys or prefixes")
		}
	}
	return p, nil
}

// List uses start-after rather than continuation tokens, so that Marker can be any key (a
// resumed listing) and Next is a plain key that works with either protocol.
func (c *s3Client) List(ctx context.Context, bucket string, opts ListOptions) (ListPage, error) {
	if err := checkNames("list", bucket, "", false); err != nil {
		return ListPage{}, err
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 1000
	}
	q := url.Values{"list-type": {"2"}, "max-keys": {strconv.Itoa(limit)}, "encoding-type": {"url"}}
	if opts.Prefix != "" {
		q.Set("prefix", opts.Prefix)
	}
	if opts.Delimiter != "" {
		q.Set("delimiter", opts.Delimiter)
	}
	if opts.Marker != "" {
		q.Set("start-after", opts.Marker)
	}
	// url.Values encodes a space as '+', which SigV4 canonicalisation reads back as a space,
	// and every other reserved byte as %XX; both sides therefore agree on the canonical query.
	resp, _, err := c.do(ctx, "list", http.MethodGet, c.url(bucket, "", q.Encode()), nil, nil, 0)
	if err != nil {
		return ListPage{}, err
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	resp.Body.Close()
	if err != nil {
		return ListPage{}, fmt.Errorf("objclient: list %s: reading the answer: %w", bucket, err)
	}
	p, err := decodeListV2(raw)
	if err != nil {
		return ListPage{}, fmt.Errorf("objclient: list %s: %w", bucket, err)
	}
	return p, nil
}

func (c *s3Client) StartUpload(ctx context.Context, bucket, key string, opts PutOptions) (string, error) {
	if err := checkNames("start-upload", bucket, key, true); err != nil {
		return "", err
	}
	hdr := http.Header{}
	if err := setUserMetadata(hdr, "X-Amz-Meta-", opts); err != nil {
		return "", err
	}
	resp, _, err := c.do(ctx, "start-upload", http.MethodPost, c.url(bucket, key, "uploads"), hdr, nil, 0)
	if err != nil {
		return "", err
	}
	var doc struct {
		UploadID string `xml:"UploadId"`
	}
	if err := decodeBody("start-upload", resp, &doc); err != nil {
		return "", err
	}
	if doc.UploadID == "" {
		return "", fmt.Errorf("objclient: start-upload %s: answer without an UploadId", key)
	}
	return doc.UploadID, nil
}

func uploadQuery(uploadID string, extra url.Values) string {
	q := url.Values{"uploadId": {uploadID}}
	for k, v := range extra {
		q[k] = v
	}
	return q.Encode()
}

func (c *s3Client) UploadPart(ctx context.Context, bucket, key, uploadID string, number int, body io.Reader, size int64) (Part, error) {
	if err := checkNames("upload-part", bucket, key, true); err != nil {
		return Part{}, err
	}
	q := uploadQuery(uploadID, url.Values{"partNumber": {strconv.Itoa(number)}})
	resp, _, err := c.do(ctx, "upload-part", http.MethodPut, c.url(bucket, key, q), nil, body, size)
	if err != nil {
		return Part{}, err
	}
	if _, err := drain(resp); err != nil {
		return Part{}, fmt.Errorf("objclient: upload-part %s #%d: reading the answer: %w", key, number, err)
	}
	return Part{Number: number, ETag: unquote(resp.Header.Get("Etag")), Size: size}, nil
}

type listPartsDoc struct {
	IsTruncated          bool   `xml:"IsTruncated"`
	NextPartNumberMarker string `xml:"NextPartNumberMarker"`
	Parts                []struct {
		PartNumber int    `xml:"PartNumber"`
		ETag       string `xml:"ETag"`
		Size       int64  `xml:"Size"`
	} `xml:"Part"`
}

// decodeListParts returns the parts of one ListPartsResult page and the marker of the next
// page ("" when this one is the last).
func decodeListParts(raw []byte) ([]Part, string, error) {
	var doc listPartsDoc
	if err := xml.Unmarshal(raw, &doc); err != nil {
		return nil, "", fmt.Errorf("decoding ListPartsResult: %w", err)
	}
	parts := make([]Part, 0, len(doc.Parts))
	for _, p := range doc.Parts {
		parts = append(parts, Part{Number: p.PartNumber, ETag: unquote(p.ETag), Size: p.Size})
	}
	next := ""
	if doc.IsTruncated {
		next = strings.TrimSpace(doc.NextPartNumberMarker)
		if next == "" && len(parts) > 0 {
			next = strconv.Itoa(parts[len(parts)-1].Number)
		}
		if next == "" {
			return nil, "", errors.New("truncated ListPartsResult without a next marker")
		}
	}
	return parts, next, nil
}

func (c *s3Client) ListParts(ctx context.Context, bucket, key, uploadID string) ([]Part, error) {
	if err := checkNames("list-parts", bucket, key, true); err != nil {
		return nil, err
	}
	var all []Part
	marker := ""
	for {
		var extra url.Values
		if marker != "" {
			extra = url.Values{"part-number-marker": {marker}}
		}
		resp, _, err := c.do(ctx, "list-parts", http.MethodGet, c.url(bucket, key, uploadQuery(uploadID, extra)), nil, nil, 0)
		if err != nil {
			return all, err
		}
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil {
			return all, fmt.Errorf("objclient: list-parts %s: reading the answer: %w", key, err)
		}
		parts, next, err := decodeListParts(raw)
		if err != nil {
			return all, fmt.Errorf("objclient: list-parts %s: %w", key, err)
		}
		all = append(all, parts...)
		if next == "" || next == marker {
			return all, nil
		}
		marker = next
	}
}

type completeDoc struct {
	XMLName xml.Name       `xml:"CompleteMultipartUpload"`
	Parts   []completePart `xml:"Part"`
}

type completePart struct {
	PartNumber int    `xml:"PartNumber"`
	ETag       string `xml:"ETag"`
}

// CompleteUpload: S3 may answer 200 and then an <Error> body, because it sends the status
// before the (long) assembly is done; that is an error like any other, with Status 200.
func (c *s3Client) CompleteUpload(ctx context.Context, bucket, key, uploadID string, parts []Part) (PutResult, error) {
	if err := checkNames("complete-upload", bucket, key, true); err != nil {
		return PutResult{}, err
	}
	doc := completeDoc{Parts: make([]completePart, len(parts))}
	for i, p := range parts {
		doc.Parts[i] = completePart{PartNumber: p.Number, ETag: `"` + unquote(p.ETag) + `"`}
	}
	body, err := xml.Marshal(doc)
	if err != nil {
		return PutResult{}, fmt.Errorf("objclient: complete-upload %s: %w", key, err)
	}
	hdr := http.Header{"Content-Type": {"application/xml"}}
	resp, _, err := c.do(ctx, "complete-upload", http.MethodPost, c.url(bucket, key, uploadQuery(uploadID, nil)), hdr, bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return PutResult{}, err
	}
	return etagAnswer("complete-upload", key, resp)
}

// etagAnswer reads the answer of a request that S3 may answer 200 and then an <Error> body,
// because it sends the status before its (long) work is done (CompleteMultipartUpload,
// CopyObject): an error like any other, with Status 200. Otherwise the answer names the
// new object's ETag.
func etagAnswer(op, key string, resp *http.Response) (PutResult, error) {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return PutResult{}, fmt.Errorf("objclient: %s %s: reading the answer: %w", op, key, err)
	}
	var res struct {
		XMLName xml.Name
		ETag    string `xml:"ETag"`
	}
	if err := xml.Unmarshal(raw, &res); err != nil {
		return PutResult{}, fmt.Errorf("objclient: %s %s: decoding the answer: %w", op, key, err)
	}
	if res.XMLName.Local == "Error" {
		return PutResult{}, s3Error(op, resp.StatusCode, raw)
	}
	return PutResult{ETag: unquote(res.ETag)}, nil
}

// copySource checks a copy's two names and returns its source as both protocols name it in a
// header: /bucket/key, escaped as a URL's path.
func copySource(srcBucket, srcKey, bucket, key string) (string, error) {
	if err := checkNames("copy", srcBucket, srcKey, true); err != nil {
		return "", err
	}
	if err := checkNames("copy", bucket, key, true); err != nil {
		return "", err
	}
	return (&url.URL{Path: "/" + srcBucket + "/" + srcKey}).EscapedPath(), nil
}

// Copy: CopyObject, the bytes copied by the store (one request: up to the store's largest
// single object).
func (c *s3Client) Copy(ctx context.Context, srcBucket, srcKey, bucket, key string) (PutResult, error) {
	source, err := copySource(srcBucket, srcKey, bucket, key)
	if err != nil {
		return PutResult{}, err
	}
	hdr := http.Header{"X-Amz-Copy-Source": {source}}
	resp, _, err := c.do(ctx, "copy", http.MethodPut, c.url(bucket, key, ""), hdr, nil, 0)
	if err != nil {
		return PutResult{}, err
	}
	return etagAnswer("copy", key, resp)
}

func (c *s3Client) AbortUpload(ctx context.Context, bucket, key, uploadID string) error {
	if err := checkNames("abort-upload", bucket, key, true); err != nil {
		return err
	}
	return c.simple(ctx, "abort-upload", http.MethodDelete, c.url(bucket, key, uploadQuery(uploadID, nil)))
}
