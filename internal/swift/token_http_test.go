package swift_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
	"github.com/cairn-store/cairn/internal/swift"
)

// sharedKeys is a tenant store that the handlers of a test share, as a cluster's proxies share
// one, and whose keys a test may rotate.
type sharedKeys struct {
	mu   sync.Mutex
	keys map[string]string // account:user → Swift key
}

func (s *sharedKeys) AuthenticateSwift(ctx context.Context, account, user, key string) (swift.Identity, error) {
	s.mu.Lock()
	want, ok := s.keys[account+":"+user]
	s.mu.Unlock()
	if !ok || want != key {
		return swift.Identity{}, fmt.Errorf("%s:%s: %w", account, user, swift.ErrBadCredentials)
	}
	return swift.Identity{Account: account, User: user, Admin: true}, nil
}

func (s *sharedKeys) SwiftKeyFingerprint(_ context.Context, account, user string) (swift.Identity, []byte, error) {
	s.mu.Lock()
	key, ok := s.keys[account+":"+user]
	s.mu.Unlock()
	if !ok {
		return swift.Identity{}, nil, fmt.Errorf("%s:%s: %w", account, user, swift.ErrBadCredentials)
	}
	fp := sha256.Sum256([]byte(key))
	return swift.Identity{Account: account, User: user, Admin: true}, fp[:], nil
}

func (s *sharedKeys) set(user, key string) {
	s.mu.Lock()
	s.keys[user] = key
	s.mu.Unlock()
}

// proxies are Swift handlers over one storage node, as a cluster's proxies are over its nodes,
// each with its own token key; it returns their URLs.
func proxies(t *testing.T, auth swift.Authenticator, c *clock, keys ...[]byte) []string {
	t.Helper()
	node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	var urls []string
	for _, key := range keys {
		px, err := proxy.New(proxy.Config{Ring: ring.SingleDevice("local", "d0", 6, ""), Dialer: nodeclient.Local{Client: node}, ContainerCacheTTL: -1})
		if err != nil {
			t.Fatal(err)
		}
		h, err := swift.New(swift.Config{Proxy: px, Auth: auth, Accounts: newAccountStore(), Now: c.now, TokenTTL: time.Hour, TokenKey: key})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	return urls
}

func login(t *testing.T, url, user, key string) string {
	t.Helper()
	resp, body := do(t, "GET", url+"/auth/v1.0", map[string]string{"X-Auth-User": user, "X-Auth-Key": key}, nil)
	expect(t, resp, body, 200)
	if got := resp.Header.Get("X-Auth-Token-Expires"); got != "3600" {
		t.Errorf("X-Auth-Token-Expires %q", got)
	}
	return resp.Header.Get("X-Auth-Token")
}

// A token one proxy issues is good at every proxy with the same token key, and at none with
// another; a forged, cut or expired one is 401 everywhere; a rotated key revokes its tokens.
func TestTokensAcrossHandlers(t *testing.T) {
	users := &sharedKeys{keys: map[string]string{"acme:alice": "alice-key"}}
	c := &clock{t: time.Now()}
	shared := []byte("the cluster's token key, 32 b...")
	urls := proxies(t, users, c, shared, append([]byte(nil), shared...), []byte("another proxy's token key......."))
	a, b, other := urls[0]+"/v1/AUTH_acme", urls[1]+"/v1/AUTH_acme", urls[2]+"/v1/AUTH_acme"

	tok := login(t, urls[0], "acme:alice", "alice-key")
	if len(tok) >= 256 {
		t.Errorf("token of %d characters", len(tok))
	}
	resp, body := do(t, "PUT", b+"/made-through-b", map[string]string{"X-Auth-Token": tok}, nil)
	expect(t, resp, body, 201)
	resp, body = do(t, "HEAD", a+"/made-through-b", map[string]string{"X-Auth-Token": tok}, nil)
	expect(t, resp, body, 204)
	resp, body = do(t, "HEAD", other, map[string]string{"X-Auth-Token": tok}, nil)
	expect(t, resp, body, 401)

	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok, "AUTH_tk"))
	raw[len(raw)/2] ^= 1
	for name, bad := range map[string]string{
		"tampered":  "AUTH_tk" + base64.RawURLEncoding.EncodeToString(raw),
		"truncated": tok[:len(tok)-4],
		"extended":  tok + "AAAA",
	} {
		resp, body := do(t, "HEAD", b, map[string]string{"X-Auth-Token": bad}, nil)
		expect(t, resp, body, 401)
		if resp.Header.Get("Www-Authenticate") == "" {
			t.Errorf("%s token: no Www-Authenticate", name)
		}
	}

	// Rotating the key revokes the token at every proxy; a new login works at every proxy.
	users.set("acme:alice", "alice-key-2")
	for _, u := range []string{a, b} {
		resp, body := do(t, "HEAD", u, map[string]string{"X-Auth-Token": tok}, nil)
		expect(t, resp, body, 401)
	}
	tok = login(t, urls[1], "acme:alice", "alice-key-2")
	resp, body = do(t, "HEAD", a, map[string]string{"X-Auth-Token": tok}, nil)
	expect(t, resp, body, 204)

	c.advance(time.Hour)
	for _, u := range []string{a, b} {
		resp, body := do(t, "HEAD", u, map[string]string{"X-Auth-Token": tok}, nil)
		expect(t, resp, body, 401)
	}
}

func TestTokenKeyTooShort(t *testing.T) {
	_, err := swift.New(swift.Config{Proxy: &proxy.Proxy{}, Auth: testUsers, Accounts: newAccountStore(), TokenKey: []byte("short")})
	if err == nil {
		t.Error("a 5-byte token key was taken")
	}
}
