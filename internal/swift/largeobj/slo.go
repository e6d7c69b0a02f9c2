package largeobj

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/swift/bulk"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// Static large objects (Swift's SLO middleware) are built on the proxy's manifests: the
// manifest lists segments that are ordinary objects of the same account (all of one, or a byte
// range of it), other static large objects (read recursively, up to proxy.MaxManifestDepth
// levels), or inline data, and the proxy serves it as one stream, checking that each segment is
// still the one listed. Segments belong to the user, not to the manifest: replacing or deleting
// a manifest leaves them, unless the delete asks for them with ?multipart-manifest=delete
// (unlike S3 multipart manifests, which own their parts).

// SLO limits, Swift's defaults, reported by /info.
const (
	MaxManifestSegments = 1000
	MaxManifestSize     = 8 << 20
	MinSegmentSize      = 1
	// HeartbeatEvery is how often a heartbeat=on manifest PUT sends whitespace while it checks
	// segments (Swift's yield_frequency).
	HeartbeatEvery = 10 * time.Second
)

// Swift's texts for a 400 and a 422 without a body of their own (heartbeat answers use them).
const (
	badRequestText    = "Bad Request\nThe server could not comply with the request since it is either malformed or otherwise incorrect."
	unprocessableText = "Unprocessable Entity\nUnable to process the contained instructions"
)

// PutManifest serves PUT ?multipart-manifest=put: it checks every segment (it exists in this
// account, has the size and ETag given, its range is satisfiable, it is not empty) and stores
// the manifest. Problems are reported together, as Swift's "Errors:" list. With heartbeat=on
// the answer is a 202 at once, whitespace while segments are checked, and the outcome in the
// body, as Swift's.
func (h *Handler) PutManifest(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, obj meta.Object) error {
	if r.Header.Get("X-Copy-From") != "" {
		return swiftcore.ErrMethodNotAllowed.WithText("Multipart Manifest PUTs cannot be COPY requests")
	}
	if len(r.TransferEncoding) == 0 && r.Header.Get("Content-Length") == "" {
		return swiftcore.ErrLengthRequired
	}
	if r.ContentLength > MaxManifestSize {
		return swiftcore.ErrTooLarge.WithText("Manifest File > %d bytes", MaxManifestSize)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxManifestSize))
	if err != nil {
		return fmt.Errorf("read manifest: %w", err)
	}
	entries, err := swiftwire.ParseManifest(body, rq.Container+"/"+rq.Object)
	if err != nil {
		return err
	}
	if n := len(entries) - countFunc(entries, func(e swiftwire.ManifestEntry) bool { return e.Data != nil }); n > MaxManifestSegments {
		return swiftcore.ErrTooLarge.WithText("Number of object-backed segments must be <= %d", MaxManifestSegments)
	}
	heartbeat := swiftwire.Truthy(r.URL.Query().Get("heartbeat"))
	sep := ""
	if heartbeat {
		ct, _ := swiftwire.Negotiate(r.Header.Get("Accept"))
		if ct == "" || ct == "text/html" {
			ct = "text/plain"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, " ")
		http.NewResponseController(w).Flush()
		sep = "\r\n\r\n"
	}
	// answer writes the outcome: in the body after a heartbeat, else with its own status.
	answer := func(status string, fields map[string]any, problems [][2]string) error {
		out, ct := swiftwire.BulkBody(r.Header.Get("Accept"), "upload", fields, problems)
		if heartbeat {
			_, err := io.WriteString(w, sep+string(out))
			return err
		}
		code, _ := strconv.Atoi(status[:3])
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(code)
		_, err := w.Write(out)
		return err
	}
	var tick func()
	if heartbeat {
		last := time.Now()
		tick = func() {
			if time.Since(last) > HeartbeatEvery {
				io.WriteString(w, " ")
				http.NewResponseController(w).Flush()
				last = time.Now()
			}
		}
	}
	segs, problems, err := h.checkSegments(r, rq, rq.Tenant, entries, tick)
	if err != nil {
		if heartbeat {
			se := swiftcore.ToError(err)
			return answer("", map[string]any{"Response Status": se.StatusLine(), "Response Body": se.Body}, nil)
		}
		return err
	}
	if len(problems) > 0 {
		slices.SortFunc(problems, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
		fields := map[string]any{}
		if heartbeat {
			fields = map[string]any{"Response Status": "400 Bad Request", "Response Body": badRequestText}
		}
		return answer("400", fields, problems)
	}
	obj.Manifest = segs
	obj.ETag = swiftwire.SLOETag(segs)
	if want := r.Header.Get("ETag"); want != "" && httpwire.TrimETag(want) != obj.ETag {
		if heartbeat {
			return answer("", map[string]any{"Response Status": "422 Unprocessable Entity", "Response Body": unprocessableText}, nil)
		}
		return fmt.Errorf("manifest ETag %s, header %s: %w", obj.ETag, want, swiftcore.ErrUnprocessable)
	}
	stored, err := h.storeManifest(w, r, rq.ObjectName(), obj)
	if err != nil {
		if heartbeat {
			se := swiftcore.ToError(err)
			return answer("", map[string]any{"Response Status": se.StatusLine(), "Response Body": se.Body}, nil)
		}
		return err
	}
	etag := `"` + stored.ETag + `"`
	lm := swiftwire.LastModified(stored.Timestamp).Format(http.TimeFormat)
	if heartbeat {
		return answer("", map[string]any{"Response Status": "201 Created", "Etag": etag, "Last Modified": lm, "Response Body": ""}, nil)
	}
	hdr := w.Header()
	hdr.Set("Etag", etag)
	hdr.Set("Last-Modified", lm)
	swiftcore.WriteStatus(w, r, http.StatusCreated)
	return nil
}

func countFunc[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// checkSegments looks up every object-backed segment once (as the manifest's writer: a
// segment must be readable by it, or the manifest would hand out what its writer may not
// read) and returns the manifest's segments, or the problems found as Swift lists them.
// tick, when not nil, runs after each lookup (heartbeats).
func (h *Handler) checkSegments(r *http.Request, rq *swiftcore.Request, account string, entries []swiftwire.ManifestEntry, tick func()) ([]meta.Segment, [][2]string, error) {
	ctx := r.Context()
	type looked struct {
		obj     meta.Object
		problem string
		c, o    string // the segment object: the path's, or a symlink's target
	}
	seen := map[string]*looked{}
	var problems [][2]string
	segs := make([]meta.Segment, 0, len(entries))
	for i, e := range entries {
		if e.Data != nil {
			segs = append(segs, meta.Segment{Data: e.Data})
			continue
		}
		quoted := swiftwire.PyQuote(e.Path)
		l := seen[e.Path]
		if l == nil {
			l = &looked{}
			seen[e.Path] = l
			c, o, _ := strings.Cut(strings.TrimLeft(e.Path, "/"), "/")
			switch {
			case c == "" || o == "" || swiftwire.CheckContainerName(c) != nil || swiftwire.CheckObjectName(o) != nil:
				l.problem = "400 Bad Request"
			default:
				if err := h.Allow(ctx, r, rq, account, c, o, access.GetObject); err != nil {
					l.problem = swiftcore.ToError(err).StatusLine()
					break
				}
				seg, err := h.Proxy.HeadObject(ctx, meta.ObjectName{Account: account, Container: c, Object: o})
				if tick != nil {
					tick()
				}
				if err == nil && swiftcore.IsSymlink(&seg) {
					// A symlink segment stands for its target, as Swift's SLO reads segments
					// through the symlink middleware; the manifest records the target.
					var target meta.ObjectName
					target, seg, err = h.sym.ResolveSymlinks(r, rq, account, seg)
					if err == nil && target.Account != account {
						err = fmt.Errorf("segment %s: a symlink into another account: %w", e.Path, swiftcore.ErrConflict)
					}
					c, o = target.Container, target.Object
					if se := (*swiftcore.Error)(nil); errors.As(err, &se) {
						l.problem, err = se.StatusLine(), nil
						break
					}
				}
				l.c, l.o = c, o
				switch {
				case errors.Is(err, meta.ErrNotFound):
					l.problem = "404 Not Found"
				case err != nil:
					return nil, nil, fmt.Errorf("manifest segment %s: %w", e.Path, err)
				case swiftcore.IsDLO(&seg):
					l.problem = "409 Conflict" // a DLO's size is its listing's: no fixed bytes to check
				case sse.Encrypted(&seg):
					// Its stored bytes are not its bytes (S3 server-side encryption): a manifest
					// would serve them as they are stored.
					l.problem = "400 Bad Request"
				case !seg.Deleted && swiftcore.Expired(&seg, h.Now()):
					l.problem = "404 Not Found"
				}
				l.obj = seg
			}
		}
		if l.problem != "" {
			problems = append(problems, [2]string{quoted, l.problem})
			continue
		}
		seg := l.obj
		s := meta.Segment{Container: l.c, Object: l.o, Size: seg.Size, ETag: seg.ETag, SubManifest: seg.Manifest != nil,
			ContentType: seg.ContentType, Timestamp: seg.Timestamp}
		length := seg.Size
		if e.Range != nil {
			off, n, err := e.Range.Resolve(seg.Size)
			switch {
			case err != nil:
				problems = append(problems, [2]string{quoted, "Unsatisfiable Range"})
			case off == 0 && n == seg.Size:
				// The whole object: stored as no range, as Swift does.
			default:
				s.Ranged, s.Offset, s.Length = true, off, n
				length = n
			}
		}
		if length < MinSegmentSize && i != len(entries)-1 {
			problems = append(problems, [2]string{quoted, fmt.Sprintf("Too small; each segment must be at least %d byte.", MinSegmentSize)})
		}
		if e.SizeBytes != nil && *e.SizeBytes != seg.Size {
			problems = append(problems, [2]string{quoted, "Size Mismatch"})
		}
		if e.ETag != nil && httpwire.TrimETag(*e.ETag) != seg.ETag {
			problems = append(problems, [2]string{quoted, "Etag Mismatch"})
		}
		segs = append(segs, s)
	}
	return segs, problems, nil
}

// storeManifest stores a checked manifest as name.
func (h *Handler) storeManifest(w http.ResponseWriter, r *http.Request, name meta.ObjectName, obj meta.Object) (meta.Object, error) {
	ctx := r.Context()
	obj.Size = 0
	for _, s := range obj.Manifest {
		obj.Size += s.Len()
	}
	if obj.Size > h.MaxObjectSize*MaxManifestSegments {
		return meta.Object{}, swiftcore.ErrTooLarge
	}
	obj.SysMeta = swiftcore.Overlay(obj.SysMeta, map[string]string{swiftcore.SysSLO: "1",
		meta.SysListingETag: swiftcore.ManifestETag(&obj) + `; slo_etag="` + obj.ETag + `"`})
	// The segments' bytes were counted when they were stored; the manifest adds an object (as
	// Swift's quota middlewares, which see the manifest's PUT, count it).
	if err := h.CheckQuota(ctx, name.Account, name.Container, access.Usage{Objects: 1}); err != nil {
		return meta.Object{}, err
	}
	if err := h.QueueExpiry(ctx, name, obj.SysMeta); err != nil {
		return meta.Object{}, err
	}
	stored, err := h.StoreObject(ctx, w, name, obj, strings.NewReader(""), proxy.PutOptions{})
	if err != nil {
		return meta.Object{}, fmt.Errorf("put manifest %q: %w", name.Object, err)
	}
	return stored, nil
}

// CopyManifest serves a COPY (or PUT with X-Copy-From) of a static large object with
// ?multipart-manifest=get: the destination becomes a static large object of the same segments,
// checked as a manifest PUT in the destination's account would check them (Swift's copy
// middleware PUTs the manifest with ?multipart-manifest=put). obj is the destination's metadata.
func (h *Handler) CopyManifest(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, src, dst meta.ObjectName, srcObj *meta.Object, obj meta.Object) error {
	entries := make([]swiftwire.ManifestEntry, 0, len(srcObj.Manifest))
	for _, s := range srcObj.Manifest {
		if s.Data != nil {
			entries = append(entries, swiftwire.ManifestEntry{Data: s.Data})
			continue
		}
		e := swiftwire.ManifestEntry{Path: "/" + s.Container + "/" + s.Object, ETag: &s.ETag, SizeBytes: &s.Size}
		if s.Ranged {
			e.Range = &meta.Range{Start: s.Offset, End: s.Offset + s.Length - 1}
		}
		entries = append(entries, e)
	}
	segs, problems, err := h.checkSegments(r, rq, dst.Account, entries, nil)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		slices.SortFunc(problems, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
		out, ct := swiftwire.BulkBody(r.Header.Get("Accept"), "upload", map[string]any{}, problems)
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(http.StatusBadRequest)
		w.Write(out)
		return nil
	}
	obj.Manifest, obj.ETag = segs, swiftwire.SLOETag(segs)
	stored, err := h.storeManifest(w, r, dst, obj)
	if err != nil {
		return fmt.Errorf("copy manifest to %s/%s: %w", dst.Container, dst.Object, err)
	}
	hdr := w.Header()
	hdr.Set("Etag", `"`+stored.ETag+`"`)
	hdr.Set("Last-Modified", swiftwire.LastModified(stored.Timestamp).Format(http.TimeFormat))
	hdr.Set("X-Copied-From", (&url.URL{Path: src.Container + "/" + src.Object}).EscapedPath())
	hdr.Set("X-Copied-From-Account", swiftwire.ResellerPrefix+src.Account)
	hdr.Set("X-Copied-From-Last-Modified", swiftwire.LastModified(srcObj.Modified()).Format(http.TimeFormat))
	swiftcore.WriteStatus(w, r, http.StatusCreated)
	return nil
}

// GetManifest serves GET ?multipart-manifest=get on a static large object: its manifest as
// Swift stores it or, with format=raw, in the PUT shape.
func GetManifest(w http.ResponseWriter, r *http.Request, obj *meta.Object) error {
	body := swiftwire.ManifestJSON(obj.Manifest)
	if r.URL.Query().Get("format") == "raw" {
		body = swiftwire.RawManifestJSON(obj.Manifest)
	}
	hdr := w.Header()
	swiftcore.WriteObjectHeaders(hdr, obj)
	hdr.Del("X-Manifest-Etag")
	if r.URL.Query().Get("format") != "raw" { // raw keeps the manifest object's, as Swift
		hdr.Set("Content-Type", "application/json; charset=utf-8")
	}
	hdr.Set("Etag", swiftwire.MD5Hex(body)) // as Swift: the ETag of the manifest document itself
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(body)
	}
	return nil
}

// DeleteManifest serves DELETE ?multipart-manifest=delete on a static large object: its
// segments (those of nested manifests too, as Swift deletes them), then the manifest, answered
// in the bulk middleware's format (plain text, or JSON when accepted). On any other object it
// is a plain DELETE.
func (h *Handler) DeleteManifest(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	obj, err := h.Proxy.HeadObject(ctx, rq.ObjectName())
	if err != nil {
		return fmt.Errorf("delete object %q: %w", rq.Object, err)
	}
	if !swiftcore.IsSLO(&obj) {
		if err := h.Proxy.DeleteObject(ctx, rq.ObjectName()); err != nil {
			return fmt.Errorf("delete object %q: %w", rq.Object, err)
		}
		swiftcore.WriteStatus(w, r, http.StatusNoContent)
		return nil
	}
	var res bulk.Result
	h.deleteSegments(r, rq, obj.Manifest, &res, 1)
	// The manifest goes last, so that a failure leaves it to retry the delete with.
	res.Record("/"+rq.Container+"/"+rq.Object, h.Proxy.DeleteObject(ctx, rq.ObjectName()))
	res.Answer(w, r)
	return nil
}

// deleteSegments deletes a manifest's segment objects, a sub-manifest's own segments before it.
func (h *Handler) deleteSegments(r *http.Request, rq *swiftcore.Request, segs []meta.Segment, res *bulk.Result, depth int) {
	ctx := r.Context()
	for _, s := range segs {
		if s.Data != nil {
			continue
		}
		path := "/" + s.Container + "/" + s.Object
		n := meta.ObjectName{Account: rq.Tenant, Container: s.Container, Object: s.Object}
		// Each segment is deleted as its own DELETE would be decided.
		if err := h.Allow(ctx, r, rq, rq.Tenant, s.Container, s.Object, access.DeleteObject); err != nil {
			res.Record(path, err)
			continue
		}
		if s.SubManifest {
			sub, err := h.Proxy.HeadObject(ctx, n)
			switch {
			case err == nil && swiftcore.IsSLO(&sub) && depth < proxy.MaxManifestDepth:
				h.deleteSegments(r, rq, sub.Manifest, res, depth+1)
			case err != nil && !errors.Is(err, meta.ErrNotFound):
				res.Record(path, err)
				continue
			}
		}
		res.Record(path, h.Proxy.DeleteObject(ctx, n))
	}
}

// CheckSegmentAccess decides, before a static large object's GET answers, that the caller may
// read its segments (those of nested manifests too): Swift reads each segment with the
// caller's credentials, and a manifest readable through an ACL or referer its segments'
// containers do not share answers 409 Conflict. Manifests nested deeper than Swift's limit are
// 409 as well, rather than a response cut where the read reaches them.
func (h *Handler) CheckSegmentAccess(r *http.Request, rq *swiftcore.Request, name meta.ObjectName, obj *meta.Object) error {
	owner := rq.OwnerAdmin(name.Account) // the owner reads every container of its account
	ctx := r.Context()
	manifestPath := "/v1/" + swiftwire.ResellerPrefix + name.Account + "/" + name.Container + "/" + name.Object
	checked := map[string]bool{}
	var walk func(segs []meta.Segment, depth int) error
	walk = func(segs []meta.Segment, depth int) error {
		for _, s := range segs {
			if s.Data != nil {
				continue
			}
			if !owner && !checked[s.Container] {
				if err := h.Allow(ctx, r, rq, name.Account, s.Container, s.Object, access.GetObject); err != nil {
					return swiftcore.ErrConflict.WithText("While processing manifest %s, got %s while retrieving /v1/%s/%s/%s",
						manifestPath, swiftcore.ToError(err).StatusLine(), swiftwire.ResellerPrefix+name.Account, s.Container, s.Object)
				}
				checked[s.Container] = true
			}
			if !s.SubManifest {
				continue
			}
			if depth >= proxy.MaxManifestDepth {
				// Swift logs "max recursion depth was exceeded" and answers its plain 409.
				return fmt.Errorf("manifest %s: max recursion depth was exceeded: %w", manifestPath, swiftcore.ErrConflict)
			}
			sub, err := h.Proxy.HeadObject(ctx, meta.ObjectName{Account: name.Account, Container: s.Container, Object: s.Object})
			if err != nil || sub.Manifest == nil {
				continue // the read itself reports it
			}
			if err := walk(sub.Manifest, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if !owner || slices.ContainsFunc(obj.Manifest, func(s meta.Segment) bool { return s.SubManifest }) {
		return walk(obj.Manifest, 1)
	}
	return nil
}

// CheckFirstSegment makes sure, before a static large object's GET answers, that its first
// segment exists: as Swift's, whose SLO reads it before the answer, a missing one is 409
// rather than a response cut after its header.
func (h *Handler) CheckFirstSegment(r *http.Request, rq *swiftcore.Request, obj *meta.Object) error {
	for _, s := range obj.Manifest {
		if s.Data != nil {
			continue
		}
		_, err := h.Proxy.HeadObjectBrief(r.Context(), meta.ObjectName{Account: rq.Tenant, Container: s.Container, Object: s.Object})
		if errors.Is(err, meta.ErrNotFound) {
			return swiftcore.ErrConflict.WithText("While processing manifest /v1/%s/%s/%s, got 404 while retrieving /v1/%s/%s/%s",
				rq.Account, rq.Container, rq.Object, rq.Account, s.Container, s.Object)
		}
		return nil // anything else: the read itself reports it
	}
	return nil
}
