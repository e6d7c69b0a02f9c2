package s3core

import (
	"fmt"
	"net/url"

	"github.com/cairn-store/cairn/internal/sse"
)

// Bucket default encryption (PutBucketEncryption, GetBucketEncryption, DeleteBucketEncryption):
// kept in the bucket's container metadata under bucketEncryptionKey and cached with its access
// state; objects written without encryption headers get it (sseForWrite).

const BucketEncryptionKey = "sys:s3-encryption"

// MaxEncryptionDocument bounds a PutBucketEncryption document.
const MaxEncryptionDocument = 16 << 10

type BucketEncryption struct {
	Mode      sse.Mode
	KMSKeyID  string
	BucketKey bool
}

func (e *BucketEncryption) Encode() string {
	v := url.Values{"alg": {string(e.Mode)}}
	if e.KMSKeyID != "" {
		v.Set("kms", e.KMSKeyID)
	}
	if e.BucketKey {
		v.Set("bk", "1")
	}
	return v.Encode()
}

func decodeBucketEncryption(s string) (*BucketEncryption, error) {
	if s == "" {
		return nil, nil
	}
	v, err := url.ParseQuery(s)
	if err != nil {
		return nil, fmt.Errorf("bucket encryption %.80q: %w", s, err)
	}
	e := &BucketEncryption{Mode: sse.Mode(v.Get("alg")), KMSKeyID: v.Get("kms"), BucketKey: v.Get("bk") == "1"}
	if e.Mode != sse.ModeS3 && e.Mode != sse.ModeKMS {
		return nil, fmt.Errorf("bucket encryption algorithm %.40q", e.Mode)
	}
	return e, nil
}
