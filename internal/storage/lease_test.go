package storage

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/readlease"
)

// markLog records the marks a node makes, and what the name read as when each was made.
type markLog struct {
	mu    sync.Mutex
	marks []string
}

func (m *markLog) Wrote(device string, part uint32, name, version string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.marks = append(m.marks, device+" "+name+" "+version)
}

func (m *markLog) Renew(context.Context, readlease.Renewal) (readlease.Grant, error) {
	return readlease.Grant{Granted: true}, nil
}

func (m *markLog) Revoke(string, string, uint32) (time.Duration, error) { return time.Second, nil }

// Every write that makes a version visible (PUT, POST, DELETE) marks its name first, with the
// version a holder will ask its granters about, and HoldsVersion answers for that version.
func TestWritesMarkTheirNamesForLeases(t *testing.T) {
	ctx := context.Background()
	n, _ := openNode(t)
	if _, err := n.RenewLease(ctx, "d0", readlease.Renewal{}); !errors.Is(err, nodeclient.ErrNoLeases) {
		t.Fatalf("renewal before leases are wired: %v", err)
	}
	log := &markLog{}
	n.SetLeases(log)
	dev := n.leaseDevice("d0")
	name := meta.ObjectName{Account: "a", Container: "c", Object: "dir/o"}
	ts1 := meta.Now()
	if _, err := n.PutObject(ctx, "d0", 3, name, meta.Object{Timestamp: ts1, Size: 1}, bytes.NewReader([]byte("x")), nodeclient.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	ts2 := ts1 + 10
	if _, err := n.PostObject(ctx, "d0", 3, name, meta.Object{Timestamp: ts2, UserMeta: map[string]string{"k": "v"}}, nodeclient.PostOptions{}); err != nil {
		t.Fatal(err)
	}
	v2 := readlease.Version{Part: 3, Name: LeaseName(name), Version: LeaseVersion(ts2, false)}
	if !n.HoldsVersion(ctx, dev, v2) {
		t.Fatal("HoldsVersion does not see the POSTed version")
	}
	ts3 := ts2 + 10
	if _, err := n.DeleteObject(ctx, "d0", 3, name, ts3, nodeclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		dev + " a/c/dir/o " + LeaseVersion(ts1, false),
		dev + " a/c/dir/o " + LeaseVersion(ts2, false),
		dev + " a/c/dir/o " + LeaseVersion(ts3, true),
	}
	if len(log.marks) != len(want) {
		t.Fatalf("marks %q, want %q", log.marks, want)
	}
	for i := range want {
		if log.marks[i] != want[i] {
			t.Fatalf("mark %d: %q, want %q", i, log.marks[i], want[i])
		}
	}
	if n.HoldsVersion(ctx, dev, v2) {
		t.Fatal("HoldsVersion still sees a version deleted since")
	}
	if !n.HoldsVersion(ctx, dev, readlease.Version{Part: 3, Name: LeaseName(name), Version: LeaseVersion(ts3, true)}) {
		t.Fatal("HoldsVersion does not see the deletion")
	}
	// An older write the engine refuses marks nothing.
	if _, err := n.PutObject(ctx, "d0", 3, name, meta.Object{Timestamp: ts1 - 5, Size: 1}, bytes.NewReader([]byte("y")), nodeclient.PutOptions{}); err == nil {
		t.Fatal("an older PUT was taken")
	}
	if len(log.marks) != len(want) {
		t.Fatalf("a refused write marked: %q", log.marks)
	}
	for _, bad := range []string{"", "a/c", "a//o", n.address + "/d9"} {
		if n.HoldsVersion(ctx, bad, v2) {
			t.Errorf("HoldsVersion(%q) = true", bad)
		}
	}
	if _, err := n.RenewLease(ctx, "d0", readlease.Renewal{Granter: "elsewhere/d0"}); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("a renewal for another node's device: %v", err)
	}
}
