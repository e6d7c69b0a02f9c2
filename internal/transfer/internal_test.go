package transfer

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/objclient"
)

func TestClientPartSize(t *testing.T) {
	const MiB = 1 << 20
	for _, tc := range []struct {
		size, asked int64
		protocol    string
		want        int64
	}{
		{100 * MiB, 16 * MiB, objclient.ProtocolS3, 16 * MiB},
		{100 * MiB, 1 * MiB, objclient.ProtocolS3, MinS3PartSize},        // S3's minimum
		{100 * MiB, 1 * MiB, objclient.ProtocolSwift, 1 * MiB},           // Swift has none
		{200_000 * MiB, 16 * MiB, objclient.ProtocolS3, 20 * MiB},        // 10,000 parts at most
		{200_000*MiB + 1, 16 * MiB, objclient.ProtocolS3, 21 * MiB},      // rounded up to whole MiB
		{10_000 * 16 * MiB, 16 * MiB, objclient.ProtocolSwift, 16 * MiB}, // exactly 10,000
	} {
		got, err := partSizeFor(tc.size, tc.asked, tc.protocol)
		if err != nil || got != tc.want {
			t.Errorf("partSizeFor(%d, %d, %s) = %d, %v; want %d", tc.size, tc.asked, tc.protocol, got, err, tc.want)
		}
		if n := ceilDiv(tc.size, got); n > MaxParts {
			t.Errorf("partSizeFor(%d, ...) gives %d parts", tc.size, n)
		}
	}
	if _, err := partSizeFor(60<<40, DefaultPartSize, objclient.ProtocolS3); err == nil {
		t.Error("60 TiB: want an error (parts over 5 GiB)")
	}
}

func TestClientSpans(t *testing.T) {
	got := spans(10, 4)
	want := []span{{0, 0, 4}, {1, 4, 4}, {2, 8, 2}}
	if !slices.Equal(got, want) {
		t.Errorf("spans(10, 4) = %v", got)
	}
	if got := spans(8, 4); len(got) != 2 || got[1].Len != 4 {
		t.Errorf("spans(8, 4) = %v", got)
	}
	if got := spans(0, 4); len(got) != 0 {
		t.Errorf("spans(0, 4) = %v", got)
	}
}

func TestClientMergePage(t *testing.T) {
	p := objclient.ListPage{
		Objects:  []objclient.ObjectInfo{{Key: "a"}, {Key: "c"}, {Key: "e"}},
		Prefixes: []string{"b/", "d/", "f/"},
	}
	var names []string
	for _, e := range mergePage(p) {
		names = append(names, e.Name())
	}
	if want := []string{"a", "b/", "c", "d/", "e", "f/"}; !slices.Equal(names, want) {
		t.Errorf("merged %q, want %q", names, want)
	}
}

func TestClientThrottleChunks(t *testing.T) {
	if newThrottle(0) != nil {
		t.Error("no limit must mean no throttle")
	}
	for _, tc := range []struct{ rate, chunk int64 }{{1 << 10, 16 << 10}, {1 << 20, 128 << 10}, {1 << 30, 1 << 20}} {
		th := newThrottle(tc.rate)
		if int64(th.chunk) != tc.chunk || th.limiter.Burst() != th.chunk {
			t.Errorf("rate %d: chunk %d, burst %d; want %d", tc.rate, th.chunk, th.limiter.Burst(), tc.chunk)
		}
	}
}

// forEach stops handing out work at the first error and returns it, not the cancellation
// that the other workers then see.
func TestClientForEachFirstError(t *testing.T) {
	boom := errors.New("boom")
	var ran atomic.Int64
	items := make([]int, 1000)
	for i := range items {
		items[i] = i
	}
	err := forEach(context.Background(), 4, items, func(ctx context.Context, i int) error {
		ran.Add(1)
		if i == 10 {
			return boom
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
			return nil
		}
	})
	if !errors.Is(err, boom) || ran.Load() >= 1000 {
		t.Errorf("forEach: %v after %d items", err, ran.Load())
	}
	if err := forEach(context.Background(), 4, items, func(context.Context, int) error { return nil }); err != nil {
		t.Errorf("forEach without errors: %v", err)
	}
}

func TestClientRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&objclient.Error{Status: 503}, true},
		{&objclient.Error{Status: 500}, true},
		{&objclient.Error{Status: 429}, true},
		{&objclient.Error{Status: 403, Code: "AccessDenied"}, false},
		{&objclient.Error{Status: 404}, false},
		{objclient.ErrShortBody, true},
		{errStalled, true},
		{errObjectChanged, false},
		{context.Canceled, false},
		{errors.New("objclient: metadata name is not valid"), false},
	} {
		if got := retryable(tc.err); got != tc.want {
			t.Errorf("retryable(%v) = %v", tc.err, got)
		}
	}
}
