package proxy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
)

func TestNameIndex(t *testing.T) {
	for _, replicas := range []int{1, 3} {
		p := newCluster(t, replicas).proxy
		ctx := context.Background()
		if _, err := p.NameOwner(ctx, "photos"); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("owner of an unclaimed name: %v", err)
		}
		if err := p.CreateContainer(ctx, "alpha", "photos", nil); err != nil {
			t.Fatal(err)
		}
		if err := p.ClaimName(ctx, "photos", "alpha"); err != nil {
			t.Fatal(err)
		}
		if err := p.ClaimName(ctx, "photos", "alpha"); err != nil {
			t.Fatalf("claiming again: %v", err)
		}
		if owner, err := p.NameOwner(ctx, "photos"); err != nil || owner != "alpha" {
			t.Fatalf("owner %q, %v", owner, err)
		}
		// Another account cannot take a live claim, nor a fresh one whose container is not made yet.
		if err := p.ClaimName(ctx, "photos", "beta"); !errors.Is(err, ErrNameTaken) {
			t.Fatalf("beta's claim of a held name: %v", err)
		}
		if err := p.ClaimName(ctx, "fresh", "alpha"); err != nil {
			t.Fatal(err)
		}
		if err := p.ClaimName(ctx, "fresh", "beta"); !errors.Is(err, ErrNameTaken) {
			t.Fatalf("beta's claim of a fresh name: %v", err)
		}
		// A stale claim (the holder's container is gone, the claim is old) is taken over.
		old := time.Now().Add(-2 * NameGrace).UTC().Format(time.RFC3339Nano)
		if _, err := p.PostContainer(ctx, NamesAccount, "fresh", map[string]string{MetaNameClaimed: old}); err != nil {
			t.Fatal(err)
		}
		if err := p.ClaimName(ctx, "fresh", "beta"); err != nil {
			t.Fatalf("taking over a stale claim: %v", err)
		}
		if owner, _ := p.NameOwner(ctx, "fresh"); owner != "beta" {
			t.Fatalf("owner after take-over: %q", owner)
		}
		// Release: only by the holder.
		if err := p.ReleaseName(ctx, "photos", "beta"); err != nil {
			t.Fatal(err)
		}
		if owner, _ := p.NameOwner(ctx, "photos"); owner != "alpha" {
			t.Fatalf("beta released alpha's claim: %q", owner)
		}
		if err := p.ReleaseName(ctx, "photos", "alpha"); err != nil {
			t.Fatal(err)
		}
		if _, err := p.NameOwner(ctx, "photos"); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("owner after release: %v", err)
		}
		if err := p.ReleaseName(ctx, "photos", "alpha"); err != nil {
			t.Fatalf("releasing twice: %v", err)
		}
		if err := p.ClaimName(ctx, "photos", "beta"); err != nil {
			t.Fatalf("claiming a released name: %v", err)
		}
		// The index is invisible: the tenants' own listings do not show it.
		l, err := p.ListContainers(ctx, "alpha", meta.ListOptions{})
		if err != nil || len(l.Containers) != 1 || l.Containers[0].Name != "photos" {
			t.Fatalf("alpha's containers: %+v %v", l, err)
		}
	}
}
