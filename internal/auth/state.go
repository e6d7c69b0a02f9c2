package auth

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/sse"
)

// stateVersion is the format of tenants.json; a file of a newer version is refused rather
// than half understood.
const stateVersion = 1

// state is the content of tenants.json. It is never changed once a snapshot holds it: a change
// clones it, edits the clone and writes it before anyone can see it.
type state struct {
	Version  int                       `json:"version"`
	Accounts map[string]*accountRecord `json:"accounts"`
	// KMSKeys are the SSE-KMS keys (kms.go), by ID, their material sealed by the master key.
	KMSKeys map[string]*sse.KMSKey `json:"kms_keys,omitempty"`
}

type accountRecord struct {
	Created      time.Time              `json:"created"`
	QuotaBytes   int64                  `json:"quota_bytes,omitempty"`
	QuotaObjects int64                  `json:"quota_objects,omitempty"`
	Metadata     map[string]string      `json:"metadata,omitempty"`
	Users        map[string]*userRecord `json:"users"`
}

type userRecord struct {
	AccessKey string    `json:"access_key"`
	SecretKey string    `json:"secret_key"`
	SwiftKey  string    `json:"swift_key"`
	Admin     bool      `json:"admin,omitempty"`
	Created   time.Time `json:"created"`
}

func (st *state) clone() *state {
	c := &state{Version: st.Version, Accounts: make(map[string]*accountRecord, len(st.Accounts))}
	if st.KMSKeys != nil {
		c.KMSKeys = make(map[string]*sse.KMSKey, len(st.KMSKeys))
		for id, k := range st.KMSKeys {
			kc := *k
			c.KMSKeys[id] = &kc
		}
	}
	for name, a := range st.Accounts {
		ac := *a
		ac.Metadata = maps.Clone(a.Metadata)
		ac.Users = make(map[string]*userRecord, len(a.Users))
		for un, u := range a.Users {
			uc := *u
			ac.Users[un] = &uc
		}
		c.Accounts[name] = &ac
	}
	return c
}

// snapshot is one state with its access-key index, read without locks once obtained.
type snapshot struct {
	state    *state
	byAccess map[string]Key
	// version is the stored state's version in the cluster (the object's ETag), which a change
	// must still find there to replace it; generation counts the cluster's changes, so that a
	// replica's older copy is never taken for news. Both are zero for the file.
	version    string
	generation uint64
	// writes name the cluster's recent writes (the last maxRecentWrites, this state's last),
	// so that a writer told its write's outcome is unknown can find whether it was made.
	writes []string
	// decoy stands in for the Swift key of a user that does not exist, so that a failed
	// lookup costs the same comparison as a wrong key.
	decoy string
}

func newSnapshot(st *state, root Key, log *slog.Logger) *snapshot {
	s := &snapshot{state: st, byAccess: map[string]Key{root.AccessKey: root}, decoy: randomString(swiftKeyLen, swiftAlphabet)}
	for an, a := range st.Accounts {
		for un, u := range a.Users {
			if _, taken := s.byAccess[u.AccessKey]; taken {
				// Only an operator-chosen root key can collide with a generated one; the root
				// key wins and the user must rotate its keys.
				log.Warn("auth: a user's access key equals another key and is ignored; rotate its keys", "account", an, "user", un)
				continue
			}
			s.byAccess[u.AccessKey] = Key{AccessKey: u.AccessKey, SecretKey: u.SecretKey, Account: an, User: un, Admin: u.Admin}
		}
	}
	return s
}

// loadTenants reads the tenants file; nil (and no error) when there is none yet. A file that
// does not parse or breaks the rules stops the server rather than losing tenants silently.
func loadTenants(path string) (*state, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: read %s: %w", path, err)
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("auth: read %s: %w", path, err)
	}
	if err := checkState(&st, path); err != nil {
		return nil, err
	}
	return &st, nil
}

// checkState checks a decoded state against the rules every writer follows, and fills in what
// an older writer may have left out; where names the state's source in errors.
func checkState(st *state, where string) error {
	if st.Version != stateVersion {
		return fmt.Errorf("auth: %s: format version %d, this binary reads %d", where, st.Version, stateVersion)
	}
	if st.Accounts == nil {
		st.Accounts = map[string]*accountRecord{}
	}
	seen := map[string]bool{}
	for an, a := range st.Accounts {
		if a == nil {
			return fmt.Errorf("auth: %s: account %q has no record", where, an)
		}
		if err := validName("account", an); err != nil {
			return fmt.Errorf("auth: %s: %w", where, err)
		}
		if a.Users == nil {
			a.Users = map[string]*userRecord{}
		}
		for un, u := range a.Users {
			if u == nil || validName("user", un) != nil || (an == RootAccount && un == RootUser) {
				return fmt.Errorf("auth: %s: user %q of account %q: %w", where, un, an, ErrInvalidName)
			}
			keys := GivenKeys{AccessKey: u.AccessKey, SecretKey: u.SecretKey, SwiftKey: u.SwiftKey}
			if u.AccessKey == "" || u.SecretKey == "" || u.SwiftKey == "" || keys.validate() != nil {
				return fmt.Errorf("auth: %s: keys of %s:%s: %w", where, an, un, ErrInvalidKey)
			}
			if seen[u.AccessKey] {
				return fmt.Errorf("auth: %s: access key of %s:%s is used twice: %w", where, an, un, ErrInvalidKey)
			}
			seen[u.AccessKey] = true
		}
	}
	if st.Accounts[RootAccount] == nil {
		st.Accounts[RootAccount] = &accountRecord{Users: map[string]*userRecord{}}
	}
	return nil
}

// initialState is the state of a store that starts from nothing: the root account only, created
// now (and kept from then on, so that its created time does not change with every start).
func initialState(now time.Time) *state {
	st := &state{Version: stateVersion, Accounts: map[string]*accountRecord{}}
	st.Accounts[RootAccount] = &accountRecord{Created: now.UTC(), Users: map[string]*userRecord{}}
	return st
}

// maxNameLen bounds account and user names.
const maxNameLen = 64

// validName checks an account or user name: 1 to 64 of A-Z a-z 0-9 _ -. The charset keeps
// names safe in URLs, file names and Swift's "ACCOUNT:USER" without any escaping.
func validName(kind, name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("%s name %.80q: want 1 to %d characters: %w", kind, name, maxNameLen, ErrInvalidName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%s name %.80q: only letters, digits, _ and - are allowed: %w", kind, name, ErrInvalidName)
		}
	}
	return nil
}

// Generated key shapes: an S3 access key is "CAIRN" and 16 upper-case letters and digits (as
// AWS's look); secrets are 40 characters from crypto/rand (238 bits); Swift keys are 32
// letters and digits (190 bits), safe in any header.
const (
	accessKeyLen   = 16
	secretKeyLen   = 40
	swiftKeyLen    = 32
	accessAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	swiftAlphabet  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
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

// backend is where a Store keeps its state: a file of the data directory (the embedded default)
// or an object in the cluster (cluster.go).
type backend interface {
	// save makes st the stored state, provided the stored state is still base's; when another
	// writer changed it, the error wraps ErrBlobConflict (the caller reloads and applies its
	// change again), and when the write may or may not have been made, ErrBlobUnknown. id
	// names the write among the state's recent writes (snapshot.writes), so that a writer
	// who could not tell can look. It returns what it saved.
	save(ctx context.Context, st *state, base *snapshot, id string) (saved, error)
}

// saved is what a backend's save made: the new state's version, generation and recent
// writes (see snapshot).
type saved struct {
	version    string
	generation uint64
	writes     []string
}

// fileBackend keeps the state in tenants.json. The process is its only writer (Store.wmu
// orders the changes), so it never conflicts and needs no versions.
type fileBackend struct{ path string }

func (f fileBackend) save(_ context.Context, st *state, _ *snapshot, _ string) (saved, error) {
	return saved{}, writeFile(f.path, st)
}

// writeFile is how changes reach the disk; tests replace it to simulate failures and crashes.
var writeFile = writeFileDurably

// writeFileDurably writes v as JSON, readable by the owner only, by temp → fsync → rename →
// fsync dir, so that a crash leaves either the old file or the whole new one (a leftover temp
// file is removed by the next Open).
func writeFileDurably(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: encode %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(path)+"*")
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

// tempPrefix names the temp files of path, so that Open can find what a crash left.
func tempPrefix(path string) string { return ".tmp-" + filepath.Base(path) + "-" }

// removeTemps deletes temp files a crash left behind for path; they hold secrets.
func removeTemps(path string) {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix(path)) {
			os.Remove(filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
}
