package badinput

import (
	"bytes"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/cairn-store/cairn/test/e2e"
)

// A large upload refused before its body is read (here: no such bucket; on a full disk, 507)
// reaches the AWS SDK for Go as the error, not as a broken pipe: the SDK asks for 100 Continue
// on bodies over 2 MiB but sends the body without waiting, so the server reads the refused body
// (bounded) instead of closing the connection under it.
func TestRefusedLargeBodyAnswersTheError(t *testing.T) {
	s := startServer(t, "")
	c := e2e.NewS3Client(s.endpoint, accessKey, secretKey, e2e.NoRetries)
	body := make([]byte, 3<<20)
	for i := range 20 {
		_, err := c.PutObject(e2e.Context(t), &s3.PutObjectInput{Bucket: aws.String("no-such-bucket"), Key: aws.String("k"), Body: bytes.NewReader(body)})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != "NoSuchBucket" {
			t.Fatalf("PUT %d of 3 MiB into a missing bucket: %v, want NoSuchBucket", i, err)
		}
	}
}
