package objects

import (
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/versions"
)

// ListObjectVersions serves the S3 operation of that name.
func (h *Handler) ListObjectVersions(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	p, err := s3core.ParseListParams(rq.Query)
	if err != nil {
		return err
	}
	keyMarker, versionMarker := rq.Query.Get("key-marker"), rq.Query.Get("version-id-marker")
	// As Swift's s3api: a version marker needs the key-marker parameter (empty or not), and is
	// checked once it has one.
	if rq.Query.Has("version-id-marker") && !rq.Query.Has("key-marker") {
		return s3core.ErrInvalidArgument.WithMessage("A version-id marker cannot be specified without a key marker.")
	}
	if versionMarker != "" && !s3core.ValidVersionID(versionMarker) {
		return s3core.ErrInvalidArgument.WithMessage("Invalid version id specified")
	}
	res := s3xml.ListVersionsResult{Xmlns: s3xml.Namespace, Name: rq.Bucket, Prefix: p.Encode(p.Prefix), KeyMarker: p.Encode(keyMarker),
		VersionIDMarker: versionMarker, MaxKeys: p.MaxKeys}
	if rq.Query.Has("delimiter") {
		d := p.Encode(p.Delimiter)
		res.Delimiter = &d
	}
	if p.URLEncode {
		res.EncodingType = "url"
	}
	if p.MaxKeys == 0 {
		if _, err := h.RequireBucket(r.Context(), rq); err != nil {
			return err
		}
		s3core.WriteXML(w, http.StatusOK, res)
		return nil
	}
	l, err := h.Versions.List(r.Context(), rq.Versioning(), rq.Account, rq.Bucket, versions.ListOptions{
		Prefix: p.Prefix, Delimiter: p.Delimiter, KeyMarker: keyMarker, VersionMarker: versionMarker, Limit: p.MaxKeys})
	if err != nil {
		return s3core.BucketError(s3core.VersionError(fmt.Errorf("list versions of %q: %w", rq.Bucket, err)))
	}
	o := rq.Owner()
	for _, v := range l.Versions {
		e := s3xml.ObjectVersion{XMLName: s3xml.VersionElement, Key: p.Encode(v.Key), VersionID: v.ID, IsLatest: v.Latest,
			LastModified: s3xml.FormatISO(v.Entry.LastModified()), Owner: o}
		if v.DeleteMarker {
			e.XMLName = s3xml.DeleteMarkerElement
		} else {
			size := v.Entry.Size
			e.ETag, e.Size, e.StorageClass = s3core.QuoteETag(v.Entry.ETag), &size, "STANDARD"
		}
		res.Versions = append(res.Versions, e)
	}
	for _, cp := range l.CommonPrefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, s3xml.CommonPrefix{Prefix: p.Encode(cp)})
	}
	res.IsTruncated = l.Truncated
	if l.Truncated {
		res.NextKeyMarker, res.NextVersionIDMarker = p.Encode(l.NextKeyMarker), l.NextVersionMarker
	}
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}
