// Package auth owns identities: the keys requests authenticate with and the account each key
// acts for. This first version holds the root user, whose key pair is given by the operator or
// generated on first start and kept in the data directory (mode 0600), never shipped as a
// default; accounts and users of their own come with the tenants work.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
)

// Sentinel errors.
var (
	ErrUnknownKey = errors.New("unknown access key")
	ErrInvalidKey = errors.New("invalid key")
)

// RootAccount is the account the root user acts for.
const RootAccount = "root"

// Key is an access key pair and whom it belongs to.
type Key struct {
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	Account   string `json:"account"`
	User      string `json:"user"`
}

// Config configures a Store.
type Config struct {
	// Dir is where the generated root key is kept.
	Dir string
	// RootAccessKey and RootSecretKey, when both set, are the root key for this run (for
	// scripts and tests); nothing is written.
	RootAccessKey, RootSecretKey string
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.Dir == "" {
		return errors.New("auth: no directory")
	}
	if (c.RootAccessKey == "") != (c.RootSecretKey == "") {
		return fmt.Errorf("auth: give both the root access key and the root secret key, or neither: %w", ErrInvalidKey)
	}
	if c.RootAccessKey != "" {
		return validKey(c.RootAccessKey, c.RootSecretKey)
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

// Store looks keys up.
type Store struct {
	keys map[string]Key
}

// credentialsFile is the name of the root key file in Config.Dir.
const credentialsFile = "root-credentials.json"

// Open returns the store. generated is the root key when Open just created it (the caller
// shows it once), nil otherwise.
func Open(cfg Config) (s *Store, generated *Key, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	root := Key{AccessKey: cfg.RootAccessKey, SecretKey: cfg.RootSecretKey, Account: RootAccount, User: "root"}
	if root.AccessKey == "" {
		root, generated, err = loadOrGenerateRoot(cfg.Dir)
		if err != nil {
			return nil, nil, err
		}
	}
	return &Store{keys: map[string]Key{root.AccessKey: root}}, generated, nil
}

// Lookup returns the key with the given access key.
func (s *Store) Lookup(_ context.Context, accessKey string) (Key, error) {
	for ak, k := range s.keys {
		// Constant-time comparison so that response timing does not reveal key prefixes.
		if subtle.ConstantTimeCompare([]byte(ak), []byte(accessKey)) == 1 {
			return k, nil
		}
	}
	return Key{}, fmt.Errorf("%w", ErrUnknownKey)
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
		k.Account, k.User = RootAccount, "root"
		return k, nil, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return Key{}, nil, fmt.Errorf("auth: read %s: %w", path, err)
	}
	k := Key{AccessKey: "CAIRN" + randomString(15, accessAlphabet), SecretKey: randomString(40, secretAlphabet), Account: RootAccount, User: "root"}
	if err := writeFileDurably(path, k); err != nil {
		return Key{}, nil, err
	}
	return k, &k, nil
}

const (
	accessAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

func randomString(n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		v, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			panic(fmt.Sprintf("crypto/rand failed: %v", err)) // the OS has no entropy: nothing is safe
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}

// writeFileDurably writes v as JSON, readable by the owner only, by temp → fsync → rename →
// fsync dir, so that a crash leaves either no file or the whole file.
func writeFileDurably(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-credentials-*")
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("auth: sync %s: %w", dir, err)
	}
	return nil
}
