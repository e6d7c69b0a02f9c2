package s3core

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-store/cairn/internal/sse"
)

// Server-side encryption (package sse holds the keys and the format): the request headers of
// SSE-S3 (x-amz-server-side-encryption: AES256), SSE-KMS (aws:kms, with
// -aws-kms-key-id and -context) and SSE-C (-customer-algorithm, -customer-key,
// -customer-key-MD5), the bucket's default encryption (sse_bucket.go), and the response
// headers that say how an object is encrypted.

const (
	HdrSSE          = "X-Amz-Server-Side-Encryption"
	HdrSSEKMSKeyID  = "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id"
	HdrSSEContext   = "X-Amz-Server-Side-Encryption-Context"
	HdrSSEBucketKey = "X-Amz-Server-Side-Encryption-Bucket-Key-Enabled"
	// The SSE-C headers of a request's own object, and of a copy's source.
	HdrSSECPrefix     = "X-Amz-Server-Side-Encryption-Customer-"
	HdrCopySSECPrefix = "X-Amz-Copy-Source-Server-Side-Encryption-Customer-"
)

var (
	ErrSSEMethod        = ErrInvalidArgument.WithMessage("The encryption method specified is not supported")
	ErrSSECInsecure     = ErrInvalidRequest.WithMessage("Requests specifying Server Side Encryption with Customer provided keys must be made over a secure connection.")
	ErrSSECAndSSE       = ErrInvalidArgument.WithMessage("Server Side Encryption with Customer provided key is incompatible with the encryption method specified")
	ErrSSECAlgorithm    = &APIError{"InvalidEncryptionAlgorithmError", http.StatusBadRequest, "The encryption request you specified is not valid. Supported value: AES256."}
	ErrSSECNoKey        = ErrInvalidArgument.WithMessage("Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.")
	ErrSSECNoMD5        = ErrInvalidArgument.WithMessage("Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.")
	ErrSSECBadKey       = ErrInvalidArgument.WithMessage("The secret key was invalid for the specified algorithm.")
	ErrSSECMD5Mismatch  = ErrInvalidArgument.WithMessage("The calculated MD5 hash of the key did not match the hash that was provided.")
	ErrSSECNotEncrypted = ErrInvalidRequest.WithMessage("The encryption parameters are not applicable to this object.")
	ErrKMSWithoutKMS    = ErrInvalidArgument.WithMessage("Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms")
	ErrSSEOff           = ErrNotImplemented.WithMessage("Server-side encryption is not configured on this server.")
	errKMSNotFound      = &APIError{"KMS.NotFoundException", http.StatusBadRequest, "Invalid keyId"}
	errKMSDisabled      = &APIError{"KMS.DisabledException", http.StatusBadRequest, "The KMS key is disabled."}
	errSSECRequired     = ErrInvalidRequest.WithMessage("The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")
	errSSECWrongKey     = ErrAccessDenied.WithMessage("The provided customer key does not match the key the object was encrypted with.")
)

// SSEAPIError translates package sse's errors; others pass through.
func SSEAPIError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sse.ErrCustomerKeyRequired):
		return fmt.Errorf("%w: %w", errSSECRequired, err)
	case errors.Is(err, sse.ErrCustomerKeyMismatch):
		return fmt.Errorf("%w: %w", errSSECWrongKey, err)
	case errors.Is(err, sse.ErrKMSKeyNotFound):
		return fmt.Errorf("%w: %w", errKMSNotFound, err)
	case errors.Is(err, sse.ErrKMSKeyDisabled):
		return fmt.Errorf("%w: %w", errKMSDisabled, err)
	case errors.Is(err, sse.ErrNoKMS):
		return fmt.Errorf("%w: %w", ErrSSEOff, err)
	}
	return err
}

// Binding is what a request's object's data key is bound to: its bucket and key.
func (rq *Request) Binding() sse.Binding { return sse.Binding{Bucket: rq.Bucket, Key: rq.Key} }
