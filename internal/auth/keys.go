package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The keys the store derives from the cluster secret, one per purpose: the labels keep a key of
// one purpose from ever being the key of another, and name a version, so that a future format
// takes new keys rather than reinterpreting old ones.
const (
	labelTenantsKey   = "cairn tenants object encryption key v1"
	labelTenantsKeyID = "cairn tenants object key identifier v1"
	labelSwiftTokens  = "cairn swift token key v1"
)

// MinClusterSecret is the shortest cluster secret OpenCluster takes: the secret keys the
// encryption of every tenant's secrets, and a short one could be guessed offline by anyone who
// reads the tenants object off a storage node's disk.
const MinClusterSecret = 16

// deriveKey derives a key of n bytes for one purpose from the cluster secret (HKDF-SHA256, no
// salt: the secret is already meant to be random, and the label separates the purposes).
func deriveKey(secret []byte, label string, n int) []byte {
	k, err := hkdf.Key(sha256.New, secret, nil, label, n)
	if err != nil {
		panic(fmt.Sprintf("auth: HKDF of %d bytes: %v", n, err)) // only for n > 255*32
	}
	return k
}

// The sealed tenants object: sealMagic, the key identifier, the GCM nonce, then the ciphertext
// with its tag. The magic and the identifier are authenticated as additional data.
const (
	sealMagic = "CAIRN-TENANTS/1\n"
	keyIDLen  = 8
)

// sealer encrypts and authenticates the cluster's tenants object (AES-256-GCM under a key
// derived from the cluster secret), so that storage nodes' disks never hold tenants' secrets in
// clear and a changed byte is refused rather than believed.
type sealer struct {
	aead cipher.AEAD
	// keyID identifies the key (a second derivation from the secret, which reveals nothing of
	// the key): a proxy given another secret says so, instead of calling the object damaged.
	keyID []byte
}

func newSealer(secret []byte) (*sealer, error) {
	if len(secret) < MinClusterSecret {
		return nil, fmt.Errorf("auth: the cluster secret has %d bytes, want at least %d: %w", len(secret), MinClusterSecret, ErrInvalidKey)
	}
	block, err := aes.NewCipher(deriveKey(secret, labelTenantsKey, 32))
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return &sealer{aead: aead, keyID: deriveKey(secret, labelTenantsKeyID, keyIDLen)}, nil
}

func (s *sealer) header() []byte {
	return append([]byte(sealMagic), s.keyID...)
}

// seal encrypts plain with a fresh random nonce: every write of the object differs, even of the
// same state, which also makes its ETag a version that never comes back.
func (s *sealer) seal(plain []byte) []byte {
	hdr := s.header()
	out := make([]byte, len(hdr), len(hdr)+s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	copy(out, hdr)
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // no entropy: nothing is safe
	}
	out = append(out, nonce...)
	return s.aead.Seal(out, nonce, plain, hdr)
}

// open checks and decrypts a sealed object: ErrWrongClusterSecret when it was sealed under
// another secret, ErrTenantsCorrupt when it is not a sealed object or fails authentication.
func (s *sealer) open(data []byte) ([]byte, error) {
	hdr := s.header()
	if len(data) < len(hdr)+s.aead.NonceSize()+s.aead.Overhead() || string(data[:len(sealMagic)]) != sealMagic {
		return nil, fmt.Errorf("auth: %d bytes that are not a sealed tenants object: %w", len(data), ErrTenantsCorrupt)
	}
	if subtle.ConstantTimeCompare(data[len(sealMagic):len(hdr)], s.keyID) != 1 {
		return nil, fmt.Errorf("auth: give every proxy the same cluster secret: %w", ErrWrongClusterSecret)
	}
	rest := data[len(hdr):]
	nonce, ct := rest[:s.aead.NonceSize()], rest[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, nonce, ct, hdr)
	if err != nil {
		return nil, fmt.Errorf("auth: the tenants object does not authenticate: %w", ErrTenantsCorrupt)
	}
	return plain, nil
}

// tokenKeyLen is the length of the Swift token key: HMAC-SHA256 gains nothing from a longer
// one.
const tokenKeyLen = 32

// tokenKeyRecord is the content of swift-token-key.json.
type tokenKeyRecord struct {
	Key string `json:"key"` // hex
}

// loadOrGenerateTokenKey returns the embedded default's Swift token key, made on first start.
// A file that does not hold a key stops the server: replacing it quietly would revoke every
// token, and hide that something else wrote to the data directory.
func loadOrGenerateTokenKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, tokenKeyFile)
	data, err := os.ReadFile(path)
	if err == nil {
		var rec tokenKeyRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, fmt.Errorf("auth: read %s: %w", path, err)
		}
		key, err := hex.DecodeString(rec.Key)
		if err != nil || len(key) != tokenKeyLen {
			return nil, fmt.Errorf("auth: %s: want %d bytes in hex: %w", path, tokenKeyLen, ErrInvalidKey)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("auth: read %s: %w", path, err)
	}
	key := make([]byte, tokenKeyLen)
	if _, err := rand.Read(key); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	if err := writeFileDurably(path, tokenKeyRecord{Key: hex.EncodeToString(key)}); err != nil {
		return nil, err
	}
	return key, nil
}
