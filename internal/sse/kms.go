package sse

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultKMSAlias is the alias of the KMS key SSE-KMS uses when a request names none, as S3's
// AWS-managed key aws/s3. It is made on first use.
const DefaultKMSAlias = "aws/s3"

// ErrKMSKeyExists: a new KMS key's ID or alias is taken; ErrInvalidAlias: an alias KMS
// would refuse.
var (
	ErrKMSKeyExists = errors.New("sse: a KMS key with this ID or alias exists")
	ErrInvalidAlias = errors.New("sse: invalid KMS alias")
)

// KMSKey is a KMS key as the key store keeps it: its material sealed by the master key.
type KMSKey struct {
	ID      string    `json:"id"`
	Alias   string    `json:"alias,omitempty"`
	Created time.Time `json:"created"`
	Enabled bool      `json:"enabled"`
	// KCV is the check value of the master key that sealed it; Sealed the sealed material.
	KCV    []byte `json:"kcv"`
	Sealed []byte `json:"sealed"`
}

// KMSStore keeps KMS keys where every proxy of a cluster sees them (the server implements it
// over the tenant store).
type KMSStore interface {
	// KMSKeys lists the keys.
	KMSKeys(ctx context.Context) ([]KMSKey, error)
	// PutKMSKey stores key: a new one (ErrKMSKeyExists when its ID or alias is taken) if create,
	// else a replacement of the key of its ID (ErrKMSKeyNotFound when there is none).
	PutKMSKey(ctx context.Context, key KMSKey, create bool) error
}

func kmsAAD(id string) []byte { return []byte("cairn-sse-v1 kms-key\x00" + id) }

func newKeyID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("sse: random key ID: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// CheckAlias accepts aliases as AWS KMS does: letters, digits, "/", "_" and "-", at most 256.
func CheckAlias(alias string) error {
	alias = strings.TrimPrefix(alias, "alias/")
	if alias == "" || len(alias) > 250 || strings.Trim(alias, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/_-") != "" {
		return fmt.Errorf("%w %.80q", ErrInvalidAlias, alias)
	}
	return nil
}

// CreateKMSKey makes a new enabled KMS key, with an alias if not "".
func (k *Keyring) CreateKMSKey(ctx context.Context, alias string) (KMSKey, error) {
	if k.kms == nil {
		return KMSKey{}, ErrNoKMS
	}
	alias = strings.TrimPrefix(alias, "alias/")
	if alias != "" {
		if err := CheckAlias(alias); err != nil {
			return KMSKey{}, err
		}
	}
	id, err := newKeyID()
	if err != nil {
		return KMSKey{}, err
	}
	material := make([]byte, KeySize)
	if _, err := rand.Read(material); err != nil {
		return KMSKey{}, fmt.Errorf("sse: random KMS key: %w", err)
	}
	sealed, err := seal(k.kmsKEK, material, kmsAAD(id))
	if err != nil {
		return KMSKey{}, err
	}
	key := KMSKey{ID: id, Alias: alias, Created: time.Now().UTC(), Enabled: true, KCV: k.kcv, Sealed: sealed}
	if err := k.kms.PutKMSKey(ctx, key, true); err != nil {
		return KMSKey{}, fmt.Errorf("create KMS key: %w", err)
	}
	return key, nil
}

// KMSKeys lists the KMS keys.
func (k *Keyring) KMSKeys(ctx context.Context) ([]KMSKey, error) {
	if k.kms == nil {
		return nil, ErrNoKMS
	}
	return k.kms.KMSKeys(ctx)
}

// KMSKey finds a KMS key by ID, alias or ARN.
func (k *Keyring) KMSKey(ctx context.Context, ref string) (KMSKey, error) {
	if k.kms == nil {
		return KMSKey{}, ErrNoKMS
	}
	keys, err := k.kms.KMSKeys(ctx)
	if err != nil {
		return KMSKey{}, err
	}
	key, err := findKMS(keys, ref)
	if r, ok := k.kms.(refresher); ok && errors.Is(err, ErrKMSKeyNotFound) {
		// A key just made through another proxy of the cluster: ask the store once more.
		if rerr := r.Refresh(ctx); rerr != nil {
			return KMSKey{}, rerr
		}
		if keys, err = k.kms.KMSKeys(ctx); err != nil {
			return KMSKey{}, err
		}
		key, err = findKMS(keys, ref)
	}
	return key, err
}

// refresher is a KMSStore that can be asked to read the shared state again at once.
type refresher interface {
	Refresh(ctx context.Context) error
}

// SetKMSKeyEnabled enables or disables a KMS key. A disabled key neither encrypts nor decrypts.
func (k *Keyring) SetKMSKeyEnabled(ctx context.Context, ref string, enabled bool) (KMSKey, error) {
	key, err := k.KMSKey(ctx, ref)
	if err != nil {
		return KMSKey{}, err
	}
	key.Enabled = enabled
	if err := k.kms.PutKMSKey(ctx, key, false); err != nil {
		return KMSKey{}, fmt.Errorf("update KMS key %s: %w", key.ID, err)
	}
	return key, nil
}

// findKMS resolves an ID, "alias/NAME", or an ARN ending in ":key/ID" or ":alias/NAME".
func findKMS(keys []KMSKey, ref string) (KMSKey, error) {
	if i := strings.Index(ref, ":key/"); strings.HasPrefix(ref, "arn:") && i >= 0 {
		ref = ref[i+len(":key/"):]
	} else if i := strings.Index(ref, ":alias/"); strings.HasPrefix(ref, "arn:") && i >= 0 {
		ref = ref[i+1:]
	}
	alias, isAlias := strings.CutPrefix(ref, "alias/")
	for _, key := range keys {
		if (isAlias && key.Alias == alias) || (!isAlias && key.ID == ref) {
			return key, nil
		}
	}
	return KMSKey{}, fmt.Errorf("%w: %.100q", ErrKMSKeyNotFound, ref)
}

// kmsKey resolves ref ("" is the default key, made when forEncrypt and missing) and opens its
// material.
func (k *Keyring) kmsKey(ctx context.Context, ref string, forEncrypt bool) (KMSKey, []byte, error) {
	if k.kms == nil {
		return KMSKey{}, nil, ErrNoKMS
	}
	deflt := ref == ""
	if deflt {
		ref = "alias/" + DefaultKMSAlias
	}
	key, err := k.KMSKey(ctx, ref)
	if deflt && forEncrypt && errors.Is(err, ErrKMSKeyNotFound) {
		key, err = k.CreateKMSKey(ctx, DefaultKMSAlias)
		if errors.Is(err, ErrKMSKeyExists) { // another proxy made it first
			key, err = k.KMSKey(ctx, ref)
		}
	}
	if err != nil {
		return KMSKey{}, nil, err
	}
	if !key.Enabled {
		return KMSKey{}, nil, fmt.Errorf("%w: %s", ErrKMSKeyDisabled, key.ID)
	}
	if subtle.ConstantTimeCompare(key.KCV, k.kcv) != 1 {
		return KMSKey{}, nil, fmt.Errorf("KMS key %s: %w", key.ID, ErrWrongMasterKey)
	}
	material, err := unseal(k.kmsKEK, key.Sealed, kmsAAD(key.ID))
	if err != nil {
		return KMSKey{}, nil, fmt.Errorf("KMS key %s: %w", key.ID, err)
	}
	return key, material, nil
}
