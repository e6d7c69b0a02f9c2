package sse

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
)

// KeySize is the size of every key: master, KMS, customer and data keys.
const KeySize = 32

// Binding names what a data key belongs to: the object's bucket (container) and key (object
// name) as clients name it, never where it is stored, so that the version store's raw copies
// of an object (to and from its hidden versions container) still decrypt; an envelope copied
// onto another name does not.
type Binding struct{ Bucket, Key string }

// Request is how a new object is to be encrypted.
type Request struct {
	Mode Mode
	// KMSKeyID names the KMS key (an ID, "alias/NAME" or an ARN ending in either); "" is the
	// default key (alias aws/s3), made on first use.
	KMSKeyID string
	// Context is the SSE-KMS encryption context (base64 JSON as S3 takes it), bound to the key.
	Context string
	// CustomerKey is the SSE-C key (KeySize bytes). It is never stored.
	CustomerKey []byte
}

// Keyring holds the master key and reaches the KMS keys. It is safe for concurrent use.
type Keyring struct {
	s3KEK, kmsKEK []byte
	kcv           []byte
	kms           KMSStore
}

// NewKeyring makes a keyring of a master key (KeySize bytes) and a KMS key store (nil: SSE-KMS
// is refused with ErrNoKMS).
func NewKeyring(master []byte, kms KMSStore) (*Keyring, error) {
	if len(master) != KeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrBadMasterKey, len(master), KeySize)
	}
	return &Keyring{
		s3KEK:  derive(master, "sse-s3"),
		kmsKEK: derive(master, "kms"),
		kcv:    derive(master, "check")[:kcvLen],
		kms:    kms,
	}, nil
}

// SetKMS sets the KMS key store (the server opens it after the keyring).
func (k *Keyring) SetKMS(s KMSStore) { k.kms = s }

func derive(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("cairn-sse-v1 " + purpose))
	return m.Sum(nil)
}

func seal(kek, plain, aad []byte) ([]byte, error) {
	g, err := gcm(kek)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, g.NonceSize(), g.NonceSize()+len(plain)+g.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("sse: random nonce: %w", err)
	}
	return g.Seal(nonce, nonce, plain, aad), nil
}

func unseal(kek, sealed, aad []byte) ([]byte, error) {
	g, err := gcm(kek)
	if err != nil {
		return nil, err
	}
	if len(sealed) < g.NonceSize()+g.Overhead() {
		return nil, fmt.Errorf("%w: sealed key too short", ErrTampered)
	}
	out, err := g.Open(nil, sealed[:g.NonceSize()], sealed[g.NonceSize():], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: sealed key", ErrTampered)
	}
	return out, nil
}

func gcm(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("sse: %w", err)
	}
	return cipher.NewGCM(b)
}

func dataKeyAAD(e *Envelope, b Binding) []byte {
	return []byte("cairn-sse-v1 data-key\x00" + string(e.Mode) + "\x00" + e.KMSKeyID + "\x00" + e.Context + "\x00" + b.Bucket + "\x00" + b.Key)
}

// CustomerKeyCheck is the check value stored of an SSE-C key: a truncated HMAC, never the key.
func customerKeys(customer []byte) (kek, kcv []byte) {
	return derive(customer, "sse-c"), derive(customer, "sse-c check")[:kcvLen]
}

// NewDataKey makes a random data key for a new object bound to b and seals it as req asks.
// The envelope says how to open it again (OpenDataKey).
func (k *Keyring) NewDataKey(ctx context.Context, req Request, b Binding) ([]byte, *Envelope, error) {
	dk := make([]byte, KeySize)
	if _, err := rand.Read(dk); err != nil {
		return nil, nil, fmt.Errorf("sse: random data key: %w", err)
	}
	env := &Envelope{Mode: req.Mode}
	var kek []byte
	switch req.Mode {
	case ModeS3:
		kek, env.KCV = k.s3KEK, k.kcv
	case ModeKMS:
		key, material, err := k.kmsKey(ctx, req.KMSKeyID, true)
		if err != nil {
			return nil, nil, err
		}
		kek, env.KCV, env.KMSKeyID, env.Context = material, k.kcv, key.ID, req.Context
	case ModeC:
		if len(req.CustomerKey) != KeySize {
			return nil, nil, fmt.Errorf("%w: customer key of %d bytes", ErrCustomerKeyMismatch, len(req.CustomerKey))
		}
		kek, env.KCV = customerKeys(req.CustomerKey)
	default:
		return nil, nil, fmt.Errorf("%w: mode %q", ErrBadEnvelope, req.Mode)
	}
	sealed, err := seal(kek, dk, dataKeyAAD(env, b))
	if err != nil {
		return nil, nil, err
	}
	env.Sealed = sealed
	return dk, env, nil
}

// OpenDataKey opens an object's data key. customer is the SSE-C key a request gives (nil if
// none). A wrong master key is ErrWrongMasterKey, a wrong or missing customer key
// ErrCustomerKeyMismatch or ErrCustomerKeyRequired, a disabled or missing KMS key
// ErrKMSKeyDisabled or ErrKMSKeyNotFound, and anything else that fails ErrTampered.
func (k *Keyring) OpenDataKey(ctx context.Context, env *Envelope, customer []byte, b Binding) ([]byte, error) {
	var kek []byte
	switch env.Mode {
	case ModeS3, ModeKMS:
		if subtle.ConstantTimeCompare(env.KCV, k.kcv) != 1 {
			return nil, ErrWrongMasterKey
		}
		kek = k.s3KEK
		if env.Mode == ModeKMS {
			_, material, err := k.kmsKey(ctx, env.KMSKeyID, false)
			if err != nil {
				return nil, err
			}
			kek = material
		}
	case ModeC:
		if customer == nil {
			return nil, ErrCustomerKeyRequired
		}
		var kcv []byte
		kek, kcv = customerKeys(customer)
		if subtle.ConstantTimeCompare(env.KCV, kcv) != 1 {
			return nil, ErrCustomerKeyMismatch
		}
	default:
		return nil, fmt.Errorf("%w: mode %q", ErrBadEnvelope, env.Mode)
	}
	dk, err := unseal(kek, env.Sealed, dataKeyAAD(env, b))
	if err != nil {
		return nil, fmt.Errorf("bucket %q key %q: %w", b.Bucket, b.Key, err)
	}
	if len(dk) != KeySize {
		return nil, fmt.Errorf("%w: data key of %d bytes", ErrTampered, len(dk))
	}
	return dk, nil
}

// IsKeyError reports whether err is about the keys a request gave or named (the client's to
// fix) rather than about the stored bytes.
func IsKeyError(err error) bool {
	return errors.Is(err, ErrCustomerKeyRequired) || errors.Is(err, ErrCustomerKeyMismatch) ||
		errors.Is(err, ErrKMSKeyNotFound) || errors.Is(err, ErrKMSKeyDisabled)
}
