package swift

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/swift/swiftcore"
)

// keyring is an Authenticator over a map of account:user → Swift key, identities derived from
// the names (users called "admin" administer their account, root:root is root).
type keyring map[string]string

func (k keyring) AuthenticateSwift(ctx context.Context, account, user, key string) (swiftcore.Identity, error) {
	id, _, err := k.SwiftKeyFingerprint(ctx, account, user)
	if err != nil || k[account+":"+user] != key {
		return swiftcore.Identity{}, fmt.Errorf("%s:%s: %w", account, user, ErrBadCredentials)
	}
	return id, nil
}

func (k keyring) SwiftKeyFingerprint(_ context.Context, account, user string) (swiftcore.Identity, []byte, error) {
	key, ok := k[account+":"+user]
	if !ok {
		return swiftcore.Identity{}, nil, fmt.Errorf("%s:%s: %w", account, user, ErrBadCredentials)
	}
	fp := sha256.Sum256([]byte(key))
	root := account == "root" && user == "root"
	return swiftcore.Identity{Account: account, User: user, Admin: user == "admin" || root, Root: root}, fp[:], nil
}

func TestTokensVerifyThemselves(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	key := []byte("a token key of 32 bytes, or so..")
	users := keyring{"acme:admin": "k1", "acme:bob": "k2", "root:root": "rk"}
	a := newTokenSigner(key, time.Hour, clock)
	b := newTokenSigner(append([]byte(nil), key...), time.Hour, clock)

	id, fp, _ := users.SwiftKeyFingerprint(ctx, "acme", "admin")
	tok, exp, err := a.issue(id, fp)
	if err != nil || !exp.Equal(now.Add(time.Hour)) {
		t.Fatalf("issue: %q %v %v", tok, exp, err)
	}
	if got, err := b.verify(ctx, tok, users); err != nil || got != id {
		t.Fatalf("another signer with the key: %+v, %v", got, err)
	}
	if _, err := newTokenSigner([]byte("another key of the same length."), time.Hour, clock).verify(ctx, tok, users); !errors.Is(err, swiftcore.ErrUnauthorized) {
		t.Errorf("another key accepted the token: %v", err)
	}
	if _, err := newTokenSigner(nil, time.Hour, clock).verify(ctx, tok, users); !errors.Is(err, swiftcore.ErrUnauthorized) {
		t.Errorf("a random key accepted the token: %v", err)
	}

	// Any changed byte, any cut, anything added: refused.
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok, tokenPrefix))
	for i := range raw {
		for _, bit := range []byte{1, 0x80} {
			bad := append([]byte(nil), raw...)
			bad[i] ^= bit
			if got, err := a.verify(ctx, tokenPrefix+base64.RawURLEncoding.EncodeToString(bad), users); !errors.Is(err, swiftcore.ErrUnauthorized) {
				t.Fatalf("byte %d changed (^%#x): accepted as %+v, %v", i, bit, got, err)
			}
		}
	}
	for n := range len(tok) {
		if _, err := a.verify(ctx, tok[:n], users); !errors.Is(err, swiftcore.ErrUnauthorized) {
			t.Fatalf("token cut to %d characters: %v", n, err)
		}
	}
	for _, bad := range []string{tok + "A", tok + "=", " " + tok, strings.ToLower(tok), "AUTH_tk" + strings.Repeat("A", 300), "AUTH_tk0123456789abcdef0123456789abcdef"} {
		if _, err := a.verify(ctx, bad, users); !errors.Is(err, swiftcore.ErrUnauthorized) {
			t.Errorf("%.60q…: %v", bad, err)
		}
	}

	// The expiry holds, to the nanosecond.
	now = exp.Add(-time.Nanosecond)
	if _, err := a.verify(ctx, tok, users); err != nil {
		t.Errorf("just before expiry: %v", err)
	}
	now = exp
	if _, err := a.verify(ctx, tok, users); !errors.Is(err, swiftcore.ErrUnauthorized) {
		t.Errorf("expired token: %v", err)
	}
	now = time.Unix(1_800_000_000, 0)

	// A new key for the user, the user gone, or its rights changed: its tokens are revoked.
	id, fp, _ = users.SwiftKeyFingerprint(ctx, "acme", "bob")
	bobs, _, _ := a.issue(id, fp)
	users["acme:bob"] = "k2-rotated"
	if _, err := a.verify(ctx, bobs, users); !errors.Is(err, swiftcore.ErrUnauthorized) {
		t.Errorf("token after its key was rotated: %v", err)
	}
	delete(users, "acme:bob")
	if _, err := a.verify(ctx, bobs, users); !errors.Is(err, swiftcore.ErrUnauthorized) {
		t.Errorf("token of a deleted user: %v", err)
	}
	users["acme:bob"] = "k2"
	if _, err := a.verify(ctx, bobs, users); err != nil {
		t.Errorf("the key back as it was: %v", err)
	}
	promoted := swiftcore.Identity{Account: "acme", User: "bob", Admin: true}
	forged, _, _ := a.issue(promoted, fp)
	if _, err := a.verify(ctx, forged, users); !errors.Is(err, swiftcore.ErrUnauthorized) {
		t.Errorf("a token whose rights differ from the user's: %v", err)
	}

	// Header- and URL-safe, and short enough for clients, at the longest names.
	long := strings.Repeat("x", maxTokenName)
	longTok, _, err := a.issue(swiftcore.Identity{Account: long, User: long, Admin: true, Root: true}, fp)
	if err != nil || len(longTok) > maxTokenLen {
		t.Fatalf("token for the longest names: %d characters, %v", len(longTok), err)
	}
	for _, c := range longTok + tok {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			t.Fatalf("token character %q is not URL-safe", c)
		}
	}
	if _, _, err := a.issue(swiftcore.Identity{Account: long + "x", User: "u"}, fp); err == nil {
		t.Error("a token for a name too long to fit")
	}
}

// The tenant store's failures are not 401s: a client must not be told to log in again when
// the store could not answer.
func TestTokenVerifyPassesStoreErrors(t *testing.T) {
	s := newTokenSigner(nil, time.Hour, time.Now)
	users := keyring{"a:u": "k"}
	id, fp, _ := users.SwiftKeyFingerprint(context.Background(), "a", "u")
	tok, _, _ := s.issue(id, fp)
	down := errors.New("tenant store unreachable")
	_, err := s.verify(context.Background(), tok, failingAuth{down})
	if !errors.Is(err, down) || errors.Is(err, swiftcore.ErrUnauthorized) {
		t.Errorf("verify with a failing store: %v", err)
	}
}

type failingAuth struct{ err error }

func (f failingAuth) AuthenticateSwift(context.Context, string, string, string) (swiftcore.Identity, error) {
	return swiftcore.Identity{}, f.err
}

func (f failingAuth) SwiftKeyFingerprint(context.Context, string, string) (swiftcore.Identity, []byte, error) {
	return swiftcore.Identity{}, nil, f.err
}

func FuzzParseToken(f *testing.F) {
	s := newTokenSigner(nil, time.Hour, time.Now)
	tok, _, _ := s.issue(swiftcore.Identity{Account: "a", User: "u"}, nil)
	f.Add(tok)
	f.Add("AUTH_tk")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := parseToken(tok)
		if err != nil {
			return
		}
		if c.id.Account == "" || c.id.User == "" || len(c.tag) != tokenTagLen || len(tok) > maxTokenLen {
			t.Fatalf("%q → %+v", tok, c)
		}
	})
}
