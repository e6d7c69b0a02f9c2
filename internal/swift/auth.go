package swift

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// Identity is whom a set of credentials belongs to.
type Identity struct {
	Account, User string
	// Admin: the user administers its account. Root: the operator, who may act on any account.
	Admin, Root bool
}

// Authenticator checks v1 credentials (account:user and key) against Cairn's tenant store.
// It returns an error wrapping ErrBadCredentials when they do not match.
type Authenticator interface {
	AuthenticateSwift(ctx context.Context, account, user, key string) (Identity, error)
}

// ErrBadCredentials is what an Authenticator returns for credentials that match no user.
var ErrBadCredentials = errors.New("swift: bad credentials")

// Swift's reseller prefix: the URL names Cairn's account a as AUTH_a.
const resellerPrefix = swiftwire.ResellerPrefix

const (
	authPath = "/auth/v1.0"
	infoPath = "/info"
	// tokenPrefix is tempauth's: clients and operators recognise Swift tokens by it.
	tokenPrefix = "AUTH_tk"
)

// tokenStore keeps issued tokens in memory. Tokens do not survive a restart (clients
// re-authenticate on 401, as they do when a tempauth token expires from memcache).
type tokenStore struct {
	ttl time.Duration
	now func() time.Time

	mu        sync.Mutex
	tokens    map[string]tokenEntry
	lastPurge time.Time
}

type tokenEntry struct {
	id      Identity
	expires time.Time
}

// purgeEvery bounds how often issuing a token sweeps out expired ones.
const purgeEvery = time.Minute

func newTokenStore(ttl time.Duration, now func() time.Time) *tokenStore {
	return &tokenStore{ttl: ttl, now: now, tokens: map[string]tokenEntry{}}
}

// issue returns a new token for id and when it expires.
func (s *tokenStore) issue(id Identity) (string, time.Time) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // no entropy: no token is safe
	}
	tok := tokenPrefix + hex.EncodeToString(b[:])
	now := s.now()
	exp := now.Add(s.ttl)
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastPurge) >= purgeEvery {
		for k, e := range s.tokens {
			if !now.Before(e.expires) {
				delete(s.tokens, k)
			}
		}
		s.lastPurge = now
	}
	s.tokens[tok] = tokenEntry{id: id, expires: exp}
	return tok, exp
}

// lookup returns the identity of a valid token.
func (s *tokenStore) lookup(tok string) (Identity, time.Time, bool) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.tokens[tok]
	if !ok {
		return Identity{}, time.Time{}, false
	}
	if !now.Before(e.expires) {
		delete(s.tokens, tok)
		return Identity{}, time.Time{}, false
	}
	return e.id, e.expires, true
}

// len is the number of tokens held (tests).
func (s *tokenStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tokens)
}

// getToken serves GET /auth/v1.0: tempauth's v1 authentication.
func (h *Handler) getToken(w http.ResponseWriter, r *http.Request, rq *request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return errMethodNotAllowed
	}
	user := r.Header.Get("X-Auth-User")
	if user == "" {
		user = r.Header.Get("X-Storage-User")
	}
	key := r.Header.Get("X-Auth-Key")
	if key == "" {
		key = r.Header.Get("X-Storage-Pass")
	}
	account, name, ok := strings.Cut(user, ":")
	if !ok || account == "" || name == "" || key == "" {
		return fmt.Errorf("auth: no account:user and key: %w", errUnauthorized)
	}
	id, err := h.cfg.Auth.AuthenticateSwift(r.Context(), account, name, key)
	if errors.Is(err, ErrBadCredentials) {
		// The user is logged, never the key.
		return fmt.Errorf("auth: %s:%s: %w: %w", account, name, errUnauthorized, err)
	}
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	tok, exp := h.tokens.issue(id)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	hdr := w.Header()
	hdr.Set("X-Auth-Token", tok)
	hdr.Set("X-Storage-Token", tok)
	hdr.Set("X-Auth-Token-Expires", strconv.FormatInt(int64(exp.Sub(h.cfg.Now()).Seconds()), 10))
	hdr.Set("X-Storage-Url", scheme+"://"+r.Host+"/v1/"+resellerPrefix+id.Account)
	hdr.Set("Content-Type", "text/html; charset=UTF-8")
	hdr.Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// authenticate reads the request's token: a request without one is anonymous (ACLs may still
// let it in: authz.go); an unknown or expired token is 401.
func (h *Handler) authenticate(r *http.Request, rq *request) error {
	tok := r.Header.Get("X-Auth-Token")
	if tok == "" {
		tok = r.Header.Get("X-Storage-Token")
	}
	if tok == "" {
		rq.anonymous = true
		return nil
	}
	id, _, ok := h.tokens.lookup(tok)
	if !ok {
		return fmt.Errorf("unknown or expired token: %w", errUnauthorized)
	}
	rq.id = id
	return nil
}
