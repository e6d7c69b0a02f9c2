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
	if err := n.PutContainer(ctx, "d0", 0, "a", meta.Container{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"gone1", "gone2", "kept"} {
		name := meta.ObjectName{Account: "a", Container: "c", Object: o}
		if _, err := n.PutObject(ctx, "d0", 0, name, meta.Object{Timestamp: meta.Now(), Size: 1}, bytes.NewReader([]byte("x")), nodeclient.PutOptions{Container: &nodeclient.ContainerUpdate{Device: "d0"}}); err != nil {
			t.Fatal(err)
		}
		if o != "kept" {
			if _, err := n.DeleteObject(ctx, "d0", 0, name, meta.Now(), nodeclient.DeleteOptions{Container: &nodeclient.ContainerUpdate{Device: "d0"}}); err != nil {
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
