package swiftwire

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net"
	"net/netip"
	"strings"
)

// TempURLMethods are the methods a temp URL may allow, as Swift's default.
var TempURLMethods = []string{"GET", "HEAD", "PUT", "POST", "DELETE"}

// TempURLDigests are the signature digests accepted, as Swift 2.30's default allowed_digests.
var TempURLDigests = map[string]func() hash.Hash{"sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}

// ParseTempURLSig reads a signature: hex (its length names the digest), or
// "<digest>:<base64>" (standard or URL-safe). It returns the digest name and the raw MAC.
func ParseTempURLSig(sig string) (string, []byte, bool) {
	if alg, b64, ok := strings.Cut(sig, ":"); ok {
		if strings.ContainsAny(b64, "-_") && !strings.ContainsAny(b64, "+/") {
			b64 = strings.NewReplacer("-", "+", "_", "/").Replace(b64)
		}
		raw, err := base64.StdEncoding.DecodeString(b64 + strings.Repeat("=", (4-len(b64)%4)%4))
		if err != nil {
			return "", nil, false
		}
		return alg, raw, true
	}
	raw, err := hex.DecodeString(sig)
	if err != nil {
		return "", nil, false
	}
	switch len(raw) {
	case sha1.Size:
		return "sha1", raw, true
	case sha256.Size:
		return "sha256", raw, true
	case sha512.Size:
		return "sha512", raw, true
	}
	return "", nil, false
}

// TempURLMAC is the HMAC Swift's get_hmac computes.
func TempURLMAC(newHash func() hash.Hash, key, method string, expires int64, signedPath, ipRange string) []byte {
	m := hmac.New(newHash, []byte(key))
	if ipRange != "" {
		fmt.Fprintf(m, "ip=%s\n", ipRange)
	}
	fmt.Fprintf(m, "%s\n%d\n%s", method, expires, signedPath)
	return m.Sum(nil)
}

func IPInRange(remote, rng string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	if pfx, err := netip.ParsePrefix(rng); err == nil {
		return pfx.Contains(addr.Unmap())
	}
	if a, err := netip.ParseAddr(rng); err == nil {
		return a == addr.Unmap()
	}
	return false
}
