package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/meta"
)

// longManifest is a manifest of n segments with long names, as a big S3 upload makes.
func longManifest(n int) meta.Object {
	segs := make([]meta.Segment, n)
	for i := range segs {
		segs[i] = meta.Segment{Container: "\x00mpu\x00bucket", Object: fmt.Sprintf("%s\x00upload\x00%05d", strings.Repeat("k", 900), i+1), Size: 5 << 20, ETag: fmt.Sprintf("%032x", i)}
	}
	return meta.Object{Timestamp: meta.Now(), Manifest: segs, SysMeta: map[string]string{meta.SysManifestETag: "abc-" + fmt.Sprint(n)}}
}

// A long segment list lives apart from its record: the record a HEAD reads stays small, a brief
// stat answers from the summary, a full stat and a read get the whole list, a metadata update
// keeps it, and replacing or deleting the version removes it.
func TestLongManifestKeptApart(t *testing.T) {
	v := newEnv(t, nil, "")
	n := name("big")
	want := longManifest(2000)
	if _, err := v.e.Put(ctx, n, want, nil, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	key := objectKey(nil, n)
	raw, closer, err := v.db.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	recordSize := len(raw)
	closer.Close()
	if recordSize > 4<<10 {
		t.Fatalf("record of a 2000-segment manifest: %d bytes, want the list kept apart", recordSize)
	}
	if _, closer, err := v.db.Get(segmentsKey(key)); err != nil {
		t.Fatalf("segment list: %v", err)
	} else {
		closer.Close()
	}
	wantSize := int64(2000) * (5 << 20)

	brief, err := v.e.StatBrief(ctx, n)
	if err != nil || brief.Manifest != nil || brief.Summary == nil || brief.SegmentCount() != 2000 || brief.AsServed().Size != wantSize || brief.AsServed().ETag != "abc-2000" {
		t.Fatalf("brief stat: %+v, %v", brief.Summary, err)
	}
	full, err := v.e.Stat(ctx, n)
	if err != nil || len(full.Manifest) != 2000 || full.Manifest[1999].Object != want.Manifest[1999].Object || full.AsServed().Size != wantSize {
		t.Fatalf("full stat: %d segments, %v", len(full.Manifest), err)
	}
	r, err := v.e.Get(ctx, n, nil)
	if err != nil || len(r.Object.Manifest) != 2000 {
		t.Fatalf("get: %v", err)
	}
	r.Close()

	// A metadata update keeps the list.
	if _, err := v.e.UpdateMeta(ctx, n, meta.Now(), func(o *meta.Object) error { o.UserMeta = map[string]string{"k": "v"}; return nil }, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if full, err := v.e.Stat(ctx, n); err != nil || len(full.Manifest) != 2000 || full.UserMeta["k"] != "v" {
		t.Fatalf("after a metadata update: %d segments, %v", len(full.Manifest), err)
	}

	// A list that no longer matches its record is corruption, found and flagged.
	if err := v.db.Set(segmentsKey(key), []byte("garbage"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.Stat(ctx, n); !errors.Is(err, meta.ErrCorrupt) {
		t.Fatalf("stat with a damaged list: %v, want ErrCorrupt", err)
	}

	// Replacing the version (here by a short manifest, then a delete) removes the list, and
	// the write that replaces it gets the old version back whole where it can be read.
	short := longManifest(3)
	if _, err := v.e.Put(ctx, n, short, nil, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.db.Get(segmentsKey(key)); err == nil {
		t.Fatal("the list outlived its version")
	}
	if o, err := v.e.Stat(ctx, n); err != nil || len(o.Manifest) != 3 || o.Summary != nil {
		t.Fatalf("short manifest: %+v, %v", o, err)
	}
	if _, err := v.e.Put(ctx, n, longManifest(1000), nil, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var prev *meta.Object
	if err := v.e.Delete(ctx, n, meta.Now(), DeleteOptions{InBatch: func(_ *pebble.Batch, p *meta.Object) error { prev = p; return nil }}); err != nil {
		t.Fatal(err)
	}
	if prev == nil || len(prev.Manifest) != 1000 {
		t.Fatalf("the deleted version as the delete saw it: %v", prev)
	}
	if _, _, err := v.db.Get(segmentsKey(key)); err == nil {
		t.Fatal("the list outlived the delete")
	}
}

// BenchmarkStatLongManifest: HEAD of a 10,000-part upload with 900-byte key names (an 11 MB
// segment list). brief is what S3 and Swift HEADs read now; full is what every HEAD read when
// the list was part of the record.
func BenchmarkStatLongManifest(b *testing.B) {
	v := newEnv(b, nil, "")
	n := name("big")
	if _, err := v.e.Put(ctx, n, longManifest(10000), nil, PutOptions{}); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		stat func(context.Context, meta.ObjectName) (meta.Object, error)
	}{{"brief", v.e.StatBrief}, {"full", v.e.Stat}} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := mode.stat(ctx, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
