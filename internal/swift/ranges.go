package swift

import (
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// getMultiRange serves a GET whose Range lists several ranges: 206 multipart/byteranges when
// more than one is satisfiable, an ordinary 206 for one, 416 for none. Each part is read with
// its own ranged read of the proxy; a part that comes from another version of the object (it
// was replaced meanwhile) cuts the response, since its header already promised the first.
func (h *Handler) getMultiRange(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, rs []meta.Range) error {
	ctx := r.Context()
	obj, err := h.Proxy.HeadObject(ctx, rq.ObjectName())
	if err != nil {
		return fmt.Errorf("head object %q: %w", rq.Object, err)
	}
	if swiftcore.Expired(&obj, h.Now()) {
		return fmt.Errorf("object %q expired: %w", rq.Object, swiftcore.ErrNotFound)
	}
	if followed, err := h.sym.SymlinkHop(w, r, rq, &obj); followed {
		return err
	}
	stored := obj
	obj = sse.Served(obj)
	hdr := w.Header()
	swiftcore.WriteObjectHeaders(hdr, &obj)
	if err := swiftcore.CheckConditions(r, obj.ETag, swiftwire.LastModified(obj.Modified())); err != nil {
		return err
	}
	if swiftcore.IsSLO(&obj) {
		if err := h.lo.CheckSegmentAccess(r, rq, rq.ObjectName(), &obj); err != nil {
			return err
		}
	}
	spans := swiftwire.ResolveRanges(rs, obj.Size)
	switch len(spans) {
	case 0:
		hdr.Set("Content-Range", "bytes */"+strconv.FormatInt(obj.Size, 10))
		return fmt.Errorf("get object %q: %w", rq.Object, swiftcore.ErrRangeNotSatisfiable)
	case 1:
		s := spans[0]
		return h.getSingle(w, r, rq, &meta.Range{Start: s.Offset, End: s.Offset + s.Length - 1})
	}
	m := swiftwire.MultipartLayout{Boundary: swiftwire.NewBoundary(), ContentType: hdr.Get("Content-Type"), Size: obj.Size}
	hdr.Set("Content-Type", "multipart/byteranges;boundary="+m.Boundary)
	hdr.Set("Content-Length", strconv.FormatInt(m.ContentLength(spans), 10))
	w.WriteHeader(http.StatusPartialContent)
	for _, s := range spans {
		var rd *proxy.ObjectReader
		if sse.Encrypted(&stored) {
			rd, err = h.Plaintext(ctx, rq, stored, nil, &meta.Range{Start: s.Offset, End: s.Offset + s.Length - 1})
		} else {
			rd, err = h.Proxy.GetObject(ctx, rq.ObjectName(), &meta.Range{Start: s.Offset, End: s.Offset + s.Length - 1})
		}
		if err != nil {
			h.Log.WarnContext(ctx, "swift multi-range GET: part failed", "trans_id", rq.TransID, "err", err)
			return swiftcore.ErrAbortResponse
		}
		same := rd.Object.Timestamp == obj.Timestamp && rd.Length == s.Length
		if same {
			io.WriteString(w, m.PartHeader(s))
			_, err = io.Copy(w, rd)
		}
		rd.Close()
		if !same || err != nil {
			h.Log.WarnContext(ctx, "swift multi-range GET broke off", "trans_id", rq.TransID, "replaced", !same, "err", err)
			return swiftcore.ErrAbortResponse
		}
		io.WriteString(w, "\r\n")
	}
	io.WriteString(w, m.Trailer())
	return nil
}
