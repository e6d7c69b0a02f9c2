package backend

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// ClientConfig configures the HTTP clients of a proxy (or of a node that updates others).
type ClientConfig struct {
	// Secret is the cluster secret every request is signed with.
	Secret []byte
	// ConnTimeout bounds connecting to a node (default 2s).
	ConnTimeout time.Duration
	// NodeTimeout bounds waiting for a node: for its answer's headers, and between two reads
	// of a body it sends or receives (default 10s, as Swift's node_timeout).
	NodeTimeout time.Duration
	// MaxIdlePerNode is the number of idle connections kept to each node (default 64).
	MaxIdlePerNode int
}

// Validate checks the configuration and fills in defaults.
func (c *ClientConfig) Validate() error {
	if len(c.Secret) == 0 {
		return errors.New("backend: no cluster secret")
	}
	if c.ConnTimeout == 0 {
		c.ConnTimeout = 2 * time.Second
	}
	if c.NodeTimeout == 0 {
		c.NodeTimeout = 10 * time.Second
	}
	if c.MaxIdlePerNode == 0 {
		c.MaxIdlePerNode = 64
	}
	if c.ConnTimeout < 0 || c.NodeTimeout < 0 || c.MaxIdlePerNode < 0 {
		return errors.New("backend: negative timeout or pool size")
	}
	return nil
}

// Dialer hands out the Client of each node; all share one connection pool.
type Dialer struct {
	cfg     ClientConfig
	http    *http.Client
	mu      sync.Mutex
	clients map[string]*Client
}

var _ nodeclient.Dialer = (*Dialer)(nil)

// NewDialer returns a Dialer.
func NewDialer(cfg ClientConfig) (*Dialer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: cfg.ConnTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   cfg.MaxIdlePerNode,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: cfg.NodeTimeout,
		DisableCompression:    true,
		WriteBufferSize:       256 << 10,
		ReadBufferSize:        256 << 10,
	}
	return &Dialer{cfg: cfg, http: &http.Client{Transport: tr}, clients: map[string]*Client{}}, nil
}

// Dial returns the client of a node address (host:port).
func (d *Dialer) Dial(node string) (nodeclient.Client, error) {
	if _, _, err := net.SplitHostPort(node); err != nil {
		return nil, fmt.Errorf("backend: node address %q: %w", node, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.clients[node]
	if !ok {
		c = &Client{d: d, base: "http://" + node}
		d.clients[node] = c
	}
	return c, nil
}

// Close drops the idle connections.
func (d *Dialer) Close() { d.http.CloseIdleConnections() }

// Client is one storage node, reached over HTTP.
type Client struct {
	d    *Dialer
	base string
	// cairn says whether the node's last answer was a Cairn node's (hdrNode) rather than a
	// Swift server's, for the few requests whose form differs (see PostObject).
	cairn atomic.Bool
}

var _ nodeclient.Client = (*Client)(nil)

// call is one request to the node.
type call struct {
	method string
	path   Path
	raw    string // a path already escaped, used instead of path when set
	query  string
	header http.Header
	body   io.Reader // nil for none
	length int64     // -1: unknown (chunked)
}

// do sends a request and returns the answer, whose body the caller closes. The request's context
// is cancelled when the body is closed, or when the node sends nothing for NodeTimeout.
func (c *Client) do(ctx context.Context, k call) (*http.Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	url := c.base + k.path.String()
	if k.raw != "" {
		url = c.base + k.raw
	}
	if k.query != "" {
		url += "?" + k.query
	}
	var body io.Reader
	idle := newIdleTimer(c.d.cfg.NodeTimeout, cancel)
	if k.body != nil {
		body = &idleReader{r: k.body, t: idle}
	}
	req, err := http.NewRequestWithContext(ctx, k.method, url, body)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("backend: %s %s: %w", k.method, url, err)
	}
	if k.header != nil {
		req.Header = k.header
	}
	if k.path.Object != "" {
		setObjectPolicy(ctx, req.Header)
	}
	if k.body != nil {
		req.ContentLength = k.length
		if k.length == 0 {
			req.Body = http.NoBody
		}
	}
	// Cairn keeps its own state under names starting with NUL (meta.ReservedPrefix), which
	// Swift's servers serve only to a request that says it may see them.
	req.Header.Set("X-Backend-Allow-Reserved-Names", "true")
	if req.Header.Get(hdrTimestamp) == "" {
		req.Header.Set(hdrTimestamp, FormatTimestamp(meta.Now()))
	}
	sign(req, c.d.cfg.Secret, time.Now())
	resp, err := c.d.http.Do(req)
	if err != nil {
		idle.stop()
		cancel()
		if ctxErr := context.Cause(ctx); ctxErr != nil && errors.Is(err, context.Canceled) {
			err = ctxErr
		}
		return nil, fmt.Errorf("backend: %s %s: %v: %w", k.method, k.path, err, meta.ErrUnavailable)
	}
	c.cairn.Store(resp.Header.Get(hdrNode) != "")
	resp.Body = &responseBody{ReadCloser: resp.Body, t: idle, cancel: cancel}
	idle.reset()
	return resp, nil
}

// failed turns an answer that is no success into an error, consuming its body.
func failed(resp *http.Response, what string) error {
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	if resp.StatusCode == http.StatusConflict && resp.Header.Get(hdrBackendTS) != "" {
		// A version as new or newer is in place, written at this time (Cairn's nodes and
		// Swift's object servers say so), or a later write is decided (Cairn's nodes).
		if at, err := ParseTimestamp(resp.Header.Get(hdrBackendTS)); err == nil && at > 0 {
			if resp.Header.Get(hdrError) == "decided-above" {
				return fmt.Errorf("%s: %s: %w", what, strings.TrimSpace(string(text)), &meta.DecidedError{At: at})
			}
			return fmt.Errorf("%s: %w", what, &meta.NewerError{At: at})
		}
	}
	return errorFromResponse(what, resp.StatusCode, resp.Header.Get(hdrError), strings.TrimSpace(string(text)))
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// readResult reads the JSON answer of a Cairn node to a write; Swift's servers send none.
func readResult(resp *http.Response) writeResult {
	defer drain(resp)
	var res writeResult
	if resp.Header.Get(hdrNode) == "" {
		return writeResult{swift: true}
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), resultType) {
		return writeResult{}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxManifestBytes*2)).Decode(&res); err != nil {
		return writeResult{}
	}
	return res
}

func objectPath(device string, part uint32, name meta.ObjectName) Path {
	return wirePath(device, part, name.Account, name.Container, name.Object)
}

// writeContainerUpdates names the listings a write updates as Swift's proxy does: one
// partition (they are replicas of one container), hosts and devices comma-separated in turn.
func writeContainerUpdates(h http.Header, us []nodeclient.ContainerUpdate) {
	if len(us) == 0 {
		return
	}
	hosts, devs := make([]string, len(us)), make([]string, len(us))
	for i, u := range us {
		hosts[i], devs[i] = u.Node, u.Device
	}
	h.Set(hdrContainerHost, strings.Join(hosts, ","))
	h.Set(hdrContainerDevice, strings.Join(devs, ","))
	h.Set(hdrContainerPart, strconv.FormatUint(uint64(us[0].Part), 10))
}

// PutObject streams an object to the node. Its metadata goes in headers; the body follows in
// Swift's metadata-footer form (a MIME document of the bytes, then one of the metadata known
// only at their end: the ETag, and what BeforeCommit adds), so that a check failing at the end
// aborts the request before the node commits anything.
func (c *Client) PutObject(ctx context.Context, device string, part uint32, name meta.ObjectName, obj meta.Object, body io.Reader, opts nodeclient.PutOptions) (nodeclient.PutResult, error) {
	h := http.Header{}
	writeObjectMeta(h, &obj)
	writeCondition(h, opts.If)
	writeContainerUpdates(h, opts.Containers)
	writeDecision(h, opts.DecidedGen, opts.Undecided)
	size := obj.Size
	if obj.Manifest != nil {
		enc, err := encodeManifest(obj.Manifest)
		if err != nil {
			return nodeclient.PutResult{}, err
		}
		h.Set(hdrManifest, manifestSummary(&obj))
		body, size = bytes.NewReader(enc), int64(len(enc))
	}
	if body == nil {
		body = http.NoBody
	}
	fb := &footerBody{obj: obj, size: size, data: body, before: opts.BeforeCommit, hash: md5.New()}
	fb.boundary = randomBoundary()
	h.Set(hdrFooter, "yes")
	h.Set(hdrMimeBoundary, fb.boundary)
	if size >= 0 {
		h.Set(hdrObjLength, strconv.FormatInt(size, 10))
	}
	resp, err := c.do(ctx, call{method: http.MethodPut, path: objectPath(device, part, name), header: h, body: fb, length: -1})
	if fb.err != nil {
		if resp != nil {
			drain(resp)
		}
		return nodeclient.PutResult{}, fb.err // the body's own failure explains the request's
	}
	if err != nil {
		return nodeclient.PutResult{}, err
	}
	if resp.StatusCode != http.StatusCreated {
		return nodeclient.PutResult{}, failed(resp, "put "+name.Object)
	}
	res := readResult(resp)
	reportListed(opts.Containers, res, opts.Listed)
	out := nodeclient.PutResult{Object: fb.stored, Previous: res.Previous}
	if res.Object != nil {
		out.Object = *res.Object
	}
	return out, nil
}

// footerBody is a PUT's body in Swift's metadata-footer form.
type footerBody struct {
	obj      meta.Object
	size     int64
	data     io.Reader
	before   func(*meta.Object) error
	hash     hash.Hash
	boundary string

	stage  int // 0: preamble, 1: data, 2: footer, 3: done
	buf    []byte
	n      int64
	stored meta.Object // what the node stores, known at the end of the data
	err    error       // a failure of the body itself (short, long, refused by BeforeCommit)
}

func (f *footerBody) Read(p []byte) (int, error) {
	for {
		if len(f.buf) > 0 {
			n := copy(p, f.buf)
			f.buf = f.buf[n:]
			return n, nil
		}
		switch f.stage {
		case 0:
			f.buf = []byte("--" + f.boundary + "\r\nX-Document: object body\r\n\r\n")
			f.stage = 1
		case 1:
			n, err := f.data.Read(p)
			if n > 0 {
				f.hash.Write(p[:n])
				f.n += int64(n)
				if f.size >= 0 && f.n > f.size {
					return 0, f.fail(fmt.Errorf("backend: %w", meta.ErrBodyTooLong))
				}
				return n, nil
			}
			if err == io.EOF {
				if err := f.finish(); err != nil {
					return 0, f.fail(err)
				}
				f.stage = 2
				continue
			}
			if err != nil {
				return 0, f.fail(err)
			}
		case 2:
			f.stage = 3
		case 3:
			return 0, io.EOF
		}
	}
}

func (f *footerBody) fail(err error) error {
	f.err = err
	return err
}

// finish runs once the data has been sent: it checks the length, lets BeforeCommit see the
// object as it will be stored, and prepares the footer document.
func (f *footerBody) finish() error {
	if f.size >= 0 && f.n < f.size {
		return fmt.Errorf("backend: %d of %d bytes: %w", f.n, f.size, meta.ErrIncompleteBody)
	}
	etag := hex.EncodeToString(f.hash.Sum(nil))
	f.stored = f.obj
	if f.obj.Manifest != nil {
		f.stored.Size, f.stored.ETag = 0, emptyETag
	} else {
		f.stored.Size, f.stored.ETag = f.n, etag
	}
	if f.before != nil {
		f.stored.SysMeta = cloneMap(f.stored.SysMeta)
		if err := f.before(&f.stored); err != nil {
			return err
		}
	}
	footer := map[string]string{"Etag": etag}
	fh := http.Header{}
	putMeta(fh, objSysPrefix+"M-", f.stored.SysMeta)
	writeListingOverride(fh, &f.stored, f.n, etag)
	for k := range fh {
		footer[k] = fh.Get(k)
	}
	doc, err := json.Marshal(footer)
	if err != nil {
		return fmt.Errorf("backend: footer: %w", err)
	}
	sum := md5.Sum(doc)
	var b bytes.Buffer
	fmt.Fprintf(&b, "\r\n--%s\r\nX-Document: object metadata\r\nContent-MD5: %s\r\n\r\n", f.boundary, hex.EncodeToString(sum[:]))
	b.Write(doc)
	fmt.Fprintf(&b, "\r\n--%s--", f.boundary)
	f.buf = b.Bytes()
	return nil
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func randomBoundary() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// GetObject opens an object or a range of it. A manifest comes back whole, its segment list
// decoded, whatever the range.
func (c *Client) GetObject(ctx context.Context, device string, part uint32, name meta.ObjectName, rng *meta.Range) (*nodeclient.ObjectReader, error) {
	h := http.Header{}
	if rng != nil {
		h.Set("Range", rangeHeader(rng))
	}
	if nodeclient.LeaseRead(ctx) {
		h.Set(hdrLease, "ask")
	}
	resp, err := c.do(ctx, call{method: http.MethodGet, path: objectPath(device, part, name), header: h})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && rng != nil && resp.Header.Get(hdrManifest) != "" {
		// A server that ranged the stored segment list (Swift's) past its end: ask for all of
		// it, as for a 206 below.
		drain(resp)
		return c.GetObject(ctx, device, part, name, nil)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		return nil, failed(resp, "get "+name.Object)
	}
	obj, err := readObjectMeta(resp.Header)
	if err != nil {
		drain(resp)
		return nil, err
	}
	if resp.Header.Get(hdrManifest) != "" {
		if resp.StatusCode == http.StatusPartialContent {
			// A server that ranged the stored segment list (Swift's): ask for all of it.
			drain(resp)
			return c.GetObject(ctx, device, part, name, nil)
		}
		defer drain(resp)
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxManifestBytes+1))
		if err != nil {
			return nil, fmt.Errorf("backend: get %q: %v: %w", name.Object, err, meta.ErrUnavailable)
		}
		if obj.Manifest, err = decodeManifest(b); err != nil {
			return nil, err
		}
		obj.Size, obj.ETag = 0, emptyETag
		return &nodeclient.ObjectReader{Object: obj, Alone: resp.Header.Get(hdrLease) == "alone", ReadCloser: io.NopCloser(bytes.NewReader(nil))}, nil
	}
	obj.ETag = strings.Trim(resp.Header.Get("ETag"), `"`)
	r := &nodeclient.ObjectReader{Object: obj, Alone: resp.Header.Get(hdrLease) == "alone", ReadCloser: resp.Body}
	if resp.StatusCode == http.StatusPartialContent {
		start, end, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok {
			drain(resp)
			return nil, fmt.Errorf("backend: get %q: bad Content-Range %q: %w", name.Object, resp.Header.Get("Content-Range"), meta.ErrUnavailable)
		}
		r.Object.Size, r.Offset, r.Length = total, start, end-start+1
	} else {
		r.Object.Size, r.Length = resp.ContentLength, resp.ContentLength
	}
	return r, nil
}

func rangeHeader(r *meta.Range) string {
	switch {
	case r.Suffix > 0 || r.Start < 0: // a suffix; "bytes=-0" selects nothing (416)
		return fmt.Sprintf("bytes=-%d", r.Suffix)
	case r.Start < 0:
		return "bytes=-0" // selects nothing (meta.Range.Resolve): 416 from every server
	case r.End < 0:
		return fmt.Sprintf("bytes=%d-", r.Start)
	}
	return fmt.Sprintf("bytes=%d-%d", r.Start, r.End)
}

func parseContentRange(v string) (start, end, total int64, ok bool) {
	v, ok = strings.CutPrefix(v, "bytes ")
	if !ok {
		return 0, 0, 0, false
	}
	span, size, ok1 := strings.Cut(v, "/")
	a, b, ok2 := strings.Cut(span, "-")
	var err1, err2, err3 error
	start, err1 = strconv.ParseInt(a, 10, 64)
	end, err2 = strconv.ParseInt(b, 10, 64)
	total, err3 = strconv.ParseInt(size, 10, 64)
	return start, end, total, ok1 && ok2 && err1 == nil && err2 == nil && err3 == nil && start <= end
}

// HeadObject returns an object's metadata. A manifest's segment list comes with it unless the
// HEAD is brief (then Summary describes it).
func (c *Client) HeadObject(ctx context.Context, device string, part uint32, name meta.ObjectName, opts nodeclient.HeadOptions) (meta.Object, error) {
	h := http.Header{}
	if opts.Brief {
		h.Set(hdrBrief, "yes")
	}
	resp, err := c.do(ctx, call{method: http.MethodHead, path: objectPath(device, part, name), header: h})
	if err != nil {
		return meta.Object{}, err
	}
	drain(resp)
	if resp.StatusCode == http.StatusNotFound && resp.Header.Get(hdrBackendTS) != "" {
		// A tombstone: Swift's servers and Cairn's send when the name was deleted.
		if at, err := ParseTimestamp(resp.Header.Get(hdrBackendTS)); err == nil && at > 0 {
			return meta.Object{}, fmt.Errorf("head %s: %w", name.Object, &meta.DeletedError{At: at})
		}
	}
	if resp.StatusCode != http.StatusOK {
		return meta.Object{}, errorFromResponse("head "+name.Object, resp.StatusCode, resp.Header.Get(hdrError), "")
	}
	obj, err := readObjectMeta(resp.Header)
	if err != nil {
		return meta.Object{}, err
	}
	summary, isManifest, err := parseManifestSummary(resp.Header.Get(hdrManifest))
	if err != nil {
		return meta.Object{}, err
	}
	if isManifest && !opts.Brief {
		r, err := c.GetObject(ctx, device, part, name, nil)
		if err != nil {
			return meta.Object{}, err
		}
		r.Close()
		return r.Object, nil
	}
	if isManifest {
		obj.Summary, obj.Size, obj.ETag = summary, 0, emptyETag
		return obj, nil
	}
	obj.Size = resp.ContentLength
	obj.ETag = strings.Trim(resp.Header.Get("ETag"), `"`)
	return obj, nil
}

// DeleteObject writes a tombstone at ts and returns the version it removed (empty from a
// server that does not say).
func (c *Client) DeleteObject(ctx context.Context, device string, part uint32, name meta.ObjectName, ts meta.Timestamp, opts nodeclient.DeleteOptions) (meta.Object, error) {
	h := http.Header{}
	h.Set(hdrTimestamp, FormatTimestamp(ts))
	writeCondition(h, opts.If)
	writeContainerUpdates(h, opts.Containers)
	writeDecision(h, opts.DecidedGen, opts.Undecided)
	resp, err := c.do(ctx, call{method: http.MethodDelete, path: objectPath(device, part, name), header: h})
	if err != nil {
		return meta.Object{}, err
	}
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		return meta.Object{}, failed(resp, "delete "+name.Object)
	}
	res := readResult(resp)
	reportListed(opts.Containers, res, opts.Listed)
	if res.Previous != nil {
		return *res.Previous, nil
	}
	return meta.Object{}, nil
}

// UpdateListing records an object version in a container replica's listing (Swift's container
// server object PUT and DELETE).
func (c *Client) UpdateListing(ctx context.Context, device string, part uint32, account, container string, e meta.ListEntry, deleted bool) error {
	h := http.Header{}
	h.Set(hdrTimestamp, FormatTimestamp(e.Timestamp))
	h.Set(hdrRow, "object")
	method := http.MethodDelete
	if !deleted {
		method = http.MethodPut
		h.Set("X-Size", strconv.FormatInt(e.Size, 10))
		h.Set("X-Content-Type", e.ContentType)
		h.Set("X-Etag", e.ETag)
		if e.Modified != 0 {
			h.Set(hdrModified, FormatTimestamp(e.Modified))
		}
	}
	p := wirePath(device, part, account, container, e.Name)
	resp, err := c.do(ctx, call{method: method, path: p, header: h})
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return failed(resp, "update listing of "+container)
	}
	drain(resp)
	return nil
}

func writeAccountUpdate(h http.Header, u *nodeclient.AccountUpdate) {
	if u == nil {
		return
	}
	h.Set(hdrAccountHost, u.Node)
	h.Set(hdrAccountDevice, u.Device)
	h.Set(hdrAccountPart, strconv.FormatUint(uint64(u.Part), 10))
}

// PutContainer creates a container (meta.ErrExists if it exists).
func (c *Client) PutContainer(ctx context.Context, device string, part uint32, account string, ct meta.Container, opts nodeclient.ContainerOptions) error {
	h := http.Header{}
	h.Set(hdrTimestamp, FormatTimestamp(ct.Created))
	putMeta(h, containerSysPrefix, withoutPolicy(ct.Meta))
	writeContainerPolicy(h, ct, opts)
	writeAccountUpdate(h, opts.Account)
	resp, err := c.do(ctx, call{method: http.MethodPut, path: wirePath(device, part, account, ct.Name, ""), header: h})
	if err != nil {
		return err
	}
	switch resp.StatusCode {
	case http.StatusCreated:
		drain(resp)
		return nil
	case http.StatusAccepted:
		drain(resp)
		return fmt.Errorf("container %q: %w", ct.Name, meta.ErrExists)
	}
	return failed(resp, "put container "+ct.Name)
}

// HeadContainer returns a container with its usage.
func (c *Client) HeadContainer(ctx context.Context, device string, part uint32, account, container string) (meta.Container, error) {
	resp, err := c.do(ctx, call{method: http.MethodHead, path: wirePath(device, part, account, container, "")})
	if err != nil {
		return meta.Container{}, err
	}
	drain(resp)
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		return meta.Container{}, errorFromResponse("head container "+container, resp.StatusCode, resp.Header.Get(hdrError), "")
	}
	return readContainer(resp.Header, container)
}

// PostContainer merges metadata into a container; an empty value removes a key.
func (c *Client) PostContainer(ctx context.Context, device string, part uint32, account, container string, m map[string]string) (meta.Container, error) {
	h := http.Header{}
	putMeta(h, containerSysPrefix, withoutPolicy(m)) // a container's policy never changes
	p := wirePath(device, part, account, container, "")
	resp, err := c.do(ctx, call{method: http.MethodPost, path: p, header: h})
	if err != nil {
		return meta.Container{}, err
	}
	if resp.StatusCode != http.StatusNoContent {
		return meta.Container{}, failed(resp, "post container "+container)
	}
	drain(resp)
	if resp.Header.Get("X-Put-Timestamp") != "" {
		return readContainer(resp.Header, container)
	}
	return c.HeadContainer(ctx, device, part, account, container)
}

// DeleteContainer deletes an empty container at ts.
func (c *Client) DeleteContainer(ctx context.Context, device string, part uint32, account, container string, ts meta.Timestamp, opts nodeclient.ContainerOptions) error {
	h := http.Header{}
	h.Set(hdrTimestamp, FormatTimestamp(ts))
	writeAccountUpdate(h, opts.Account)
	resp, err := c.do(ctx, call{method: http.MethodDelete, path: wirePath(device, part, account, container, ""), header: h})
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusNoContent {
		drain(resp)
		return nil
	}
	if resp.StatusCode == http.StatusConflict && resp.Header.Get(hdrError) == "" {
		drain(resp)
		return fmt.Errorf("container %q: %w", container, meta.ErrNotEmpty) // Swift's answer
	}
	return failed(resp, "delete container "+container)
}

// ListObjects returns a page of a container's listing.
func (c *Client) ListObjects(ctx context.Context, device string, part uint32, account, container string, opts meta.ListOptions) (meta.ObjectListing, error) {
	b, truncated, err := c.list(ctx, wirePath(device, part, account, container, ""), wireListOptions(container, opts))
	if err != nil || len(b) == 0 {
		return meta.ObjectListing{}, err
	}
	l, err := decodeObjectListing(b, opts.Limit, truncated)
	if err != nil {
		return l, err
	}
	return l, nodeListing(container, &l)
}

// ListContainers returns a page of an account's containers.
func (c *Client) ListContainers(ctx context.Context, device string, part uint32, account string, opts meta.ListOptions) (meta.ContainerListing, error) {
	b, truncated, err := c.list(ctx, wirePath(device, part, account, "", ""), opts)
	if err != nil || len(b) == 0 {
		return meta.ContainerListing{}, err
	}
	return decodeContainerListing(b, opts.Limit, truncated)
}

// list fetches a listing page (of a container, or of an account): its JSON and what the node
// said of truncation.
func (c *Client) list(ctx context.Context, p Path, opts meta.ListOptions) ([]byte, string, error) {
	resp, err := c.do(ctx, call{method: http.MethodGet, path: p, query: listQuery(opts)})
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		return nil, "", failed(resp, "list "+p.String())
	}
	defer drain(resp)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", fmt.Errorf("backend: list %s: %v: %w", p, err, meta.ErrUnavailable)
	}
	return b, resp.Header.Get(hdrTruncated), nil
}

// UpdateAccount sends a container's row to an account replica in the form Swift's container
// server and container updater send it (so that a Swift account server takes it too), marked
// for Cairn's handler, which serves container creates on the same port.
func (c *Client) UpdateAccount(ctx context.Context, device string, part uint32, account string, row meta.ContainerRow) error {
	h := http.Header{}
	h.Set(hdrRow, "container")
	h.Set(hdrPutTimestamp, FormatTimestamp(row.PutTimestamp))
	h.Set(hdrDeleteTimestamp, FormatTimestamp(row.DeleteTimestamp))
	h.Set(hdrObjectCount, strconv.FormatInt(row.ObjectCount, 10))
	h.Set(hdrBytesUsed, strconv.FormatInt(row.BytesUsed, 10))
	h.Set(hdrPolicyIndex, "0")
	// A Swift account server refuses rows for an account it holds as deleted unless told to
	// take them, as Swift's own container servers tell it.
	h.Set(hdrOverrideDeleted, "yes")
	p := wirePath(device, part, account, row.Name, "")
	resp, err := c.do(ctx, call{method: http.MethodPut, path: p, header: h})
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return failed(resp, "update account "+account+" with "+row.Name)
	}
	drain(resp)
	return nil
}

// PutAccount creates an account replica (Swift's account server PUT): 201 when it made it, 202
// when it was there.
func (c *Client) PutAccount(ctx context.Context, device string, part uint32, account string, ts meta.Timestamp) error {
	h := http.Header{}
	h.Set(hdrTimestamp, FormatTimestamp(ts))
	resp, err := c.do(ctx, call{method: http.MethodPut, path: wirePath(device, part, account, "", ""), header: h})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusAccepted {
		return failed(resp, "put account "+account)
	}
	drain(resp)
	return nil
}

// HeadAccount returns an account's usage totals.
func (c *Client) HeadAccount(ctx context.Context, device string, part uint32, account string) (meta.Account, error) {
	resp, err := c.do(ctx, call{method: http.MethodHead, path: wirePath(device, part, account, "", "")})
	if err != nil {
		return meta.Account{}, err
	}
	drain(resp)
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		return meta.Account{}, errorFromResponse("head account "+account, resp.StatusCode, resp.Header.Get(hdrError), "")
	}
	return readAccount(resp.Header, account), nil
}
