package cluster

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairn-store/cairn/internal/localcluster"
)

// TestReadsUnderChurn is issue 27's second experiment: 4 storage processes, 3 replicas; the
// six pairs of storage nodes killed with SIGKILL one pair after another, each pair restarted
// before the next is killed, with no pause for error limiting to forget them. Every object has
// a replica on a live node whichever pair is down, so every GET answers 200 with its bytes:
// never NoSuchKey (before: 55 false 404s while one pair was down), never 503 (before: every
// GET while three of the pairs were down). Listings answer too.
func TestReadsUnderChurn(t *testing.T) {
	c, client := start(t, localcluster.Config{Storage: 4, Proxies: 1, Replicas: 3})
	ctx := context.Background()
	const bucket, objects = "churn", 60
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	body := func(i int) []byte { return []byte(strings.Repeat(fmt.Sprintf("object %d;", i), 1+i%50)) }
	for i := range objects {
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(fmt.Sprintf("o%03d", i)), Body: bytes.NewReader(body(i))}); err != nil {
			t.Fatal(err)
		}
	}
	nodes := c.Storage()
	for a := range nodes {
		for b := a + 1; b < len(nodes); b++ {
			nodes[a].Kill()
			nodes[b].Kill()
			wrong := 0
			for i := range objects {
				key := fmt.Sprintf("o%03d", i)
				got, err := getObject(ctx, client, bucket, key)
				if err != nil || !bytes.Equal(got, body(i)) {
					if wrong++; wrong <= 5 {
						t.Errorf("nodes %d and %d down: GET %s: %v (%d bytes)", a, b, key, err, len(got))
					}
				}
			}
			out, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
			if err != nil || len(out.Contents) != objects {
				t.Errorf("nodes %d and %d down: listing: %v", a, b, err)
			}
			if wrong > 0 {
				t.Errorf("nodes %d and %d down: %d of %d GETs wrong", a, b, wrong, objects)
			}
			rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			for _, n := range []*localcluster.Node{nodes[a], nodes[b]} {
				if err := n.Start(rctx); err != nil {
					t.Fatal(err)
				}
			}
			cancel()
		}
	}
}
