package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

// putSeg stores data as c/obj and returns the segment naming all of it.
func putSeg(t *testing.T, p *Proxy, obj string, data []byte) meta.Segment {
	t.Helper()
	n := meta.ObjectName{Account: "a", Container: "c", Object: obj}
	o, err := p.PutObject(context.Background(), n, meta.Object{Size: int64(len(data))}, bytes.NewReader(data), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return meta.Segment{Container: "c", Object: obj, Size: o.Size, ETag: o.ETag}
}

// putManifest stores a manifest as c/obj and returns the segment naming it as a sub-manifest.
func putManifest(t *testing.T, p *Proxy, obj string, segs []meta.Segment) meta.Segment {
	t.Helper()
	n := meta.ObjectName{Account: "a", Container: "c", Object: obj}
	o, err := p.PutObject(context.Background(), n, meta.Object{ETag: "m-" + obj, Manifest: segs}, bytes.NewReader(nil), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return meta.Segment{Container: "c", Object: obj, Size: o.Size, ETag: o.ETag, SubManifest: true}
}

func ranged(s meta.Segment, off, n int64) meta.Segment {
	s.Ranged, s.Offset, s.Length = true, off, n
	return s
}

// Segments that select ranges, hold inline data and are manifests themselves read as the
// concatenation of what they select, whole and in every range.
func TestSegmentReaderRangesDataAndNesting(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 1)
	if err := c.proxy.CreateContainer(ctx, "a", "c", nil); err != nil {
		t.Fatal(err)
	}
	da, db := randomBytes(1000), randomBytes(300)
	sa, sb := putSeg(t, c.proxy, "sa", da), putSeg(t, c.proxy, "sb", db)
	// inner = sb[10:20] + "xyz" + sa
	inner := putManifest(t, c.proxy, "inner", []meta.Segment{ranged(sb, 10, 10), {Data: []byte("xyz")}, sa})
	innerBytes := append(append(append([]byte{}, db[10:20]...), "xyz"...), da...)
	// outer = inner[5:900] + sa[999:] + inner (whole) + "Q"
	outerSegs := []meta.Segment{ranged(inner, 5, 895), ranged(sa, 999, 1), inner, {Data: []byte("Q")}}
	want := append(append(append(append([]byte{}, innerBytes[5:900]...), da[999:]...), innerBytes...), 'Q')
	name := meta.ObjectName{Account: "a", Container: "c", Object: "outer"}
	o, err := c.proxy.PutObject(ctx, name, meta.Object{ETag: "outer", Manifest: outerSegs}, bytes.NewReader(nil), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Size != int64(len(want)) {
		t.Fatalf("served size %d, want %d", o.Size, len(want))
	}
	if got := readAll(t, c.proxy, name, nil); !bytes.Equal(got, want) {
		t.Fatal("nested manifest read differs")
	}
	for _, r := range []meta.Range{{Start: 0, End: 0}, {Start: 890, End: 910}, {Start: 895, End: 896}, {Start: 1000, End: -1}, {Suffix: 2}, {Start: 3, End: 1500}} {
		off, n, _ := r.Resolve(int64(len(want)))
		if got := readAll(t, c.proxy, name, &r); !bytes.Equal(got, want[off:off+n]) {
			t.Fatalf("range %+v differs", r)
		}
	}
	// A changed segment under a sub-manifest breaks the read off; it never serves other bytes.
	putSeg(t, c.proxy, "sb", randomBytes(300))
	rd, err := c.proxy.GetObject(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, err := io.ReadAll(rd); !errors.Is(err, meta.ErrCorrupt) {
		t.Fatalf("read past a changed nested segment: %v, want ErrCorrupt", err)
	}
}

// Reads through more than MaxManifestDepth nested manifests fail; MaxManifestDepth levels read.
func TestSegmentReaderDepthLimit(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, 1)
	if err := c.proxy.CreateContainer(ctx, "a", "c", nil); err != nil {
		t.Fatal(err)
	}
	seg := putSeg(t, c.proxy, "leaf", []byte("leaf"))
	var tops []meta.Segment
	for i := 1; i <= MaxManifestDepth+1; i++ {
		seg = putManifest(t, c.proxy, fmt.Sprintf("m%d", i), []meta.Segment{seg})
		tops = append(tops, seg)
	}
	for i, top := range tops {
		rd, err := c.proxy.GetObject(ctx, meta.ObjectName{Account: "a", Container: "c", Object: top.Object}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rd)
		rd.Close()
		levels := i + 1
		if levels <= MaxManifestDepth {
			if err != nil || string(got) != "leaf" {
				t.Fatalf("%d levels: %q, %v", levels, got, err)
			}
		} else if !errors.Is(err, ErrManifestDepth) {
			t.Fatalf("%d levels: %v, want ErrManifestDepth", levels, err)
		}
	}
}
