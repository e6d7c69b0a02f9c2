// Package postpolicy holds the rules of S3's browser-based uploads (POST Object, a
// multipart/form-data POST to a bucket) that need no server: reading the form as a stream up to
// its file (ReadForm: the fields before it are kept, bounded to S3's 20 KB; the file is left to
// be streamed, and nothing after it is read), verifying the form's signature over its policy
// (Authenticate: SigV4's x-amz-* fields or SigV2's AWSAccessKeyId and signature), decoding the
// policy document (ParsePolicy) and evaluating it (Policy.Check: expiration, eq and
// starts-with conditions, no field left uncovered; LimitFile: content-length-range).
//
// It is pure: no disk, no network, no logging; credentials come from a sigv4.CredentialStore.
// Refusals are *Error values carrying S3's text and wrapping one sentinel (errors.go) that
// corresponds to one S3 error code, except authentication failures, which wrap sigv4's own
// sentinels; the S3 front end turns both into answers in its one error table.
package postpolicy
