package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/server"
)

// startServer runs a real Cairn process (storage, proxy, S3 front end) in this test process.
func startServer(t *testing.T) string {
	t.Helper()
	s, err := server.Start(server.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0",
		RootAccessKey: "bench", RootSecretKey: "bench-secret"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return s.Endpoint()
}

func client(t *testing.T, ep, secret string) *bench.Client {
	t.Helper()
	c, err := bench.NewClient(bench.ClientConfig{Endpoint: ep, AccessKey: "bench", SecretKey: secret, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestAgainstRealServer is the load client's contract with Cairn's own S3 front end: every
// request signs and escapes correctly, a fill is listed back exactly, and wrong credentials are
// counted as 403s rather than crashing anything.
func TestAgainstRealServer(t *testing.T) {
	ep := startServer(t)
	ctx := context.Background()
	c := client(t, ep, "bench-secret")
	if err := c.Check(ctx, "load", true); err != nil {
		t.Fatal(err)
	}
	const n = 300
	prefix := "dir/ä b+c%&=?#~/"
	r, err := bench.Fill(ctx, c, bench.FillConfig{Bucket: "load", Prefix: prefix, Objects: n, Size: 4096, Concurrency: 8, ReportEvery: 100})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Ops["put"]; s.Operations != n || s.Errors != 0 || len(r.Windows) != 3 {
		t.Fatalf("fill: %+v, %d windows", s, len(r.Windows))
	}

	lr, err := bench.List(ctx, c, bench.ListConfig{Bucket: "load", Expected: n, MaxKeys: 1000})
	if err != nil {
		t.Fatalf("list: %v (%+v)", err, lr)
	}
	if l := lr.List; l.Keys != n || l.Pages != 1 || !l.Ordered {
		t.Fatalf("list: %+v", l)
	}
	lr, err = bench.List(ctx, c, bench.ListConfig{Bucket: "load", Prefix: prefix, Expected: n, MaxKeys: 64})
	if err != nil || lr.List.Pages != 5 {
		t.Fatalf("paged list: %v, %+v", err, lr.List)
	}

	gr, err := bench.Run(ctx, c, bench.RunConfig{Op: "get", Bucket: "load", Prefix: prefix, Size: 4096, Objects: n,
		SkipPrepare: true, Duration: 200 * time.Millisecond, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	if s := gr.Ops["get"]; s.Operations == 0 || s.Errors != 0 || s.Bytes != s.Operations*4096 {
		t.Fatalf("get run: %+v", s)
	}
	pr, err := bench.Run(ctx, c, bench.RunConfig{Op: "put", Bucket: "load", Prefix: "put/", Size: 1 << 20,
		Duration: 200 * time.Millisecond, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if s := pr.Ops["put"]; s.Operations == 0 || s.Errors != 0 || s.MBPerSec <= 0 {
		t.Fatalf("1 MiB put run: %+v", s)
	}

	bad := client(t, ep, "wrong-secret")
	if err := bad.Check(ctx, "load", false); err == nil || !strings.Contains(err.Error(), "rejected the credentials (403 SignatureDoesNotMatch)") {
		t.Errorf("Check with a wrong secret: %v", err)
	}
	br, err := bench.Fill(ctx, bad, bench.FillConfig{Bucket: "load", Prefix: "bad/", Objects: n, Size: 4096, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	if s := br.Ops["put"]; s.Operations != 0 || s.Errors != n || s.ErrorKinds["403 SignatureDoesNotMatch"] != n {
		t.Fatalf("fill with a wrong secret: %+v", s)
	}
	// Nothing of the failed fill may be visible.
	lr, err = bench.List(ctx, c, bench.ListConfig{Bucket: "load", Prefix: "bad/"})
	if err != nil || lr.List.Keys != 0 {
		t.Fatalf("list after the failed fill: %v, %+v", err, lr.List)
	}
}
