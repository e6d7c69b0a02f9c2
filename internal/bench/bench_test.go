package bench_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/bench"
	"github.com/cairn-store/cairn/internal/objclient"
	"github.com/cairn-store/cairn/internal/testserver"
)

// awkwardPrefix makes every key need escaping: a space, '+', '%', '&', '=', '?', '#', UTF-8,
// and '/' that must stay a path separator.
const awkwardPrefix = "dir/ä b+c%&=?#~/"

// startServer runs a real Cairn (storage, proxy, S3 front end) in this test process.
func startServer(t *testing.T) string { return testserver.Start(t, "bench", "bench-secret") }

func s3ClientAs(t *testing.T, ep, ak, sk string) objclient.Client {
	t.Helper()
	c, err := objclient.New(objclient.Config{Endpoint: ep, AccessKey: ak, SecretKey: sk, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func s3Client(t *testing.T, ep, secret string) objclient.Client {
	return s3ClientAs(t, ep, "bench", secret)
}

func TestObjectKeyOrder(t *testing.T) {
	prev := ""
	for _, i := range []int64{0, 1, 9, 10, 99, 100, 12345, 9_999_999_999} {
		k := bench.ObjectKey("p/", i)
		if k <= prev || !strings.HasPrefix(k, "p/obj-") {
			t.Fatalf("ObjectKey(%d) = %q after %q", i, k, prev)
		}
		prev = k
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []interface{ Validate() error }{
		&bench.FillConfig{Bucket: "b"},
		&bench.FillConfig{Bucket: "bkt", Objects: 1, Size: -1},
		&bench.ListConfig{Bucket: "bkt", MaxKeys: 1001},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: Validate accepted it", c)
		}
	}
	f := bench.FillConfig{Bucket: "bkt", Objects: 1_000_000}
	if err := f.Validate(); err != nil || f.ReportEvery != 100_000 || f.Concurrency != 16 {
		t.Errorf("fill defaults: %+v, %v", f, err)
	}
	f = bench.FillConfig{Bucket: "bkt", Objects: 300}
	if err := f.Validate(); err != nil || f.ReportEvery != 30 {
		t.Errorf("small fill defaults: %+v, %v", f, err)
	}
}

// TestFillAndList is the fill and list commands' contract with Cairn: every request signs and
// escapes correctly (keys that all need escaping), a fill is listed back exactly, page by page.
func TestFillAndList(t *testing.T) {
	c := s3Client(t, startServer(t), "bench-secret")
	ctx := context.Background()
	if err := c.Check(ctx, "load", true); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(ctx, "load", true); err != nil {
		t.Fatalf("second create of an owned bucket: %v", err)
	}
	var progress []bench.Window
	r, err := bench.Fill(ctx, c, bench.FillConfig{Bucket: "load", Prefix: awkwardPrefix, Objects: 300, Size: 1000, Concurrency: 8,
		ReportEvery: 100, Progress: func(w bench.Window) { progress = append(progress, w) }})
	if err != nil {
		t.Fatal(err)
	}
	put := r.Ops["put"]
	if put.Operations != 300 || put.Errors != 0 || put.Bytes != 300_000 || r.Protocol != "s3" {
		t.Fatalf("fill: %+v", put)
	}
	if len(r.Windows) != 3 || len(progress) != 3 {
		t.Fatalf("fill windows: %d in report, %d reported as progress; want 3", len(r.Windows), len(progress))
	}
	for i, w := range r.Windows {
		if w.Operations != 100 || w.Through != int64(100*(i+1)) || w.OpsPerSec <= 0 || w.Latency.P50 <= 0 {
			t.Errorf("window %d: %+v", i+1, w)
		}
	}
	lr, err := bench.List(ctx, c, bench.ListConfig{Bucket: "load", MaxKeys: 70, Expected: 300})
	if err != nil {
		t.Fatal(err)
	}
	if l := lr.List; l.Keys != 300 || l.Pages != 5 || !l.Ordered || l.CountOK == nil || !*l.CountOK || l.KeysPerSec <= 0 {
		t.Fatalf("list: %+v", l)
	}
	// The prefix, and markers that are keys themselves, must survive query escaping.
	if lr, err := bench.List(ctx, c, bench.ListConfig{Bucket: "load", Prefix: awkwardPrefix + "obj-00000001", MaxKeys: 7, Expected: 100}); err != nil {
		t.Fatalf("prefix list: %v (%+v)", err, lr.List)
	}
}

// TestFillCountsServerErrors: every fifth PUT answered 503 by an overloaded front is counted by
// kind, never fatal, and the listing shows exactly the PUTs that succeeded.
func TestFillCountsServerErrors(t *testing.T) {
	ep := startFaultProxy(t, startServer(t), &faultProxy{failEvery: 5})
	c := s3Client(t, ep, "bench-secret")
	ctx := context.Background()
	if err := c.Check(ctx, "bkt", true); err != nil {
		t.Fatal(err)
	}
	r, err := bench.Fill(ctx, c, bench.FillConfig{Bucket: "bkt", Objects: 300, Size: 100, Concurrency: 8, ReportEvery: 100})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Ops["put"]
	if s.Operations != 240 || s.Errors != 60 || s.ErrorKinds["503 SlowDown"] != 60 || len(s.ErrorKinds) != 1 {
		t.Fatalf("put: %+v", s)
	}
	var winOps, winErrs int64
	for _, w := range r.Windows {
		winOps += w.Operations
		winErrs += w.Errors
	}
	if winOps != 240 || winErrs != 60 {
		t.Errorf("windows add up to %d ok, %d errors", winOps, winErrs)
	}
	lr, err := bench.List(ctx, c, bench.ListConfig{Bucket: "bkt", Expected: 300})
	if !errors.Is(err, bench.ErrCountMismatch) || lr == nil || lr.List.Keys != 240 || *lr.List.CountOK {
		t.Fatalf("list of a partial fill: %v, %+v", err, lr)
	}
}

func TestWrongCredentials(t *testing.T) {
	ep := startServer(t)
	good := s3Client(t, ep, "bench-secret")
	ctx := context.Background()
	if err := good.Check(ctx, "bkt", true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ak, sk, kind string }{
		{"bench", "wrong", "403 SignatureDoesNotMatch"},
		{"nobody", "bench-secret", "403 InvalidAccessKeyId"},
	} {
		c := s3ClientAs(t, ep, tc.ak, tc.sk)
		if err := c.Check(ctx, "bkt", false); err == nil || !strings.Contains(err.Error(), "rejected the credentials") {
			t.Errorf("Check with %s/%s: %v", tc.ak, tc.sk, err)
		}
		r, err := bench.Fill(ctx, c, bench.FillConfig{Bucket: "bkt", Objects: 100, Size: 10, Concurrency: 8})
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Ops["put"]; s.Operations != 0 || s.Errors != 100 || s.ErrorKinds[tc.kind] != 100 || s.OpsPerSec != 0 {
			t.Errorf("fill with %s/%s: %+v", tc.ak, tc.sk, s)
		}
	}
	// Nothing of the failed fills may be visible.
	lr, err := bench.List(ctx, good, bench.ListConfig{Bucket: "bkt"})
	if err != nil || lr.List.Keys != 0 {
		t.Fatalf("list after the failed fills: %v, %+v", err, lr.List)
	}
	if err := good.Check(ctx, "missing", false); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Check of a missing bucket: %v", err)
	}
}

func TestUnreachableEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := s3Client(t, "http://"+addr, "x")
	err = c.Check(context.Background(), "bkt", true)
	if err == nil || !strings.HasPrefix(err.Error(), "cannot reach http://"+addr) {
		t.Fatalf("Check: %v", err)
	}
	r, err := bench.Fill(context.Background(), c, bench.FillConfig{Bucket: "bkt", Objects: 20, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Ops["put"]; s.Errors != 20 || s.ErrorKinds["connection refused"] != 20 {
		t.Fatalf("fill: %+v", s)
	}
}

// TestFillJSONNames pins the JSON names scripts read.
func TestFillJSONNames(t *testing.T) {
	c := s3Client(t, startServer(t), "bench-secret")
	ctx := context.Background()
	if err := c.Check(ctx, "bkt", true); err != nil {
		t.Fatal(err)
	}
	r, err := bench.Fill(ctx, c, bench.FillConfig{Bucket: "bkt", Objects: 20, Size: 10, ReportEvery: 10})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	put := doc["ops"].(map[string]any)["put"].(map[string]any)
	for _, k := range []string{"operations", "errors", "ops_per_sec", "mb_per_sec", "latency_ms"} {
		if _, ok := put[k]; !ok {
			t.Errorf("ops.put has no %q: %s", k, data)
		}
	}
	if _, ok := doc["client_cpu"].(map[string]any)["seconds_per_1000_ops"]; !ok {
		t.Errorf("no client_cpu.seconds_per_1000_ops: %s", data)
	}
	if w := doc["windows"].([]any); len(w) != 2 || w[0].(map[string]any)["ops_per_sec"] == nil {
		t.Errorf("windows: %v", w)
	}
	var sb strings.Builder
	if err := bench.WriteTable(&sb, r); err != nil || !strings.Contains(sb.String(), "put") {
		t.Errorf("table: %v\n%s", err, sb.String())
	}
	_ = time.Second
}
