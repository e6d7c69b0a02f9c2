package s3

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

func (h *Handler) listParts(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	maxParts := 1000
	if v, ok := rq.query["max-parts"]; ok {
		n, err := parseMaxKeys(v[0], 1000)
		if err != nil {
			return errInvalidArgument.withMessage("max-parts must be a non-negative integer.")
		}
		maxParts = n
	}
	after := 0
	if v := rq.query.Get("part-number-marker"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errInvalidArgument.withMessage("part-number-marker must be a non-negative integer.")
		}
		after = min(n, maxPartNumber)
	}
	up, err := h.openUpload(ctx, rq)
	if err != nil {
		return err
	}
	res := s3xml.ListPartsResult{
		Xmlns: s3xml.Namespace, Bucket: rq.bucket, Key: rq.key, UploadID: up.id,
		Initiator: rq.owner(), Owner: rq.owner(), StorageClass: "STANDARD",
		PartNumberMarker: after, MaxParts: maxParts, ChecksumAlgorithm: string(up.alg), ChecksumType: up.typ,
	}
	if maxParts > 0 {
		err := h.partAttempts(ctx, rq, up.id, after, func(n int, e meta.ListEntry, _ []meta.ListEntry) bool {
			if len(res.Parts) == maxParts {
				res.IsTruncated = true
				return false
			}
			p := s3xml.PartInfo{PartNumber: n, LastModified: s3xml.FormatISO(e.Timestamp.Time()), ETag: quoteETag(e.ETag), Size: partPlainSize(&up.marker, e.Size)}
			if up.alg != "" {
				if pc, err := h.partChecksum(ctx, rq, e.Name, up.alg); err == nil {
					setChecksumFields(&p.ChecksumFields, up.alg, pc.Value)
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
	writeXML(w, http.StatusOK, res)
	return nil
}

// listMultipartUploads lists the upload markers of the bucket's uploads container. The
// container also holds parts, which are skipped; with a delimiter, keys roll up into common
// prefixes exactly as in a bucket listing, since a marker's name starts with its key.
func (h *Handler) listMultipartUploads(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	p, err := parseListParams(rq.query)
	if err != nil {
		return err
	}
	p.maxKeys = 1000
	if v, ok := rq.query["max-uploads"]; ok {
		if p.maxKeys, err = parseMaxKeys(v[0], 1000); err != nil {
			return errInvalidArgument.withMessage("max-uploads must be a non-negative integer.")
		}
	}
	if strings.ContainsRune(p.prefix+p.delimiter, 0) {
		return errInvalidArgument.withMessage("Prefix and delimiter must not contain NUL.")
	}
	keyMarker, idMarker := rq.query.Get("key-marker"), rq.query.Get("upload-id-marker")
	if _, err := h.requireBucket(ctx, rq); err != nil {
		return err
	}
	res := s3xml.ListMultipartUploadsResult{
		Xmlns: s3xml.Namespace, Bucket: rq.bucket, KeyMarker: p.encode(keyMarker), UploadIDMarker: idMarker,
		Prefix: p.encode(p.prefix), Delimiter: p.encode(p.delimiter), MaxUploads: p.maxKeys,
	}
	if p.urlEncode {
		res.EncodingType = "url"
	}
	// Where to start: after the given upload of key-marker, or after every upload of it.
	marker := ""
	switch {
	case keyMarker != "" && idMarker != "":
		marker = uploadMarkerName(keyMarker, idMarker)
	case keyMarker != "" && p.delimiter != "" && strings.HasSuffix(keyMarker, p.delimiter):
		marker = keyMarker // a common prefix: the listing skips all of it
	case keyMarker != "":
		marker = keyMarker + "\x01" // past "<key-marker>\x00…"
	}
	count := 0
	for count < p.maxKeys {
		l, err := h.proxy.ListObjects(ctx, rq.account, uploadsContainer(rq.bucket), meta.ListOptions{
			Prefix: p.prefix, Delimiter: p.delimiter, Marker: marker, Limit: p.maxKeys - count,
		})
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("list uploads of %q: %w", rq.bucket, err)
		}
		// Objects and common prefixes come apart; walk them merged, in name order, so that the
		// page ends at the right place.
		objs, cps := l.Objects, l.CommonPrefixes
		for (len(objs) > 0 || len(cps) > 0) && count < p.maxKeys {
			if len(cps) == 0 || len(objs) > 0 && objs[0].Name < cps[0] {
				e := objs[0]
				objs = objs[1:]
				marker = e.Name
				key, id, ok := strings.Cut(e.Name, "\x00")
				if !ok || strings.ContainsRune(id, 0) {
					continue // a part
				}
				res.Uploads = append(res.Uploads, s3xml.UploadInfo{
					Key: p.encode(key), UploadID: id, Initiator: rq.owner(), Owner: rq.owner(),
					StorageClass: "STANDARD", Initiated: s3xml.FormatISO(e.Timestamp.Time()),
				})
				res.NextKeyMarker, res.NextUploadIDMarker = p.encode(key), id
			} else {
				marker = cps[0]
				res.CommonPrefixes = append(res.CommonPrefixes, s3xml.CommonPrefix{Prefix: p.encode(cps[0])})
				res.NextKeyMarker, res.NextUploadIDMarker = p.encode(cps[0]), ""
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
		if count == p.maxKeys {
			res.IsTruncated = true
		}
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

// isNotFound: a bucket with no upload yet has no uploads container.
func isNotFound(err error) bool { return errors.Is(err, meta.ErrNotFound) }
