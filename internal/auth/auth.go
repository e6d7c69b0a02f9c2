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
//
// In a cluster (OpenCluster, cluster.go) the same state is one encrypted object in the cluster
// instead of the file, changed by compare-and-swap and read by every proxy; the root key is the
// operator's, given to every proxy alike.
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
	// Dir is where the generated root key, the tenants file and the Swift token key are kept
	// (Open; a cluster's store, OpenCluster, keeps nothing on the proxy's disk).
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
	return c.validateKeys()
}

// validateKeys checks what is not about where the store is kept, and fills in defaults.
func (c *Config) validateKeys() error {
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
	cfg     Config
	root    Key
	backend backend
	// cluster is the cluster's side of a store OpenCluster made (nil for the file).
	cluster *clusterSync
	// tokenKey signs Swift tokens (SwiftTokenKey).
	tokenKey []byte

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
	tokenKeyFile    = "swift-token-key.json"
)

// Open loads the store kept in Config.Dir (the embedded default). generated is the root key
// when Open just created it (the caller shows it once), nil otherwise.
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
	path := filepath.Join(cfg.Dir, tenantsFile)
	s = &Store{cfg: cfg, root: root, backend: fileBackend{path: path}}
	if s.tokenKey, err = loadOrGenerateTokenKey(cfg.Dir); err != nil {
		return nil, nil, err
	}
	removeTemps(path)
	st, err := loadTenants(path)
	if err != nil {
		return nil, nil, err
	}
	if st == nil {
		// First start: the file exists from here on, so that the root account's created time
		// does not change with every restart.
		st = initialState(cfg.Now())
		if err := writeFileDurably(path, st); err != nil {
			return nil, nil, err
		}
	}
	s.snap = newSnapshot(st, root, cfg.Logger)
	return s, generated, nil
}

// Close stops what the store runs in the background (a cluster store's polling); lookups and
// changes still work after it, without news from other proxies.
func (s *Store) Close() {
	if s.cluster != nil {
		s.cluster.stop()
	}
}

// SwiftTokenKey is the key the Swift front end signs its tokens with (swift.Config.TokenKey).
// In the embedded default it is random, made on first start and kept in the data directory
// (swift-token-key.json, mode 0600), so that tokens survive a restart; it is not derived from
// the root secret, because every Swift user holds tokens, and a token tagged with a key derived
// from a weak operator-chosen root secret would let any of them guess that secret offline. In
// a cluster it is derived from the cluster secret, so that every proxy accepts the tokens of
// every other.
func (s *Store) SwiftTokenKey() []byte { return s.tokenKey }

// Root returns the root key, for the server's own signed requests to other proxies (the
// resource manager reading their workload monitors).
func (s *Store) Root() Key { return s.root }

// current returns the snapshot lookups read.
func (s *Store) current() *snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snap
}

// Lookup returns the key with the given access key. The secret is for the front end's HMAC
// check; the lookup itself is a map access, which reveals nothing about any secret. In a
// cluster, a key this proxy does not know may have just been made through another: the store
// looks at the cluster's state again (at most once per ClusterConfig.MissRefreshGap) first.
func (s *Store) Lookup(ctx context.Context, accessKey string) (Key, error) {
	if err := ctx.Err(); err != nil {
		return Key{}, err
	}
	k, ok := s.current().byAccess[accessKey]
	if !ok && s.refreshOnMiss(ctx) {
		k, ok = s.current().byAccess[accessKey]
	}
	if !ok {
		return Key{}, fmt.Errorf("auth: %w", ErrUnknownKey)
	}
	return k, nil
}

// AuthenticateSwift checks a Swift v1 user ("ACCOUNT:USER", split by the caller) and key. Any
// mismatch, unknown account or user included, is ErrBadSwiftKey, and the comparison is made in
// constant time against a stand-in when the user does not exist, so that neither the answer
// nor its timing tells which part was wrong. The root user is "root:root" with the root key's
// secret. In a cluster a failure looks at the cluster's state again, as Lookup does: the user,
// or its rotated key, may be another proxy's news.
func (s *Store) AuthenticateSwift(ctx context.Context, account, user, key string) (Identity, error) {
	if err := ctx.Err(); err != nil {
		return Identity{}, err
	}
	id, ok := s.checkSwift(s.current(), account, user, key)
	if !ok && s.refreshOnMiss(ctx) {
		id, ok = s.checkSwift(s.current(), account, user, key)
	}
	if !ok {
		return Identity{}, fmt.Errorf("auth: swift user %q: %w", account+":"+user, ErrBadSwiftKey)
	}
	return id, nil
}

func (s *Store) checkSwift(snap *snapshot, account, user, key string) (Identity, bool) {
	want, id, found := s.swiftUser(snap, account, user)
	if !found {
		want = snap.decoy
	}
	// Hashing first makes the comparison independent of the lengths too.
	w, g := sha256.Sum256([]byte(want)), sha256.Sum256([]byte(key))
	if subtle.ConstantTimeCompare(w[:], g[:]) != 1 || !found || key == "" {
		return Identity{}, false
	}
	return id, true
}

// swiftUser returns a Swift user's key and identity.
func (s *Store) swiftUser(snap *snapshot, account, user string) (key string, id Identity, found bool) {
	if account == RootAccount && user == RootUser {
		return s.root.SecretKey, Identity{Account: RootAccount, User: RootUser, Admin: true, Root: true}, true
	}
	if a, ok := snap.state.Accounts[account]; ok {
		if u, ok := a.Users[user]; ok {
			return u.SwiftKey, Identity{Account: account, User: user, Admin: u.Admin}, true
		}
	}
	return "", Identity{}, false
}

// swiftFingerprintLabel keeps the fingerprint of a Swift key from being the plain hash of it.
const swiftFingerprintLabel = "cairn swift key fingerprint v1\x00"

// SwiftKeyFingerprint returns a Swift user's identity and a fingerprint of its current Swift
// key: a hash that changes when the key is rotated (and is gone when the user is deleted), so
// that the Swift front end can bind its tokens to the key they were issued for. It is the
// same on every proxy of a cluster, and is meant to stay inside the process (the front end
// folds it into a token's tag, never into the token). An unknown user is ErrNoUser; in a
// cluster it is first looked for again as by Lookup.
func (s *Store) SwiftKeyFingerprint(ctx context.Context, account, user string) (Identity, []byte, error) {
	if err := ctx.Err(); err != nil {
		return Identity{}, nil, err
	}
	key, id, ok := s.swiftUser(s.current(), account, user)
	if !ok && s.refreshOnMiss(ctx) {
		key, id, ok = s.swiftUser(s.current(), account, user)
	}
	if !ok {
		return Identity{}, nil, fmt.Errorf("auth: swift user %q: %w", account+":"+user, ErrNoUser)
	}
	fp := sha256.Sum256([]byte(swiftFingerprintLabel + key))
	return id, fp[:], nil
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
