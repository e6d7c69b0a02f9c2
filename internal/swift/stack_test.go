package swift_test

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
	"github.com/cairn-store/cairn/internal/swift"
)

// The harness of the HTTP tests: a Swift handler over a one-node cluster in memory, a fake
// tenant and account store, a settable clock, and clients that log in and check answers.

// users is a fake tenant store: account:user → key and identity.
type users map[string]struct {
	key string
	id  swift.Identity
}

func (u users) AuthenticateSwift(_ context.Context, account, user, key string) (swift.Identity, error) {
	e, ok := u[account+":"+user]
	if !ok || e.key != key {
		return swift.Identity{}, fmt.Errorf("user %s:%s: %w", account, user, swift.ErrBadCredentials)
	}
	return e.id, nil
}

func (u users) SwiftKeyFingerprint(_ context.Context, account, user string) (swift.Identity, []byte, error) {
	e, ok := u[account+":"+user]
	if !ok {
		return swift.Identity{}, nil, fmt.Errorf("user %s:%s: %w", account, user, swift.ErrBadCredentials)
	}
	fp := sha256.Sum256([]byte(e.key))
	return e.id, fp[:], nil
}

var testUsers = users{
	"acme:alice": {"alice-key", swift.Identity{Account: "acme", User: "alice", Admin: true}},
	"other:bob":  {"bob-key", swift.Identity{Account: "other", User: "bob", Admin: true}},
	"acme:carol": {"carol-key", swift.Identity{Account: "acme", User: "carol"}}, // not an administrator
	"root:root":  {"root-key", swift.Identity{Account: "root", User: "root", Admin: true, Root: true}},
}

// accountStore is the tenant store's account metadata, in memory: the accounts of testUsers.
type accountStore struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

func newAccountStore() *accountStore {
	s := &accountStore{m: map[string]map[string]string{}}
	for _, u := range testUsers {
		s.m[u.id.Account] = map[string]string{}
	}
	return s
}

func (s *accountStore) AccountMetadata(_ context.Context, account string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.m[account]
	if !ok {
		return nil, fmt.Errorf("account %q: %w", account, swift.ErrNoAccount)
	}
	return maps.Clone(m), nil
}

func (s *accountStore) UpdateAccountMetadata(_ context.Context, account string, changes map[string]string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.m[account]
	if !ok {
		return nil, fmt.Errorf("account %q: %w", account, swift.ErrNoAccount)
	}
	for k, v := range changes {
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return maps.Clone(m), nil
}

// clock is a settable clock for token and expiry tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// stack is a whole Cairn behind the Swift handler: a storage node on a temporary directory,
// the proxy over it, the handler on an httptest server.
type stack struct {
	url   string
	clock *clock
	reg   *prometheus.Registry
}

const testMaxObject = 1 << 20

func newStack(t *testing.T) *stack {
	t.Helper()
	node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	px, err := proxy.New(proxy.Config{Ring: ring.SingleDevice("local", "d0", 6, ""), Dialer: nodeclient.Local{Client: node}, ContainerCacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Now()}
	reg := prometheus.NewRegistry()
	h, err := swift.New(swift.Config{Proxy: px, Auth: testUsers, Accounts: newAccountStore(), Now: c.now, MaxObjectSize: testMaxObject, Registry: reg, TokenTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &stack{url: srv.URL, clock: c, reg: reg}
}

// do sends one request and returns the answer with its body read.
func do(t *testing.T, method, url string, hdr map[string]string, body io.Reader) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func expect(t *testing.T, resp *http.Response, body string, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d; body %q", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, body)
	}
}

// login authenticates and returns the token and storage URL.
func (s *stack) login(t *testing.T, user, key string) (string, string) {
	t.Helper()
	resp, body := do(t, "GET", s.url+"/auth/v1.0", map[string]string{"X-Auth-User": user, "X-Auth-Key": key}, nil)
	expect(t, resp, body, 200)
	tok := resp.Header.Get("X-Auth-Token")
	if !strings.HasPrefix(tok, "AUTH_tk") || resp.Header.Get("X-Storage-Token") != tok {
		t.Fatalf("tokens %q / %q", tok, resp.Header.Get("X-Storage-Token"))
	}
	return tok, resp.Header.Get("X-Storage-Url")
}

// client is a logged-in user.
type client struct {
	t     *testing.T
	tok   string
	store string
}

func (s *stack) client(t *testing.T, user, key string) *client {
	tok, store := s.login(t, user, key)
	return &client{t: t, tok: tok, store: store}
}

func (c *client) do(method, path string, hdr map[string]string, body io.Reader) (*http.Response, string) {
	c.t.Helper()
	h := map[string]string{"X-Auth-Token": c.tok}
	for k, v := range hdr {
		h[k] = v
	}
	return do(c.t, method, c.store+path, h, body)
}

func (c *client) must(method, path string, hdr map[string]string, body string, status int) (*http.Response, string) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	resp, b := c.do(method, path, hdr, rd)
	expect(c.t, resp, b, status)
	return resp, b
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
