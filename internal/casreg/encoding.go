package casreg

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cairn-store/cairn/internal/binenc"
)

// The encodings of an acceptor's state (as a storage node keeps it) and of the messages and
// replies between proposers and acceptors (as the node protocol carries them). Each starts
// with a version byte, so that a later layout can be told from this one.
const encodingVersion = 1

// MaxDataSize bounds a register's data: the register holds a small record (which version of a
// name is current), never a body. A value above it is refused by the decoders, so that a
// damaged or hostile length cannot make a node allocate much.
const MaxDataSize = 64 << 10

// ErrBadEncoding reports bytes that are not an encoding of this package.
var ErrBadEncoding = errors.New("casreg: bad encoding")

func appendBallot(b []byte, x Ballot) []byte {
	return binenc.AppendString(binary.AppendUvarint(b, x.Counter), x.Proposer)
}

// A value's flags: whether it has data, and whether it has an origin (values written before
// Value.Origin have none, and read back with the zero ballot).
const (
	valueHasData   = 1
	valueHasOrigin = 2
)

func appendValue(b []byte, v Value) []byte {
	b = binary.AppendUvarint(b, v.Gen)
	var flags byte
	if v.Data != nil {
		flags |= valueHasData
	}
	if v.Origin != (Ballot{}) {
		flags |= valueHasOrigin
	}
	b = append(b, flags)
	if v.Data != nil {
		b = binenc.AppendString(b, string(v.Data))
	}
	if v.Origin != (Ballot{}) {
		b = appendBallot(b, v.Origin)
	}
	return b
}

type decoder struct{ binenc.Decoder }

func (d *decoder) ballot() Ballot {
	return Ballot{Counter: d.Uvarint(), Proposer: d.Str()}
}

func (d *decoder) value() Value {
	v := Value{Gen: d.Uvarint()}
	flags := d.byte()
	if flags&^(valueHasData|valueHasOrigin) != 0 {
		d.fail("value flag")
		return v
	}
	if flags&valueHasData != 0 {
		n := d.Uvarint()
		if n > MaxDataSize && d.Err == nil {
			d.Err = fmt.Errorf("%w: %d bytes of data", ErrBadEncoding, n)
		}
		v.Data = append([]byte{}, d.Bytes(n)...)
	}
	if flags&valueHasOrigin != 0 {
		v.Origin = d.ballot()
		if v.Origin == (Ballot{}) {
			d.fail("value origin") // one encoding per value
		}
	}
	return v
}

func (d *decoder) byte() byte {
	b := d.Bytes(1)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

func (d *decoder) fail(what string) { d.Fail(ErrBadEncoding, what) }

// start checks the version byte.
func (d *decoder) start() { d.Version(encodingVersion, ErrBadEncoding) }

// end reports the first error, or bytes left over.
func (d *decoder) end(what string) error { return d.Finish(ErrBadEncoding, what) }

// AppendTo appends the acceptor's state.
func (a Acceptor) AppendTo(b []byte) []byte {
	b = append(b, encodingVersion)
	return appendValue(appendBallot(appendBallot(b, a.Promised), a.Accepted), a.Value)
}

// DecodeAcceptor reads what Acceptor.AppendTo wrote.
func DecodeAcceptor(b []byte) (Acceptor, error) {
	d := decoder{binenc.Decoder{B: b}}
	d.start()
	a := Acceptor{Promised: d.ballot(), Accepted: d.ballot(), Value: d.value()}
	return a, d.end("acceptor state")
}

// AppendTo appends the message. A guard follows the value; a message without one ends there,
// as messages did before guards.
func (m Message) AppendTo(b []byte) []byte {
	b = append(b, encodingVersion, byte(m.Kind))
	b = appendValue(appendBallot(b, m.Ballot), m.Value)
	if m.Guard != nil {
		b = binenc.AppendString(b, string(m.Guard))
	}
	return b
}

// DecodeMessage reads what Message.AppendTo wrote.
func DecodeMessage(b []byte) (Message, error) {
	d := decoder{binenc.Decoder{B: b}}
	d.start()
	m := Message{Kind: MessageKind(d.byte()), Ballot: d.ballot(), Value: d.value()}
	if m.Kind < Prepare || m.Kind > Peek {
		d.fail("message kind")
	}
	if d.Err == nil && len(d.B) > 0 {
		n := d.Uvarint()
		if n > MaxDataSize && d.Err == nil {
			d.Err = fmt.Errorf("%w: a guard of %d bytes", ErrBadEncoding, n)
		}
		m.Guard = append([]byte{}, d.Bytes(n)...)
		if m.Kind != Accept {
			d.fail("a guard on a message other than an accept")
		}
	}
	return m, d.end("message")
}

// AppendTo appends the reply.
func (r Reply) AppendTo(b []byte) []byte {
	b = append(b, encodingVersion, byte(r.Kind))
	b = appendBallot(appendBallot(b, r.Ballot), r.Accepted)
	return appendBallot(appendValue(b, r.Value), r.Seen)
}

// DecodeReply reads what Reply.AppendTo wrote.
func DecodeReply(b []byte) (Reply, error) {
	d := decoder{binenc.Decoder{B: b}}
	d.start()
	r := Reply{Kind: ReplyKind(d.byte()), Ballot: d.ballot(), Accepted: d.ballot(), Value: d.value(), Seen: d.ballot()}
	if r.Kind < Promised || r.Kind > Refused {
		d.fail("reply kind")
	}
	return r, d.end("reply")
}
