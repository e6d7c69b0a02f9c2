// Package admin owns Cairn's admin HTTP API: JSON under /admin/v1/ on the S3 listener, for the
// root key only, to manage the tenant store (accounts, users, keys, quotas) and to report an
// account's usage. It also holds the API's client, which `cairn admin` uses, so that both
// sides share one definition of the wire format. Authentication is S3's SigV4 (header form),
// verified by internal/s3/sigv4; what the accounts mean is internal/auth's.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/sse"
	"github.com/cairn-store/cairn/internal/workload"
)

// Prefix is the path under which the API lives.
const Prefix = "/admin/v1/"

// Usage is what an account stores.
type Usage struct {
	Bytes      int64 `json:"bytes"`
	Objects    int64 `json:"objects"`
	Containers int64 `json:"containers"`
}

// UsageFunc reports an account's usage (zero for an account that has stored nothing).
type UsageFunc func(ctx context.Context, account string) (Usage, error)

// Config configures the Handler.
type Config struct {
	Store *auth.Store
	Usage UsageFunc
	// Status gathers the cluster's status (GET /admin/v1/status); nil: none.
	Status StatusFunc
	// ACLMigration migrates legacy bucket ACLs (aclmigration.go); nil: the route answers 501.
	ACLMigration ACLMigrationFunc
	// KMS manages the SSE-KMS keys (kms.go); nil: the KMS routes answer 501.
	KMS *sse.Keyring
	// Workload is the workload monitor (GET /admin/v1/workload); nil: none. Cores is the
	// CPU the process may use, which that document reports (0: the Go runtime's GOMAXPROCS),
	// and CPUUsed the cores it used over about the monitor's window (nil: not reported).
	Workload *workload.Monitor
	Cores    float64
	CPUUsed  func() float64
	// Microstores keeps the microstores' description (/admin/v1/microstores); nil: none.
	Microstores MicrostoreStore
	// Region, if set, is the only region accepted in signatures (as for S3).
	Region string
	Logger *slog.Logger     // default: discard
	Now    func() time.Time // default time.Now; the clock signatures are checked against
}

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.Store == nil {
		return errors.New("admin: no tenant store")
	}
	if c.Usage == nil {
		return errors.New("admin: no usage function")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Handler serves the admin API.
type Handler struct {
	cfg Config
	log *slog.Logger
}

// New returns the API's handler.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, log: cfg.Logger}, nil
}

// Error codes of the API's JSON errors.
const (
	CodeAccessDenied       = "AccessDenied"
	CodeInvalidArgument    = "InvalidArgument"
	CodeNoSuchAccount      = "NoSuchAccount"
	CodeNoSuchUser         = "NoSuchUser"
	CodeNotFound           = "NotFound"
	CodeMethodNotAllowed   = "MethodNotAllowed"
	CodeAccountExists      = "AccountExists"
	CodeUserExists         = "UserExists"
	CodeKeyExists          = "KeyExists"
	CodeAccountNotEmpty    = "AccountNotEmpty"
	CodeInternalError      = "InternalError"
	CodeServiceUnavailable = "ServiceUnavailable"
	CodeNoSuchMicrostore   = "NoSuchMicrostore"
	CodeMicrostoreConflict = "MicrostoreConflict"
)

// ErrorBody is every error response.
type ErrorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// apiError is an error with its HTTP status and code.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errorf(status int, code, format string, args ...any) error {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// maxBodyBytes bounds a request document; the API's are a few fields.
const maxBodyBytes = 64 << 10

// ServeHTTP authenticates the request as the root key and serves it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	err := h.serve(w, r)
	if err == nil {
		return
	}
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = storeError(err)
	}
	if ae.status >= 500 {
		h.log.ErrorContext(r.Context(), "admin request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	} else if ae.status == http.StatusForbidden {
		h.log.WarnContext(r.Context(), "admin request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", ae.msg)
	}
	writeJSON(w, ae.status, ErrorBody{Error: ae.msg, Code: ae.code})
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) error {
	a, err := h.authenticate(r)
	if err != nil {
		return err
	}
	body, err := readBody(r, a)
	if err != nil {
		return err
	}
	return h.route(w, r, body)
}

// authenticate accepts header-signed SigV4 requests of the root key and nothing else. Every
// refusal is 403 AccessDenied; the message says enough for an operator to fix a script (wrong
// secret, clock, not root) and never repeats a secret.
func (h *Handler) authenticate(r *http.Request) (*sigv4.Auth, error) {
	a, err := sigv4.Verify(r.Context(), r, storeCredentials{h.cfg.Store}, h.cfg.Now(), &sigv4.Options{Region: h.cfg.Region})
	switch {
	case err == nil:
	case errors.Is(err, sigv4.ErrAnonymous):
		return nil, errorf(http.StatusForbidden, CodeAccessDenied, "the admin API needs a request signed with the root key (SigV4)")
	case errors.Is(err, sigv4.ErrInvalidAccessKeyID):
		return nil, errorf(http.StatusForbidden, CodeAccessDenied, "unknown access key")
	case errors.Is(err, sigv4.ErrSignatureDoesNotMatch):
		return nil, errorf(http.StatusForbidden, CodeAccessDenied, "the signature does not match (wrong secret key?)")
	case errors.Is(err, sigv4.ErrRequestTimeTooSkewed):
		return nil, errorf(http.StatusForbidden, CodeAccessDenied, "the request time is too far from the server's clock")
	default:
		if isAuthError(err) {
			return nil, errorf(http.StatusForbidden, CodeAccessDenied, "authentication failed: %v", err)
		}
		return nil, fmt.Errorf("admin: authenticate: %w", err)
	}
	if a.Presigned {
		// A presigned admin URL would be a bearer token for the whole store.
		return nil, errorf(http.StatusForbidden, CodeAccessDenied, "the admin API does not accept presigned URLs")
	}
	key, err := h.cfg.Store.Lookup(r.Context(), a.Credential.AccessKey)
	if err != nil {
		return nil, fmt.Errorf("admin: authenticate: %w", err)
	}
	if !key.Root {
		return nil, errorf(http.StatusForbidden, CodeAccessDenied, "only the root key may use the admin API (access key %s is %s:%s)", key.AccessKey, key.Account, key.User)
	}
	return a, nil
}

// isAuthError reports whether err is one of sigv4's verdicts on the request (as opposed to a
// failure of the credential store).
func isAuthError(err error) bool {
	for _, e := range []error{sigv4.ErrSignatureV2Unsupported, sigv4.ErrUnsupportedAuthType, sigv4.ErrMultipleAuthMechanisms,
		sigv4.ErrAuthorizationHeaderMalformed, sigv4.ErrAuthorizationQueryParametersError, sigv4.ErrRequestExpired, sigv4.ErrInvalidExpiresV2,
		sigv4.ErrRequestNotYetValid, sigv4.ErrMissingDate, sigv4.ErrHeadersNotSigned, sigv4.ErrMissingContentSHA256,
		sigv4.ErrInvalidContentSHA256, sigv4.ErrMissingSecurityHeader} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// storeCredentials lets sigv4 look keys up in the tenant store.
type storeCredentials struct{ store *auth.Store }

func (c storeCredentials) Lookup(ctx context.Context, accessKey string) (sigv4.Credential, error) {
	k, err := c.store.Lookup(ctx, accessKey)
	if errors.Is(err, auth.ErrUnknownKey) {
		return sigv4.Credential{}, fmt.Errorf("%w", sigv4.ErrUnknownAccessKey)
	}
	if err != nil {
		return sigv4.Credential{}, err
	}
	return sigv4.Credential{AccessKey: k.AccessKey, SecretKey: k.SecretKey, Account: k.Account}, nil
}

// readBody reads the request document through sigv4's verifier, so that a signed payload hash
// is checked before anything acts on the document.
func readBody(r *http.Request, a *sigv4.Auth) ([]byte, error) {
	if r.ContentLength > maxBodyBytes {
		return nil, errorf(http.StatusBadRequest, CodeInvalidArgument, "request body over %d bytes", maxBodyBytes)
	}
	b, err := a.Body(r.Body)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, CodeInvalidArgument, "request body: %v", err)
	}
	data, err := io.ReadAll(io.LimitReader(b, maxBodyBytes+1))
	if errors.Is(err, sigv4.ErrContentSHA256Mismatch) || errors.Is(err, sigv4.ErrSignatureDoesNotMatch) {
		return nil, errorf(http.StatusForbidden, CodeAccessDenied, "the body does not match its signature")
	}
	if err != nil {
		return nil, errorf(http.StatusBadRequest, CodeInvalidArgument, "request body: %v", err)
	}
	if len(data) > maxBodyBytes {
		return nil, errorf(http.StatusBadRequest, CodeInvalidArgument, "request body over %d bytes", maxBodyBytes)
	}
	return data, nil
}

// storeError maps the tenant store's errors onto the API's.
func storeError(err error) *apiError {
	e := func(status int, code string) *apiError {
		// The store's messages name what is wrong without secrets; drop its package prefix.
		return &apiError{status: status, code: code, msg: strings.TrimPrefix(err.Error(), "auth: ")}
	}
	switch {
	case errors.Is(err, auth.ErrInvalidName), errors.Is(err, auth.ErrInvalidQuota), errors.Is(err, auth.ErrInvalidKey):
		return e(http.StatusBadRequest, CodeInvalidArgument)
	case errors.Is(err, auth.ErrNoAccount):
		return e(http.StatusNotFound, CodeNoSuchAccount)
	case errors.Is(err, auth.ErrNoUser):
		return e(http.StatusNotFound, CodeNoSuchUser)
	case errors.Is(err, auth.ErrAccountExists):
		return e(http.StatusConflict, CodeAccountExists)
	case errors.Is(err, auth.ErrUserExists):
		return e(http.StatusConflict, CodeUserExists)
	case errors.Is(err, auth.ErrKeyExists):
		return e(http.StatusConflict, CodeKeyExists)
	case errors.Is(err, auth.ErrAccountNotEmpty):
		return e(http.StatusConflict, CodeAccountNotEmpty)
	case errors.Is(err, auth.ErrRootAccount):
		return e(http.StatusBadRequest, CodeInvalidArgument)
	case errors.Is(err, auth.ErrBlobUnknown):
		// The change may or may not have been made: the caller looks, or tries again.
		return e(http.StatusServiceUnavailable, CodeServiceUnavailable)
	}
	return &apiError{status: http.StatusInternalServerError, code: CodeInternalError, msg: "internal error"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":"internal error","code":"InternalError"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store") // responses may carry secrets
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}
