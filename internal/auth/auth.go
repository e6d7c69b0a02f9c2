// Package auth owns identities: the tenant store of accounts, their users and the keys users
// authenticate with (an S3 access key pair and a Swift key each), and the root key, which acts
// for the "root" account and administers every account. It answers "who is this key, and for
// which account does it act"; what an identity may do inside its account (ACLs, policies) and
// how much it may store (quota enforcement) are decided elsewhere, from what this store keeps.
//
// The root key is given by the operator or generated on first start and kept in the data
// directory (root-credentials.json, mode 0600), never shipped as a default. Accounts and users
// live in tenants.json beside it (mode 0600: it holds secrets), rewritten whole on every change
// by temp file → fsync → rename → fsync dir, so that a crash leaves the old or the new file,
// never a mix. Changes are rare (an administrator's), lookups are on every request: readers
// share an immutable snapshot under an RWMutex, and writers build the next snapshot aside.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Sentinel errors. Every error the store returns wraps at most one of them.
var (
	ErrUnknownKey      = errors.New("unknown access key")
	ErrInvalidKey      = errors.New("invalid key")
	ErrBadSwiftKey     = errors.New("wrong Swift user or key")
	ErrInvalidName     = errors.New("invalid name")
	ErrInvalidQuota    = errors.New("invalid quota")
	ErrAccountExists   = errors.New("account exists")
	ErrNoAccount       = errors.New("no such account")
	ErrAccountNotEmpty = errors.New("account still has users")
	ErrUserExists      = errors.New("user exists")
	ErrNoUser          = errors.New("no such user")
	ErrKeyExists       = errors.New("access key in use")
	// ErrRootAccount: the root account and the root user are the server's own; they cannot be
	// deleted, and the root key is changed by flags or root-credentials.json, not here.
	ErrRootAccount = errors.New("the root account and root user are fixed")
)

// RootAccount is the account the root user acts for. It always exists.
const RootAccount = "root"

// RootUser is the root key's user name: Swift clients authenticate as "root:root".
const RootUser = "root"

// Key is an access key pair and whom it belongs to.
type Key struct {
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	Account   string `json:"account"`
	User      string `json:"user"`
	// Admin: the user administers its account (Swift's .admin; set on the root key too).
	Admin bool `json:"-"`
	// Root: the server's root key, administrator over every account (Swift's reseller admin).
	Root bool `json:"-"`
}

// Identity is who a request authenticated as.
type Identity struct {
	Account, User string
	Admin         bool
	Root          bool // the server's root key (reseller admin over every account)
}

// Config configures a Store.
type Config struct {
	// Dir is where the generated root key and the tenants file are kept.
	Dir string
	// RootAccessKey and RootSecretKey, when both set, are the root key for this run (for
	// scripts and tests); the root key is then not written.
	RootAccessKey, RootSecretKey string
	Logger                       *slog.Logger // default: discard
	// Now is the clock for created times (default time.Now).
	Now func() time.Time
}

// Validate checks the configuration and fills in defaults.
func (c *Config) Validate() error {
	if c.Dir == "" {
		return errors.New("auth: no directory")
	}
	if (c.RootAccessKey == "") != (c.RootSecretKey == "") {
		return fmt.Errorf("auth: give both the root access key and the root secret key, or neither: %w", ErrInvalidKey)
	}
	if c.RootAccessKey != "" {
		if err := validKey(c.RootAccessKey, c.RootSecretKey); err != nil {
			return err
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

func validKey(access, secret string) error {
	if len(access) < 3 || len(access) > 128 {
		return fmt.Errorf("auth: access key must be 3 to 128 characters: %w", ErrInvalidKey)
	}
	if len(secret) < 8 || len(secret) > 128 {
		return fmt.Errorf("auth: secret key must be 8 to 128 characters: %w", ErrInvalidKey)
	}
	return nil
}

// Store is the tenant store. It is safe for concurrent use.
type Store struct {
	cfg  Config
	root Key
	path string // the tenants file

	// wmu serializes changes, so that each builds on the last one written; mu guards the
	// snapshot pointer only, so that lookups never wait for a change's fsync.
	wmu  sync.Mutex
	mu   sync.RWMutex
	snap *snapshot
}

// Files in Config.Dir.
const (
	credentialsFile = "root-credentials.json"
	tenantsFile     = "tenants.json"
)

// Open loads the store. generated is the root key when Open just created it (the caller shows
// it once), nil otherwise.
func Open(cfg Config) (s *Store, generated *Key, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	root := Key{AccessKey: cfg.RootAccessKey, SecretKey: cfg.RootSecretKey}
	if root.AccessKey == "" {
		root, generated, err = loadOrGenerateRoot(cfg.Dir)
		if err != nil {
			return nil, nil, err
		}
	}
	root.Account, root.User, root.Admin, root.Root = RootAccount, RootUser, true, true
	s = &Store{cfg: cfg, root: root, path: filepath.Join(cfg.Dir, tenantsFile)}
	removeTemps(s.path)
	st, err := loadTenants(s.path)
	if err != nil {
		return nil, nil, err
	}
	if st == nil {
		// First start: the root account gets its created time now, and the file exists from
		// here on, so that the time does not change with every restart.
		st = &state{Version: stateVersion, Accounts: map[string]*accountRecord{}}
		st.Accounts[RootAccount] = &accountRecord{Created: cfg.Now().UTC(), Users: map[string]*userRecord{}}
		if err := writeFileDurably(s.path, st); err != nil {
			return nil, nil, err
		}
	}
	s.snap = newSnapshot(st, root, cfg.Logger)
	return s, generated, nil
}

// current returns the snapshot lookups read.
func (s *Store) current() *snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snap
}

// Lookup returns the key with the given access key. The secret is for the front end's HMAC
// check; the lookup itself is a map access, which reveals nothing about any secret.
func (s *Store) Lookup(ctx context.Context, accessKey string) (Key, error) {
	if err := ctx.Err(); err != nil {
		return Key{}, err
	}
	k, ok := s.current().byAccess[accessKey]
	if !ok {
		return Key{}, fmt.Errorf("auth: %w", ErrUnknownKey)
	}
	return k, nil
}

// AuthenticateSwift checks a Swift v1 user ("ACCOUNT:USER", split by the caller) and key. Any
// mismatch, unknown account or user included, is ErrBadSwiftKey, and the comparison is made in
// constant time against a stand-in when the user does not exist, so that neither the answer
// nor its timing tells which part was wrong. The root user is "root:root" with the root key's
// secret.
func (s *Store) AuthenticateSwift(ctx context.Context, account, user, key string) (Identity, error) {
	if err := ctx.Err(); err != nil {
		return Identity{}, err
	}
	snap := s.current()
	want, id, found := "", Identity{}, false
	if account == RootAccount && user == RootUser {
		want, id, found = s.root.SecretKey, Identity{Account: RootAccount, User: RootUser, Admin: true, Root: true}, true
	} else if a, ok := snap.state.Accounts[account]; ok {
		if u, ok := a.Users[user]; ok {
			want, id, found = u.SwiftKey, Identity{Account: account, User: user, Admin: u.Admin}, true
		}
	}
	if !found {
		want = snap.decoy
	}
	// Hashing first makes the comparison independent of the lengths too.
	w, g := sha256.Sum256([]byte(want)), sha256.Sum256([]byte(key))
	if subtle.ConstantTimeCompare(w[:], g[:]) != 1 || !found || key == "" {
		return Identity{}, fmt.Errorf("auth: swift user %q: %w", account+":"+user, ErrBadSwiftKey)
	}
	return id, nil
}

func loadOrGenerateRoot(dir string) (Key, *Key, error) {
	path := filepath.Join(dir, credentialsFile)
	data, err := os.ReadFile(path)
	if err == nil {
		var k Key
		if err := json.Unmarshal(data, &k); err != nil {
			return Key{}, nil, fmt.Errorf("auth: read %s: %w", path, err)
		}
		if err := validKey(k.AccessKey, k.SecretKey); err != nil {
			return Key{}, nil, fmt.Errorf("auth: %s: %w", path, err)
		}
		k.Account, k.User = RootAccount, RootUser
		return k, nil, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return Key{}, nil, fmt.Errorf("auth: read %s: %w", path, err)
	}
	k := Key{AccessKey: "CAIRN" + randomString(15, accessAlphabet), SecretKey: randomString(40, secretAlphabet), Account: RootAccount, User: RootUser}
	if err := writeFileDurably(path, k); err != nil {
		return Key{}, nil, err
	}
	return k, &k, nil
}
