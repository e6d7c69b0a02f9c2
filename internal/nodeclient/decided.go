package nodeclient

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cairn-store/cairn/internal/binenc"
	"github.com/cairn-store/cairn/internal/meta"
)

// An object's register (ObjectRegisterKey) holds the timestamp of the last write it decided:
// the proxy proposes it, and a node reads it to refuse a write the register did not decide
// (PutOptions.Undecided) that would land beneath it.

// EncodeDecided is the register's data for a write decided at ts.
func EncodeDecided(ts meta.Timestamp) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(ts))
}

// DecodeDecided reads what EncodeDecided wrote; false for anything else (the empty register).
func DecodeDecided(b []byte) (meta.Timestamp, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return meta.Timestamp(binary.BigEndian.Uint64(b)), true
}

// ObjectGuard is the guard a proxy puts on its decision of a conditional write
// (casreg.Message.Guard): the condition was tested on the newest version a quorum held, at
// Seen (0: none). A node takes the decision only while its device holds no version of Name
// newer than Seen and commits no write of Name that the register did not decide: a write that
// landed after the test would otherwise be overwritten by one whose condition never saw it.
type ObjectGuard struct {
	Name meta.ObjectName
	Seen meta.Timestamp
}

const guardVersion = 1

// ErrBadGuard reports bytes that are no ObjectGuard.
var ErrBadGuard = errors.New("nodeclient: bad object guard")

// AppendTo appends the guard's encoding.
func (g ObjectGuard) AppendTo(b []byte) []byte {
	b = append(b, guardVersion)
	b = binary.AppendVarint(b, int64(g.Seen))
	b = binenc.AppendString(b, g.Name.Account)
	b = binenc.AppendString(b, g.Name.Container)
	return binenc.AppendString(b, g.Name.Object)
}

// DecodeObjectGuard reads what ObjectGuard.AppendTo wrote.
func DecodeObjectGuard(b []byte) (ObjectGuard, error) {
	d := binenc.Decoder{B: b}
	d.Version(guardVersion, ErrBadGuard)
	g := ObjectGuard{Seen: meta.Timestamp(d.Varint())}
	g.Name = meta.ObjectName{Account: d.Str(), Container: d.Str(), Object: d.Str()}
	if err := d.Finish(ErrBadGuard, "object guard"); err != nil {
		return ObjectGuard{}, err
	}
	if g.Seen < 0 {
		return ObjectGuard{}, fmt.Errorf("%w: seen %d", ErrBadGuard, g.Seen)
	}
	return g, nil
}
