package e2e

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// startUpload opens a multipart upload of key with one part of data, returning its ID and
// the part list to complete it with.
func startUpload(t *testing.T, ctx context.Context, c *s3.Client, bucket, key string, data []byte) (string, []types.CompletedPart) {
	t.Helper()
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(up.UploadId), []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: p.ETag}}
}

// TestConditionalCompleteMultipartUpload: If-None-Match: * and If-Match on
// CompleteMultipartUpload, as on PutObject: checked against the key's current object, atomic
// against racing completions, and a refused completion leaves its upload open.
func TestConditionalCompleteMultipartUpload(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client(NoRetries)
	bucket := newBucket(t, ctx, c, "cond")

	mustPut(t, ctx, c, bucket, "taken", []byte("already here"))
	id, parts := startUpload(t, ctx, c, bucket, "taken", []byte("would overwrite"))
	complete := func(key, id string, parts []types.CompletedPart, opt func(*s3.CompleteMultipartUploadInput)) error {
		in := &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: aws.String(id),
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
		if opt != nil {
			opt(in)
		}
		_, err := c.CompleteMultipartUpload(ctx, in)
		return err
	}
	if err := complete("taken", id, parts, func(in *s3.CompleteMultipartUploadInput) { in.IfNoneMatch = aws.String("*") }); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-None-Match: * over an existing key: %v", err)
	}
	if err := complete("taken", id, parts, func(in *s3.CompleteMultipartUploadInput) {
		in.IfMatch = aws.String(`"` + md5Hex([]byte("something else")) + `"`)
	}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-Match of another ETag: %v", err)
	}
	mustGetVersion(t, ctx, c, bucket, "taken", "", []byte("already here"))
	if _, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String("taken"), UploadId: aws.String(id)}); err != nil {
		t.Fatalf("the refused upload is gone: %v", err)
	}
	if err := complete("taken", id, parts, func(in *s3.CompleteMultipartUploadInput) {
		in.IfMatch = aws.String(`"` + md5Hex([]byte("already here")) + `"`)
	}); err != nil {
		t.Fatalf("If-Match of the current ETag: %v", err)
	}
	mustGetVersion(t, ctx, c, bucket, "taken", "", []byte("would overwrite"))

	// Racing completions of a new key with If-None-Match: *: exactly one wins.
	const racers = 4
	ids := make([]string, racers)
	partsOf := make([][]types.CompletedPart, racers)
	for i := range racers {
		ids[i], partsOf[i] = startUpload(t, ctx, c, bucket, "race", []byte{byte('a' + i)})
	}
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			errs[i] = complete("race", ids[i], partsOf[i], func(in *s3.CompleteMultipartUploadInput) { in.IfNoneMatch = aws.String("*") })
		})
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won < 0:
			won = i
		case err == nil:
			t.Fatalf("two completions won: %d and %d", won, i)
		case apiCode(err) != "PreconditionFailed" && apiCode(err) != "OperationAborted" && apiCode(err) != "ConditionalRequestConflict" &&
			apiCode(err) != "ServiceUnavailable":
			// A loser hears 412, or 409 when it met the winner mid-commit: OperationAborted
			// on one node, ConditionalRequestConflict in a cluster, where a loser waits a
			// little for the winner's write to land and is told to try again when it has
			// not (under issue 25's CPU hog it had not, once). Or 503, when its outcome
			// cannot be known (docs/consistency.md: never 200): under the hog, a racer that
			// found the winner's version on one node and could not bring it to a quorum in
			// time (issue 25's run of 2026-12-07 13:20). A 200 is still the one winner,
			// whose bytes the key holds (below).
			t.Fatalf("racer %d: %v", i, err)
		}
	}
	if won < 0 {
		// Safety is at most one winner. On one node the engine orders them and one wins; in a
		// cluster each replica decides, and racers that each took a different replica first
		// can all lose (the client retries), as with PutObject's conditions. (What a refused
		// write left on the replicas it reached is then for replication to settle, as for any
		// failed write in Swift.)
		if ClusterTopology() == nil {
			t.Fatal("no completion won")
		}
		t.Log("no completion won the race (in a cluster: each replica decides)")
		return
	}
	mustGetVersion(t, ctx, c, bucket, "race", "", []byte{byte('a' + won)})
}
