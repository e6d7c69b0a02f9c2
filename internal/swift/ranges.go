package swift

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// span is one satisfiable range of an object.
type span struct{ offset, length int64 }

// resolveRanges keeps the ranges that select something in an object of the given size, in the
// order asked, as Swift does (unsatisfiable ones are dropped; none left is 416).
func resolveRanges(rs []meta.Range, size int64) []span {
	var out []span
	for _, r := range rs {
		if off, n, err := r.Resolve(size); err == nil {
			out = append(out, span{off, n})
		}
	}
	return out
}

// multipartLayout is the framing of a multipart/byteranges body, as Swift writes it: each part
// "--B\r\nContent-Type: T\r\nContent-Range: bytes s-e/size\r\n\r\n<bytes>\r\n", then "--B--".
type multipartLayout struct {
	boundary, contentType string
	size                  int64
}

func (m multipartLayout) partHeader(s span) string {
	return "--" + m.boundary + "\r\nContent-Type: " + m.contentType + "\r\nContent-Range: bytes " +
		strconv.FormatInt(s.offset, 10) + "-" + strconv.FormatInt(s.offset+s.length-1, 10) + "/" + strconv.FormatInt(m.size, 10) + "\r\n\r\n"
}

func (m multipartLayout) trailer() string { return "--" + m.boundary + "--" }

func (m multipartLayout) contentLength(spans []span) int64 {
	n := int64(len(m.trailer()))
	for _, s := range spans {
		n += int64(len(m.partHeader(s))) + s.length + 2
	}
	return n
}

func newBoundary() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// getMultiRange serves a GET whose Range lists several ranges: 206 multipart/byteranges when
// more than one is satisfiable, an ordinary 206 for one, 416 for none. Each part is read with
// its own ranged read of the proxy; a part that comes from another version of the object (it
// was replaced meanwhile) cuts the response, since its header already promised the first.
func (h *Handler) getMultiRange(w http.ResponseWriter, r *http.Request, rq *request, rs []meta.Range) error {
	ctx := r.Context()
	obj, err := h.proxy.HeadObject(ctx, rq.objectName())
	if err != nil {
		return fmt.Errorf("head object %q: %w", rq.object, err)
	}
	if expired(&obj, h.cfg.Now()) {
		return fmt.Errorf("object %q expired: %w", rq.object, errNotFound)
	}
	if followed, err := h.symlinkHop(w, r, rq, &obj); followed {
		return err
	}
	hdr := w.Header()
	writeObjectHeaders(hdr, &obj)
	if err := checkConditions(r, obj.ETag, swiftwire.LastModified(obj.Timestamp)); err != nil {
		return err
	}
	if isSLO(&obj) {
		if err := h.checkSegmentAccess(r, rq, rq.objectName(), &obj); err != nil {
			return err
		}
	}
	spans := resolveRanges(rs, obj.Size)
	switch len(spans) {
	case 0:
		hdr.Set("Content-Range", "bytes */"+strconv.FormatInt(obj.Size, 10))
		return fmt.Errorf("get object %q: %w", rq.object, errRangeNotSatisfiable)
	case 1:
		s := spans[0]
		return h.getSingle(w, r, rq, &meta.Range{Start: s.offset, End: s.offset + s.length - 1})
	}
	m := multipartLayout{boundary: newBoundary(), contentType: hdr.Get("Content-Type"), size: obj.Size}
	hdr.Set("Content-Type", "multipart/byteranges;boundary="+m.boundary)
	hdr.Set("Content-Length", strconv.FormatInt(m.contentLength(spans), 10))
	w.WriteHeader(http.StatusPartialContent)
	for _, s := range spans {
		rd, err := h.proxy.GetObject(ctx, rq.objectName(), &meta.Range{Start: s.offset, End: s.offset + s.length - 1})
		if err != nil {
			h.log.WarnContext(ctx, "swift multi-range GET: part failed", "trans_id", rq.transID, "err", err)
			return errAbortResponse
		}
		same := rd.Object.Timestamp == obj.Timestamp && rd.Length == s.length
		if same {
			io.WriteString(w, m.partHeader(s))
			_, err = io.Copy(w, rd)
		}
		rd.Close()
		if !same || err != nil {
			h.log.WarnContext(ctx, "swift multi-range GET broke off", "trans_id", rq.transID, "replaced", !same, "err", err)
			return errAbortResponse
		}
		io.WriteString(w, "\r\n")
	}
	io.WriteString(w, m.trailer())
	return nil
}
