package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/test/e2e"
)

// TestConditionalCreatesAcrossProxies is issue 27's first experiment, as an operator runs it:
// 4 storage processes, 3 replicas, two proxies; rounds of 8 concurrent PUTs with
// If-None-Match: * of one new key, the clients spread over both proxies. In every round
// exactly one client is told 200, the others 412 (PreconditionFailed) or 409
// (ConditionalRequestConflict), and the key reads back, through both proxies, as the bytes of
// the client told 200: none is lost, no loser's bytes are stored. (Before the register, 12 to
// 14 rounds of 100 broke.)
func TestConditionalCreatesAcrossProxies(t *testing.T) {
	c, root := start(t, localcluster.Config{Storage: 4, Proxies: 2, Replicas: 3})
	access, secret := c.RootKey()
	var clients []*s3.Client
	for _, n := range c.Front() {
		clients = append(clients, e2e.NewS3Client(n.Endpoint(), access, secret, e2e.NoRetries))
	}
	if len(clients) < 2 {
		t.Fatalf("%d proxies", len(clients))
	}
	for _, tc := range []struct {
		bucket    string
		versioned bool
		rounds    int
	}{{"commits", false, 40}, {"versioned-commits", true, 10}} {
		t.Run(tc.bucket, func(t *testing.T) { racingCreates(t, root, clients, tc.bucket, tc.versioned, tc.rounds) })
	}
}

// racingCreates runs rounds of 8 concurrent creates of one new key in bucket, through the
// clients in turn. In a versioned bucket, the key's versions must then be the winner's only:
// a loser's version is written before its link is decided, and removed once it lost.
func racingCreates(t *testing.T, root *s3.Client, clients []*s3.Client, bucket string, versioned bool, rounds int) {
	ctx := context.Background()
	if _, err := root.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if versioned {
		if _, err := root.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
			VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
			t.Fatal(err)
		}
	}
	const writers = 8
	broken, conflicts := 0, 0
	for round := range rounds {
		key := fmt.Sprintf("_delta_log/%020d.json", round)
		var mu sync.Mutex
		var won []string
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				body := fmt.Sprintf(`{"commit":%d,"writer":%d}`, round, w)
				_, err := clients[w%len(clients)].PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
					Body: bytes.NewReader([]byte(body)), IfNoneMatch: aws.String("*")})
				var api smithy.APIError
				switch {
				case err == nil:
					mu.Lock()
					won = append(won, body)
					mu.Unlock()
				case errors.As(err, &api) && api.ErrorCode() == "PreconditionFailed":
				case errors.As(err, &api) && api.ErrorCode() == "ConditionalRequestConflict":
					mu.Lock()
					conflicts++
					mu.Unlock()
				default:
					t.Errorf("round %d writer %d: %v", round, w, err)
				}
			})
		}
		wg.Wait()
		if len(won) != 1 {
			t.Errorf("round %d: %d clients told 200: %q", round, len(won), won)
			broken++
			continue
		}
		for i, cl := range clients {
			out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			if err != nil {
				t.Errorf("round %d: GET through proxy %d: %v", round, i, err)
				broken++
				break
			}
			got, _ := io.ReadAll(out.Body)
			out.Body.Close()
			if string(got) != won[0] {
				t.Errorf("round %d: proxy %d reads %s, the client told 200 wrote %s", round, i, got, won[0])
				broken++
				break
			}
		}
		if versioned {
			out, err := root.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Versions) != 1 || len(out.DeleteMarkers) != 0 {
				t.Errorf("round %d: %d versions and %d delete markers of the key, want the winner's one version", round, len(out.Versions), len(out.DeleteMarkers))
				broken++
			}
		}
	}
	t.Logf("%d of %d rounds broken; %d answers 409 ConditionalRequestConflict", broken, rounds, conflicts)
}
