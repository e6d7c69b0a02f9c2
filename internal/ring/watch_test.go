package ring

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWatcherReloads(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "object.ring.gz")
	r := testRing()
	r.Version = 1
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	w, err := NewWatcher(path, time.Hour, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if w.Current().Version != 1 {
		t.Fatalf("version %d", w.Current().Version)
	}
	if changed, err := w.Check(); changed || err != nil {
		t.Fatalf("unchanged file: %v %v", changed, err)
	}
	// Each write gets a modification time of its own, so that the test does not depend on the
	// file system's timestamp resolution.
	stamp := time.Now()
	write := func(data []byte) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		stamp = stamp.Add(time.Second)
		if err := os.Chtimes(path, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	// Touched, same bytes: nothing to do.
	same, _ := os.ReadFile(path)
	write(same)
	if changed, err := w.Check(); changed || err != nil {
		t.Fatalf("touched file: %v %v", changed, err)
	}
	r.Version = 2
	r.Assignments[0][0], r.Assignments[1][0] = r.Assignments[1][0], r.Assignments[0][0]
	write(encodeBytes(t, r))
	old := w.Current()
	if changed, err := w.Check(); !changed || err != nil {
		t.Fatalf("changed file: %v %v", changed, err)
	}
	if cur := w.Current(); cur.Version != 2 || cur == old || old.Version != 1 {
		t.Fatalf("after reload: version %d", cur.Version)
	}
	// A broken file (cut short, as a copy in progress would be) is refused and logged once.
	good := encodeBytes(t, r)
	write(good[:len(good)/2])
	for range 2 {
		if changed, err := w.Check(); changed || !errors.Is(err, ErrInvalid) {
			t.Fatalf("broken file: %v %v", changed, err)
		}
		stamp = stamp.Add(time.Second)
		os.Chtimes(path, stamp, stamp)
	}
	if w.Current().Version != 2 || strings.Count(logs.String(), "does not load") != 1 {
		t.Fatalf("after a broken file: version %d, logs:\n%s", w.Current().Version, logs.String())
	}
	// A removed file keeps the ring too.
	os.Remove(path)
	if changed, err := w.Check(); changed || err == nil {
		t.Fatalf("removed file: %v %v", changed, err)
	}
	r.Version = 3
	write(encodeBytes(t, r))
	if changed, err := w.Check(); !changed || err != nil || w.Current().Version != 3 {
		t.Fatalf("fixed file: %v %v", changed, err)
	}
}

func TestWatcherRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "object.ring.gz")
	r := testRing()
	r.Version = 1
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	w, err := NewWatcher(path, time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	r.Version = 2
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	os.Chtimes(path, future, future)
	// Wait for the reload (the bound is generous: it only keeps a broken build from hanging).
	for deadline := time.Now().Add(time.Minute); w.Current().Version != 2; {
		if time.Now().After(deadline) {
			t.Fatal("Run never reloaded the changed file")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if _, err := NewWatcher(filepath.Join(dir, "missing.ring.gz"), 0, nil); err == nil {
		t.Error("a watcher of a missing file started")
	}
}
