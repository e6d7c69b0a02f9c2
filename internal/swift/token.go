package swift

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/swift/swiftcore"
)

// Tokens verify themselves, so that every proxy of a cluster accepts a token another issued
// without sharing a table of them (and tokens survive a restart): a token is tokenPrefix and,
// in base64url without padding,
//
//	version (1 byte) | flags (1: admin 0x1, root 0x2) | expiry (8, Unix nanoseconds, big-endian)
//	| len(account) (1) | account | len(user) (1) | user | tag (32)
//
// where tag is HMAC-SHA256 under the token key of tokenTagLabel, everything before the tag, and
// the fingerprint of the user's Swift key when the token was issued (Authenticator). The
// fingerprint is in the tag rather than in the token: a token checks against the user's key of
// now, so rotating the key or deleting the user revokes its tokens, and a token shows nothing
// derived from the key (a short key chosen by an operator could be guessed from a hash of it).
// The identity is not secret (it is in the storage URL anyway); its integrity is the tag's.
const (
	tokenVersion  = 1
	tokenTagLabel = "cairn swift token v1\x00"
	tokenTagLen   = sha256.Size
	// maxTokenName bounds the account and user names a token carries (the tenant store's
	// names are at most 64 characters), which keeps every token under maxTokenLen.
	maxTokenName = 64
	// maxTokenLen: clients and proxies in between store and pass tokens in fields of 255 or
	// 256 characters. A longer token is refused before it is decoded.
	maxTokenLen = 255
	// MinTokenKey is the shortest Config.TokenKey taken.
	MinTokenKey = 16
)

const (
	tokenFlagAdmin = 1 << iota
	tokenFlagRoot
)

// errBadToken: a token that is malformed, forged, expired or revoked (all 401).
var errBadToken = fmt.Errorf("invalid or expired token: %w", swiftcore.ErrUnauthorized)

// tokenSigner issues and verifies tokens under one key.
type tokenSigner struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// newTokenSigner returns a signer; without a key it makes a random one, whose tokens only this
// handler accepts, and only until it stops.
func newTokenSigner(key []byte, ttl time.Duration, now func() time.Time) *tokenSigner {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic(fmt.Sprintf("crypto/rand failed: %v", err)) // no entropy: no token is safe
		}
	}
	return &tokenSigner{key: key, ttl: ttl, now: now}
}

// issue returns a token for id, bound to the fingerprint of its key, and when it expires.
func (t *tokenSigner) issue(id swiftcore.Identity, fingerprint []byte) (string, time.Time, error) {
	if id.Account == "" || len(id.Account) > maxTokenName || id.User == "" || len(id.User) > maxTokenName {
		return "", time.Time{}, fmt.Errorf("swift: %q:%q: names of 1 to %d bytes fit in a token", id.Account, id.User, maxTokenName)
	}
	exp := t.now().Add(t.ttl)
	var flags byte
	if id.Admin {
		flags |= tokenFlagAdmin
	}
	if id.Root {
		flags |= tokenFlagRoot
	}
	b := make([]byte, 0, 12+len(id.Account)+len(id.User)+tokenTagLen)
	b = append(b, tokenVersion, flags)
	b = binary.BigEndian.AppendUint64(b, uint64(exp.UnixNano()))
	b = append(b, byte(len(id.Account)))
	b = append(b, id.Account...)
	b = append(b, byte(len(id.User)))
	b = append(b, id.User...)
	b = append(b, t.tag(b, fingerprint)...)
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b), exp, nil
}

func (t *tokenSigner) tag(payload, fingerprint []byte) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte(tokenTagLabel))
	m.Write(payload) // self-delimiting, so that the fingerprint after it is unambiguous
	m.Write(fingerprint)
	return m.Sum(nil)
}

// tokenClaims is what a token says, before it is verified.
type tokenClaims struct {
	id      swiftcore.Identity
	expires time.Time
	payload []byte // the bytes the tag covers, fingerprint aside
	tag     []byte
}

// parseToken decodes a token's structure; nothing in it is trusted yet.
func parseToken(tok string) (tokenClaims, error) {
	raw, ok := strings.CutPrefix(tok, tokenPrefix)
	if !ok || len(tok) > maxTokenLen {
		return tokenClaims{}, fmt.Errorf("not a token of this server: %w", errBadToken)
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(raw)
	if err != nil {
		return tokenClaims{}, fmt.Errorf("token encoding: %w", errBadToken)
	}
	const head = 10 // version, flags, expiry
	if len(b) < head+2+tokenTagLen {
		return tokenClaims{}, fmt.Errorf("token too short: %w", errBadToken)
	}
	c := tokenClaims{payload: b[:len(b)-tokenTagLen], tag: b[len(b)-tokenTagLen:]}
	if b[0] != tokenVersion || b[1]&^(tokenFlagAdmin|tokenFlagRoot) != 0 {
		return tokenClaims{}, fmt.Errorf("token header: %w", errBadToken)
	}
	c.id.Admin, c.id.Root = b[1]&tokenFlagAdmin != 0, b[1]&tokenFlagRoot != 0
	c.expires = time.Unix(0, int64(binary.BigEndian.Uint64(b[2:head])))
	names := c.payload[head:]
	na := int(names[0])
	if na == 0 || 1+na >= len(names) {
		return tokenClaims{}, fmt.Errorf("token account: %w", errBadToken)
	}
	c.id.Account, names = string(names[1:1+na]), names[1+na:]
	if nu := int(names[0]); nu == 0 || 1+nu != len(names) {
		return tokenClaims{}, fmt.Errorf("token user: %w", errBadToken)
	}
	c.id.User = string(names[1:])
	return c, nil
}

// verify returns the identity a token was issued to, if it is well formed, unexpired, tagged
// under this signer's key and still bound to the user's current key; errBadToken otherwise.
// Errors of the tenant store (unavailable, for instance) are returned as they are.
func (t *tokenSigner) verify(ctx context.Context, tok string, auth Authenticator) (swiftcore.Identity, error) {
	c, err := parseToken(tok)
	if err != nil {
		return swiftcore.Identity{}, err
	}
	// The expiry is not verified yet, but refusing on it can only refuse.
	if !t.now().Before(c.expires) {
		return swiftcore.Identity{}, fmt.Errorf("token expired: %w", errBadToken)
	}
	id, fp, err := auth.SwiftKeyFingerprint(ctx, c.id.Account, c.id.User)
	if errors.Is(err, ErrBadCredentials) {
		return swiftcore.Identity{}, fmt.Errorf("token of %s:%s, no longer a user: %w", c.id.Account, c.id.User, errBadToken)
	}
	if err != nil {
		return swiftcore.Identity{}, fmt.Errorf("check a token: %w", err)
	}
	if !hmac.Equal(t.tag(c.payload, fp), c.tag) {
		return swiftcore.Identity{}, fmt.Errorf("token of %s:%s does not verify (forged, another key, or the user's key changed): %w", c.id.Account, c.id.User, errBadToken)
	}
	if id != c.id {
		return swiftcore.Identity{}, fmt.Errorf("token of %s:%s: the user's rights changed since: %w", c.id.Account, c.id.User, errBadToken)
	}
	return id, nil
}
