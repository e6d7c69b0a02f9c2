package vfs

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
)

func TestFaulty(t *testing.T) {
	f := NewFaulty(pebblevfs.NewMem())
	file, err := f.Create("/a", "test")
	if err != nil {
		t.Fatal(err)
	}
	f.SetWriteLimit(10)
	if n, err := file.Write(make([]byte, 8)); n != 8 || err != nil {
		t.Fatalf("write under limit: %d %v", n, err)
	}
	n, err := file.Write(make([]byte, 8))
	if n != 2 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write across limit: %d %v", n, err)
	}
	if u, err := f.GetDiskUsage("/"); err != nil || u.AvailBytes != 0 {
		t.Fatalf("disk usage under limit: %+v %v", u, err)
	}
	if _, err := f.Create("/b", "test"); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("create on full disk: %v", err)
	}
	f.SetWriteLimit(0)
	if _, err := file.Write(make([]byte, 100)); err != nil {
		t.Fatalf("write after limit lifted: %v", err)
	}
	f.FailSyncs(1)
	if err := file.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("injected sync: %v", err)
	}
	if err := file.Sync(); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	// The filter confines faults to matching paths.
	f.SetFilter(func(p string) bool { return strings.HasPrefix(p, "/data/") })
	f.SetWriteLimit(1)
	other, _ := f.Create("/other", "test")
	if _, err := other.Write(make([]byte, 100)); err != nil {
		t.Fatalf("unfiltered file hit by fault: %v", err)
	}
	if err := f.MkdirAll("/data", 0o755); err != nil {
		t.Fatal(err)
	}
	d, _ := f.Create("/data/x", "test")
	if _, err := d.Write(make([]byte, 2)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filtered file: %v", err)
	}
}
