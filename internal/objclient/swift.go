package objclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// swiftClient speaks the Swift API with a v1 token (tempauth, swauth, or any store that offers
// /auth/v1.0) or a pre-issued token. Containers are buckets, objects are keys, large objects
// are static large objects.
type swiftClient struct {
	hc *http.Client
	// v1 auth; all empty in token mode, which therefore never re-authenticates.
	authURL, user, key string

	// authSem admits one authentication at a time, so that a hundred workers seeing their
	// token expire together ask for one new token, not a hundred; a channel rather than a
	// mutex, so that a waiting worker still honours its context.
	authSem chan struct{}

	mu      sync.RWMutex
	token   string
	storage *url.URL
}

func newSwift(cfg Config) (*swiftClient, error) {
	c := &swiftClient{hc: newHTTPClient(cfg), authSem: make(chan struct{}, 1)}
	if cfg.Token != "" {
		u, err := parseBase(cfg.StorageURL)
		if err != nil {
			return nil, err
		}
		c.token, c.storage = cfg.Token, u
		return c, nil
	}
	c.authURL, c.user, c.key = cfg.AuthURL, cfg.User, cfg.Key
	return c, nil
}

func (c *swiftClient) Protocol() string { return ProtocolSwift }
func (c *swiftClient) Close()           { c.hc.CloseIdleConnections() }

// Endpoint is the storage URL, or the auth URL until the first authentication has told it.
func (c *swiftClient) Endpoint() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.storage != nil {
		return c.storage.String()
	}
	return c.authURL
}

// creds returns the current token and storage URL, authenticating first if there are none.
func (c *swiftClient) creds(ctx context.Context) (string, *url.URL, error) {
	c.mu.RLock()
	tok, su := c.token, c.storage
	c.mu.RUnlock()
	if tok != "" {
		return tok, su, nil
	}
	return c.authenticate(ctx, "")
}

// authenticate fetches a new token unless another worker already replaced stale (the token
// that failed, or "" for none yet) while this one waited.
func (c *swiftClient) authenticate(ctx context.Context, stale string) (string, *url.URL, error) {
	select {
	case c.authSem <- struct{}{}:
	case <-ctx.Done():
		return "", nil, fmt.Errorf("objclient: auth: %w", ctx.Err())
	}
	defer func() { <-c.authSem }()
	c.mu.RLock()
	tok, su := c.token, c.storage
	c.mu.RUnlock()
	if tok != "" && tok != stale {
		return tok, su, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.authURL, nil)
	if err != nil {
		return "", nil, fmt.Errorf("objclient: auth: %w", err)
	}
	req.Header.Set("X-Auth-User", c.user)
	req.Header.Set("X-Auth-Key", c.key)
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", nil, fmt.Errorf("objclient: auth: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return "", nil, swiftError("auth", resp.StatusCode, readError(resp))
	}
	drain(resp)
	tok = resp.Header.Get("X-Auth-Token")
	if tok == "" {
		tok = resp.Header.Get("X-Storage-Token")
	}
	sus := resp.Header.Get("X-Storage-Url")
	if tok == "" || sus == "" {
		return "", nil, fmt.Errorf("objclient: auth: %s answered without X-Auth-Token and X-Storage-Url", c.authURL)
	}
	if err := checkBaseURL("X-Storage-Url", sus); err != nil {
		return "", nil, fmt.Errorf("objclient: auth: %w", err)
	}
	su, err = parseBase(sus)
	if err != nil {
		return "", nil, fmt.Errorf("objclient: auth: %w", err)
	}
	c.mu.Lock()
	c.token, c.storage = tok, su
	c.mu.Unlock()
	return tok, su, nil
}

// swiftURL builds storage/container/object. Object names are escaped segment by segment, so
// that '/' stays a separator while '?', '#', '%' and the rest reach Swift as part of the name.
func swiftURL(storage *url.URL, container, object, query string) *url.URL {
	u := *storage
	u.RawPath = storage.EscapedPath()
	if container != "" {
		u.Path += "/" + container
		u.RawPath += "/" + url.PathEscape(container)
	}
	if object != "" {
		segs := strings.Split(object, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		u.Path += "/" + object
		u.RawPath += "/" + strings.Join(segs, "/")
	}
	u.RawQuery = query
	return &u
}

type swiftReq struct {
	op, method        string
	container, object string
	query             string
	hdr               http.Header
	body              io.Reader
	size              int64
}

// do sends one request; a non-2xx answer is drained, closed and returned as *Error. A 401
// under v1 auth means the token expired: the client authenticates again (once for all
// workers) and repeats the request once, if its body can be sent again (none, or a Seeker).
// The duration is that of the final hc.Do alone: the TTFB.
func (c *swiftClient) do(ctx context.Context, r swiftReq) (*http.Response, time.Duration, error) {
	tok, su, err := c.creds(ctx)
	if err != nil {
		return nil, 0, err
	}
	bodyStart := int64(-1)
	if s, ok := r.body.(io.Seeker); ok && r.size > 0 {
		if pos, err := s.Seek(0, io.SeekCurrent); err == nil {
			bodyStart = pos
		}
	}
	for attempt := 0; ; attempt++ {
		req, err := newRequest(ctx, r.method, swiftURL(su, r.container, r.object, r.query), r.hdr, r.body, r.size)
		if err != nil {
			return nil, 0, fmt.Errorf("objclient: %s: %w", r.op, err)
		}
		req.Header.Set("X-Auth-Token", tok)
		start := time.Now()
		resp, err := c.hc.Do(req)
		ttfb := time.Since(start)
		if err != nil {
			return nil, ttfb, fmt.Errorf("objclient: %s: %w", r.op, err)
		}
		if resp.StatusCode/100 == 2 {
			return resp, ttfb, nil
		}
		raw := readError(resp)
		if resp.StatusCode != http.StatusUnauthorized || attempt > 0 || c.authURL == "" {
			return nil, ttfb, swiftError(r.op, resp.StatusCode, raw)
		}
		if tok, su, err = c.authenticate(ctx, tok); err != nil {
			return nil, ttfb, err
		}
		if r.size > 0 {
			if bodyStart < 0 {
				return nil, ttfb, swiftError(r.op, resp.StatusCode, raw)
			}
			if _, err := r.body.(io.Seeker).Seek(bodyStart, io.SeekStart); err != nil {
				return nil, ttfb, fmt.Errorf("objclient: %s: rewinding the body after re-authenticating: %w", r.op, err)
			}
		}
	}
}

// swiftError builds the Error of an answer. Swift's error bodies are short text or HTML, not
// documents with a code, so Code stays empty and ErrorKind uses the status text.
func swiftError(op string, status int, raw []byte) *Error {
	return &Error{Op: op, Status: status, Message: textMessage(raw)}
}

func (c *swiftClient) simple(ctx context.Context, r swiftReq) (*http.Response, error) {
	resp, _, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	if _, err := drain(resp); err != nil {
		return nil, fmt.Errorf("objclient: %s: reading the answer: %w", r.op, err)
	}
	return resp, nil
}

func (c *swiftClient) Check(ctx context.Context, bucket string, create bool) error {
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
		_, err = c.simple(ctx, swiftReq{op: "list-buckets", method: http.MethodGet, query: "format=json&limit=1"})
	}
	if err == nil {
		return nil
	}
	flags := "--token and --storage-url"
	if c.authURL != "" {
		flags = "--user and --key"
	}
	var oe *Error
	if errors.As(err, &oe) {
		switch {
		case oe.Status == http.StatusUnauthorized || oe.Status == http.StatusForbidden:
			return fmt.Errorf("%s rejected the credentials (%s); check %s", c.Endpoint(), ErrorKind(err), flags)
		case oe.Op == "auth":
			return fmt.Errorf("%s answered the authentication request with %s; check --auth-url", c.authURL, ErrorKind(err))
		case oe.Status == http.StatusNotFound && bucket != "":
			return fmt.Errorf("container %q does not exist at %s", bucket, c.Endpoint())
		}
		return fmt.Errorf("%s answered the first request with %s", c.Endpoint(), ErrorKind(err))
	}
	return cannotReach(c.Endpoint(), err)
}

// CreateBucket: Swift answers 201 for a new container and 202 for an existing one.
func (c *swiftClient) CreateBucket(ctx context.Context, bucket string) error {
	if err := checkNames("create-bucket", bucket, "", false); err != nil {
		return err
	}
	_, err := c.simple(ctx, swiftReq{op: "create-bucket", method: http.MethodPut, container: bucket})
	return err
}

// DeleteBucket: a missing container is an error (404), as is one that still holds objects (409).
func (c *swiftClient) DeleteBucket(ctx context.Context, bucket string) error {
	if err := checkNames("delete-bucket", bucket, "", false); err != nil {
		return err
	}
	_, err := c.simple(ctx, swiftReq{op: "delete-bucket", method: http.MethodDelete, container: bucket})
	return err
}

// fetchJSON GETs a listing and returns its body.
func (c *swiftClient) fetchJSON(ctx context.Context, op, container string, q url.Values) ([]byte, error) {
	q.Set("format", "json")
	resp, _, err := c.do(ctx, swiftReq{op: op, method: http.MethodGet, container: container, query: q.Encode()})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("objclient: %s: reading the answer: %w", op, err)
	}
	return raw, nil
}

// ListBuckets pages until an empty page: an account listing may be capped below the limit
// asked for (account_listing_limit), so a short page does not prove the end.
func (c *swiftClient) ListBuckets(ctx context.Context) ([]string, error) {
	var names []string
	marker := ""
	for {
		q := url.Values{}
		if marker != "" {
			q.Set("marker", marker)
		}
		raw, err := c.fetchJSON(ctx, "list-buckets", "", q)
		if err != nil {
			return names, err
		}
		page, err := decodeSwiftContainers(raw)
		if err != nil {
			return names, fmt.Errorf("objclient: list-buckets: %w", err)
		}
		if len(page) == 0 || page[len(page)-1] <= marker {
			return names, nil
		}
		names = append(names, page...)
		marker = page[len(page)-1]
	}
}

func (c *swiftClient) Put(ctx context.Context, bucket, key string, body io.Reader, size int64, opts PutOptions) (PutResult, error) {
	if err := checkNames("put", bucket, key, true); err != nil {
		return PutResult{}, err
	}
	hdr := http.Header{}
	if err := setUserMetadata(hdr, "X-Object-Meta-", opts); err != nil {
		return PutResult{}, err
	}
	resp, err := c.simple(ctx, swiftReq{op: "put", method: http.MethodPut, container: bucket, object: key, hdr: hdr, body: body, size: size})
	if err != nil {
		return PutResult{}, err
	}
	return PutResult{ETag: unquote(resp.Header.Get("Etag"))}, nil
}

// Copy: a PUT with X-Copy-From, the bytes copied by the store (a large object's manifest is
// followed: the copy is one object, up to the store's largest).
func (c *swiftClient) Copy(ctx context.Context, srcBucket, srcKey, bucket, key string) (PutResult, error) {
	from, err := copySource(srcBucket, srcKey, bucket, key)
	if err != nil {
		return PutResult{}, err
	}
	hdr := http.Header{"X-Copy-From": {from}}
	resp, err := c.simple(ctx, swiftReq{op: "copy", method: http.MethodPut, container: bucket, object: key, hdr: hdr, body: http.NoBody, size: 0})
	if err != nil {
		return PutResult{}, err
	}
	return PutResult{ETag: unquote(resp.Header.Get("Etag"))}, nil
}

func (c *swiftClient) Get(ctx context.Context, bucket, key string, opts GetOptions) (GetResult, error) {
	if err := checkNames("get", bucket, key, true); err != nil {
		return GetResult{}, err
	}
	hdr, err := rangeHeaders(opts)
	if err != nil {
		return GetResult{}, err
	}
	resp, ttfb, err := c.do(ctx, swiftReq{op: "get", method: http.MethodGet, container: bucket, object: key, hdr: hdr})
	if err != nil {
		return GetResult{TTFB: ttfb}, err
	}
	return download("get", key, resp, ttfb, opts)
}

func (c *swiftClient) Head(ctx context.Context, bucket, key string) (ObjectInfo, error) {
	if err := checkNames("head", bucket, key, true); err != nil {
		return ObjectInfo{}, err
	}
	resp, err := c.simple(ctx, swiftReq{op: "head", method: http.MethodHead, container: bucket, object: key})
	if err != nil {
		return ObjectInfo{}, err
	}
	return headInfo(key, resp, "X-Object-Meta-"), nil
}

// Delete removes the object only: the segments of a large object stay, as with any Swift
// client that does not ask for multipart-manifest=delete.
func (c *swiftClient) Delete(ctx context.Context, bucket, key string) error {
	if err := checkNames("delete", bucket, key, true); err != nil {
		return err
	}
	_, err := c.simple(ctx, swiftReq{op: "delete", method: http.MethodDelete, container: bucket, object: key})
	if IsNotFound(err) {
		return nil
	}
	return err
}

// swiftEntry is one element of a JSON container listing: an object, or {"subdir": ...} for a
// common prefix.
type swiftEntry struct {
	Name         string `json:"name"`
	Subdir       string `json:"subdir"`
	Hash         string `json:"hash"`
	Bytes        int64  `json:"bytes"`
	ContentType  string `json:"content_type"`
	LastModified string `json:"last_modified"`
	SLOEtag      string `json:"slo_etag"`
}

// decodeSwiftObjects turns a JSON container listing into a page (Truncated and Next are the
// caller's; last is the name or subdir the page ended with).
func decodeSwiftObjects(raw []byte) (p ListPage, n int, last string, err error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ListPage{}, 0, "", nil // some stores answer an empty listing with 204 and no body
	}
	var entries []swiftEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return ListPage{}, 0, "", fmt.Errorf("decoding the JSON listing: %w", err)
	}
	for _, e := range entries {
		switch {
		case e.Subdir != "":
			p.Prefixes = append(p.Prefixes, e.Subdir)
			last = e.Subdir
		case e.Name != "":
			// A large object's listing hash is that of its manifest; slo_etag is the one its
			// GET and HEAD answer with, which callers compare against.
			etag := e.Hash
			if e.SLOEtag != "" {
				etag = e.SLOEtag
			}
			etag, _, _ = strings.Cut(etag, ";")
			p.Objects = append(p.Objects, ObjectInfo{
				Key: e.Name, Size: e.Bytes, ETag: unquote(strings.TrimSpace(etag)),
				ContentType: e.ContentType, LastModified: parseSwiftTime(e.LastModified),
			})
			last = e.Name
		default:
			return ListPage{}, 0, "", errors.New("listing entry with neither name nor subdir")
		}
	}
	return p, len(entries), last, nil
}

// parseSwiftTime parses a listing's last_modified: ISO 8601 in UTC without a zone.
func parseSwiftTime(s string) time.Time {
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return t
	}
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func decodeSwiftContainers(raw []byte) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var entries []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("decoding the JSON listing: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Name == "" {
			return nil, errors.New("account listing entry without a name")
		}
		names = append(names, e.Name)
	}
	return names, nil
}

// List: Swift says nothing about truncation, so a full page is taken as truncated (at worst
// the next page is empty). A marker that is a common prefix continues past all its names.
func (c *swiftClient) List(ctx context.Context, bucket string, opts ListOptions) (ListPage, error) {
	if err := checkNames("list", bucket, "", false); err != nil {
		return ListPage{}, err
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 1000
	}
	// Swift refuses (412) a limit above its container_listing_limit, 10000 by default; a
	// store configured lower answers short pages that this client will take for the last.
	limit = min(limit, 10000)
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if opts.Prefix != "" {
		q.Set("prefix", opts.Prefix)
	}
	if opts.Delimiter != "" {
		q.Set("delimiter", opts.Delimiter)
	}
	if opts.Marker != "" {
		q.Set("marker", opts.Marker)
	}
	raw, err := c.fetchJSON(ctx, "list", bucket, q)
	if err != nil {
		return ListPage{}, err
	}
	p, n, last, err := decodeSwiftObjects(raw)
	if err != nil {
		return ListPage{}, fmt.Errorf("objclient: list %s: %w", bucket, err)
	}
	if n >= limit && last != "" {
		p.Truncated, p.Next = true, last
	}
	return p, nil
}

// Large objects are static large objects. An upload ID is the segment prefix
// "<key>/slo/<unix-nanos>/" in the container "<bucket>_segments"; part N is the segment
// "<upload ID><N as %08d>", so that segments list in part order. StartUpload also writes an
// empty object named the upload ID itself, holding the content type and metadata the manifest
// will get (Swift has no server-side upload state to keep them) and marking the upload as
// started and not yet completed.

const sloTypeMeta = "Objclient-Content-Type" // in the upload marker: the manifest's Content-Type

func segContainer(bucket string) string { return bucket + "_segments" }

func checkUploadID(key, uploadID string) error {
	rest, ok := strings.CutPrefix(uploadID, key+"/slo/")
	if ok {
		rest, ok = strings.CutSuffix(rest, "/")
	}
	if ok {
		_, err := strconv.ParseUint(rest, 10, 64)
		ok = err == nil
	}
	if !ok {
		return fmt.Errorf("objclient: %q is not a Swift upload ID of %q", uploadID, key)
	}
	return nil
}

func (c *swiftClient) StartUpload(ctx context.Context, bucket, key string, opts PutOptions) (string, error) {
	if err := checkNames("start-upload", bucket, key, true); err != nil {
		return "", err
	}
	hdr := http.Header{}
	if err := setUserMetadata(hdr, "X-Object-Meta-", PutOptions{Metadata: opts.Metadata}); err != nil {
		return "", err
	}
	if opts.ContentType != "" {
		hdr.Set("X-Object-Meta-"+sloTypeMeta, opts.ContentType)
	}
	// The bucket must exist now, as with S3's NoSuchBucket, rather than only when the
	// manifest is written after every part has been uploaded.
	if _, err := c.simple(ctx, swiftReq{op: "start-upload", method: http.MethodHead, container: bucket}); err != nil {
		return "", err
	}
	if _, err := c.simple(ctx, swiftReq{op: "start-upload", method: http.MethodPut, container: segContainer(bucket)}); err != nil {
		return "", err
	}
	id := key + "/slo/" + strconv.FormatInt(time.Now().UnixNano(), 10) + "/"
	if _, err := c.simple(ctx, swiftReq{op: "start-upload", method: http.MethodPut, container: segContainer(bucket), object: id, hdr: hdr}); err != nil {
		return "", err
	}
	return id, nil
}

func (c *swiftClient) UploadPart(ctx context.Context, bucket, key, uploadID string, number int, body io.Reader, size int64) (Part, error) {
	if err := checkNames("upload-part", bucket, key, true); err != nil {
		return Part{}, err
	}
	if err := checkUploadID(key, uploadID); err != nil {
		return Part{}, err
	}
	if number < 1 || number > 99999999 {
		return Part{}, fmt.Errorf("objclient: upload-part %s: part number %d outside 1..99999999", key, number)
	}
	seg := uploadID + fmt.Sprintf("%08d", number)
	resp, err := c.simple(ctx, swiftReq{op: "upload-part", method: http.MethodPut, container: segContainer(bucket), object: seg, body: body, size: size})
	if err != nil {
		return Part{}, err
	}
	return Part{Number: number, ETag: unquote(resp.Header.Get("Etag")), Size: size}, nil
}

// listUpload lists the segments of an upload and reports whether its marker exists.
func (c *swiftClient) listUpload(ctx context.Context, bucket, uploadID string) (parts []Part, names []string, marker bool, err error) {
	opts := ListOptions{Prefix: uploadID, Limit: 10000}
	for {
		p, err := c.List(ctx, segContainer(bucket), opts)
		if err != nil {
			return nil, nil, false, err
		}
		for _, o := range p.Objects {
			names = append(names, o.Key)
			suffix := strings.TrimPrefix(o.Key, uploadID)
			if suffix == "" {
				marker = true
				continue
			}
			n, err := strconv.Atoi(suffix)
			if err != nil || len(suffix) != 8 || n < 1 {
				continue // not one of ours
			}
			parts = append(parts, Part{Number: n, ETag: o.ETag, Size: o.Size})
		}
		if !p.Truncated {
			return parts, names, marker, nil
		}
		opts.Marker = p.Next
	}
}

func noSuchUpload(op, uploadID string) error {
	return &Error{Op: op, Status: http.StatusNotFound, Message: "no such upload " + uploadID}
}

func (c *swiftClient) ListParts(ctx context.Context, bucket, key, uploadID string) ([]Part, error) {
	if err := checkNames("list-parts", bucket, key, true); err != nil {
		return nil, err
	}
	if err := checkUploadID(key, uploadID); err != nil {
		return nil, err
	}
	parts, _, marker, err := c.listUpload(ctx, bucket, uploadID)
	if IsNotFound(err) {
		return nil, noSuchUpload("list-parts", uploadID)
	}
	if err != nil {
		return nil, err
	}
	if !marker && len(parts) == 0 {
		return nil, noSuchUpload("list-parts", uploadID)
	}
	return parts, nil
}

type sloSegment struct {
	Path      string `json:"path"`
	ETag      string `json:"etag,omitempty"`
	SizeBytes int64  `json:"size_bytes,omitempty"`
}

// CompleteUpload PUTs the manifest. Segment paths are unescaped: the SLO middleware quotes
// them itself. An empty ETag or zero Size leaves that check to nobody rather than failing it.
func (c *swiftClient) CompleteUpload(ctx context.Context, bucket, key, uploadID string, parts []Part) (PutResult, error) {
	if err := checkNames("complete-upload", bucket, key, true); err != nil {
		return PutResult{}, err
	}
	if err := checkUploadID(key, uploadID); err != nil {
		return PutResult{}, err
	}
	if len(parts) == 0 {
		return PutResult{}, fmt.Errorf("objclient: complete-upload %s: no parts", key)
	}
	resp, err := c.simple(ctx, swiftReq{op: "complete-upload", method: http.MethodHead, container: segContainer(bucket), object: uploadID})
	if IsNotFound(err) {
		return PutResult{}, noSuchUpload("complete-upload", uploadID)
	}
	if err != nil {
		return PutResult{}, err
	}
	hdr := http.Header{}
	for name, vs := range resp.Header {
		if strings.HasPrefix(name, "X-Object-Meta-") && !strings.EqualFold(name, "X-Object-Meta-"+sloTypeMeta) {
			hdr[name] = vs
		}
	}
	if ct := resp.Header.Get("X-Object-Meta-" + sloTypeMeta); ct != "" {
		hdr.Set("Content-Type", ct)
	}
	manifest := make([]sloSegment, len(parts))
	for i, p := range parts {
		manifest[i] = sloSegment{
			Path: "/" + segContainer(bucket) + "/" + uploadID + fmt.Sprintf("%08d", p.Number),
			ETag: unquote(p.ETag), SizeBytes: p.Size,
		}
	}
	body, err := json.Marshal(manifest)
	if err != nil {
		return PutResult{}, fmt.Errorf("objclient: complete-upload %s: %w", key, err)
	}
	resp, err = c.simple(ctx, swiftReq{op: "complete-upload", method: http.MethodPut, container: bucket, object: key,
		query: "multipart-manifest=put", hdr: hdr, body: bytes.NewReader(body), size: int64(len(body))})
	if err != nil {
		return PutResult{}, err
	}
	res := PutResult{ETag: unquote(resp.Header.Get("Etag"))}
	// The segments now belong to the manifest; only the marker goes, so that an AbortUpload
	// of a completed upload finds no upload rather than deleting the object's segments.
	if err := c.Delete(ctx, segContainer(bucket), uploadID); err != nil {
		return res, fmt.Errorf("objclient: complete-upload %s: the object is complete but its upload marker remains: %w", key, err)
	}
	return res, nil
}

// AbortUpload deletes the segments and then the marker, so that an abort that fails half way
// can be repeated.
func (c *swiftClient) AbortUpload(ctx context.Context, bucket, key, uploadID string) error {
	if err := checkNames("abort-upload", bucket, key, true); err != nil {
		return err
	}
	if err := checkUploadID(key, uploadID); err != nil {
		return err
	}
	_, names, marker, err := c.listUpload(ctx, bucket, uploadID)
	if IsNotFound(err) || (err == nil && !marker) {
		return noSuchUpload("abort-upload", uploadID)
	}
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == uploadID {
			continue
		}
		if err := c.Delete(ctx, segContainer(bucket), n); err != nil {
			return fmt.Errorf("objclient: abort-upload %s: %w", key, err)
		}
	}
	if err := c.Delete(ctx, segContainer(bucket), uploadID); err != nil {
		return fmt.Errorf("objclient: abort-upload %s: %w", key, err)
	}
	return nil
}
