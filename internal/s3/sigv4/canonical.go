package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

const (
	algorithm     = "AWS4-HMAC-SHA256"
	scopeTerminal = "aws4_request"
	service       = "s3"
	timeFormat    = "20060102T150405Z"
	dateFormat    = "20060102"

	// emptySHA256 is hex(sha256("")), part of every chunk string-to-sign.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// URIEncode applies the SigV4 UriEncode: every byte except the unreserved
// set A-Z a-z 0-9 - . _ ~ becomes %XX with upper-case hex. Slashes are kept
// only when encodeSlash is false. It is also how S3 escapes keys elsewhere
// (encoding-type=url listings, Location URLs), and how a client builds the
// path of a request it signs.
func URIEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		case c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// canonicalURI returns the S3 canonical URI of u. S3 encodes the path
// exactly once and does not normalise it: "//", "." and ".." segments are
// kept as sent. The path is taken in its escaped wire form and each
// segment is decoded then re-encoded, so that clients that escape more or
// less than the strict set (e.g. "~" vs "%7E", "=" vs "%3D") all land on the
// same canonical string, while an escaped "%2F" stays inside its segment.
func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if dec, err := url.PathUnescape(seg); err == nil {
			seg = dec
		}
		segs[i] = URIEncode(seg, true)
	}
	return strings.Join(segs, "/")
}

// canonicalQuery builds the canonical query string from the raw query: each
// name and value decoded ("+" means space, as in Go's url.ParseQuery and
// the AWS SDK for Go), re-encoded with uriEncode, sorted by name then
// value, joined as "k=v" with "&". Parameters without "=" get an empty
// value ("acl" -> "acl="). When dropSignature is set X-Amz-Signature is
// left out, as presigned URLs require. Undecodable pieces are encoded
// verbatim, which simply yields a signature mismatch.
func canonicalQuery(raw string, dropSignature bool) string {
	if raw == "" {
		return ""
	}
	type kv struct{ k, v string }
	var pairs []kv
	for _, piece := range strings.Split(raw, "&") {
		if piece == "" {
			continue
		}
		k, v, _ := strings.Cut(piece, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		if dropSignature && k == "X-Amz-Signature" {
			continue
		}
		if dv, err := url.QueryUnescape(v); err == nil {
			v = dv
		}
		pairs = append(pairs, kv{URIEncode(k, true), URIEncode(v, true)})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// headerValues returns the values of a signed header as the server sees
// them. Go moves Host and Transfer-Encoding out of the header map (and a
// client-side request carries Content-Length only in a field), so those
// are reconstructed.
func headerValues(r *http.Request, name string) []string {
	switch name {
	case "host":
		h := r.Host
		if h == "" && r.URL != nil {
			h = r.URL.Host
		}
		return []string{h}
	case "transfer-encoding":
		if len(r.TransferEncoding) > 0 {
			return []string{strings.Join(r.TransferEncoding, ",")}
		}
	case "content-length":
		if v := r.Header.Values("Content-Length"); len(v) > 0 {
			return v
		}
		if r.ContentLength > 0 {
			return []string{strconv.FormatInt(r.ContentLength, 10)}
		}
		return nil
	}
	return r.Header.Values(name)
}

// trimAll implements SigV4's Trimall: strip leading and trailing white
// space and collapse runs of spaces inside the value into one space.
func trimAll(v string) string {
	v = strings.Trim(v, " \t")
	if !strings.Contains(v, "  ") {
		return v
	}
	var b strings.Builder
	prevSpace := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == ' ' {
			if prevSpace {
				continue
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// canonicalHeaders renders "name:value\n" for each signed header in the
// order given (clients send SignedHeaders already sorted, and the string
// must match theirs byte for byte). Repeated headers are joined with ",".
func canonicalHeaders(r *http.Request, signed []string) string {
	var b strings.Builder
	for _, name := range signed {
		b.WriteString(name)
		b.WriteByte(':')
		for i, v := range headerValues(r, name) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(trimAll(v))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// canonicalRequest assembles the SigV4 canonical request.
func canonicalRequest(r *http.Request, signed []string, query, payloadHash string) string {
	return r.Method + "\n" +
		canonicalURI(r.URL) + "\n" +
		query + "\n" +
		canonicalHeaders(r, signed) + "\n" +
		strings.Join(signed, ";") + "\n" +
		payloadHash
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// signingKey derives the SigV4 key for one day, region and the s3 service.
// signingKey derives the key that signs for one secret, day and region. The derivation is four
// HMACs, two thirds of what verifying a request costs, and its inputs change once a day, so
// derived keys are remembered (the secrets are in memory anyway; the cache only ever holds a
// day's worth per key and is emptied when it grows past signingKeyCacheMax).
func signingKey(secret, date, region string) []byte {
	// Length prefixes keep the parts apart whatever bytes they hold (the region comes from the
	// request).
	id := strconv.Itoa(len(secret)) + ":" + secret + strconv.Itoa(len(date)) + ":" + date + region
	if k, ok := signingKeys.Load(id); ok {
		return k.([]byte)
	}
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	k = hmacSHA256(k, scopeTerminal)
	if signingKeyCount.Add(1) > signingKeyCacheMax {
		signingKeys.Clear()
		signingKeyCount.Store(0)
	}
	signingKeys.Store(id, k)
	return k
}

const signingKeyCacheMax = 4096

var (
	signingKeys     sync.Map // length-prefixed secret and date, then region → derived key
	signingKeyCount atomic.Int64
)

func scopeString(date, region string) string {
	return date + "/" + region + "/" + service + "/" + scopeTerminal
}

// stringToSign is the request-level string to sign.
func stringToSign(amzDate, scope, canonReq string) string {
	return algorithm + "\n" + amzDate + "\n" + scope + "\n" + sha256Hex(canonReq)
}

// SignStringV4 returns the hex SigV4 signature of stringToSign with the key of one secret, day
// (yyyymmdd) and region, for the s3 service. A browser form upload (POST Object) signs its
// base64 policy document so, with no canonical request.
func SignStringV4(secretKey, date, region, stringToSign string) string {
	return signHex(signingKey(secretKey, date, region), stringToSign)
}

func signHex(key []byte, sts string) string {
	return hex.EncodeToString(hmacSHA256(key, sts))
}

// sigEqual compares two hex signatures in constant time.
func sigEqual(a, b string) bool {
	return hmac.Equal([]byte(a), []byte(b))
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
