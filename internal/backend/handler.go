package backend

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// HandlerConfig configures a Handler.
type HandlerConfig struct {
	// Node is the storage node served.
	Node nodeclient.Client
	// Secret is the cluster secret: requests not signed with it are refused.
	Secret []byte
	Logger *slog.Logger
}

// Validate checks the configuration and fills in defaults.
func (c *HandlerConfig) Validate() error {
	if c.Node == nil {
		return errors.New("backend: handler without a node")
	}
	if len(c.Secret) == 0 {
		return errors.New("backend: no cluster secret")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Handler serves a storage node over the node protocol.
type Handler struct {
	node   nodeclient.Client
	secret []byte
	log    *slog.Logger
}

// NewHandler returns a Handler.
func NewHandler(cfg HandlerConfig) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handler{node: cfg.Node, secret: cfg.Secret, log: cfg.Logger}, nil
}

// ServeHTTP answers one request of the node protocol.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(hdrNode, "1")
	if err := verify(r, h.secret, time.Now()); err != nil {
		h.log.Warn("refused unsigned node request", "method", r.Method, "remote", r.RemoteAddr, "err", err)
		writeError(w, err)
		return
	}
	if r.Method == methodReplicate || r.Method == methodRegister || r.Method == methodLease || r.URL.Path == reconPath {
		serve := h.replicate
		switch {
		case r.URL.Path == reconPath:
			serve = h.recon
		case r.Method == methodRegister:
			serve = h.register
		case r.Method == methodLease:
			serve = h.lease
		}
		if err := serve(w, r); err != nil {
			writeError(w, err)
		}
		return
	}
	p, err := ParsePath(r.URL.EscapedPath())
	if err == nil {
		p, err = p.fromWire()
	}
	if err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	switch {
	case p.Object != "" && r.Header.Get(hdrRow) != "":
		err = h.listingRow(ctx, w, r, p)
	case p.Object != "":
		err = h.object(withRings(ctx, r.Header), w, r, p)
	case p.Container != "" && r.Method == http.MethodPut && isAccountRow(r.Header):
		err = h.accountRow(ctx, w, r, p)
	case p.Container != "":
		err = h.container(ctx, w, r, p)
	default:
		err = h.account(ctx, w, r, p)
	}
	if err != nil {
		writeError(w, err)
	}
}

// writeError answers with an error's status and name.
func writeError(w http.ResponseWriter, err error) {
	status, name := errorStatus(err)
	if name != "" {
		w.Header().Set(hdrError, name)
	}
	if d := (*meta.DeletedError)(nil); errors.As(err, &d) {
		w.Header().Set(hdrBackendTS, FormatTimestamp(d.At))
	}
	if n := (*meta.NewerError)(nil); errors.As(err, &n) {
		w.Header().Set(hdrBackendTS, FormatTimestamp(n.At))
	}
	if d := (*meta.DecidedError)(nil); errors.As(err, &d) {
		w.Header().Set(hdrBackendTS, FormatTimestamp(d.At))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, err.Error())
}

// readDecision reads how a write relates to its name's register: the generation of the
// decision that made it (0: none), or whether it is a client's write the register did not
// decide (nodeclient.PutOptions.Undecided); not both.
func readDecision(h http.Header) (gen uint64, undecided bool, err error) {
	switch v := h.Get(hdrUndecided); v {
	case "":
	case "1":
		undecided = true
	default:
		return 0, false, fmt.Errorf("%w: %s %q", ErrBadRequest, hdrUndecided, v)
	}
	v := h.Get(hdrDecidedGen)
	if v == "" {
		return 0, undecided, nil
	}
	gen, err = strconv.ParseUint(v, 10, 64)
	if err != nil || gen == 0 || undecided {
		return 0, false, fmt.Errorf("%w: %s %q", ErrBadRequest, hdrDecidedGen, v)
	}
	return gen, false, nil
}

// writeDecision is what readDecision reads.
func writeDecision(h http.Header, gen uint64, undecided bool) {
	if gen > 0 {
		h.Set(hdrDecidedGen, strconv.FormatUint(gen, 10))
	}
	if undecided {
		h.Set(hdrUndecided, "1")
	}
}

func methodNotAllowed(method string) error {
	return fmt.Errorf("%w: method %s", ErrBadRequest, method)
}

func requestTimestamp(r *http.Request) (meta.Timestamp, error) {
	v := r.Header.Get(hdrTimestamp)
	if v == "" {
		return 0, fmt.Errorf("%w: no X-Timestamp", ErrBadRequest)
	}
	return ParseTimestamp(v)
}

// maxContainerUpdates bounds the listings one write updates: a policy of one replica under a
// container ring of many is the most a proxy asks for.
const maxContainerUpdates = 16

// readContainerUpdates reads the listings a write updates (writeContainerUpdates): Swift's
// proxy names several, comma-separated, when the policy keeps fewer object replicas than the
// container ring keeps listings.
func readContainerUpdates(r *http.Request) ([]nodeclient.ContainerUpdate, error) {
	host := r.Header.Get(hdrContainerHost)
	if host == "" {
		return nil, nil
	}
	part, err := strconv.ParseUint(r.Header.Get(hdrContainerPart), 10, 32)
	hosts := strings.Split(host, ",")
	devs := strings.Split(r.Header.Get(hdrContainerDevice), ",")
	if err != nil || len(hosts) != len(devs) || len(hosts) > maxContainerUpdates {
		return nil, fmt.Errorf("%w: container update headers", ErrBadRequest)
	}
	out := make([]nodeclient.ContainerUpdate, len(hosts))
	for i := range hosts {
		h, d := strings.TrimSpace(hosts[i]), strings.TrimSpace(devs[i])
		if h == "" || d == "" {
			return nil, fmt.Errorf("%w: container update headers", ErrBadRequest)
		}
		out[i] = nodeclient.ContainerUpdate{Node: h, Device: d, Part: uint32(part)}
	}
	return out, nil
}

func readAccountUpdate(r *http.Request) (*nodeclient.AccountUpdate, error) {
	host := r.Header.Get(hdrAccountHost)
	if host == "" {
		return nil, nil
	}
	part, err := strconv.ParseUint(r.Header.Get(hdrAccountPart), 10, 32)
	dev := r.Header.Get(hdrAccountDevice)
	// Swift's proxy lists several account replicas, comma-separated, when there are more of
	// them than container replicas; Cairn's proxy names one per container replica.
	if err != nil || dev == "" || strings.Contains(host, ",") || strings.Contains(dev, ",") {
		return nil, fmt.Errorf("%w: account update headers", ErrBadRequest)
	}
	return &nodeclient.AccountUpdate{Node: host, Device: dev, Part: uint32(part)}, nil
}

// isAccountRow tells an account row (a container server's report to its account server) from
// a container create, both PUTs of a container path: Cairn's nodes mark theirs, and Swift's
// container servers send their counts, which a create never carries.
func isAccountRow(h http.Header) bool {
	switch h.Get(hdrRow) {
	case "container":
		return true
	case "":
		return h.Get(hdrPutTimestamp) != "" && h.Get(hdrObjectCount) != "" && h.Get(hdrBytesUsed) != ""
	}
	return false
}

// accountRow serves an account row (Swift's account server container PUT): 201 when the row
// is live after it, 204 when it stands for a deleted container.
func (h *Handler) accountRow(ctx context.Context, w http.ResponseWriter, r *http.Request, p Path) error {
	row := meta.ContainerRow{Name: p.Container}
	var err error
	if row.PutTimestamp, err = ParseTimestamp(r.Header.Get(hdrPutTimestamp)); err != nil {
		return err
	}
	if v := r.Header.Get(hdrDeleteTimestamp); v != "" {
		if row.DeleteTimestamp, err = ParseTimestamp(v); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		hdr string
		to  *int64
	}{{hdrObjectCount, &row.ObjectCount}, {hdrBytesUsed, &row.BytesUsed}} {
		if *f.to, err = strconv.ParseInt(r.Header.Get(f.hdr), 10, 64); err != nil {
			return fmt.Errorf("%w: %s %q", ErrBadRequest, f.hdr, r.Header.Get(f.hdr))
		}
	}
	if err := h.node.UpdateAccount(ctx, p.Device, p.Part, p.Account, row); err != nil {
		return err
	}
	if row.Deleted() {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusCreated)
	}
	return nil
}

func writeJSONResult(w http.ResponseWriter, status int, res writeResult) {
	b, err := json.Marshal(res)
	if err != nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", resultType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

func (h *Handler) object(ctx context.Context, w http.ResponseWriter, r *http.Request, p Path) error {
	name := meta.ObjectName{Account: p.Account, Container: p.Container, Object: p.Object}
	switch r.Method {
	case http.MethodPut:
		return h.putObject(ctx, w, r, p, name)
	case http.MethodGet, http.MethodHead:
		return h.getObject(ctx, w, r, p, name)
	case http.MethodDelete:
		ts, err := requestTimestamp(r)
		if err != nil {
			return err
		}
		cond, err := readCondition(r.Header)
		if err != nil {
			return err
		}
		upd, err := readContainerUpdates(r)
		if err != nil {
			return err
		}
		gen, undecided, err := readDecision(r.Header)
		if err != nil {
			return err
		}
		listed := new(nodeclient.Listed)
		prev, err := h.node.DeleteObject(ctx, p.Device, p.Part, name, ts, nodeclient.DeleteOptions{If: cond, Containers: upd, Listed: listed, DecidedGen: gen, Undecided: undecided})
		if err != nil {
			return err
		}
		// 200, not Swift's 204: a 204 carries no body, and this one says what was removed.
		writeJSONResult(w, http.StatusOK, writeResult{Previous: &prev, Listed: listedOf(upd, listed)})
		return nil
	case http.MethodPost:
		update, err := readObjectMeta(r.Header)
		if err != nil {
			return err
		}
		upd, err := readContainerUpdates(r)
		if err != nil {
			return err
		}
		cond, err := readCondition(r.Header)
		if err != nil {
			return err
		}
		gen, undecided, err := readDecision(r.Header)
		if err != nil {
			return err
		}
		listed := new(nodeclient.Listed)
		o, err := h.node.PostObject(ctx, p.Device, p.Part, name, update, nodeclient.PostOptions{Containers: upd, Listed: listed, If: cond, DecidedGen: gen, Undecided: undecided})
		if err != nil {
			return err
		}
		writeJSONResult(w, http.StatusAccepted, writeResult{Object: &o, Listed: listedOf(upd, listed)})
		return nil
	}
	return methodNotAllowed(r.Method)
}

func (h *Handler) putObject(ctx context.Context, w http.ResponseWriter, r *http.Request, p Path, name meta.ObjectName) error {
	obj, err := readObjectMeta(r.Header)
	if err != nil {
		return err
	}
	if r.Header.Get(hdrTimestamp) == "" {
		return fmt.Errorf("%w: no X-Timestamp", ErrBadRequest)
	}
	cond, err := readCondition(r.Header)
	if err != nil {
		return err
	}
	upd, err := readContainerUpdates(r)
	if err != nil {
		return err
	}
	opts := nodeclient.PutOptions{If: cond, Containers: upd, Listed: new(nodeclient.Listed)}
	if opts.DecidedGen, opts.Undecided, err = readDecision(r.Header); err != nil {
		return err
	}
	obj.Size = r.ContentLength
	var body io.Reader = r.Body
	var footer func(*meta.Object) error
	if truthy(r.Header.Get(hdrFooter)) {
		boundary := r.Header.Get(hdrMimeBoundary)
		if boundary == "" {
			return fmt.Errorf("%w: footer without a MIME boundary", ErrBadRequest)
		}
		obj.Size = -1
		if v := r.Header.Get(hdrObjLength); v != "" {
			if obj.Size, err = strconv.ParseInt(v, 10, 64); err != nil || obj.Size < 0 {
				return fmt.Errorf("%w: %s %q", ErrBadRequest, hdrObjLength, v)
			}
		}
		mr := multipart.NewReader(r.Body, boundary)
		part, err := mr.NextPart()
		if err != nil {
			return fmt.Errorf("%w: object body document: %v", meta.ErrIncompleteBody, err)
		}
		body = part
		footer = func(o *meta.Object) error { return applyFooter(mr, o) }
	}
	summary := r.Header.Get(hdrManifest)
	if summary != "" {
		b, err := io.ReadAll(io.LimitReader(body, maxManifestBytes+1))
		if err != nil {
			return fmt.Errorf("%w: manifest: %v", meta.ErrIncompleteBody, err)
		}
		if obj.Size >= 0 && int64(len(b)) != obj.Size {
			return fmt.Errorf("%w: manifest of %d bytes, declared %d", ErrBadRequest, len(b), obj.Size)
		}
		if obj.Manifest, err = decodeManifest(b); err != nil {
			return err
		}
		body, obj.Size = http.NoBody, 0
	}
	if footer != nil {
		if summary != "" {
			// The body document was read whole: the footer can be checked now, against the
			// MD5 of the segment list as sent.
			var o meta.Object
			if err := footer(&o); err != nil {
				return err
			}
			obj.SysMeta = mergeMaps(obj.SysMeta, o.SysMeta)
		} else {
			opts.BeforeCommit = footer
		}
	}
	res, err := h.node.PutObject(ctx, p.Device, p.Part, name, obj, body, opts)
	if err != nil {
		return err
	}
	writeJSONResult(w, http.StatusCreated, writeResult{Object: &res.Object, Previous: res.Previous, Listed: listedOf(upd, opts.Listed)})
	return nil
}

// applyFooter reads the metadata footer that follows the body document and applies it: the
// ETag the sender computed must be the stored object's, and system metadata it carries is
// added. For a manifest (o without an ETag) the ETag is not checked here.
func applyFooter(mr *multipart.Reader, o *meta.Object) error {
	part, err := mr.NextPart()
	if err != nil {
		return fmt.Errorf("%w: metadata footer: %v", meta.ErrIncompleteBody, err)
	}
	doc, err := io.ReadAll(io.LimitReader(part, 1<<20))
	if err != nil {
		return fmt.Errorf("%w: metadata footer: %v", meta.ErrIncompleteBody, err)
	}
	if want := part.Header.Get("Content-MD5"); want != "" {
		sum := md5.Sum(doc)
		if hex.EncodeToString(sum[:]) != want {
			return fmt.Errorf("%w: metadata footer MD5", ErrBadRequest)
		}
	}
	var fm map[string]string
	if err := json.Unmarshal(doc, &fm); err != nil {
		return fmt.Errorf("%w: metadata footer: %v", ErrBadRequest, err)
	}
	hdr := http.Header{}
	for k, v := range fm {
		hdr.Set(k, v)
	}
	if etag := hdr.Get("Etag"); etag != "" && o.ETag != "" && etag != o.ETag {
		return fmt.Errorf("%w: body MD5 %s, sender computed %s", meta.ErrCorrupt, o.ETag, etag)
	}
	if _, err := mr.NextPart(); err != io.EOF {
		return fmt.Errorf("%w: more than a body and a footer", ErrBadRequest)
	}
	o.SysMeta = mergeMaps(o.SysMeta, readMeta(hdr, objSysPrefix+"M-"))
	return nil
}

func mergeMaps(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]string{}
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "yes", "true", "1", "on", "y", "t":
		return true
	}
	return false
}

func (h *Handler) getObject(ctx context.Context, w http.ResponseWriter, r *http.Request, p Path, name meta.ObjectName) error {
	if r.Method == http.MethodHead {
		o, err := h.node.HeadObject(ctx, p.Device, p.Part, name, nodeclient.HeadOptions{Brief: truthy(r.Header.Get(hdrBrief))})
		if err != nil {
			return err
		}
		hdr := w.Header()
		writeObjectMeta(hdr, &o)
		hdr.Set(hdrBackendTS, FormatTimestamp(o.Timestamp))
		if o.IsManifest() {
			hdr.Set(hdrManifest, manifestSummary(&o))
		} else {
			hdr.Set("ETag", o.ETag)
			hdr.Set("Content-Length", strconv.FormatInt(o.Size, 10))
		}
		w.WriteHeader(http.StatusOK)
		return nil
	}
	var rng *meta.Range
	if v := r.Header.Get("Range"); v != "" {
		var err error
		if rng, err = parseRange(v); err != nil {
			return err
		}
	}
	if r.Header.Get(hdrLease) != "" {
		ctx = nodeclient.WithLeaseRead(ctx)
	}
	or, err := h.node.GetObject(ctx, p.Device, p.Part, name, rng)
	if err != nil {
		return err
	}
	defer or.Close()
	hdr := w.Header()
	if or.Alone {
		hdr.Set(hdrLease, "alone")
	}
	writeObjectMeta(hdr, &or.Object)
	hdr.Set(hdrBackendTS, FormatTimestamp(or.Object.Timestamp))
	if or.Object.Manifest != nil {
		b, err := encodeManifest(or.Object.Manifest)
		if err != nil {
			return err
		}
		hdr.Set(hdrManifest, manifestSummary(&or.Object))
		hdr.Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		w.Write(b)
		return nil
	}
	hdr.Set("ETag", or.Object.ETag)
	hdr.Set("Content-Length", strconv.FormatInt(or.Length, 10))
	status := http.StatusOK
	if rng != nil {
		hdr.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", or.Offset, or.Offset+or.Length-1, or.Object.Size))
		status = http.StatusPartialContent
	}
	w.WriteHeader(status)
	if n, err := io.Copy(w, or); err != nil || n != or.Length {
		// The status is sent: the only way left to say the body is bad is to cut it short.
		h.log.Warn("object read failed mid-stream", "object", name.Object, "sent", n, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// parseRange reads the one byte range the proxy sends (bytes=a-b, bytes=a-, bytes=-n, and
// bytes=-0, which selects nothing).
func parseRange(v string) (*meta.Range, error) {
	spec, ok := strings.CutPrefix(v, "bytes=")
	a, b, ok2 := strings.Cut(spec, "-")
	if !ok || !ok2 || strings.Contains(spec, ",") {
		return nil, fmt.Errorf("%w: range %q", ErrBadRequest, v)
	}
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: range %q", ErrBadRequest, v)
		}
		if n == 0 {
			return &meta.Range{Start: -1, End: -1}, nil // selects nothing: the node answers 416
		}
		return &meta.Range{Suffix: n}, nil
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 {
		return nil, fmt.Errorf("%w: range %q", ErrBadRequest, v)
	}
	end := int64(-1)
	if b != "" {
		if end, err = strconv.ParseInt(b, 10, 64); err != nil || end < start {
			return nil, fmt.Errorf("%w: range %q", ErrBadRequest, v)
		}
	}
	return &meta.Range{Start: start, End: end}, nil
}

func (h *Handler) listingRow(ctx context.Context, w http.ResponseWriter, r *http.Request, p Path) error {
	ts, err := requestTimestamp(r)
	if err != nil {
		return err
	}
	e := meta.ListEntry{Name: p.Object, Timestamp: ts}
	deleted := r.Method == http.MethodDelete
	if r.Method == http.MethodPut {
		if e.Size, err = strconv.ParseInt(r.Header.Get("X-Size"), 10, 64); err != nil || e.Size < 0 {
			return fmt.Errorf("%w: X-Size", ErrBadRequest)
		}
		e.ContentType, e.ETag = r.Header.Get("X-Content-Type"), r.Header.Get("X-Etag")
		if v := r.Header.Get(hdrModified); v != "" {
			if e.Modified, err = ParseTimestamp(v); err != nil {
				return fmt.Errorf("%w: %s", ErrBadRequest, hdrModified)
			}
		}
	} else if !deleted {
		return methodNotAllowed(r.Method)
	}
	if err := h.node.UpdateListing(ctx, p.Device, p.Part, p.Account, p.Container, e, deleted); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (h *Handler) container(ctx context.Context, w http.ResponseWriter, r *http.Request, p Path) error {
	switch r.Method {
	case http.MethodPut:
		ts, err := requestTimestamp(r)
		if err != nil {
			return err
		}
		upd, err := readAccountUpdate(r)
		if err != nil {
			return err
		}
		c := meta.Container{Name: p.Container, Created: ts, Meta: readMeta(r.Header, containerSysPrefix)}
		if err := readContainerPolicy(r.Header, &c); err != nil {
			return err
		}
		if err := h.node.PutContainer(ctx, p.Device, p.Part, p.Account, c, nodeclient.ContainerOptions{Account: upd}); err != nil {
			return err
		}
		w.WriteHeader(http.StatusCreated)
		return nil
	case http.MethodHead:
		c, err := h.node.HeadContainer(ctx, p.Device, p.Part, p.Account, p.Container)
		if err != nil {
			return err
		}
		writeContainer(w.Header(), c)
		w.WriteHeader(http.StatusNoContent)
		return nil
	case http.MethodPost:
		m := withoutPolicy(readMeta(r.Header, containerSysPrefix))
		c, err := h.node.PostContainer(ctx, p.Device, p.Part, p.Account, p.Container, m)
		if err != nil {
			return err
		}
		writeContainer(w.Header(), c)
		w.WriteHeader(http.StatusNoContent)
		return nil
	case http.MethodDelete:
		ts, err := requestTimestamp(r)
		if err != nil {
			return err
		}
		upd, err := readAccountUpdate(r)
		if err != nil {
			return err
		}
		if err := h.node.DeleteContainer(ctx, p.Device, p.Part, p.Account, p.Container, ts, nodeclient.ContainerOptions{Account: upd}); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	case http.MethodGet:
		return serveListing(w, r, func(opts meta.ListOptions) ([]byte, bool, error) {
			opts, err := nodeListOptions(p.Container, opts)
			if err != nil {
				return nil, false, err
			}
			l, err := h.node.ListObjects(ctx, p.Device, p.Part, p.Account, p.Container, opts)
			if err != nil {
				return nil, false, err
			}
			wireListing(p.Container, &l)
			b, err := encodeObjectListing(l, opts.Reverse)
			return b, l.Truncated, err
		})
	}
	return methodNotAllowed(r.Method)
}

// serveListing answers a listing GET (of a container or of an account): the page that list
// encodes for the query's options, and whether more follow.
func serveListing(w http.ResponseWriter, r *http.Request, list func(meta.ListOptions) ([]byte, bool, error)) error {
	opts, err := readListQuery(r.URL.Query())
	if err != nil {
		return err
	}
	b, truncated, err := list(opts)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set(hdrTruncated, strconv.FormatBool(truncated))
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

func (h *Handler) account(ctx context.Context, w http.ResponseWriter, r *http.Request, p Path) error {
	switch r.Method {
	case http.MethodPut:
		ts, err := requestTimestamp(r)
		if err != nil {
			return err
		}
		if err := h.node.PutAccount(ctx, p.Device, p.Part, p.Account, ts); err != nil {
			return err
		}
		// Swift's 202: the account was there (a Cairn node holds every account implicitly).
		w.WriteHeader(http.StatusAccepted)
		return nil
	case http.MethodHead:
		a, err := h.node.HeadAccount(ctx, p.Device, p.Part, p.Account)
		if err != nil {
			return err
		}
		writeAccount(w.Header(), a)
		w.WriteHeader(http.StatusNoContent)
		return nil
	case http.MethodGet:
		return serveListing(w, r, func(opts meta.ListOptions) ([]byte, bool, error) {
			l, err := h.node.ListContainers(ctx, p.Device, p.Part, p.Account, opts)
			if err != nil {
				return nil, false, err
			}
			b, err := encodeContainerListing(l, opts.Reverse)
			return b, l.Truncated, err
		})
	}
	return methodNotAllowed(r.Method)
}
