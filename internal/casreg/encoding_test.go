package casreg

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestEncodingRoundTrips(t *testing.T) {
	b1 := Ballot{Counter: 7, Proposer: "proxy-a"}
	b2 := Ballot{Counter: 1 << 40, Proposer: "p\x00b"}
	values := []Value{{}, {Gen: 1, Data: []byte{}}, {Gen: 3, Data: []byte("v1")}, {Gen: 4, Data: []byte("v1"), Origin: b1}, {Gen: 5, Origin: b2}}
	for _, v := range values {
		for _, a := range []Acceptor{{}, {Promised: b2, Accepted: b1, Value: v}} {
			got, err := DecodeAcceptor(a.AppendTo(nil))
			if err != nil || !reflect.DeepEqual(normal(got.Value), normal(a.Value)) || got.Promised != a.Promised || got.Accepted != a.Accepted {
				t.Errorf("acceptor %+v: got %+v, %v", a, got, err)
			}
		}
		for _, m := range []Message{{Kind: Prepare, Ballot: b1}, {Kind: Accept, Ballot: b2, Value: v}, {Kind: Peek},
			{Kind: Accept, Ballot: b1, Value: v, Guard: []byte("g\x00uard")}, {Kind: Accept, Ballot: b1, Value: v, Guard: []byte{}}} {
			got, err := DecodeMessage(m.AppendTo(nil))
			if err != nil || got.Kind != m.Kind || got.Ballot != m.Ballot || !got.Value.Equal(m.Value) || (got.Value.Data == nil) != (m.Value.Data == nil) ||
				!bytes.Equal(got.Guard, m.Guard) || (got.Guard == nil) != (m.Guard == nil) {
				t.Errorf("message %+v: got %+v, %v", m, got, err)
			}
		}
		for _, r := range []Reply{{Kind: Promised, Ballot: b1, Accepted: b2, Value: v}, {Kind: Rejected, Ballot: b1, Seen: b2}, {Kind: Peeked, Value: v, Seen: b1}, {Kind: Took, Ballot: b2}, {Kind: Refused, Ballot: b2, Accepted: b1, Seen: b2}} {
			got, err := DecodeReply(r.AppendTo(nil))
			if err != nil || got.Kind != r.Kind || got.Ballot != r.Ballot || got.Accepted != r.Accepted || got.Seen != r.Seen || !got.Value.Equal(r.Value) {
				t.Errorf("reply %+v: got %+v, %v", r, got, err)
			}
		}
	}
}

func normal(v Value) Value {
	if v.Data == nil {
		v.Data = []byte{}
	}
	return v
}

func TestEncodingRefusesDamage(t *testing.T) {
	good := Message{Kind: Accept, Ballot: Ballot{Counter: 2, Proposer: "p"}, Value: Value{Gen: 1, Data: []byte("x")}}.AppendTo(nil)
	guarded := Message{Kind: Accept, Ballot: Ballot{Counter: 2, Proposer: "p"}, Value: Value{Gen: 1, Data: []byte("x")}, Guard: []byte("g")}.AppendTo(nil)
	prepare := Message{Kind: Prepare, Ballot: Ballot{Counter: 2, Proposer: "p"}}.AppendTo(nil)
	cases := map[string][]byte{
		"guard truncated":  guarded[:len(guarded)-1],
		"after the guard":  append(bytes.Clone(guarded), 0),
		"huge guard":       append(append(bytes.Clone(good), 0xff, 0xff, 0x7f), make([]byte, 10)...),
		"guard on prepare": append(bytes.Clone(prepare), 1, 'g'),
		"empty":            nil,
		"other version":    append([]byte{2}, good[1:]...),
		"unknown kind":     append([]byte{1, 9}, good[2:]...),
		"truncated":        good[:len(good)-1],
		"trailing bytes":   append(bytes.Clone(good), 3, 'g'),
		"huge data":        append(append([]byte{1, byte(Accept), 2, 1, 'p', 1, 1}, 0xff, 0xff, 0x7f), make([]byte, 10)...),
		"unknown flag":     {1, byte(Accept), 2, 1, 'p', 1, 4},
		"zero origin":      {1, byte(Accept), 2, 1, 'p', 1, 2, 0, 0},
	}
	for name, b := range cases {
		if _, err := DecodeMessage(b); !errors.Is(err, ErrBadEncoding) {
			t.Errorf("%s: err %v, want ErrBadEncoding", name, err)
		}
	}
	if _, err := DecodeReply(good); !errors.Is(err, ErrBadEncoding) {
		t.Errorf("a message decoded as a reply: err %v", err)
	}
}

// Whatever bytes arrive, decoding never panics, and what decodes encodes to bytes that decode
// to the same thing (the encoding is canonical, though a varint may arrive padded).
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
			t.Fatalf("%x decoded to %+v, which encodes to what decodes to %+v, %v", b, v, again, err)
		}
	})
}

func FuzzDecodeMessage(f *testing.F) {
	fuzzDecoding(f, DecodeMessage,
		Message{Kind: Prepare, Ballot: Ballot{Counter: 1, Proposer: "a"}},
		Message{Kind: Accept, Ballot: Ballot{Counter: 3, Proposer: "b"}, Value: Value{Gen: 2, Data: []byte("d")}},
		Message{Kind: Accept, Ballot: Ballot{Counter: 4, Proposer: "b"}, Value: Value{Gen: 3, Data: []byte("d"), Origin: Ballot{Counter: 3, Proposer: "c"}}},
		Message{Kind: Accept, Ballot: Ballot{Counter: 5, Proposer: "b"}, Value: Value{Gen: 4, Data: []byte("e")}, Guard: []byte("guard")})
}

func FuzzDecodeReply(f *testing.F) {
	fuzzDecoding(f, DecodeReply,
		Reply{Kind: Promised, Ballot: Ballot{Counter: 1, Proposer: "a"}, Value: Value{Gen: 1, Data: []byte("v")}},
		Reply{Kind: Rejected, Seen: Ballot{Counter: 9, Proposer: "z"}},
		Reply{Kind: Refused, Ballot: Ballot{Counter: 2, Proposer: "a"}, Seen: Ballot{Counter: 2, Proposer: "a"}})
}

func FuzzDecodeAcceptor(f *testing.F) {
	fuzzDecoding(f, DecodeAcceptor,
		Acceptor{Promised: Ballot{Counter: 2, Proposer: "a"}, Accepted: Ballot{Counter: 1, Proposer: "a"}, Value: Value{Gen: 1, Data: []byte("v")}})
}
