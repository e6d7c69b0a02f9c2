package s3

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/versions"
)

// listParams are the parameters common to ListObjects V1 and V2.
type listParams struct {
	prefix, delimiter string
	maxKeys           int
	urlEncode         bool
}

func parseListParams(q map[string][]string) (listParams, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	p := listParams{prefix: get("prefix"), delimiter: get("delimiter"), maxKeys: maxListKeys}
	if v, ok := q["max-keys"]; ok {
		n, err := parseMaxKeys(v[0], maxListKeys)
		if err != nil {
			return p, err
		}
		p.maxKeys = n
	}
	switch e := get("encoding-type"); e {
	case "":
	case "url":
		p.urlEncode = true
	default:
		return p, errInvalidArgument.withMessage("Invalid Encoding Method specified in Request")
	}
	return p, nil
}

// parseMaxKeys parses max-keys (or max-uploads, max-parts): a non-negative integer, capped.
func parseMaxKeys(v string, limit int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, errInvalidArgument.withMessage("Provided max-keys not an integer or within integer range")
	}
	return min(n, limit), nil
}

// Continuation tokens are opaque to clients: the base64 of the name to continue after.
func encodeContinuationToken(marker string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(marker))
}

func decodeContinuationToken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", errInvalidArgument.withMessage("The continuation token provided is incorrect")
	}
	return string(b), nil
}

// s3URLEncode encodes a name for encoding-type=url: every byte but the unreserved characters
// and "/" as %XX, so that clients decoding with either unquote or unquote_plus get it back.
func s3URLEncode(s string) string { return sigv4.URIEncode(s, false) }

func (p listParams) encode(s string) string {
	if p.urlEncode {
		return s3URLEncode(s)
	}
	return s
}

// listPage fetches one page of the bucket after marker.
func (h *Handler) listPage(r *http.Request, rq *request, p listParams, marker string) (meta.ObjectListing, error) {
	if p.maxKeys == 0 {
		return meta.ObjectListing{}, nil
	}
	l, err := h.proxy.ListObjects(r.Context(), rq.account, rq.bucket, meta.ListOptions{
		Prefix: p.prefix, Delimiter: p.delimiter, Marker: marker, Limit: p.maxKeys,
	})
	if err != nil {
		return l, bucketError(fmt.Errorf("list bucket %q: %w", rq.bucket, err))
	}
	for i, e := range l.Objects {
		l.Objects[i] = versions.AsCurrent(e, rq.bucket)
	}
	return l, nil
}

func (p listParams) fill(res *s3xml.ListBucketResult, l meta.ObjectListing, withOwner *s3xml.Owner) {
	res.Xmlns = s3xml.Namespace
	res.Prefix = p.encode(p.prefix)
	res.Delimiter = p.encode(p.delimiter)
	res.MaxKeys = p.maxKeys
	if p.urlEncode {
		res.EncodingType = "url"
	}
	res.IsTruncated = l.Truncated
	for _, e := range l.Objects {
		res.Contents = append(res.Contents, s3xml.ObjectInfo{
			Key: p.encode(e.Name), LastModified: s3xml.FormatISO(e.Timestamp.Time()), ETag: quoteETag(e.ETag),
			Size: e.Size, StorageClass: "STANDARD", Owner: withOwner,
		})
	}
	for _, cp := range l.CommonPrefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, s3xml.CommonPrefix{Prefix: p.encode(cp)})
	}
}

func (h *Handler) listObjectsV1(w http.ResponseWriter, r *http.Request, rq *request) error {
	p, err := parseListParams(rq.query)
	if err != nil {
		return err
	}
	marker := rq.query.Get("marker")
	l, err := h.listPage(r, rq, p, marker)
	if err != nil {
		return err
	}
	o := rq.owner()
	res := s3xml.ListBucketResult{Name: rq.bucket}
	encodedMarker := p.encode(marker)
	res.Marker = &encodedMarker
	p.fill(&res, l, &o)
	// S3 sends NextMarker only with a delimiter; without one, clients continue after the last
	// key listed.
	if l.Truncated && p.delimiter != "" {
		res.NextMarker = p.encode(l.NextMarker)
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

func (h *Handler) listObjectsV2(w http.ResponseWriter, r *http.Request, rq *request) error {
	p, err := parseListParams(rq.query)
	if err != nil {
		return err
	}
	startAfter := rq.query.Get("start-after")
	// An empty continuation-token is no token (boto3 sends one on a first page when asked to).
	token := rq.query.Get("continuation-token")
	marker := startAfter
	if token != "" {
		if marker, err = decodeContinuationToken(token); err != nil {
			return err
		}
	}
	l, err := h.listPage(r, rq, p, marker)
	if err != nil {
		return err
	}
	var o *s3xml.Owner
	if rq.query.Get("fetch-owner") == "true" {
		ow := rq.owner()
		o = &ow
	}
	res := s3xml.ListBucketResult{Name: rq.bucket, ContToken: token}
	if _, ok := rq.query["start-after"]; ok {
		sa := p.encode(startAfter)
		res.StartAfter = &sa
	}
	p.fill(&res, l, o)
	n := len(res.Contents) + len(res.CommonPrefixes)
	res.KeyCount = &n
	if l.Truncated {
		res.NextContToken = encodeContinuationToken(l.NextMarker)
	}
	writeXML(w, http.StatusOK, res)
	return nil
}
