package s3

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/s3/s3xml"
)

// Versioning. Cairn keeps one version of each object: a bucket is always in the state AWS calls
// "never enabled", where every object is its one version with the version ID "null". So
// GET ?versioning answers no Status, ListObjectVersions lists each object as its latest (and
// only) version, and PUT ?versioning accepts Suspended (a no-op on such a bucket) but refuses
// Enabled as NotImplemented: storing several versions is not supported.

// nullVersion is the version ID of the one version an unversioned object has.
const nullVersion = "null"

func (h *Handler) listObjectVersions(w http.ResponseWriter, r *http.Request, rq *request) error {
	p, err := parseListParams(rq.query)
	if err != nil {
		return err
	}
	keyMarker, versionMarker := rq.query.Get("key-marker"), rq.query.Get("version-id-marker")
	if versionMarker != "" && keyMarker == "" {
		return errInvalidArgument.withMessage("A version-id marker cannot be specified without a key marker.")
	}
	if versionMarker != "" && versionMarker != nullVersion {
		return errInvalidArgument.withMessage("Invalid version id specified")
	}
	l, err := h.listPage(r, rq, p, keyMarker)
	if err != nil {
		return err
	}
	res := s3xml.ListVersionsResult{Xmlns: s3xml.Namespace, Name: rq.bucket, Prefix: p.encode(p.prefix), KeyMarker: p.encode(keyMarker),
		VersionIDMarker: versionMarker, MaxKeys: p.maxKeys, IsTruncated: l.Truncated}
	if rq.query.Has("delimiter") {
		d := p.encode(p.delimiter)
		res.Delimiter = &d
	}
	if p.urlEncode {
		res.EncodingType = "url"
	}
	o := rq.owner()
	for _, e := range l.Objects {
		res.Versions = append(res.Versions, s3xml.ObjectVersion{Key: p.encode(e.Name), VersionID: nullVersion, IsLatest: true,
			LastModified: s3xml.FormatISO(e.Timestamp.Time()), ETag: quoteETag(e.ETag), Size: e.Size, Owner: o, StorageClass: "STANDARD"})
	}
	for _, cp := range l.CommonPrefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, s3xml.CommonPrefix{Prefix: p.encode(cp)})
	}
	if l.Truncated {
		res.NextKeyMarker = p.encode(l.NextMarker)
		if !strings.HasSuffix(l.NextMarker, p.delimiter) || p.delimiter == "" {
			res.NextVersionIDMarker = nullVersion
		}
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

func (h *Handler) putBucketVersioning(w http.ResponseWriter, r *http.Request, rq *request) error {
	body, err := h.readSmallBody(r, rq, 64<<10, false)
	if err != nil {
		return err
	}
	var v s3xml.VersioningRequest
	if err := xml.Unmarshal(body, &v); err != nil {
		return errMalformedXML
	}
	if _, err := h.requireBucket(r.Context(), rq); err != nil {
		return err
	}
	switch v.Status {
	case "Suspended":
		writeEmpty(w, http.StatusOK) // a no-op: the bucket never kept versions
		return nil
	case "Enabled":
		return errNotImplemented.withMessage("Versioning is not supported by this server: a bucket keeps one version of each object.")
	}
	return errMalformedXML
}
