package swift

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// Authenticator checks v1 credentials (account:user and key) against Cairn's tenant store.
type Authenticator interface {
	// AuthenticateSwift returns whom the credentials belong to; an error wrapping
	// ErrBadCredentials when they do not match.
	AuthenticateSwift(ctx context.Context, account, user, key string) (swiftcore.Identity, error)
	// SwiftKeyFingerprint returns a user's identity and a fingerprint of its current Swift key:
	// bytes that change when the key does, the same on every proxy. A token is bound to the
	// fingerprint it was issued with, so that rotating the key, or deleting the user (an error
	// wrapping ErrBadCredentials), revokes it.
	SwiftKeyFingerprint(ctx context.Context, account, user string) (swiftcore.Identity, []byte, error)
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

// getToken serves GET /auth/v1.0: tempauth's v1 authentication.
func (h *Handler) getToken(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return swiftcore.ErrMethodNotAllowed
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
		return fmt.Errorf("auth: no account:user and key: %w", swiftcore.ErrUnauthorized)
	}
	id, err := h.cfg.Auth.AuthenticateSwift(r.Context(), account, name, key)
	if errors.Is(err, ErrBadCredentials) {
		// The user is logged, never the key.
		return fmt.Errorf("auth: %s:%s: %w: %w", account, name, swiftcore.ErrUnauthorized, err)
	}
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	_, fp, err := h.cfg.Auth.SwiftKeyFingerprint(r.Context(), id.Account, id.User)
	if errors.Is(err, ErrBadCredentials) {
		// Deleted since the key was checked.
		return fmt.Errorf("auth: %s:%s: %w: %w", account, name, swiftcore.ErrUnauthorized, err)
	}
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	tok, exp, err := h.tokens.issue(id, fp)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	hdr := w.Header()
	hdr.Set("X-Auth-Token", tok)
	hdr.Set("X-Storage-Token", tok)
	hdr.Set("X-Auth-Token-Expires", strconv.FormatInt(int64(exp.Sub(h.Now()).Seconds()), 10))
	hdr.Set("X-Storage-Url", scheme+"://"+r.Host+"/v1/"+resellerPrefix+id.Account)
	hdr.Set("Content-Type", "text/html; charset=UTF-8")
	hdr.Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// authenticate reads the request's token: a request without one is anonymous (ACLs may still
// let it in: swiftcore/authz.go); an unknown or expired token is 401.
func (h *Handler) authenticate(r *http.Request, rq *swiftcore.Request) error {
	tok := r.Header.Get("X-Auth-Token")
	if tok == "" {
		tok = r.Header.Get("X-Storage-Token")
	}
	if tok == "" {
		rq.Anonymous = true
		return nil
	}
	id, err := h.tokens.verify(r.Context(), tok, h.cfg.Auth)
	if err != nil {
		return err
	}
	rq.ID = id
	return nil
}

// Identity is who a token authenticates (swiftcore.Identity; the server's authenticator
// returns it).
type Identity = swiftcore.Identity
