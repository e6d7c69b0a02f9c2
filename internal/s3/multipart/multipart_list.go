package multipart

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

// ListParts serves the S3 operation of that name.
func (h *Handler) ListParts(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	maxParts := 1000
	if v, ok := rq.Query["max-parts"]; ok {
		n, err := s3core.ParseMaxKeys(v[0], 1000)
		if err != nil {
			return s3core.ErrInvalidArgument.WithMessage("max-parts must be a non-negative integer.")
		}
		maxParts = n
	}
	after := 0
	if v := rq.Query.Get("part-number-marker"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return s3core.ErrInvalidArgument.WithMessage("part-number-marker must be a non-negative integer.")
		}
		after = min(n, s3core.MaxPartNumber)
	}
	up, err := h.openUpload(ctx, rq)
	if err != nil {
		return err
	}
	res := s3xml.ListPartsResult{
		Xmlns: s3xml.Namespace, Bucket: rq.Bucket, Key: rq.Key, UploadID: up.id,
		Initiator: rq.Owner(), Owner: rq.Owner(), StorageClass: "STANDARD",
		PartNumberMarker: after, MaxParts: maxParts, ChecksumAlgorithm: string(up.alg), ChecksumType: up.typ,
	}
	if maxParts > 0 {
		err := h.partAttempts(ctx, rq, up.id, after, func(n int, e meta.ListEntry, _ []meta.ListEntry) bool {
			if len(res.Parts) == maxParts {
				res.IsTruncated = true
				return false
			}
			p := s3xml.PartInfo{PartNumber: n, LastModified: s3xml.FormatISO(e.Timestamp.Time()), ETag: s3core.QuoteETag(e.ETag), Size: partPlainSize(&up.marker, e.Size)}
			if up.alg != "" {
				if pc, err := h.partChecksum(ctx, rq, e.Name, up.alg); err == nil {
					s3core.SetChecksumFields(&p.ChecksumFields, up.alg, pc.Value)
				}
			}
			res.Parts = append(res.Parts, p)
			res.NextPartNumberMarker = n
			return true
		})
		if err != nil {
			return err
		}
	}
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}

// ListMultipartUploads lists the upload markers of the bucket's uploads container. The
// container also holds parts, which are skipped; with a delimiter, keys roll up into common
// prefixes exactly as in a bucket listing, since a marker's name starts with its key.
func (h *Handler) ListMultipartUploads(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	p, err := s3core.ParseListParams(rq.Query)
	if err != nil {
		return err
	}
	p.MaxKeys = 1000
	if v, ok := rq.Query["max-uploads"]; ok {
		if p.MaxKeys, err = s3core.ParseMaxKeys(v[0], 1000); err != nil {
			return s3core.ErrInvalidArgument.WithMessage("max-uploads must be a non-negative integer.")
		}
	}
	if strings.ContainsRune(p.Prefix+p.Delimiter, 0) {
		return s3core.ErrInvalidArgument.WithMessage("Prefix and delimiter must not contain NUL.")
	}
	keyMarker, idMarker := rq.Query.Get("key-marker"), rq.Query.Get("upload-id-marker")
	if _, err := h.RequireBucket(ctx, rq); err != nil {
		return err
	}
	res := s3xml.ListMultipartUploadsResult{
		Xmlns: s3xml.Namespace, Bucket: rq.Bucket, KeyMarker: p.Encode(keyMarker), UploadIDMarker: idMarker,
		Prefix: p.Encode(p.Prefix), Delimiter: p.Encode(p.Delimiter), MaxUploads: p.MaxKeys,
	}
	if p.URLEncode {
		res.EncodingType = "url"
	}
	// Where to start: after the given upload of key-marker, or after every upload of it.
	marker := ""
	switch {
	case keyMarker != "" && idMarker != "":
		marker = uploadMarkerName(keyMarker, idMarker)
	case keyMarker != "" && p.Delimiter != "" && strings.HasSuffix(keyMarker, p.Delimiter):
		marker = keyMarker // a common prefix: the listing skips all of it
	case keyMarker != "":
		marker = keyMarker + "\x01" // past "<key-marker>\x00…"
	}
	count := 0
	for count < p.MaxKeys {
		l, err := h.Proxy.ListObjects(ctx, rq.Account, s3core.UploadsContainer(rq.Bucket), meta.ListOptions{
			Prefix: p.Prefix, Delimiter: p.Delimiter, Marker: marker, Limit: p.MaxKeys - count,
		})
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("list uploads of %q: %w", rq.Bucket, err)
		}
		// Objects and common prefixes come apart; walk them merged, in name order, so that the
		// page ends at the right place.
		objs, cps := l.Objects, l.CommonPrefixes
		for (len(objs) > 0 || len(cps) > 0) && count < p.MaxKeys {
			if len(cps) == 0 || len(objs) > 0 && objs[0].Name < cps[0] {
				e := objs[0]
				objs = objs[1:]
				marker = e.Name
				key, id, ok := strings.Cut(e.Name, "\x00")
				if !ok || strings.ContainsRune(id, 0) {
					continue // a part
				}
				res.Uploads = append(res.Uploads, s3xml.UploadInfo{
					Key: p.Encode(key), UploadID: id, Initiator: rq.Owner(), Owner: rq.Owner(),
					StorageClass: "STANDARD", Initiated: s3xml.FormatISO(e.Timestamp.Time()),
				})
				res.NextKeyMarker, res.NextUploadIDMarker = p.Encode(key), id
			} else {
				marker = cps[0]
				res.CommonPrefixes = append(res.CommonPrefixes, s3xml.CommonPrefix{Prefix: p.Encode(cps[0])})
				res.NextKeyMarker, res.NextUploadIDMarker = p.Encode(cps[0]), ""
				cps = cps[1:]
			}
			count++
		}
		if len(objs) > 0 || len(cps) > 0 {
			res.IsTruncated = true
			break
		}
		if err != nil || !l.Truncated {
			break
		}
		if count == p.MaxKeys {
			res.IsTruncated = true
		}
	}
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}

// isNotFound: a bucket with no upload yet has no uploads container.
func isNotFound(err error) bool { return errors.Is(err, meta.ErrNotFound) }
