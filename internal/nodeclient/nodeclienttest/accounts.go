package nodeclienttest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// The cases of listing tombstones, object tombstones and account rows.

func listedNames(t *testing.T, tg Target, container string) []string {
	t.Helper()
	l, err := tg.Client.ListObjects(context.Background(), tg.Device, tg.Update.Part, account, container, meta.ListOptions{Delimiter: "/"})
	if err != nil {
		t.Fatalf("list %s: %v", container, err)
	}
	var names []string
	for _, e := range l.Objects {
		names = append(names, e.Name)
	}
	return append(names, l.CommonPrefixes...)
}

// A DELETE row that arrives before an older PUT row (from a slow object replica) keeps the
// object unlisted; a newer PUT row lists it. Tombstones count for nothing: not in usage, not in
// rollups, not against deleting the container.
func listingTombstones(t *testing.T, tg Target) {
	ctx := context.Background()
	part := tg.Update.Part
	mustCreate(t, tg, "box")
	t1 := meta.Now()
	t2, t3 := t1+10, t1+20
	row := func(name string, ts meta.Timestamp, deleted bool) {
		t.Helper()
		e := meta.ListEntry{Name: name, Timestamp: ts, Size: 4, ETag: "etag", ContentType: "x/y"}
		if err := tg.Client.UpdateListing(ctx, tg.Device, part, account, "box", e, deleted); err != nil {
			t.Fatal(err)
		}
	}
	row("dir/late", t2, true)
	row("dir/late", t1, false)
	if got := listedNames(t, tg, "box"); len(got) != 0 {
		t.Fatalf("a PUT row older than the DELETE row before it: listed %q", got)
	}
	if c, err := tg.Client.HeadContainer(ctx, tg.Device, part, account, "box"); err != nil || c.ObjectCount != 0 || c.BytesUsed != 0 {
		t.Fatalf("usage with a tombstone only: %+v, %v", c, err)
	}
	row("dir/late", t3, false)
	if got := listedNames(t, tg, "box"); !slices.Equal(got, []string{"dir/"}) {
		t.Fatalf("a PUT row newer than the DELETE row: listed %q", got)
	}
	row("dir/late", t3+1, true)
	if got := listedNames(t, tg, "box"); len(got) != 0 {
		t.Fatalf("after a newer DELETE row: listed %q", got)
	}
	if err := tg.Client.DeleteContainer(ctx, tg.Device, part, account, "box", meta.Now(), nodeclient.ContainerOptions{Account: tg.Account}); err != nil {
		t.Fatalf("delete of a container of tombstones only: %v", err)
	}
}

// A DELETE of an object this device does not have answers not found and still records the
// tombstone, so that an older PUT (a slow replica's, the replicator's) does not bring it back.
func deleteOfMissingObject(t *testing.T, tg Target) {
	ctx := context.Background()
	mustCreate(t, tg, "box")
	t1 := meta.Now()
	t2 := meta.Now()
	if _, err := tg.Client.DeleteObject(ctx, tg.Device, 0, name("ghost"), t2, nodeclient.DeleteOptions{Containers: tg.Updates()}); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("delete of a missing object: %v, want ErrNotFound", err)
	}
	_, err := tg.Client.PutObject(ctx, tg.Device, 0, name("ghost"), meta.Object{Timestamp: t1, Size: 3}, strings.NewReader("old"), nodeclient.PutOptions{Containers: tg.Updates()})
	if !errors.Is(err, meta.ErrConflict) {
		t.Fatalf("a PUT older than the delete of a missing object: %v, want ErrConflict", err)
	}
	if _, err := tg.Client.HeadObject(ctx, tg.Device, 0, name("ghost"), nodeclient.HeadOptions{}); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("head after the refused PUT: %v", err)
	}
	if got := listedNames(t, tg, "box"); len(got) != 0 {
		t.Fatalf("listed %q", got)
	}
	put(t, tg, "ghost", meta.Object{}, []byte("new"))
	if got := listedNames(t, tg, "box"); !slices.Equal(got, []string{"ghost"}) {
		t.Fatalf("after a newer PUT: listed %q", got)
	}
}

func headAccount(t *testing.T, tg Target, device string) meta.Account {
	t.Helper()
	a, err := tg.Client.HeadAccount(context.Background(), device, 0, account)
	if err != nil {
		t.Fatalf("head account on %s: %v", device, err)
	}
	return a
}

func listContainers(t *testing.T, tg Target, device string) []meta.Container {
	t.Helper()
	l, err := tg.Client.ListContainers(context.Background(), device, 0, account, meta.ListOptions{})
	if err != nil {
		t.Fatalf("list containers on %s: %v", device, err)
	}
	return l.Containers
}

// The account row on the container's own device: current at once, as the embedded default
// needs (a HEAD of the account right after a PUT shows it).
func accountRowHere(t *testing.T, tg Target) {
	ctx := context.Background()
	mustCreate(t, tg, "box")
	if a := headAccount(t, tg, tg.Device); a.ContainerCount != 1 || a.ObjectCount != 0 {
		t.Fatalf("after the create: %+v", a)
	}
	put(t, tg, "a", meta.Object{}, []byte("12345"))
	if a := headAccount(t, tg, tg.Device); a.ContainerCount != 1 || a.ObjectCount != 1 || a.BytesUsed != 5 {
		t.Fatalf("after a PUT: %+v", a)
	}
	if cs := listContainers(t, tg, tg.Device); len(cs) != 1 || cs[0].Name != "box" || cs[0].ObjectCount != 1 || cs[0].BytesUsed != 5 || cs[0].Created == 0 {
		t.Fatalf("account listing after a PUT: %+v", cs)
	}
	if _, err := tg.Client.DeleteObject(ctx, tg.Device, 0, name("a"), meta.Now(), nodeclient.DeleteOptions{Containers: tg.Updates()}); err != nil {
		t.Fatal(err)
	}
	c, err := tg.Client.HeadContainer(ctx, tg.Device, tg.Update.Part, account, "box")
	if err != nil {
		t.Fatal(err)
	}
	err = tg.Client.DeleteContainer(ctx, tg.Device, tg.Update.Part, account, "box", c.Created, nodeclient.ContainerOptions{Account: tg.Account})
	if !errors.Is(err, meta.ErrConflict) {
		t.Fatalf("a container delete as old as its creation: %v, want ErrConflict", err)
	}
	if err := tg.Client.DeleteContainer(ctx, tg.Device, tg.Update.Part, account, "box", meta.Now(), nodeclient.ContainerOptions{Account: tg.Account}); err != nil {
		t.Fatal(err)
	}
	if a := headAccount(t, tg, tg.Device); a.ContainerCount != 0 || a.ObjectCount != 0 || a.BytesUsed != 0 {
		t.Fatalf("after the delete: %+v", a)
	}
	if cs := listContainers(t, tg, tg.Device); len(cs) != 0 {
		t.Fatalf("account listing after the delete: %+v", cs)
	}
}

// The account row on another device: the container's device sends it on create and delete,
// and its usage when the updater runs.
func accountRowElsewhere(t *testing.T, tg Target) {
	ctx := context.Background()
	part := tg.Update.Part
	other := nodeclient.ContainerOptions{Account: tg.Other}
	c := meta.Container{Name: "box", Created: meta.Now()}
	if err := tg.Client.PutContainer(ctx, tg.Device, part, account, c, other); err != nil {
		t.Fatal(err)
	}
	if a := headAccount(t, tg, tg.Device); a.ContainerCount != 0 {
		t.Fatalf("the container's own device counts it: %+v", a)
	}
	if cs := listContainers(t, tg, tg.Other.Device); len(cs) != 1 || cs[0].Name != "box" || cs[0].Created != c.Created {
		t.Fatalf("account listing on the account's device after the create: %+v", cs)
	}
	for _, o := range []string{"a", "b"} {
		put(t, tg, o, meta.Object{}, bytes.Repeat([]byte("x"), 10))
	}
	tg.Flush()
	if a := headAccount(t, tg, tg.Other.Device); a.ContainerCount != 1 || a.ObjectCount != 2 || a.BytesUsed != 20 {
		t.Fatalf("the account's device after the usage pass: %+v", a)
	}
	if cs := listContainers(t, tg, tg.Other.Device); len(cs) != 1 || cs[0].ObjectCount != 2 || cs[0].BytesUsed != 20 {
		t.Fatalf("account listing after the usage pass: %+v", cs)
	}
	for _, o := range []string{"a", "b"} {
		if _, err := tg.Client.DeleteObject(ctx, tg.Device, 0, name(o), meta.Now(), nodeclient.DeleteOptions{Containers: tg.Updates()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tg.Client.DeleteContainer(ctx, tg.Device, part, account, "box", meta.Now(), other); err != nil {
		t.Fatal(err)
	}
	if a := headAccount(t, tg, tg.Other.Device); a.ContainerCount != 0 || a.ObjectCount != 0 || a.BytesUsed != 0 {
		t.Fatalf("the account's device after the delete: %+v", a)
	}
	tg.Flush() // nothing left to send, and nothing sent brings it back
	if cs := listContainers(t, tg, tg.Other.Device); len(cs) != 0 {
		t.Fatalf("account listing after the delete: %+v", cs)
	}
}

// Rows reported to an account replica: the newest put and delete timestamps win.
func accountRowsNewestWins(t *testing.T, tg Target) {
	ctx := context.Background()
	dev := tg.Other.Device
	report := func(r meta.ContainerRow) {
		t.Helper()
		if err := tg.Client.UpdateAccount(ctx, dev, tg.Other.Part, account, r); err != nil {
			t.Fatalf("update account with %+v: %v", r, err)
		}
	}
	t1 := meta.Now()
	t0, t2, t3 := t1-10, t1+10, t1+20
	report(meta.ContainerRow{Name: "c", PutTimestamp: t1, ObjectCount: 2, BytesUsed: 7})
	report(meta.ContainerRow{Name: "d", PutTimestamp: t1})
	if a := headAccount(t, tg, dev); a.ContainerCount != 2 || a.ObjectCount != 2 || a.BytesUsed != 7 {
		t.Fatalf("after two rows: %+v", a)
	}
	report(meta.ContainerRow{Name: "c", PutTimestamp: t1, ObjectCount: 3, BytesUsed: 9}) // usage changed
	report(meta.ContainerRow{Name: "c", PutTimestamp: t0, DeleteTimestamp: t0 + 1})      // an older delete
	if cs := listContainers(t, tg, dev); len(cs) != 2 || cs[0].Name != "c" || cs[0].ObjectCount != 3 || cs[0].BytesUsed != 9 || cs[0].Created != t1 {
		t.Fatalf("listing: %+v", cs)
	}
	report(meta.ContainerRow{Name: "c", PutTimestamp: t1, DeleteTimestamp: t2})
	report(meta.ContainerRow{Name: "c", PutTimestamp: t1, ObjectCount: 3, BytesUsed: 9}) // a late report
	if a := headAccount(t, tg, dev); a.ContainerCount != 1 || a.ObjectCount != 0 || a.BytesUsed != 0 {
		t.Fatalf("after the delete row: %+v", a)
	}
	if cs := listContainers(t, tg, dev); len(cs) != 1 || cs[0].Name != "d" {
		t.Fatalf("listing after the delete row: %+v", cs)
	}
	report(meta.ContainerRow{Name: "c", PutTimestamp: t3, ObjectCount: 1, BytesUsed: 1})
	if a := headAccount(t, tg, dev); a.ContainerCount != 2 || a.ObjectCount != 1 || a.BytesUsed != 1 {
		t.Fatalf("after the container was created again: %+v", a)
	}
}
