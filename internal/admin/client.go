package admin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/auth"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// ClientConfig says how to reach the admin API.
type ClientConfig struct {
	Endpoint             string // http(s)://host:port, the S3 endpoint
	AccessKey, SecretKey string // the root key
	Region               string // default us-east-1
	HTTPClient           *http.Client
}

// Validate checks the configuration and fills in defaults.
func (c *ClientConfig) Validate() error {
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("admin: endpoint %q: want http(s)://host:port", c.Endpoint)
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return errors.New("admin: the root access key and secret key are required (--access-key, --secret-key or CAIRN_ACCESS_KEY, CAIRN_SECRET_KEY)")
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: time.Minute}
	}
	return nil
}

// Client calls the admin API, signing each request with the root key.
type Client struct {
	cfg  ClientConfig
	base *url.URL
}

// NewClient returns a client; it makes no request.
func NewClient(cfg ClientConfig) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := url.Parse(strings.TrimRight(cfg.Endpoint, "/"))
	return &Client{cfg: cfg, base: base}, nil
}

// Error is an error the API answered with.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%s)", e.Message, e.Code) }

// ErrNotAdminAPI: the endpoint answered, but not as Cairn's admin API (a wrong --endpoint).
var ErrNotAdminAPI = errors.New("the endpoint is not a Cairn admin API")

// CreateAccount creates an account.
func (c *Client) CreateAccount(ctx context.Context, name string) (auth.Account, error) {
	var a auth.Account
	err := c.do(ctx, http.MethodPost, "accounts", CreateAccountRequest{Name: name}, &a)
	return a, err
}

// Accounts lists the accounts.
func (c *Client) Accounts(ctx context.Context) ([]auth.Account, error) {
	var l AccountList
	err := c.do(ctx, http.MethodGet, "accounts", nil, &l)
	return l.Accounts, err
}

// Account returns one account.
func (c *Client) Account(ctx context.Context, name string) (auth.Account, error) {
	var a auth.Account
	err := c.do(ctx, http.MethodGet, "accounts/"+url.PathEscape(name), nil, &a)
	return a, err
}

// DeleteAccount deletes an account with neither users nor data.
func (c *Client) DeleteAccount(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "accounts/"+url.PathEscape(name), nil, nil)
}

// SetQuota changes an account's quota; a nil limit keeps its value, 0 removes the limit.
func (c *Client) SetQuota(ctx context.Context, name string, bytes, objects *int64) (auth.Account, error) {
	var a auth.Account
	err := c.do(ctx, http.MethodPut, "accounts/"+url.PathEscape(name)+"/quota", QuotaRequest{Bytes: bytes, Objects: objects}, &a)
	return a, err
}

// Usage returns what an account stores, with its quota.
func (c *Client) Usage(ctx context.Context, name string) (AccountUsage, error) {
	var u AccountUsage
	err := c.do(ctx, http.MethodGet, "accounts/"+url.PathEscape(name)+"/usage", nil, &u)
	return u, err
}

// CreateUser creates a user and returns its keys (shown this once).
func (c *Client) CreateUser(ctx context.Context, account, user string, admin bool) (auth.UserCredentials, error) {
	return c.CreateUserWithKeys(ctx, account, user, admin, auth.GivenKeys{})
}

// CreateUserWithKeys creates a user with keys the operator chose (empty ones are generated).
func (c *Client) CreateUserWithKeys(ctx context.Context, account, user string, admin bool, given auth.GivenKeys) (auth.UserCredentials, error) {
	var uc auth.UserCredentials
	req := CreateUserRequest{User: user, Admin: admin, AccessKey: given.AccessKey, SecretKey: given.SecretKey, SwiftKey: given.SwiftKey}
	err := c.do(ctx, http.MethodPost, "accounts/"+url.PathEscape(account)+"/users", req, &uc)
	return uc, err
}

// Users lists an account's users.
func (c *Client) Users(ctx context.Context, account string) ([]auth.User, error) {
	var l UserList
	err := c.do(ctx, http.MethodGet, "accounts/"+url.PathEscape(account)+"/users", nil, &l)
	return l.Users, err
}

// DeleteUser deletes a user.
func (c *Client) DeleteUser(ctx context.Context, account, user string) error {
	return c.do(ctx, http.MethodDelete, "accounts/"+url.PathEscape(account)+"/users/"+url.PathEscape(user), nil, nil)
}

// RotateKeys replaces a user's keys and returns the new ones.
func (c *Client) RotateKeys(ctx context.Context, account, user string) (auth.UserCredentials, error) {
	var uc auth.UserCredentials
	err := c.do(ctx, http.MethodPost, "accounts/"+url.PathEscape(account)+"/users/"+url.PathEscape(user)+"/keys", nil, &uc)
	return uc, err
}

// do sends one signed request (the body's SHA-256 signed too) and decodes the answer into out.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("admin: encode request: %w", err)
		}
	}
	u := *c.base
	path, u.RawQuery, _ = strings.Cut(path, "?")
	u.Path = strings.TrimRight(u.Path, "/") + Prefix + path
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	cred := sigv4.Credential{AccessKey: c.cfg.AccessKey, SecretKey: c.cfg.SecretKey}
	if err := sigv4.SignRequest(req, cred, c.cfg.Region, time.Now()); err != nil {
		return fmt.Errorf("admin: sign: %w", err)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("admin: %s %s: reading the answer: %w", method, u.Path, err)
	}
	if resp.StatusCode >= 300 {
		var eb ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Code == "" {
			return fmt.Errorf("%s answered %s to %s %s: %w", c.cfg.Endpoint, resp.Status, method, u.Path, ErrNotAdminAPI)
		}
		return &Error{Status: resp.StatusCode, Code: eb.Code, Message: eb.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s answered %s %s with no admin document (%v): %w", c.cfg.Endpoint, method, u.Path, err, ErrNotAdminAPI)
	}
	return nil
}
