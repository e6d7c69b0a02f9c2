package largeobj

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/versions"
)

// Dynamic large objects (Swift's dlo middleware). An object stored with X-Object-Manifest:
// <container>/<prefix> reads as the concatenation, in name order, of the objects of that
// container (in the same account) whose names start with the prefix, as listed at read time.
// Its ETag is the quoted MD5 of the segments' ETags; ranges are served across segments. The
// segments are listed and read with the caller's permissions, as Swift's subrequests are.
// ?multipart-manifest=get reads the manifest object itself.

// maxDLOSegments bounds the segments one read lists (Swift reads one listing page of 10000 and
// then pages on; this keeps a read's listing work bounded).
const maxDLOSegments = 100 * swiftwire.ListingLimit

// ReadDLOHeader reads a PUT's or POST's X-Object-Manifest into the object's SysMeta ("" on a
// POST without it clears it, as Swift's POST replaces the object's metadata).
func ReadDLOHeader(hdr http.Header, obj *meta.Object) error {
	v, ok := hdr["X-Object-Manifest"]
	if !ok {
		return nil
	}
	c, p, err := swiftwire.ParseDLOManifest(strings.Join(v, ","))
	if err != nil {
		return err
	}
	if obj.SysMeta == nil {
		obj.SysMeta = map[string]string{}
	}
	obj.SysMeta[swiftcore.SysDLO] = c + "/" + p
	if raw := strings.Join(v, ","); raw != c+"/"+p {
		obj.SysMeta[swiftcore.SysDLORaw] = raw // (a POST without it clears an earlier one: postObject)
	}
	return nil
}

// DLOSegments lists a DLO's segments, checking that the caller may list and read them.
func (h *Handler) DLOSegments(r *http.Request, rq *swiftcore.Request, account, manifest string) ([]meta.Segment, string, error) {
	ctx := r.Context()
	container, prefix, _ := strings.Cut(manifest, "/")
	if err := h.Allow(ctx, r, rq, account, container, "", access.ListBucket); err != nil {
		return nil, "", err
	}
	var segs []meta.Segment
	first := "" // the first segment's name in the container
	sum := md5.New()
	opts := meta.ListOptions{Prefix: prefix, Limit: swiftwire.ListingLimit}
	for {
		page, err := h.Proxy.ListObjects(ctx, account, container, opts)
		if err != nil && !(len(segs) == 0 && errors.Is(err, meta.ErrNotFound)) {
			return nil, "", fmt.Errorf("segments of %s: %w", manifest, err)
		}
		for i := range page.Objects {
			// A segment in a versioned container is read through its link: its version.
			e, _, vobj := swiftcore.ListedVersion(&page.Objects[i], container)
			if first == "" {
				first = e.Name
			}
			s := meta.Segment{Container: container, Object: e.Name, Size: e.Size, ETag: e.ETag}
			if vobj != "" {
				s.Container, s.Object = versions.ContainerFor(container), vobj
			}
			segs = append(segs, s)
			io.WriteString(sum, strings.Trim(e.ETag, `"`))
		}
		if err != nil || !page.Truncated || len(page.Objects) == 0 {
			break
		}
		if len(segs) >= maxDLOSegments {
			return nil, "", swiftcore.ErrConflict.WithText("More than %d segments in the dynamic large object", maxDLOSegments)
		}
		opts.Marker = page.Objects[len(page.Objects)-1].Name
	}
	if len(segs) > 0 {
		if err := h.Allow(ctx, r, rq, account, container, first, access.GetObject); err != nil {
			return nil, "", err
		}
	}
	return segs, `"` + hex.EncodeToString(sum.Sum(nil)) + `"`, nil
}

// ServeDLO answers a GET or HEAD of a DLO manifest obj (rng: the one range asked, or nil).
func (h *Handler) ServeDLO(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, obj *meta.Object, rng *meta.Range) error {
	segs, etag, err := h.DLOSegments(r, rq, rq.Tenant, obj.SysMeta[swiftcore.SysDLO])
	if err != nil {
		return err
	}
	var total int64
	for _, s := range segs {
		total += s.Size
	}
	hdr := w.Header()
	swiftcore.WriteObjectHeaders(hdr, obj)
	hdr.Set("Etag", etag)
	hdr.Set("X-Object-Manifest", DLOHeader(obj))
	if err := swiftcore.CheckConditions(r, strings.Trim(etag, `"`), swiftwire.LastModified(obj.Modified())); err != nil {
		return err
	}
	off, n := int64(0), total
	status := http.StatusOK
	if rng != nil && r.Method == http.MethodGet {
		if off, n, err = rng.Resolve(total); err != nil {
			hdr.Set("Content-Range", "bytes */"+strconv.FormatInt(total, 10))
			return fmt.Errorf("DLO %q: %w", rq.Object, err)
		}
		hdr.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, total))
		status = http.StatusPartialContent
	}
	hdr.Set("Content-Length", strconv.FormatInt(n, 10))
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return nil
	}
	rd := h.Proxy.ReadSegments(r.Context(), rq.Tenant, *obj, segs, off, n)
	defer rd.Close()
	w.WriteHeader(status)
	if sent, err := io.Copy(w, rd); err != nil {
		h.Log.WarnContext(r.Context(), "swift DLO GET broke off", "trans_id", rq.TransID, "container", rq.Container, "object", rq.Object, "sent", sent, "of", n, "err", err)
		return swiftcore.ErrAbortResponse
	}
	return nil
}

// DLOHeader is a DLO's X-Object-Manifest as answered: as it was sent.
func DLOHeader(obj *meta.Object) string {
	if raw := obj.SysMeta[swiftcore.SysDLORaw]; raw != "" {
		return raw
	}
	return obj.SysMeta[swiftcore.SysDLO]
}
