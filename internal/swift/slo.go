package swift

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
)

// Static large objects (Swift's SLO middleware) are built on the proxy's manifests: the
// manifest lists segments that are ordinary objects of the same account, and the proxy serves
// it as one stream, checking that each segment is still the one listed. Segments belong to the
// user, not to the manifest: replacing or deleting a manifest leaves them, unless the delete asks
// for them with ?multipart-manifest=delete (unlike S3 multipart manifests, which own their parts).

// SLO limits, Swift's defaults, reported by /info.
const (
	maxManifestSegments = 1000
	maxManifestSize     = 8 << 20
	minSegmentSize      = 1
)

// sysSLO marks a manifest written through Swift's SLO API (SysMeta): it answers
// X-Static-Large-Object and ?multipart-manifest=get|delete. S3 multipart manifests, whose parts
// live in a container clients cannot name, do not carry it.
const sysSLO = "slo"

func isSLO(obj *meta.Object) bool { return obj.Manifest != nil && obj.SysMeta[sysSLO] != "" }

// sloSegment is one entry of a manifest PUT body.
type sloSegment struct {
	Path      string          `json:"path"`
	ETag      *string         `json:"etag"`
	SizeBytes *int64          `json:"size_bytes"`
	Range     *string         `json:"range"`
	Data      json.RawMessage `json:"data"`
}

// parseManifest reads a manifest PUT body, Swift's JSON list of segments.
func parseManifest(body []byte) ([]sloSegment, error) {
	var segs []sloSegment
	if err := json.Unmarshal(body, &segs); err != nil {
		return nil, errBadRequest.withText("Manifest must be valid JSON.\n")
	}
	if len(segs) == 0 {
		return nil, errBadRequest.withText("Manifest must have at least one segment.\n")
	}
	if len(segs) > maxManifestSegments {
		return nil, errTooLarge.withText("Too many segments in manifest; max %d", maxManifestSegments)
	}
	for i, s := range segs {
		switch {
		case s.Data != nil:
			return nil, errBadRequest.withText("Index %d: inline data segments are not supported by this server\n", i)
		case s.Range != nil:
			return nil, errBadRequest.withText("Index %d: segment ranges are not supported by this server\n", i)
		case s.Path == "":
			return nil, errBadRequest.withText("Index %d: \"path\" must be a string\n", i)
		}
	}
	return segs, nil
}

// sloETag is Swift's ETag of a static large object: the MD5 of its segments' ETags.
func sloETag(segs []meta.Segment) string {
	h := md5.New()
	for _, s := range segs {
		io.WriteString(h, s.ETag)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// putManifest serves PUT ?multipart-manifest=put: it checks every segment (it exists in this
// account, is not itself a manifest, has the size and ETag given, is not empty) and stores the
// manifest. Problems are reported together, as Swift's "Errors:" list.
func (h *Handler) putManifest(w http.ResponseWriter, r *http.Request, rq *request, obj meta.Object) error {
	ctx := r.Context()
	if r.ContentLength > maxManifestSize {
		return errTooLarge.withText("Manifest File > %d bytes", maxManifestSize)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxManifestSize+1))
	if err != nil {
		return fmt.Errorf("read manifest: %w", err)
	}
	if len(body) > maxManifestSize {
		return errTooLarge.withText("Manifest File > %d bytes", maxManifestSize)
	}
	entries, err := parseManifest(body)
	if err != nil {
		return err
	}
	var problems []string
	segs := make([]meta.Segment, 0, len(entries))
	for _, e := range entries {
		c, o, ok := strings.Cut(strings.TrimPrefix(e.Path, "/"), "/")
		if !ok || c == "" || o == "" || checkContainerName(c) != nil || checkObjectName(o) != nil {
			problems = append(problems, e.Path+", 400 Bad Request")
			continue
		}
		// A segment must be readable by the manifest's writer, or the manifest would hand
		// out what its writer may not read (Swift checks each with a subrequest).
		if err := h.allow(ctx, r, rq, rq.tenant, c, o, access.GetObject); err != nil {
			problems = append(problems, e.Path+", "+toSwiftError(err).statusLine())
			continue
		}
		seg, err := h.proxy.HeadObject(ctx, meta.ObjectName{Account: rq.tenant, Container: c, Object: o})
		switch {
		case errors.Is(err, meta.ErrNotFound):
			problems = append(problems, e.Path+", 404 Not Found")
			continue
		case err != nil:
			return fmt.Errorf("manifest segment %s: %w", e.Path, err)
		case seg.Manifest != nil:
			problems = append(problems, e.Path+", nested large objects are not supported by this server")
			continue
		}
		if e.SizeBytes != nil && *e.SizeBytes != seg.Size {
			problems = append(problems, e.Path+", Size Mismatch")
		}
		if e.ETag != nil && *e.ETag != "" && trimETag(*e.ETag) != seg.ETag {
			problems = append(problems, e.Path+", Etag Mismatch")
		}
		if seg.Size < minSegmentSize {
			problems = append(problems, fmt.Sprintf("%s, Too small; each segment must be at least %d byte.", e.Path, minSegmentSize))
		}
		segs = append(segs, meta.Segment{Container: c, Object: o, Size: seg.Size, ETag: seg.ETag})
	}
	if len(problems) > 0 {
		slices.Sort(problems) // Swift lists them in path order
		return errBadRequest.withText("Errors:\n%s\n", strings.Join(problems, "\n"))
	}
	obj.Manifest = segs
	obj.ETag = sloETag(segs)
	if want := r.Header.Get("ETag"); want != "" && trimETag(want) != obj.ETag {
		return fmt.Errorf("manifest ETag %s, header %s: %w", obj.ETag, want, errUnprocessable)
	}
	for _, s := range segs {
		obj.Size += s.Size
	}
	if obj.Size > h.cfg.MaxObjectSize*maxManifestSegments {
		return errTooLarge
	}
	obj.SysMeta = overlay(obj.SysMeta, map[string]string{sysSLO: "1"})
	// The segments' bytes were counted when they were stored; the manifest adds an object (as
	// Swift's quota middlewares, which see the manifest's PUT, count it).
	if err := h.checkQuota(ctx, rq.tenant, rq.container, access.Usage{Objects: 1}); err != nil {
		return err
	}
	if err := h.queueExpiry(ctx, rq.objectName(), obj.SysMeta); err != nil {
		return err
	}
	stored, err := h.proxy.PutObject(ctx, rq.objectName(), obj, strings.NewReader(""), proxy.PutOptions{})
	if err != nil {
		return fmt.Errorf("put manifest %q: %w", rq.object, err)
	}
	hdr := w.Header()
	hdr.Set("Etag", `"`+stored.ETag+`"`)
	hdr.Set("Last-Modified", lastModified(stored.Timestamp).Format(http.TimeFormat))
	writeStatus(w, r, http.StatusCreated)
	return nil
}

// getManifest serves GET ?multipart-manifest=get on a static large object: its manifest as
// JSON, in the listing shape ({name, bytes, hash}) or, with format=raw, in the PUT shape.
func getManifest(w http.ResponseWriter, r *http.Request, obj *meta.Object) error {
	var out []map[string]any
	raw := r.URL.Query().Get("format") == "raw"
	for _, s := range obj.Manifest {
		path := "/" + s.Container + "/" + s.Object
		if raw {
			out = append(out, map[string]any{"path": path, "etag": s.ETag, "size_bytes": s.Size})
		} else {
			// Swift also lists each segment's content_type and last_modified as they were when
			// the manifest was written; Cairn's manifests do not keep them.
			out = append(out, map[string]any{"name": path, "hash": s.ETag, "bytes": s.Size})
		}
	}
	body, err := json.Marshal(out)
	if err != nil {
		return err
	}
	hdr := w.Header()
	writeObjectHeaders(hdr, obj)
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("Etag", md5hex(body)) // as Swift: the ETag of the manifest document itself
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(body)
	}
	return nil
}

func md5hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// deleteManifest serves DELETE ?multipart-manifest=delete on a static large object: its
// segments, then the manifest, answered in the bulk middleware's format (plain text, or JSON
// when accepted). On any other object it is a plain DELETE.
func (h *Handler) deleteManifest(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	obj, err := h.proxy.HeadObject(ctx, rq.objectName())
	if err != nil {
		return fmt.Errorf("delete object %q: %w", rq.object, err)
	}
	if !isSLO(&obj) {
		if err := h.proxy.DeleteObject(ctx, rq.objectName()); err != nil {
			return fmt.Errorf("delete object %q: %w", rq.object, err)
		}
		writeStatus(w, r, http.StatusNoContent)
		return nil
	}
	var res bulkResult
	for _, s := range obj.Manifest {
		n := meta.ObjectName{Account: rq.tenant, Container: s.Container, Object: s.Object}
		// Each segment is deleted as its own DELETE would be decided.
		if err := h.allow(ctx, r, rq, rq.tenant, s.Container, s.Object, access.DeleteObject); err != nil {
			res.record("/"+s.Container+"/"+s.Object, err)
			continue
		}
		res.record("/"+s.Container+"/"+s.Object, h.proxy.DeleteObject(ctx, n))
	}
	// The manifest goes last, so that a failure leaves it to retry the delete with.
	res.record("/"+rq.container+"/"+rq.object, h.proxy.DeleteObject(ctx, rq.objectName()))
	res.write(w, r)
	return nil
}
