package backend

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// signatureLifetime is how long a signed request stays valid: long enough for clocks a little
// apart, short enough that a captured request cannot be replayed much later.
const signatureLifetime = 5 * time.Minute

// signature is the HMAC-SHA256, under the cluster secret, of what a request does: method,
// escaped path, query, timestamp and the signature's expiry. The body is not signed (that would
// cost a second pass over every byte); the path, the timestamp and the expiry make a captured
// signature useless for any other request.
func signature(secret []byte, method, path, query, timestamp string, expires int64) string {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "%s\n%s\n%s\n%s\n%d", method, path, query, timestamp, expires)
	return hex.EncodeToString(m.Sum(nil))
}

// sign adds the cluster signature to a request.
func sign(r *http.Request, secret []byte, now time.Time) {
	expires := now.Add(signatureLifetime).Unix()
	sig := signature(secret, r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get(hdrTimestamp), expires)
	r.Header.Set(hdrAuth, strconv.FormatInt(expires, 10)+":"+sig)
}

// verify checks a request's cluster signature.
func verify(r *http.Request, secret []byte, now time.Time) error {
	v := r.Header.Get(hdrAuth)
	exp, sig, ok := strings.Cut(v, ":")
	if !ok {
		return fmt.Errorf("%w: no signature", ErrUnauthorized)
	}
	expires, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: malformed signature", ErrUnauthorized)
	}
	if now.Unix() > expires {
		return fmt.Errorf("%w: signature expired", ErrUnauthorized)
	}
	if time.Unix(expires, 0).Sub(now) > 2*signatureLifetime {
		return fmt.Errorf("%w: signature expiry too far ahead", ErrUnauthorized)
	}
	want := signature(secret, r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get(hdrTimestamp), expires)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return fmt.Errorf("%w: signature does not match", ErrUnauthorized)
	}
	return nil
}

// Signed reports whether a request carries the cluster's node signature (valid or not): it is
// meant for the node protocol, which a process serving both clients and the node protocol on
// one port (a sumo node) uses to route it.
func Signed(r *http.Request) bool { return r.Header.Get(hdrAuth) != "" }
