package transfer_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/objclient"
	"github.com/cairn-store/cairn/internal/testserver"
)

const MiB = 1 << 20

// startCairn runs a real Cairn (storage, proxy, S3 front end) in this test process and returns
// an S3 client for it.
func startCairn(t *testing.T) objclient.Client {
	t.Helper()
	ep := testserver.Start(t, "transfer", "transfer-secret")
	return newClient(t, objclient.Config{Endpoint: ep, AccessKey: "transfer", SecretKey: "transfer-secret"})
}

// swiftClient returns a client for the real Swift named by CAIRN_TEST_SWIFT_AUTH
// (http://127.0.0.1:8080/auth/v1.0), CAIRN_TEST_SWIFT_USER and CAIRN_TEST_SWIFT_KEY (default
// test:tester / testing); without CAIRN_TEST_SWIFT_AUTH the test is skipped.
func swiftClient(t *testing.T) objclient.Client {
	t.Helper()
	authURL := os.Getenv("CAIRN_TEST_SWIFT_AUTH")
	if authURL == "" {
		t.Skip("no Swift to test against: set CAIRN_TEST_SWIFT_AUTH=http://127.0.0.1:8080/auth/v1.0 " +
			"(and CAIRN_TEST_SWIFT_USER, CAIRN_TEST_SWIFT_KEY unless test:tester/testing); start one with test/peers/swift/setup.sh (as root; docs/testing.md)")
	}
	user, key := os.Getenv("CAIRN_TEST_SWIFT_USER"), os.Getenv("CAIRN_TEST_SWIFT_KEY")
	if user == "" {
		user = "test:tester"
	}
	if key == "" {
		key = "testing"
	}
	return newClient(t, objclient.Config{Protocol: objclient.ProtocolSwift, AuthURL: authURL, User: user, Key: key})
}

func newClient(t *testing.T, cfg objclient.Config) objclient.Client {
	t.Helper()
	cfg.Concurrency = 8
	c, err := objclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// newBucket creates a bucket that no other test (or test run, against a shared Swift) uses,
// and removes it with everything in it when the test ends.
func newBucket(t *testing.T, c objclient.Client) string {
	t.Helper()
	bucket := fmt.Sprintf("transfer-%d", time.Now().UnixNano())
	if err := c.CreateBucket(context.Background(), bucket); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, b := range []string{bucket, bucket + "_segments"} {
			if b != bucket && c.Protocol() != objclient.ProtocolSwift {
				continue
			}
			for {
				p, err := c.List(ctx, b, objclient.ListOptions{})
				if err != nil {
					break
				}
				for _, o := range p.Objects {
					c.Delete(ctx, b, o.Key)
				}
				if !p.Truncated {
					break
				}
			}
			c.DeleteBucket(ctx, b)
		}
	})
	return bucket
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// writeFile writes data to a new file in a temporary directory and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// objectBytes reads bucket/key back whole, with a plain GET.
func objectBytes(t *testing.T, c objclient.Client, bucket, key string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := c.Get(context.Background(), bucket, key, objclient.GetOptions{W: &buf}); err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	return buf.Bytes()
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// stateFiles lists the upload state files in dir.
func stateFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// hookedClient counts the requests that move parts and ranges, and can interrupt a transfer
// (cancel its context) once a number of them have succeeded, or fail some of them.
type hookedClient struct {
	objclient.Client

	parts     atomic.Int64 // UploadPart calls that succeeded
	ranges    atomic.Int64 // ranged Get calls that succeeded
	partCalls atomic.Int64 // UploadPart calls made

	mu sync.Mutex
	// cancelAfter cancels cancel once this many parts or ranges have succeeded (0: never).
	cancelAfter int64
	cancel      context.CancelFunc
	// failPart, if set, may fail the nth UploadPart call (1-based) before it is sent.
	failPart func(n int64) error
	// stallGet, if set, makes the nth ranged Get (1-based) hang until its context ends.
	stallGet func(n int64) bool
	getCalls atomic.Int64
}

func (h *hookedClient) interruptAfter(n int64, cancel context.CancelFunc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cancelAfter, h.cancel = n, cancel
	h.parts.Store(0)
	h.ranges.Store(0)
}

func (h *hookedClient) reset() {
	h.interruptAfter(0, nil)
	h.partCalls.Store(0)
	h.getCalls.Store(0)
}

func (h *hookedClient) done(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cancelAfter > 0 && n == h.cancelAfter {
		h.cancel()
	}
}

func (h *hookedClient) UploadPart(ctx context.Context, bucket, key, uploadID string, number int, body io.Reader, size int64) (objclient.Part, error) {
	n := h.partCalls.Add(1)
	if h.failPart != nil {
		if err := h.failPart(n); err != nil {
			return objclient.Part{}, err
		}
	}
	p, err := h.Client.UploadPart(ctx, bucket, key, uploadID, number, body, size)
	if err == nil {
		h.done(h.parts.Add(1))
	}
	return p, err
}

func (h *hookedClient) Get(ctx context.Context, bucket, key string, opts objclient.GetOptions) (objclient.GetResult, error) {
	if !opts.Ranged {
		return h.Client.Get(ctx, bucket, key, opts)
	}
	n := h.getCalls.Add(1)
	if h.stallGet != nil && h.stallGet(n) {
		<-ctx.Done()
		return objclient.GetResult{}, fmt.Errorf("objclient: get: %w", ctx.Err())
	}
	r, err := h.Client.Get(ctx, bucket, key, opts)
	if err == nil {
		h.done(h.ranges.Add(1))
	}
	return r, err
}
