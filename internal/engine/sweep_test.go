package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

func TestSweepTombstones(t *testing.T) {
	v := newEnv(t, nil, "")
	live := name("live")
	v.mustPut(live, make([]byte, 100<<10))
	v.mustPut(name("small"), []byte("small"))
	old, recent := name("old"), name("recent")
	for _, n := range []meta.ObjectName{old, recent} {
		v.mustPut(n, []byte("doomed"))
		if err := v.e.Delete(ctx, n, meta.Now(), DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	oldTomb, _ := v.e.Stat(ctx, old)
	cut := oldTomb.Timestamp + 1 // "old" is past the reclaim age, "recent" is not
	paced := 0
	st, err := v.e.SweepTombstones(ctx, cut, func(context.Context) error { paced++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Reclaimed != 1 || st.Scanned != 4 || paced != 4 {
		t.Fatalf("stats %+v, paced %d; want 1 reclaimed of 4 scanned", st, paced)
	}
	if _, err := v.e.Stat(ctx, old); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("old tombstone still there: %v", err)
	}
	if o, err := v.e.Stat(ctx, recent); err != nil || !o.Deleted {
		t.Fatalf("recent tombstone: %+v, %v", o, err)
	}
	if len(v.mustRead(live)) != 100<<10 || string(v.mustRead(name("small"))) != "small" {
		t.Fatal("live objects damaged")
	}
	// A tombstone replaced by a write between the scan and the removal stays replaced.
	v.mustPut(old, []byte("back"))
	if gone, err := v.e.reclaim(objectKey(nil, old), oldTomb.Timestamp); err != nil || gone {
		t.Fatalf("reclaim of a rewritten name: %v, %v", gone, err)
	}
	if string(v.mustRead(old)) != "back" {
		t.Fatal("the rewrite was lost")
	}
	// The pace function stops the pass.
	stop := errors.New("stop")
	if _, err := v.e.SweepTombstones(ctx, cut, func(context.Context) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("pace error: %v", err)
	}
}

// A file object whose record stopped decoding, then overwritten: the new version cannot know the
// old file, so its key stays behind; SweepDataFiles removes it and the file, and nothing else.
func TestSweepDataFilesRemovesWhatACorruptRecordLeft(t *testing.T) {
	v := newEnv(t, nil, "")
	keep, broken := name("keep"), name("broken")
	v.mustPut(keep, make([]byte, 100<<10))
	v.mustPut(broken, make([]byte, 100<<10))
	if n := len(dataFiles(t, v.fs, v.dir)); n != 2 {
		t.Fatalf("%d data files, want 2", n)
	}
	if err := v.db.Set(objectKey(nil, broken), []byte("not a record"), nil); err != nil {
		t.Fatal(err)
	}
	replacement := []byte("a small replacement")
	v.mustPut(broken, replacement)
	if n := len(dataFiles(t, v.fs, v.dir)); n != 2 {
		t.Fatalf("after the overwrite of the corrupt record: %d data files, want 2 (one leaked)", n)
	}
	removed, err := v.e.SweepDataFiles(ctx, func(context.Context) error { return nil })
	if err != nil || removed != 1 {
		t.Fatalf("SweepDataFiles: removed %d, %v; want 1", removed, err)
	}
	if n := len(dataFiles(t, v.fs, v.dir)); n != 1 {
		t.Fatalf("after the sweep: %d data files, want 1", n)
	}
	if len(v.mustRead(keep)) != 100<<10 || string(v.mustRead(broken)) != string(replacement) {
		t.Fatal("the sweep damaged a live object")
	}
	if removed, err := v.e.SweepDataFiles(ctx, func(context.Context) error { return nil }); err != nil || removed != 0 {
		t.Fatalf("second sweep removed %d, %v", removed, err)
	}
}
