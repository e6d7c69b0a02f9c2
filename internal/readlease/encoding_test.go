package readlease

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestEncodingsRoundTrip(t *testing.T) {
	r := Renewal{Holder: "10.0.0.1:6200/d1", Granter: "10.0.0.2:6200/d3", Seq: 77, Ring: "objects-1:abc",
		Settle: []Version{{Part: 5, Name: "acct/bkt/obj", Version: "1700000000.00001_1700000001.00000"}, {Part: 1 << 20, Name: "a/b/\x00\xff", Version: "x"}}}
	if got, err := DecodeRenewal(r.AppendTo(nil)); err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("renewal: %+v, %v", got, err)
	}
	g := Grant{Holder: "h", Granter: "g", Seq: 3, Granted: true, Revoked: []uint32{0, 9, 1<<32 - 1}, Held: r.Settle[:1]}
	if got, err := DecodeGrant(g.AppendTo(nil)); err != nil || !reflect.DeepEqual(got, g) {
		t.Fatalf("grant: %+v, %v", got, err)
	}
	v := Revocation{Holder: "h", Part: 12}
	if got, err := DecodeRevocation(v.AppendTo(nil)); err != nil || got != v {
		t.Fatalf("revocation: %+v, %v", got, err)
	}
	if got, err := DecodeWait(AppendWait(nil, 1234*time.Millisecond)); err != nil || got != 1234*time.Millisecond {
		t.Fatalf("wait: %v, %v", got, err)
	}
}

func TestDecodersRefuseDamage(t *testing.T) {
	enc := Renewal{Holder: "h", Granter: "g", Seq: 1, Ring: "r", Settle: []Version{{Part: 1, Name: "n", Version: "v"}}}.AppendTo(nil)
	for i := range enc {
		if _, err := DecodeRenewal(enc[:i]); !errors.Is(err, ErrBadEncoding) {
			t.Fatalf("truncated to %d bytes: %v", i, err)
		}
	}
	if _, err := DecodeRenewal(append(bytes.Clone(enc), 0)); !errors.Is(err, ErrBadEncoding) {
		t.Fatalf("trailing byte: %v", err)
	}
	wrong := bytes.Clone(enc)
	wrong[0] = 9
	if _, err := DecodeRenewal(wrong); !errors.Is(err, ErrBadEncoding) {
		t.Fatalf("version 9: %v", err)
	}
	// A count of a billion names in a few bytes is refused before anything is allocated.
	hostile := append([]byte{encodingVersion, 1, 'h', 1, 'g', 1, 1, 'r'}, 0x80, 0x94, 0xeb, 0xdc, 0x03)
	if _, err := DecodeRenewal(hostile); !errors.Is(err, ErrBadEncoding) {
		t.Fatalf("hostile count: %v", err)
	}
}

// fuzzDecoding checks that a decoder never panics, and that what it accepts encodes to bytes
// that decode to the same (varints may come overlong: the bytes need not be the same).
func fuzzDecoding[T interface{ AppendTo([]byte) []byte }](f *testing.F, decode func([]byte) (T, error), seeds ...T) {
	for _, s := range seeds {
		f.Add(s.AppendTo(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decode(b)
		if err != nil {
			return
		}
		again, err := decode(v.AppendTo(nil))
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("decoded %+v from %x; its encoding decodes as %+v, %v", v, b, again, err)
		}
	})
}

func FuzzDecodeRenewal(f *testing.F) {
	fuzzDecoding(f, DecodeRenewal, Renewal{Holder: "h", Granter: "g", Seq: 2, Ring: "r", Settle: []Version{{Part: 3, Name: "a/b/c", Version: "1"}}})
}

func FuzzDecodeGrant(f *testing.F) {
	fuzzDecoding(f, DecodeGrant, Grant{Holder: "h", Granter: "g", Seq: 2, Granted: true, Revoked: []uint32{4}, Held: []Version{{Part: 3, Name: "n", Version: "v"}}})
}

func FuzzDecodeRevocation(f *testing.F) {
	fuzzDecoding(f, DecodeRevocation, Revocation{Holder: "h", Part: 7})
}
