package bench

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// awkwardPrefix makes every key need escaping: a space, '+', '%', '&', '=', '?', '#', UTF-8,
// and '/' that must stay a path separator.
const awkwardPrefix = "dir/ä b+c%&=?#~/"

func newTestClient(t *testing.T, endpoint, ak, sk string) *Client {
	t.Helper()
	c, err := NewClient(ClientConfig{Endpoint: endpoint, AccessKey: ak, SecretKey: sk, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"4096": 4096, "4KiB": 4096, "4kib": 4096, "4K": 4096, "1MiB": 1 << 20, "1M": 1 << 20,
		"1GiB": 1 << 30, "4KB": 4000, "1.5MiB": 3 << 19, "0": 0, "12B": 12, " 8 KiB ": 8192,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "KiB", "4XB", "-1", "1.3B", "2TiB"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
	for _, n := range []int64{0, 12, 4096, 1 << 20, 3 << 19} {
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q reads back as %d, %v", n, FormatSize(n), back, err)
		}
	}
}

func TestObjectKeyOrder(t *testing.T) {
	if got := ObjectKey("p/", 42); got != "p/obj-0000000042" {
		t.Fatalf("ObjectKey = %q", got)
	}
	// Listing order must be numeric order, so that a listing can be checked against a fill.
	for _, i := range []int64{0, 9, 99, 999_999, 1_000_000} {
		if !(ObjectKey("", i) < ObjectKey("", i+1)) {
			t.Errorf("ObjectKey(%d) sorts after ObjectKey(%d)", i, i+1)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []interface{ Validate() error }{
		&ClientConfig{},
		&ClientConfig{Endpoint: "127.0.0.1:8787", AccessKey: "a", SecretKey: "b"},
		&ClientConfig{Endpoint: "http://h", AccessKey: "a"},
		&FillConfig{Bucket: "b"},
		&FillConfig{Bucket: "b", Objects: 1, Size: -1},
		&ListConfig{Bucket: "b", MaxKeys: 1001},
		&RunConfig{Op: "delete", Bucket: "b", Duration: time.Second},
		&RunConfig{Op: "get", Bucket: "b"},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: Validate accepted it", c)
		}
	}
	f := FillConfig{Bucket: "b", Objects: 1_000_000}
	if err := f.Validate(); err != nil || f.ReportEvery != 100_000 || f.Concurrency != 16 {
		t.Errorf("fill defaults: %+v, %v", f, err)
	}
	f = FillConfig{Bucket: "b", Objects: 300}
	if err := f.Validate(); err != nil || f.ReportEvery != 30 {
		t.Errorf("small fill defaults: %+v, %v", f, err)
	}
}

// TestFillListRun drives every operation against the signature-checking fake with keys that
// all need escaping; a signing or escaping mistake would surface as 403s.
func TestFillListRun(t *testing.T) {
	fake, ep := newFakeS3(t)
	c := newTestClient(t, ep, fakeAK, fakeSK)
	ctx := context.Background()
	if err := c.Check(ctx, "b1", true); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(ctx, "b1", true); err != nil {
		t.Fatalf("second create of an owned bucket: %v", err)
	}
	var progress []Window
	r, err := Fill(ctx, c, FillConfig{Bucket: "b1", Prefix: awkwardPrefix, Objects: 300, Size: 1000, Concurrency: 8,
		ReportEvery: 100, Progress: func(w Window) { progress = append(progress, w) }})
	if err != nil {
		t.Fatal(err)
	}
	put := r.Ops["put"]
	if put.Operations != 300 || put.Errors != 0 || put.Bytes != 300_000 {
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
	if put.Latency.P50 <= 0 || put.Latency.P50 > put.Latency.P99 || put.Latency.P99 > put.Latency.P999 {
		t.Errorf("fill latency: %+v", put.Latency)
	}
	want := make([]string, 300)
	for i := range want {
		want[i] = ObjectKey(awkwardPrefix, int64(i))
	}
	if got := fake.keys("b1"); !slices.Equal(got, want) {
		t.Fatalf("server holds %d keys, first %q; want %q...", len(got), got[:min(len(got), 1)], want[0])
	}

	lr, err := List(ctx, c, ListConfig{Bucket: "b1", MaxKeys: 70, Expected: 300})
	if err != nil {
		t.Fatal(err)
	}
	if l := lr.List; l.Keys != 300 || l.Pages != 5 || !l.Ordered || l.CountOK == nil || !*l.CountOK || l.KeysPerSec <= 0 {
		t.Fatalf("list: %+v", l)
	}
	if lr.Ops["list"].Operations != 5 {
		t.Errorf("list requests: %+v", lr.Ops["list"])
	}
	// The prefix, and continuation tokens that are keys themselves, must survive query escaping.
	if lr, err := List(ctx, c, ListConfig{Bucket: "b1", Prefix: awkwardPrefix + "obj-00000001", MaxKeys: 7, Expected: 100}); err != nil {
		t.Fatalf("prefix list: %v (%+v)", err, lr.List)
	}

	gr, err := Run(ctx, c, RunConfig{Op: "get", Bucket: "b1", Prefix: awkwardPrefix, Size: 1000, Objects: 300,
		SkipPrepare: true, Duration: 200 * time.Millisecond, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	get := gr.Ops["get"]
	if get.Operations == 0 || get.Errors != 0 || get.Bytes != get.Operations*1000 || get.MBPerSec <= 0 {
		t.Fatalf("get run: %+v", get)
	}
	if gr.Seconds < 0.2 || gr.ClientCPU.SecondsPer1000Ops <= 0 {
		t.Errorf("get run: seconds %v, cpu %+v", gr.Seconds, gr.ClientCPU)
	}

	pr, err := Run(ctx, c, RunConfig{Op: "put", Bucket: "b2", Size: 10, Duration: 100 * time.Millisecond, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	// b2 does not exist: every PUT fails, and is counted rather than fatal.
	if s := pr.Ops["put"]; s.Operations != 0 || s.Errors == 0 || s.ErrorKinds["404 NoSuchBucket"] != s.Errors {
		t.Fatalf("put run into a missing bucket: %+v", s)
	}
	// get with preparation writes its own object set first.
	gr, err = Run(ctx, c, RunConfig{Op: "get", Bucket: "b1", Prefix: "g/", Size: 0, Objects: 20, Duration: 50 * time.Millisecond})
	if err != nil || gr.Prepare == nil || gr.Prepare.Ops["put"].Operations != 20 || gr.Ops["get"].Errors != 0 {
		t.Fatalf("get run with prepare: %v, %+v", err, gr)
	}
}

func TestFillCountsServerErrors(t *testing.T) {
	fake, ep := newFakeS3(t)
	fake.failEvery = 5
	c := newTestClient(t, ep, fakeAK, fakeSK)
	ctx := context.Background()
	if err := c.Check(ctx, "b", true); err != nil {
		t.Fatal(err)
	}
	r, err := Fill(ctx, c, FillConfig{Bucket: "b", Objects: 300, Size: 100, Concurrency: 8, ReportEvery: 100})
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
	lr, err := List(ctx, c, ListConfig{Bucket: "b", Expected: 300})
	if !errors.Is(err, ErrCountMismatch) || lr == nil || lr.List.Keys != 240 || *lr.List.CountOK {
		t.Fatalf("list of a partial fill: %v, %+v", err, lr)
	}
}

func TestWrongCredentials(t *testing.T) {
	_, ep := newFakeS3(t)
	good := newTestClient(t, ep, fakeAK, fakeSK)
	ctx := context.Background()
	if err := good.Check(ctx, "b", true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ak, sk, kind string }{
		{fakeAK, "wrong", "403 SignatureDoesNotMatch"},
		{"nobody", fakeSK, "403 InvalidAccessKeyId"},
	} {
		c := newTestClient(t, ep, tc.ak, tc.sk)
		if err := c.Check(ctx, "b", false); err == nil || !strings.Contains(err.Error(), "rejected the credentials ("+tc.kind+")") {
			t.Errorf("Check with %s/%s: %v", tc.ak, tc.sk, err)
		}
		r, err := Fill(ctx, c, FillConfig{Bucket: "b", Objects: 300, Size: 10, Concurrency: 8})
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Ops["put"]; s.Operations != 0 || s.Errors != 300 || s.ErrorKinds[tc.kind] != 300 || s.OpsPerSec != 0 {
			t.Errorf("fill with %s/%s: %+v", tc.ak, tc.sk, s)
		}
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
	c := newTestClient(t, "http://"+addr, fakeAK, fakeSK)
	err = c.Check(context.Background(), "b", true)
	if err == nil || !strings.HasPrefix(err.Error(), "cannot reach http://"+addr+": ") {
		t.Fatalf("Check: %v", err)
	}
	r, err := Fill(context.Background(), c, FillConfig{Bucket: "b", Objects: 20, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Ops["put"]; s.Errors != 20 || s.ErrorKinds["connection refused"] != 20 {
		t.Fatalf("fill: %+v", s)
	}
}

func TestInterruptedRunCountsNoErrors(t *testing.T) {
	_, ep := newFakeS3(t)
	c := newTestClient(t, ep, fakeAK, fakeSK)
	if err := c.Check(context.Background(), "b", true); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r, err := Run(ctx, c, RunConfig{Op: "put", Bucket: "b", Size: 100, Duration: time.Minute, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Ops["put"]; !r.Interrupted || s.Errors != 0 || s.Operations == 0 || r.Seconds > 5 {
		t.Fatalf("interrupted run: %+v, %+v", r, s)
	}
}

// TestReportJSONNames pins the JSON names the later bench work (workloads, HTML reports)
// builds on.
func TestReportJSONNames(t *testing.T) {
	_, ep := newFakeS3(t)
	c := newTestClient(t, ep, fakeAK, fakeSK)
	ctx := context.Background()
	if err := c.Check(ctx, "b", true); err != nil {
		t.Fatal(err)
	}
	r, err := Fill(ctx, c, FillConfig{Bucket: "b", Objects: 20, Size: 10, ReportEvery: 10})
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
	lat := put["latency_ms"].(map[string]any)
	for _, k := range []string{"mean", "p50", "p95", "p99", "p999"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency_ms has no %q", k)
		}
	}
	if _, ok := doc["client_cpu"].(map[string]any)["seconds_per_1000_ops"]; !ok {
		t.Errorf("no client_cpu.seconds_per_1000_ops: %s", data)
	}
	if w := doc["windows"].([]any); len(w) != 2 || w[0].(map[string]any)["ops_per_sec"] == nil {
		t.Errorf("windows: %v", w)
	}
	var sb strings.Builder
	if err := WriteTable(&sb, r); err != nil || !strings.Contains(sb.String(), "put") {
		t.Errorf("table: %v\n%s", err, sb.String())
	}
}
