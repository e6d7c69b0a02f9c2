package objects

import (
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/versions"
)

// listPage fetches one page of the bucket after marker.
func (h *Handler) listPage(r *http.Request, rq *s3core.Request, p s3core.ListParams, marker string) (meta.ObjectListing, error) {
	if p.MaxKeys == 0 {
		return meta.ObjectListing{}, nil
	}
	l, err := h.Proxy.ListObjects(r.Context(), rq.Account, rq.Bucket, meta.ListOptions{
		Prefix: p.Prefix, Delimiter: p.Delimiter, Marker: marker, Limit: p.MaxKeys,
	})
	if err != nil {
		return l, s3core.BucketError(fmt.Errorf("list bucket %q: %w", rq.Bucket, err))
	}
	for i, e := range l.Objects {
		l.Objects[i] = versions.AsCurrent(e, rq.Bucket)
	}
	return l, nil
}

// ListObjectsV1 serves ListObjects (version 1 of the listing).
func (h *Handler) ListObjectsV1(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	p, err := s3core.ParseListParams(rq.Query)
	if err != nil {
		return err
	}
	marker := rq.Query.Get("marker")
	l, err := h.listPage(r, rq, p, marker)
	if err != nil {
		return err
	}
	o := rq.Owner()
	res := s3xml.ListBucketResult{Name: rq.Bucket}
	encodedMarker := p.Encode(marker)
	res.Marker = &encodedMarker
	p.Fill(&res, l, &o)
	// S3 sends NextMarker only with a delimiter; without one, clients continue after the last
	// key listed.
	if l.Truncated && p.Delimiter != "" {
		res.NextMarker = p.Encode(l.NextMarker)
	}
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}

// ListObjectsV2 serves the S3 operation of that name.
func (h *Handler) ListObjectsV2(w http.ResponseWriter, r *http.Request, rq *s3core.Request) error {
	p, err := s3core.ParseListParams(rq.Query)
	if err != nil {
		return err
	}
	startAfter := rq.Query.Get("start-after")
	// An empty continuation-token is no token (boto3 sends one on a first page when asked to).
	token := rq.Query.Get("continuation-token")
	marker := startAfter
	if token != "" {
		if marker, err = s3core.DecodeContinuationToken(token); err != nil {
			return err
		}
	}
	l, err := h.listPage(r, rq, p, marker)
	if err != nil {
		return err
	}
	var o *s3xml.Owner
	if rq.Query.Get("fetch-owner") == "true" {
		ow := rq.Owner()
		o = &ow
	}
	res := s3xml.ListBucketResult{Name: rq.Bucket}
	if _, ok := rq.Query["continuation-token"]; ok {
		res.ContToken = &token // echoed, an empty one too, as start-after is
	}
	if _, ok := rq.Query["start-after"]; ok {
		sa := p.Encode(startAfter)
		res.StartAfter = &sa
	}
	p.Fill(&res, l, o)
	n := len(res.Contents) + len(res.CommonPrefixes)
	res.KeyCount = &n
	if l.Truncated {
		res.NextContToken = s3core.EncodeContinuationToken(l.NextMarker)
	}
	s3core.WriteXML(w, http.StatusOK, res)
	return nil
}
