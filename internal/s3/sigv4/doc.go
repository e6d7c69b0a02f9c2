// Package sigv4 owns AWS Signature Version 4 authentication for Cairn's S3
// front end: verifying Authorization-header and presigned-URL requests
// exactly as Amazon S3 computes them, and verifying the request body
// (x-amz-content-sha256 hashes and aws-chunked streaming uploads with
// chunk signatures and trailing headers). It is pure: no disk, no network,
// no logging; credentials come from a CredentialStore.
//
// S3 specifics implemented here (they differ from other AWS services):
// the path is URI-encoded once and never normalised; x-amz-content-sha256
// is mandatory for header auth and may be UNSIGNED-PAYLOAD or one of the
// STREAMING-* values; presigned URLs sign UNSIGNED-PAYLOAD and may live at
// most 7 days. Anonymous requests get a distinct error so the caller can
// deny them with a clear message.
//
// Signature Version 2 (sigv2.go) is verified too, as S3 and Swift's s3api
// accept it: "Authorization: AWS AK:signature" and the presigned
// AWSAccessKeyId/Expires/Signature query, HMAC-SHA1 over the method,
// Content-MD5, Content-Type, Date (empty when x-amz-date is sent) or Expires,
// the canonicalized x-amz-* headers and the path with S3's sub-resources.
// The path is the one the client sent (path-style addressing). V2 bodies are
// unsigned (PayloadUnsigned); Content-MD5 still protects them when sent.
//
// Every error wraps exactly one exported sentinel (see errors.go), each of
// which corresponds to one S3 error code.
//
// Typical handler use:
//
//	auth, err := sigv4.Verify(ctx, r, store, time.Now(), nil)
//	if err != nil {
//		writeS3Error(w, err) // errors.Is(err, sigv4.ErrSignatureDoesNotMatch) ...
//		return
//	}
//	body, err := auth.Body(r.Body) // decoded, verified object bytes
//	if err != nil { ... }
//	n, err := io.Copy(objectWriter, body)
//	if err != nil {
//		objectWriter.Abort() // bytes already read are unverified
//		writeS3Error(w, err)
//		return
//	}
//	trailers := body.Trailers() // e.g. X-Amz-Checksum-Crc32 from aws-chunked
//	objectWriter.Commit()
//
// SignRequest and Presign produce requests this package verifies; they are
// for tests and Cairn's own clients.
package sigv4
