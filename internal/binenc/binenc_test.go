package binenc

import (
	"encoding/binary"
	"errors"
	"maps"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	m := map[string]string{"b": "2", "a": "1", "": "empty key", "z\x00": "\xff"}
	var b []byte
	b = binary.AppendUvarint(b, 300)
	b = binary.AppendVarint(b, -42)
	b = binary.LittleEndian.AppendUint32(b, 0xdeadbeef)
	b = AppendString(b, "héllo")
	b = AppendMap(b, m)
	b = AppendMap(b, nil)
	d := Decoder{B: b}
	if v := d.Uvarint(); v != 300 {
		t.Fatalf("Uvarint = %d", v)
	}
	if v := d.Varint(); v != -42 {
		t.Fatalf("Varint = %d", v)
	}
	if v := d.Uint32(); v != 0xdeadbeef {
		t.Fatalf("Uint32 = %x", v)
	}
	if v := d.Str(); v != "héllo" {
		t.Fatalf("String = %q", v)
	}
	if got := d.Map(); !maps.Equal(got, m) {
		t.Fatalf("Map = %v", got)
	}
	if got := d.Map(); got != nil {
		t.Fatalf("empty Map = %v", got)
	}
	if d.Err != nil || len(d.B) != 0 {
		t.Fatalf("err %v, %d bytes left", d.Err, len(d.B))
	}
}

func TestMapEncodingIsCanonical(t *testing.T) {
	a := AppendMap(nil, map[string]string{"x": "1", "y": "2", "w": "0"})
	for range 20 {
		if b := AppendMap(nil, map[string]string{"y": "2", "w": "0", "x": "1"}); string(a) != string(b) {
			t.Fatal("equal maps encoded differently")
		}
	}
}

func TestTruncationIsAnErrorNeverAPanic(t *testing.T) {
	full := AppendMap(AppendString(nil, "some string"), map[string]string{"k": "v", "k2": "v2"})
	for i := range full {
		d := Decoder{B: full[:i]}
		d.Str()
		d.Map()
		if !errors.Is(d.Err, ErrTruncated) {
			t.Fatalf("cut at %d: err %v", i, d.Err)
		}
	}
	// A huge count with few bytes behind it is refused before any allocation.
	d := Decoder{B: binary.AppendUvarint(nil, 1<<40)}
	if n := d.Count(2); n != 0 || !errors.Is(d.Err, ErrTruncated) {
		t.Fatalf("Count = %d, %v", n, d.Err)
	}
}
