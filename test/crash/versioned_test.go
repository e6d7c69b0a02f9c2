package crash

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cairn-store/cairn/test/e2e"
)

// Versioned writes: a versioned PUT is two objects (the version and the key's link to it),
// committed in one batch in the embedded default. After a kill, every acknowledged version
// must read back by its ID, and the key must read as its newest acknowledged version or one
// written after it that was in flight: never a link to a version that is not there.

// vkey is what the test knows of one key of the versioned bucket.
type vkey struct {
	last    string   // the newest acknowledged version's ID ("" none)
	lastSum [32]byte // its content
	pending [][32]byte
	// fresh are the versions acknowledged since the last check, by ID.
	fresh map[string][32]byte
}

type versionedState struct {
	mu     sync.Mutex
	bucket string
	keys   map[string]*vkey
	puts   atomic.Int64
}

func newVersionedState(ctx context.Context, t *testing.T, c *s3.Client) *versionedState {
	vs := &versionedState{bucket: "crash-v-" + e2e.RandomKey(4), keys: map[string]*vkey{}}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(vs.bucket)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(vs.bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatalf("PutBucketVersioning: %v", err)
	}
	for k := 0; k < keysPerWork; k++ {
		vs.keys[fmt.Sprintf("v/k%02d", k)] = &vkey{fresh: map[string][32]byte{}}
	}
	return vs
}

// runVersionedWorker writes versions of its keys, small (inline) and large (data files), until
// the kill.
func runVersionedWorker(ctx context.Context, t *testing.T, c *s3.Client, vs *versionedState, rng *rand.Rand, killed *atomic.Bool, st *stats) {
	for ctx.Err() == nil {
		key := fmt.Sprintf("v/k%02d", rng.Intn(keysPerWork))
		n := 1*KiB + rng.Intn(63*KiB+1)
		if rng.Intn(5) == 0 {
			n = 100*KiB + rng.Intn(900*KiB)
		}
		body := make([]byte, n)
		rng.Read(body)
		sum := sha256.Sum256(body)
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(vs.bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil && !killed.Load() && st.refusedForSpace(err) {
			continue
		}
		vs.mu.Lock()
		k := vs.keys[key]
		if err == nil {
			id := aws.ToString(out.VersionId)
			k.last, k.lastSum, k.pending = id, sum, nil
			k.fresh[id] = sum
			vs.puts.Add(1)
		} else {
			k.pending = append(k.pending, sum)
			st.unacked.Add(1)
		}
		vs.mu.Unlock()
		if err != nil {
			if !killed.Load() && ctx.Err() == nil {
				st.errsAlive.Add(1)
				t.Errorf("versioned worker: PUT %s failed while the server was up: %v", key, err)
			}
			return
		}
	}
}

// verifyVersioned checks the versioned bucket after a restart.
func verifyVersioned(ctx context.Context, t *testing.T, c *s3.Client, vs *versionedState, it int) {
	keys := make([]string, 0, len(vs.keys))
	for k := range vs.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	checked := 0
	for _, key := range keys {
		k := vs.keys[key]
		for id, sum := range k.fresh {
			b, _, err := getVersion(ctx, c, vs.bucket, key, id)
			if err != nil {
				t.Errorf("iteration %d: acknowledged version %s of %s after restart: %v", it, id, key, err)
			} else if sha256.Sum256(b) != sum {
				t.Errorf("iteration %d: acknowledged version %s of %s reads back wrong (%d bytes)", it, id, key, len(b))
			}
			checked++
		}
		b, id, err := getVersion(ctx, c, vs.bucket, key, "")
		var ae smithy.APIError
		switch {
		case err != nil && errors.As(err, &ae) && ae.ErrorCode() == "NoSuchKey" && k.last == "":
			// Nothing acknowledged, and what was in flight did not become current.
		case err != nil:
			t.Errorf("iteration %d: GET %s after restart (newest acknowledged version %q): %v", it, key, k.last, err)
		default:
			got := sha256.Sum256(b)
			if k.last != "" && got == k.lastSum {
				if id != k.last {
					t.Errorf("iteration %d: %s reads as version %s, want %s", it, key, id, k.last)
				}
			} else if !containsSum(k.pending, got) {
				t.Errorf("iteration %d: %s reads as version %s (%d bytes), neither the newest acknowledged (%q) nor one in flight", it, key, id, len(b), k.last)
			} else {
				k.last, k.lastSum = id, got
			}
		}
		k.pending, k.fresh = nil, map[string][32]byte{}
	}
	t.Logf("iteration %d: versioned bucket: %d acknowledged versions read back (%d versioned PUTs acknowledged in all), %d keys checked", it, checked, vs.puts.Load(), len(keys))
}

func getVersion(ctx context.Context, c *s3.Client, bucket, key, id string) ([]byte, string, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if id != "" {
		in.VersionId = aws.String(id)
	}
	out, err := c.GetObject(ctx, in)
	if err != nil {
		return nil, "", err
	}
	b, err := e2e.ReadAllClose(out.Body)
	return b, aws.ToString(out.VersionId), err
}

func containsSum(sums [][32]byte, s [32]byte) bool {
	for _, x := range sums {
		if x == s {
			return true
		}
	}
	return false
}
