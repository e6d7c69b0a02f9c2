package s3

import (
	"testing"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

func TestActionOf(t *testing.T) {
	for op := range map[string]bool{s3core.OpHeadBucket: true, s3core.OpGetObject: true, s3core.OpPutObject: true, s3core.OpPutBucketACL: true, s3core.OpListParts: true} {
		if !s3core.ActionOf(op, nil).Valid() {
			t.Errorf("%s has no action", op)
		}
	}
	for op, want := range map[string]access.Action{s3core.OpGetBucketCors: access.GetBucketCORS, s3core.OpPutBucketCors: access.PutBucketCORS, s3core.OpDeleteBucketCors: access.PutBucketCORS} {
		if a := s3core.ActionOf(op, nil); a != want {
			t.Errorf("%s: %v, want %v", op, a, want)
		}
	}
	for op, want := range map[string]access.Action{s3core.OpGetBucketLifecycle: access.GetLifecycleConfiguration, s3core.OpPutBucketLifecycle: access.PutLifecycleConfiguration, s3core.OpDeleteBucketLifecycle: access.PutLifecycleConfiguration} {
		if a := s3core.ActionOf(op, nil); a != want {
			t.Errorf("%s: %v, want %v", op, a, want)
		}
	}
	if a := s3core.ActionOf(s3core.OpGetBucketUnconfigured, map[string][]string{"website": {""}}); a != access.GetBucketWebsite {
		t.Errorf("?website: %v", a)
	}
	for sub := range s3core.BucketGetUnconfigured {
		if !s3core.ActionOf(s3core.OpGetBucketUnconfigured, map[string][]string{sub: {""}}).Valid() {
			t.Errorf("?%s has no action", sub)
		}
	}
	// Every routed operation but the account-level ones and multi-delete is decided on an action.
	h, err := New(s3core.Config{Proxy: &proxy.Proxy{}, Credentials: sigv4.StaticStore{}})
	if err != nil {
		t.Fatal(err)
	}
	for op := range h.ops {
		switch op {
		case s3core.OpListBuckets, s3core.OpCreateBucket, s3core.OpDeleteObjects, s3core.OpGetBucketUnconfigured:
			continue
		}
		if !s3core.ActionOf(op, nil).Valid() {
			t.Errorf("operation %s has no action", op)
		}
	}
}
