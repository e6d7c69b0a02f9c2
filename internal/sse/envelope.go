package sse

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
)

// SysMeta keys an encrypted object carries (lower case, as meta.Object.SysMeta keys are).
const (
	// SysEnvelope holds the Envelope.
	SysEnvelope = "sse"
	// SysPlainSize holds an encrypted object's plaintext size (its stored size is the
	// stream's); container listings show it (meta.SysListingSize).
	SysPlainSize = meta.SysListingSize
	// SysPlainETag holds the ETag an encrypted object is served with when it is not the stored
	// bytes' (SSE-S3: the plaintext's MD5); listings show it (meta.SysListingETag).
	SysPlainETag = meta.SysListingETag
)

const (
	envelopeVersion = "1"
	kcvLen          = 8
	sealedKeyLen    = 12 + 32 + 16 // nonce, data key, tag
	maxKMSIDLen     = 256
	maxContextLen   = 4096
)

// Envelope is what is stored about an encrypted object's key: its mode, the KMS key and
// encryption context (SSE-KMS), a check value of the key that sealed the data key (to tell a
// wrong master or customer key from damage), and the sealed data key.
type Envelope struct {
	Mode     Mode
	KMSKeyID string
	// Context is the SSE-KMS encryption context as the client gave it (base64 JSON), or "".
	Context string
	KCV     []byte
	Sealed  []byte
}

// Encode renders the envelope for SysMeta.
func (e *Envelope) Encode() string {
	v := url.Values{}
	v.Set("v", envelopeVersion)
	v.Set("mode", string(e.Mode))
	v.Set("kcv", hex.EncodeToString(e.KCV))
	v.Set("key", base64.RawStdEncoding.EncodeToString(e.Sealed))
	if e.KMSKeyID != "" {
		v.Set("kms", e.KMSKeyID)
	}
	if e.Context != "" {
		v.Set("ctx", e.Context)
	}
	return v.Encode()
}

// ParseEnvelope reads an envelope Encode made; ErrBadEnvelope for anything else.
func ParseEnvelope(s string) (*Envelope, error) {
	bad := func(why string) (*Envelope, error) { return nil, fmt.Errorf("%w: %s", ErrBadEnvelope, why) }
	v, err := url.ParseQuery(s)
	if err != nil {
		return bad("does not parse")
	}
	for k, vs := range v {
		switch k {
		case "v", "mode", "kcv", "key", "kms", "ctx":
		default:
			return bad("unknown field " + fmt.Sprintf("%.40q", k))
		}
		if len(vs) != 1 {
			return bad("repeated field " + k)
		}
	}
	if v.Get("v") != envelopeVersion {
		return bad("unknown version")
	}
	e := &Envelope{Mode: Mode(v.Get("mode")), KMSKeyID: v.Get("kms"), Context: v.Get("ctx")}
	switch e.Mode {
	case ModeS3, ModeC:
		if e.KMSKeyID != "" || e.Context != "" {
			return bad("KMS fields without SSE-KMS")
		}
	case ModeKMS:
		if err := checkKMSID(e.KMSKeyID); err != nil {
			return bad(err.Error())
		}
		if len(e.Context) > maxContextLen {
			return bad("context too long")
		}
	default:
		return bad("unknown mode")
	}
	if e.KCV, err = hex.DecodeString(v.Get("kcv")); err != nil || len(e.KCV) != kcvLen {
		return bad("check value")
	}
	if e.Sealed, err = base64.RawStdEncoding.DecodeString(v.Get("key")); err != nil || len(e.Sealed) != sealedKeyLen {
		return bad("sealed key")
	}
	return e, nil
}

// checkKMSID accepts the IDs Cairn makes: letters, digits and "-", at most maxKMSIDLen.
func checkKMSID(id string) error {
	if id == "" || len(id) > maxKMSIDLen || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
		return fmt.Errorf("%w: KMS key ID %.80q", ErrKMSKeyNotFound, id)
	}
	return nil
}
