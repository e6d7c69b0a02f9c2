// Package sse owns Cairn's server-side encryption at rest: the key hierarchy (a master key the
// operator supplies or Cairn generates; per-object data keys sealed by it, by a KMS key that is
// itself sealed by it, or by a key derived from a customer's key), the authenticated, seekable
// stream format of encrypted bytes (fixed segments, each sealed with AES-256-GCM under a nonce
// made from its index and a final flag), and the reading of an encrypted object, whole or a
// range, for both front ends. It knows no client protocol and never touches a disk (apart from
// the master key file) or the proxy: callers hand it the bytes and the object's metadata.
package sse

import "errors"

// Mode is how an object is encrypted, named as S3 names it.
type Mode string

// The modes.
const (
	ModeNone Mode = ""
	ModeS3   Mode = "AES256"  // SSE-S3: the data key is sealed by the master key
	ModeKMS  Mode = "aws:kms" // SSE-KMS: sealed by a KMS key, itself sealed by the master key
	ModeC    Mode = "SSE-C"   // SSE-C: sealed by a key derived from the customer's key
)

// Errors. Callers map them to their protocol's answers.
var (
	// ErrTampered: encrypted bytes or their envelope failed authentication (a changed,
	// missing or reordered byte on a disk or on its way).
	ErrTampered = errors.New("sse: encrypted data failed authentication (damaged or tampered)")
	// ErrWrongMasterKey: the object was sealed under another master key than the server's.
	ErrWrongMasterKey = errors.New("sse: the object is sealed with another master key")
	// ErrBadEnvelope: the stored encryption metadata does not parse.
	ErrBadEnvelope = errors.New("sse: malformed encryption metadata")
	// ErrCustomerKeyRequired: an SSE-C object read without the customer's key.
	ErrCustomerKeyRequired = errors.New("sse: the object is encrypted with a customer key, which the request does not give")
	// ErrCustomerKeyMismatch: the customer's key given is not the object's.
	ErrCustomerKeyMismatch = errors.New("sse: the customer key given is not the one the object was encrypted with")
	// ErrKMSKeyNotFound and ErrKMSKeyDisabled: the KMS key named does not exist, or is disabled.
	ErrKMSKeyNotFound = errors.New("sse: no such KMS key")
	ErrKMSKeyDisabled = errors.New("sse: the KMS key is disabled")
	// ErrNoKMS: SSE-KMS was asked of a keyring with no KMS key store.
	ErrNoKMS = errors.New("sse: no KMS key store is configured")
	// ErrBadMasterKey: a master key file that does not hold a usable key.
	ErrBadMasterKey = errors.New("sse: bad master key file")
	// ErrBadLayout: stored sizes that no encrypted stream can have.
	ErrBadLayout = errors.New("sse: encrypted size is not one the format can have")
)
