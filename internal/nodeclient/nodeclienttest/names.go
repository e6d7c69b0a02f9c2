package nodeclienttest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// The cases of Cairn's reserved names and of account creation, which the node protocol maps
// onto Swift's namespace: every name must come back as it went in.

// Objects of a reserved container in a reserved account, named as the S3 front end names an
// upload's marker and parts (NUL inside): stored, read, listed (prefix, markers, delimiter,
// reverse, pages) and deleted under the names they were given.
func reservedNames(t *testing.T, tg Target) {
	ctx := context.Background()
	part := tg.Update.Part
	for _, acct := range []string{account, meta.ReservedPrefix + "sys"} {
		const container = meta.ReservedPrefix + "mpu" + meta.ReservedPrefix + "box"
		c := meta.Container{Name: container, Created: meta.Now()}
		if err := tg.Client.PutContainer(ctx, tg.Device, part, acct, c, nodeclient.ContainerOptions{Account: tg.Account}); err != nil {
			t.Fatalf("%q: create reserved container: %v", acct, err)
		}
		names := []string{"a/k\x00up", "a/k\x00up\x0000001\x00ff", "a/k\x00up\x0000002", "b\x00up2", "c"}
		for _, o := range names {
			n := meta.ObjectName{Account: acct, Container: container, Object: o}
			obj := meta.Object{Timestamp: meta.Now(), Size: int64(len(o))}
			if _, err := tg.Client.PutObject(ctx, tg.Device, 0, n, obj, bytes.NewReader([]byte(o)), nodeclient.PutOptions{Containers: tg.Updates()}); err != nil {
				t.Fatalf("%q: put %q: %v", acct, o, err)
			}
		}
		n := meta.ObjectName{Account: acct, Container: container, Object: names[1]}
		r, err := tg.Client.GetObject(ctx, tg.Device, 0, n, nil)
		if err != nil {
			t.Fatalf("%q: get %q: %v", acct, n.Object, err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if string(b) != names[1] {
			t.Errorf("%q: got %q", acct, b)
		}
		list := func(opts meta.ListOptions) ([]string, meta.ObjectListing) {
			t.Helper()
			l, err := tg.Client.ListObjects(ctx, tg.Device, part, acct, container, opts)
			if err != nil {
				t.Fatalf("%q: list %+v: %v", acct, opts, err)
			}
			var got []string
			for _, e := range l.Objects {
				got = append(got, e.Name)
			}
			return append(got, l.CommonPrefixes...), l
		}
		if got, _ := list(meta.ListOptions{}); !slices.Equal(got, names) {
			t.Errorf("%q: listing %q, want %q", acct, got, names)
		}
		if got, _ := list(meta.ListOptions{Prefix: "a/k\x00up\x00"}); !slices.Equal(got, names[1:3]) {
			t.Errorf("%q: parts %q", acct, got)
		}
		if got, _ := list(meta.ListOptions{Marker: "a/k\x00up", EndMarker: "b\x00up2"}); !slices.Equal(got, names[1:3]) {
			t.Errorf("%q: between markers %q", acct, got)
		}
		if got, _ := list(meta.ListOptions{Delimiter: "/"}); !slices.Equal(got, []string{"b\x00up2", "c", "a/"}) {
			t.Errorf("%q: with a delimiter %q", acct, got)
		}
		if got, _ := list(meta.ListOptions{Reverse: true, Marker: "c"}); !slices.Equal(got, []string{"b\x00up2", "a/k\x00up\x0000002", "a/k\x00up\x0000001\x00ff", "a/k\x00up"}) {
			t.Errorf("%q: reversed %q", acct, got)
		}
		if got, l := list(meta.ListOptions{Limit: 2}); !slices.Equal(got, names[:2]) || !l.Truncated || l.NextMarker != names[1] {
			t.Errorf("%q: first page %q, %+v", acct, got, l)
		}
		gone := meta.ObjectName{Account: acct, Container: container, Object: names[0]}
		if _, err := tg.Client.DeleteObject(ctx, tg.Device, 0, gone, meta.Now(), nodeclient.DeleteOptions{Containers: tg.Updates()}); err != nil {
			t.Fatalf("%q: delete: %v", acct, err)
		}
		if _, err := tg.Client.HeadObject(ctx, tg.Device, 0, gone, nodeclient.HeadOptions{}); !errors.Is(err, meta.ErrNotFound) {
			t.Errorf("%q: head after delete: %v", acct, err)
		}
		if got, _ := list(meta.ListOptions{}); !slices.Equal(got, names[1:]) {
			t.Errorf("%q: listing after delete %q", acct, got)
		}
		cl, err := tg.Client.ListContainers(ctx, tg.Device, part, acct, meta.ListOptions{})
		if err != nil || len(cl.Containers) != 1 || cl.Containers[0].Name != container {
			t.Errorf("%q: account listing %+v, %v", acct, cl, err)
		}
	}
}

// PutAccount on an account with or without containers leaves it as it was.
func putAccount(t *testing.T, tg Target) {
	ctx := context.Background()
	if err := tg.Client.PutAccount(ctx, tg.Device, tg.Account.Part, account, meta.Now()); err != nil {
		t.Fatalf("put account: %v", err)
	}
	mustCreate(t, tg, "box")
	put(t, tg, "a", meta.Object{}, []byte("12345"))
	if err := tg.Client.PutAccount(ctx, tg.Device, tg.Account.Part, account, meta.Now()); err != nil {
		t.Fatalf("put account again: %v", err)
	}
	if a := headAccount(t, tg, tg.Device); a.ContainerCount != 1 || a.ObjectCount != 1 || a.BytesUsed != 5 {
		t.Fatalf("after the PUTs: %+v", a)
	}
	if err := tg.Client.PutAccount(ctx, "nodev", tg.Account.Part, account, meta.Now()); err == nil {
		t.Error("put account on a device the node lacks: accepted")
	}
}
