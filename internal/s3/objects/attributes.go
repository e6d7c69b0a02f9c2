package objects

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/checksum"
	"github.com/cairn-store/cairn/internal/s3/objattr"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/sse"
)

// GetObjectAttributes (GET ?attributes): an object's ETag, size, storage class, checksum and
// parts in one answer, without its bytes. Parts are listed one by one only when the object
// was uploaded with a checksum algorithm (each part's checksum is stored with the part), as S3
// does; otherwise ObjectParts says only how many there are.

// partChecksumWorkers bounds the part HEADs one answer runs at once.
const partChecksumWorkers = 8

// GetObjectAttributes serves the S3 operation of that name.
func (h *Handler) GetObjectAttributes(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	ctx := r.Context()
	attrs, err := objattr.Parse(r.Header.Values("X-Amz-Object-Attributes"))
	if err != nil {
		return err
	}
	paging, err := objattr.ParsePaging(r.Header.Get("X-Amz-Max-Parts"), r.Header.Get("X-Amz-Part-Number-Marker"))
	if err != nil {
		return err
	}
	// The segment list is needed only to list parts; a count is in the brief form.
	head := h.Proxy.HeadObjectBrief
	if attrs.ObjectParts {
		head = h.Proxy.HeadObject
	}
	if rq.SymlinkHops == 0 {
		if err := h.SelectVersion(ctx, w, rq); err != nil {
			return err
		}
	}
	obj, err := head(ctx, rq.ReadName())
	if err != nil {
		return h.NotFound(ctx, rq, fmt.Errorf("attributes of %q: %w", rq.Key, err))
	}
	if obj.SysMeta[meta.SysSymlinkTarget] != "" {
		target, err := h.followSymlink(ctx, r, rq, &obj)
		if err != nil {
			return err
		}
		return h.GetObjectAttributes(w, r, target)
	}
	if _, _, _, err := h.CheckReadKey(ctx, r, s3core.HdrSSECPrefix, &obj, rq.Binding()); err != nil {
		return err
	}
	obj = sse.Served(obj)
	res := s3xml.GetObjectAttributesResponse{Xmlns: s3xml.Namespace}
	if attrs.ETag {
		etag, _, _ := strings.Cut(obj.ETag, ";") // unquoted here, unlike the ETag header
		res.ETag = etag
	}
	if attrs.ObjectSize {
		size := obj.Size
		res.ObjectSize = &size
	}
	if attrs.StorageClass {
		res.StorageClass = "STANDARD"
	}
	alg, value, typ := s3core.StoredChecksum(&obj)
	if attrs.Checksum && alg != "" {
		// A composite checksum is stored (and sent on HEAD) as "base64-N"; S3 gives the
		// checksum alone here, and the part count under ObjectParts.
		if typ == s3core.ChecksumComposite {
			value, _, _ = strings.Cut(value, "-")
		}
		res.Checksum = &s3xml.ObjectChecksum{ChecksumType: typ}
		s3core.SetChecksumFields(&res.Checksum.ChecksumFields, alg, value)
	}
	if attrs.ObjectParts && obj.IsManifest() {
		if res.ObjectParts, err = h.objectParts(ctx, rq, &obj, alg, paging); err != nil {
			return err
		}
	}
	w.Header().Set("Last-Modified", obj.LastModified().Format(http.TimeFormat))
	s3core.WriteVersionID(w, rq)
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}

// objectParts is the ObjectParts element of a multipart object. Its parts are listed (number,
// size, checksum) only when the upload had a checksum algorithm: each part's checksum is kept
// on the part object the manifest names, read here for the page asked for.
func (h *Handler) objectParts(ctx context.Context, rq *s3core.Request, obj *meta.Object, alg checksum.Algorithm, paging objattr.Paging) (*s3xml.GetObjectAttributesParts, error) {
	total := obj.SegmentCount()
	parts := &s3xml.GetObjectAttributesParts{PartsCount: total}
	if alg == "" || obj.SysMeta[SysUploadID] == "" || obj.Manifest == nil {
		return parts, nil // no checksum per part: the count alone, as S3 answers
	}
	first, last, truncated, next := paging.Page(total)
	parts.PartNumberMarker, parts.NextPartNumberMarker = paging.Marker, next
	parts.MaxParts, parts.IsTruncated = paging.Max, truncated
	if first > last {
		return parts, nil
	}
	parts.Parts = make([]s3xml.ObjectPart, last-first+1)
	errs := make([]error, len(parts.Parts))
	sem := make(chan struct{}, partChecksumWorkers)
	var wg sync.WaitGroup
	for i := range parts.Parts {
		n := first + i
		seg := obj.Manifest[n-1]
		parts.Parts[i] = s3xml.ObjectPart{PartNumber: n, Size: seg.Len()}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			p, err := h.Proxy.HeadObjectBrief(ctx, meta.ObjectName{Account: rq.Account, Container: seg.Container, Object: seg.Object})
			if err != nil {
				errs[i] = fmt.Errorf("part %d: %w", n, err)
				return
			}
			s3core.SetChecksumFields(&parts.Parts[i].ChecksumFields, alg, p.SysMeta[s3core.SysChecksumKey(alg)])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		// A part the object owns is missing or unreadable: the object is damaged, not absent.
		return nil, fmt.Errorf("parts of %q: %w", rq.Key, internalIfNotFound(err))
	}
	return parts, nil
}

// internalIfNotFound keeps a missing part from reading as a missing object (NoSuchKey).
func internalIfNotFound(err error) error {
	if errors.Is(err, meta.ErrNotFound) {
		return fmt.Errorf("%w: %v", s3core.ErrInternal, err)
	}
	return err
}
