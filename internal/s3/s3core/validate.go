package s3core

import (
	"encoding/base64"
	"mime"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/cairn-store/cairn/internal/meta"
)

// S3 limits.
const (
	maxKeyBytes          = 1024
	maxUserMetaBytes     = 2 << 10
	MaxPartNumber        = 10000
	MinPartSize          = 5 << 20
	MaxListKeys          = 1000
	MaxDeleteObjects     = 1000
	userMetaHeaderPrefix = "X-Amz-Meta-"
)

// CheckBucketNameForCreate applies S3's naming rules for new general purpose buckets.
func CheckBucketNameForCreate(name string) error {
	bad := func(why string) error {
		return errInvalidBucketName.WithMessage("The specified bucket is not valid: %s.", why)
	}
	if len(name) < 3 || len(name) > 63 {
		return bad("a bucket name must be 3 to 63 characters long")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return bad("only lower-case letters, digits, dots and hyphens are allowed")
		}
	}
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return bad("a bucket name must begin and end with a letter or digit")
	}
	if strings.Contains(name, "..") {
		return bad("a bucket name must not contain two adjacent periods")
	}
	if net.ParseIP(name) != nil {
		return bad("a bucket name must not be formatted as an IP address")
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return bad("the prefix " + p + " is reserved")
		}
	}
	for _, s := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, s) {
			return bad("the suffix " + s + " is reserved")
		}
	}
	return nil
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// CheckBucketNameForAccess accepts any name that could name a bucket, including legacy names
// S3 no longer lets anyone create, but never one of Cairn's reserved containers.
func CheckBucketNameForAccess(name string) error {
	if len(name) > 255 || strings.HasPrefix(name, meta.ReservedPrefix) || strings.ContainsRune(name, 0) || !utf8.ValidString(name) {
		return errInvalidBucketName
	}
	return nil
}

// CheckKey applies S3's key rules, plus Cairn's own: no NUL, because multipart bookkeeping
// uses NUL as its separator.
func CheckKey(key string) error {
	if len(key) > maxKeyBytes {
		return errKeyTooLong.WithMessage("Your key is too long: %d bytes, at most %d allowed.", len(key), maxKeyBytes)
	}
	if !utf8.ValidString(key) {
		return errInvalidURI
	}
	if strings.ContainsRune(key, 0) {
		return ErrInvalidArgument.WithMessage("Object keys must not contain the NUL character.")
	}
	return nil
}

// ObjectMetaFromRequest reads the metadata a PUT, copy (REPLACE) or multipart initiation
// gives the object: content type, content headers and user metadata.
func ObjectMetaFromRequest(hdr http.Header) (meta.Object, error) {
	var obj meta.Object
	obj.ContentType = hdr.Get("Content-Type")
	if obj.ContentType == "" {
		obj.ContentType = "binary/octet-stream" // S3's default
	}
	for _, k := range meta.StoredHeaders {
		v := hdr.Get(k)
		if k == "Content-Encoding" {
			// Every line of it: "Content-Encoding: aws-chunked" and "Content-Encoding: gzip"
			// are "aws-chunked,gzip".
			v = withoutAWSChunked(strings.Join(hdr.Values(k), ","))
		}
		if v != "" {
			if obj.Headers == nil {
				obj.Headers = map[string]string{}
			}
			obj.Headers[k] = v
		}
	}
	size := 0
	for k, vs := range hdr {
		name, ok := strings.CutPrefix(k, userMetaHeaderPrefix)
		if !ok || name == "" {
			continue
		}
		name = strings.ToLower(name)
		v := decodeMetaValue(strings.Join(vs, ",")) // several headers of one name arrive joined, as in S3
		size += len(name) + len(v)
		if obj.UserMeta == nil {
			obj.UserMeta = map[string]string{}
		}
		obj.UserMeta[name] = v
	}
	if size > maxUserMetaBytes {
		return meta.Object{}, errMetadataTooLarge.WithMessage("Your metadata headers exceed the maximum allowed metadata size: %d bytes, at most %d allowed.", size, maxUserMetaBytes)
	}
	return obj, nil
}

// User metadata values travel in HTTP headers, which carry US-ASCII well and nothing else
// reliably. S3 therefore decodes RFC 2047 encoded-words in a value before storing it, and
// returns a stored value that is not printable US-ASCII as one encoded-word, =?UTF-8?B?...?=
// ("Values of such headers are character decoded as per RFC 2047 before storing and encoded as
// per RFC 2047 to make them mail-safe before returning"): a client that sends encoded words
// gets them back as it sent them, and the stored value is the text itself, which the Swift API
// shows as it is. A raw value outside US-ASCII is kept as UTF-8 when it is UTF-8 (what Swift
// clients and most SDKs send), and read as ISO-8859-1, as S3 reads it, when it is not.

var metaWordDecoder = &mime.WordDecoder{} // UTF-8, ISO-8859-1 and US-ASCII words

// decodeMetaValue is the value to store for a user metadata header as sent.
func decodeMetaValue(v string) string {
	if strings.Contains(v, "=?") {
		if d, err := metaWordDecoder.DecodeHeader(v); err == nil {
			v = d
		}
	}
	if utf8.ValidString(v) {
		return v
	}
	r := make([]rune, len(v))
	for i := 0; i < len(v); i++ {
		r[i] = rune(v[i]) // ISO-8859-1 is the first 256 code points
	}
	return string(r)
}

// encodeMetaValue is the header value of a stored user metadata value: the value itself when
// it is printable US-ASCII (tabs included), else one RFC 2047 encoded-word of its UTF-8.
func encodeMetaValue(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "=?UTF-8?B?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
		}
	}
	return v
}

// withoutAWSChunked removes the aws-chunked transfer coding from a Content-Encoding: it
// describes the request body, not the object. A value without it is kept as the client
// spelled it ("deflate, gzip" reads back so, as in S3).
func withoutAWSChunked(v string) string {
	if v == "" {
		return ""
	}
	var kept []string
	chunked := false
	for _, c := range strings.Split(v, ",") {
		c = strings.TrimSpace(c)
		switch {
		case strings.EqualFold(c, "aws-chunked"):
			chunked = true
		case c != "":
			kept = append(kept, c)
		}
	}
	if !chunked && len(kept) > 0 {
		return v
	}
	return strings.Join(kept, ", ")
}

// WriteObjectMeta sets the response headers that describe an object's metadata.
func WriteObjectMeta(hdr http.Header, obj *meta.Object) {
	if obj.ContentType != "" {
		hdr.Set("Content-Type", obj.ContentType)
	} else {
		hdr.Set("Content-Type", "binary/octet-stream")
	}
	for k, v := range obj.Headers {
		hdr.Set(k, v)
	}
	for k, v := range obj.UserMeta {
		hdr["x-amz-meta-"+k] = []string{encodeMetaValue(v)} // S3 answers in lower case, as stored
	}
	hdr.Set("Last-Modified", obj.LastModified().Format(http.TimeFormat))
	hdr.Set("ETag", QuoteETag(obj.ETag))
}

// A Swift static large object's listing ETag carries parameters ("; slo_etag=..."): S3 shows
// the ETag alone.
func QuoteETag(etag string) string {
	etag, _, _ = strings.Cut(etag, ";")
	return `"` + etag + `"`
}
