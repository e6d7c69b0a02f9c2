package storage

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

func TestSweeperReclaimsOldTombstones(t *testing.T) {
	ctx := context.Background()
	n, _ := openNode(t)
	if err := n.PutContainer(ctx, "d0", 0, "a", meta.Container{Name: "c"}, nodeclient.ContainerOptions{Account: &nodeclient.AccountUpdate{Device: "d0"}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"gone1", "gone2", "kept"} {
		name := meta.ObjectName{Account: "a", Container: "c", Object: o}
		if _, err := n.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: meta.Now(), Size: 1}, bytes.NewReader([]byte("x")), nodeclient.PutOptions{Containers: []nodeclient.ContainerUpdate{{Device: "d0"}}}); err != nil {
			t.Fatal(err)
		}
		if o != "kept" {
			if _, err := n.DeleteObject(ctx, "d0", 0, name, meta.Now(), nodeclient.DeleteOptions{Containers: []nodeclient.ContainerUpdate{{Device: "d0"}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	reg := prometheus.NewRegistry()
	now := time.Now()
	s, err := n.NewSweeper(SweeperConfig{Registry: reg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Pass(ctx); got != 0 {
		t.Fatalf("reclaimed %d tombstones younger than the reclaim age", got)
	}
	now = now.Add(8 * 24 * time.Hour)
	if got := s.Pass(ctx); got != 2 {
		t.Fatalf("reclaimed %d, want 2", got)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		if f.GetName() == "cairn_sweeper_tombstones_reclaimed_total" {
			found = f.GetMetric()[0].GetCounter().GetValue() == 2
		}
	}
	if !found {
		t.Fatal("cairn_sweeper_tombstones_reclaimed_total is not 2")
	}
	d, _ := n.device("d0")
	if _, err := d.engine.Stat(ctx, meta.ObjectName{Account: "a", Container: "c", Object: "gone1"}); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("reclaimed tombstone: %v", err)
	}
	if o, err := n.HeadObject(ctx, "d0", 0, meta.ObjectName{Account: "a", Container: "c", Object: "kept"}, nodeclient.HeadOptions{}); err != nil || o.Size != 1 {
		t.Fatalf("kept object: %+v, %v", o, err)
	}
}

// Listing tombstones (deleted rows that came from other devices) go after the reclaim age too.
func TestSweeperReclaimsListingTombstones(t *testing.T) {
	ctx := context.Background()
	n, _ := openNode(t)
	if err := n.PutContainer(ctx, "d0", 0, "a", meta.Container{Name: "c"}, nodeclient.ContainerOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"x", "y"} {
		if err := n.UpdateListing(ctx, "d0", 0, "a", "c", meta.ListEntry{Name: o, Timestamp: meta.Now()}, true); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	now := time.Now()
	s, err := n.NewSweeper(SweeperConfig{Registry: reg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s.Pass(ctx)
	// Still there: an older PUT row is refused.
	old := meta.ListEntry{Name: "x", Timestamp: 1, Size: 1}
	if err := n.UpdateListing(ctx, "d0", 0, "a", "c", old, false); err != nil {
		t.Fatal(err)
	}
	if l, _ := n.ListObjects(ctx, "d0", 0, "a", "c", meta.ListOptions{}); len(l.Objects) != 0 {
		t.Fatalf("listed %+v before the reclaim age", l.Objects)
	}
	now = now.Add(8 * 24 * time.Hour)
	s.Pass(ctx)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	for _, f := range families {
		if f.GetName() == "cairn_sweeper_listing_tombstones_reclaimed_total" {
			got = f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if got != 2 {
		t.Fatalf("cairn_sweeper_listing_tombstones_reclaimed_total = %v, want 2", got)
	}
	// Past the reclaim age the tombstone is gone, and with it the protection it gave.
	if err := n.UpdateListing(ctx, "d0", 0, "a", "c", old, false); err != nil {
		t.Fatal(err)
	}
	if l, _ := n.ListObjects(ctx, "d0", 0, "a", "c", meta.ListOptions{}); len(l.Objects) != 1 {
		t.Fatalf("listed %+v after the reclaim", l.Objects)
	}
}
