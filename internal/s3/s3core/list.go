package s3core

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/s3/s3xml"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// ListParams are the parameters common to ListObjects V1 and V2.
type ListParams struct {
	Prefix, Delimiter string
	MaxKeys           int
	URLEncode         bool
}

func ParseListParams(q map[string][]string) (ListParams, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	p := ListParams{Prefix: get("prefix"), Delimiter: get("delimiter"), MaxKeys: MaxListKeys}
	if v, ok := q["max-keys"]; ok {
		n, err := ParseMaxKeys(v[0], MaxListKeys)
		if err != nil {
			return p, err
		}
		p.MaxKeys = n
	}
	switch e := get("encoding-type"); e {
	case "":
	case "url":
		p.URLEncode = true
	default:
		return p, ErrInvalidArgument.WithMessage("Invalid Encoding Method specified in Request")
	}
	return p, nil
}

// ParseMaxKeys parses max-keys (or max-uploads, max-parts): a non-negative integer, capped.
func ParseMaxKeys(v string, limit int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, ErrInvalidArgument.WithMessage("Provided max-keys not an integer or within integer range")
	}
	return min(n, limit), nil
}

// Continuation tokens are opaque to clients: the base64 of the name to continue after.
func EncodeContinuationToken(marker string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(marker))
}

func DecodeContinuationToken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", ErrInvalidArgument.WithMessage("The continuation token provided is incorrect")
	}
	return string(b), nil
}

// S3URLEncode encodes a name for encoding-type=url: every byte but the unreserved characters
// and "/" as %XX, so that clients decoding with either unquote or unquote_plus get it back.
func S3URLEncode(s string) string { return sigv4.URIEncode(s, false) }

func (p ListParams) Encode(s string) string {
	if p.URLEncode {
		return S3URLEncode(s)
	}
	return s
}

func (p ListParams) Fill(res *s3xml.ListBucketResult, l meta.ObjectListing, withOwner *s3xml.Owner) {
	res.Xmlns = s3xml.Namespace
	res.Prefix = p.Encode(p.Prefix)
	res.Delimiter = p.Encode(p.Delimiter)
	res.MaxKeys = p.MaxKeys
	if p.URLEncode {
		res.EncodingType = "url"
	}
	res.IsTruncated = l.Truncated
	for _, e := range l.Objects {
		res.Contents = append(res.Contents, s3xml.ObjectInfo{
			Key: p.Encode(e.Name), LastModified: s3xml.FormatISO(e.LastModified()), ETag: QuoteETag(e.ETag),
			Size: e.Size, StorageClass: "STANDARD", Owner: withOwner,
		})
	}
	for _, cp := range l.CommonPrefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, s3xml.CommonPrefix{Prefix: p.Encode(cp)})
	}
}
