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
	ctx := context.Background()
	access, secret := c.RootKey()
	var clients []*s3.Client
	for _, n := range c.Front() {
		clients = append(clients, e2e.NewS3Client(n.Endpoint(), access, secret, e2e.NoRetries))
	}
	if len(clients) < 2 {
		t.Fatalf("%d proxies", len(clients))
	}
	bucket := "commits"
	if _, err := root.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	const rounds, writers = 40, 8
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
	}
	t.Logf("%d of %d rounds broken; %d answers 409 ConditionalRequestConflict", broken, rounds, conflicts)
}
