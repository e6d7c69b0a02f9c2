package storage

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// A PUT's companion commits in the PUT's batch with its own listing entry, in its own
// container: both listings and usage totals follow, or neither does.
func TestCompanionListings(t *testing.T) {
	ctx := context.Background()
	n, _ := openNode(t)
	here := []nodeclient.ContainerUpdate{{Device: "d0"}}
	for _, c := range []string{"c", "vc"} {
		if err := n.PutContainer(ctx, "d0", 0, "a", meta.Container{Name: c, Created: meta.Now()}, nodeclient.ContainerOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	key := meta.ObjectName{Account: "a", Container: "c", Object: "k"}
	put := func(vobj, data string, comp *nodeclient.Companion) (nodeclient.PutResult, error) {
		ts := meta.Now()
		comp.Name, comp.Timestamp, comp.Containers = key, ts+1, here
		comp.Build = func(o meta.Object) (meta.Object, error) {
			return meta.Object{ContentType: "link/" + o.ETag, SysMeta: map[string]string{"link": "true"}}, nil
		}
		return n.PutObject(ctx, "d0", 0, meta.ObjectName{Account: "a", Container: "vc", Object: vobj}, meta.Object{Timestamp: ts, Size: int64(len(data))},
			bytes.NewReader([]byte(data)), nodeclient.PutOptions{Containers: here, Companion: comp})
	}
	listed := func(c string) []meta.ListEntry {
		t.Helper()
		l, err := n.ListObjects(ctx, "d0", 0, "a", c, meta.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l.Objects
	}
	usage := func(c string) (int64, int64) {
		t.Helper()
		h, err := n.HeadContainer(ctx, "d0", 0, "a", c)
		if err != nil {
			t.Fatal(err)
		}
		return h.ObjectCount, h.BytesUsed
	}

	res, err := put("v1", "one", &nodeclient.Companion{Over: "link"})
	if err != nil || res.Companion.Err != nil || res.Companion.Previous != nil {
		t.Fatalf("put: %v %+v", err, res.Companion)
	}
	res, err = put("v2", "two!", &nodeclient.Companion{Over: "link"})
	if err != nil || res.Companion.Err != nil || res.Companion.Previous == nil {
		t.Fatalf("put: %v %+v", err, res.Companion)
	}
	if l := listed("c"); len(l) != 1 || l[0].ContentType != "link/"+md5hex("two!") || l[0].Size != 0 {
		t.Fatalf("c lists %+v", l)
	}
	if l := listed("vc"); len(l) != 2 {
		t.Fatalf("vc lists %+v", l)
	}
	if o, b := usage("c"); o != 1 || b != 0 {
		t.Fatalf("c: %d objects, %d bytes", o, b)
	}
	if o, b := usage("vc"); o != 2 || b != 7 {
		t.Fatalf("vc: %d objects, %d bytes", o, b)
	}

	// A failed condition of the companion stores neither, nor lists either.
	_, err = put("v3", "three", &nodeclient.Companion{If: meta.Precondition{IfNoneMatch: true}})
	if !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Fatalf("put: %v, want precondition failed", err)
	}
	if len(listed("vc")) != 2 {
		t.Fatalf("vc lists %+v", listed("vc"))
	}

	// A plain object in place is not replaced (Over): the version commits and lists alone.
	if _, err := n.PutObject(ctx, "d0", 0, key, meta.Object{Timestamp: meta.Now(), Size: 5}, bytes.NewReader([]byte("plain")), nodeclient.PutOptions{Containers: here}); err != nil {
		t.Fatal(err)
	}
	res, err = put("v4", "four", &nodeclient.Companion{Over: "link"})
	if err != nil || !errors.Is(res.Companion.Err, nodeclient.ErrCompanionRefused) {
		t.Fatalf("put: %v %+v", err, res.Companion)
	}
	if l := listed("c"); len(l) != 1 || l[0].Size != 5 {
		t.Fatalf("c lists %+v", l)
	}
	if o, _ := usage("vc"); o != 3 {
		t.Fatalf("vc: %d objects", o)
	}
}

func md5hex(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }
