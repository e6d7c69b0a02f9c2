package engine

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
)

// Swift SLO segments (ranges, inline data, sub-manifests) round-trip, and the record CRC still
// catches every flipped bit and truncation.
func TestRecordSegmentExtensions(t *testing.T) {
	man := []meta.Segment{
		{Container: "c", Object: "plain", Size: 10, ETag: "e1"},
		{Container: "c", Object: "ranged", Size: 10, ETag: "e2", Ranged: true, Offset: 3, Length: 4, ContentType: "text/plain", Timestamp: 77},
		{Data: []byte("inline")},
		{Data: []byte{}},
		{Container: "c", Object: "sub", Size: 1 << 33, ETag: "e3", SubManifest: true, Ranged: true, Offset: 1 << 32, Length: 5},
	}
	r := &record{obj: meta.Object{Timestamp: 5, Manifest: man}, dataLen: 0}
	enc := r.encode(nil)
	if enc[5]&flagSegExt == 0 {
		t.Fatal("extended segments without flagSegExt")
	}
	got, err := decodeRecord(enc)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%+v", got.obj.Manifest) != fmt.Sprintf("%+v", man) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got.obj.Manifest, man)
	}
	if got.obj.Manifest[3].Data == nil {
		t.Fatal("an empty inline segment decoded as no data")
	}
	for i := range enc {
		bad := bytes.Clone(enc)
		bad[i] ^= 1
		if _, err := decodeRecord(bad); !errors.Is(err, meta.ErrCorrupt) {
			t.Fatalf("flip at %d: %v", i, err)
		}
		if _, err := decodeRecord(enc[:i]); !errors.Is(err, meta.ErrCorrupt) {
			t.Fatalf("truncation at %d: %v", i, err)
		}
	}
	// Plain segments keep the old encoding, byte for byte.
	plain := &record{obj: meta.Object{Timestamp: 5, Manifest: man[:1]}}
	if b := plain.encode(nil); b[5]&flagSegExt != 0 {
		t.Fatal("plain segments written with flagSegExt")
	}
}

// oldManifestRecord was written by the format before segment extensions existed: a manifest of
// two segments (c/a 3 bytes "ea", c/b 4 bytes "eb"), inline, empty.
const oldManifestRecord = "1d8ecb2801062a0000000000010d6d616e69666573742d65746167017802016301610602656101630162080265620000000000"

func TestRecordOldFormatManifestDecodes(t *testing.T) {
	b, err := hex.DecodeString(oldManifestRecord)
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []meta.Segment{{Container: "c", Object: "a", Size: 3, ETag: "ea"}, {Container: "c", Object: "b", Size: 4, ETag: "eb"}}
	if fmt.Sprintf("%+v", r.obj.Manifest) != fmt.Sprintf("%+v", want) || r.obj.Timestamp != 42 || r.obj.AsServed().Size != 7 {
		t.Fatalf("old record decoded as %+v", r.obj)
	}
}
