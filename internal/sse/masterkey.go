package sse

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MasterKeyPathFor is where Cairn keeps the master key it generates for a data directory: a
// file beside it, not in it, so that a copy of the data directory alone does not carry it.
func MasterKeyPathFor(dataDir string) string {
	return filepath.Clean(dataDir) + ".master-key"
}

// ReadMasterKey reads a master key file: KeySize bytes written as hex or standard base64,
// with surrounding white space allowed. Anything else is ErrBadMasterKey.
func ReadMasterKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	return ParseMasterKey(b)
}

// ParseMasterKey reads the content of a master key file (see ReadMasterKey).
func ParseMasterKey(b []byte) ([]byte, error) {
	s := string(bytes.TrimSpace(b))
	if k, err := hex.DecodeString(s); err == nil && len(k) == KeySize {
		return k, nil
	}
	if k, err := base64.StdEncoding.DecodeString(s); err == nil && len(k) == KeySize {
		return k, nil
	}
	return nil, fmt.Errorf("%w: want %d random bytes as 64 hex digits or 44 base64 characters", ErrBadMasterKey, KeySize)
}

// EnsureMasterKey reads the master key at path, or when there is no file there makes one: a
// new random key, written with mode 0600, synced, linked into place only if no file appeared
// meanwhile, and its directory synced. created says whether it was made now.
func EnsureMasterKey(path string) (key []byte, created bool, err error) {
	key, err = ReadMasterKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, false, err
	}
	key = make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, false, fmt.Errorf("master key: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("master key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return nil, false, fmt.Errorf("master key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("master key: %w", err)
	}
	_, werr := tmp.WriteString(hex.EncodeToString(key) + "\n")
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, false, fmt.Errorf("master key: %w", werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) { // another process made it first: use that one
			key, err = ReadMasterKey(path)
			return key, false, err
		}
		return nil, false, fmt.Errorf("master key: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		serr := d.Sync()
		d.Close()
		if serr != nil {
			return nil, false, fmt.Errorf("master key: sync %s: %w", dir, serr)
		}
	}
	return key, true, nil
}
