package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Client returns an AWS SDK for Go v2 S3 client for the server, path-style, region us-east-1,
// with the SDK's default checksum behaviour (when_supported for requests and responses, which is
// what config.LoadDefaultConfig resolves to: a CRC32 on every PutObject/UploadPart, sent as a
// header over plain HTTP). Extra option functions are applied last.
func (s *Server) S3Client(optFns ...func(*s3.Options)) *s3.Client {
	return NewS3Client(s.Endpoint, s.AccessKey, s.SecretKey, optFns...)
}

// NewS3Client is S3Client for an arbitrary endpoint and key pair.
func NewS3Client(endpoint, accessKey, secretKey string, optFns ...func(*s3.Options)) *s3.Client {
	o := s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
		HTTPClient:   &http.Client{Timeout: 2 * time.Minute},

		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenSupported,
	}
	return s3.New(o, optFns...)
}

// NoRetries is an s3 option function that turns the SDK's retries off, so that every request the
// test makes is sent exactly once.
func NoRetries(o *s3.Options) { o.Retryer = aws.NopRetryer{} }

// SignedRequest signs req with SigV4 for the server's root keys, with body's SHA-256 as the
// payload hash, and sends it.
func (s *Server) SignedRequest(ctx context.Context, req *http.Request, body []byte) (*http.Response, error) {
	sum := sha256.Sum256(body)
	return s.SignedRequestWithHash(ctx, req, hex.EncodeToString(sum[:]))
}

// SignedRequestWithHash signs req with SigV4 for the server's root keys, claiming payloadHash as
// x-amz-content-sha256 whatever the body is, and sends it.
func (s *Server) SignedRequestWithHash(ctx context.Context, req *http.Request, payloadHash string) (*http.Response, error) {
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	creds := aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, payloadHash, "s3", Region, time.Now()); err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req.WithContext(ctx))
}

// ReadAllClose reads and closes r.
func ReadAllClose(r io.ReadCloser) ([]byte, error) {
	defer r.Close()
	return io.ReadAll(r)
}
