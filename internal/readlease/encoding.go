package readlease

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/cairn-store/cairn/internal/binenc"
)

// The encodings of the messages between holders, granters and proxies, as the node protocol
// carries them. Each starts with a version byte, so that a later layout can be told from this
// one. Decoders refuse what no encoder writes, and bound every count by the bytes left, so
// that a damaged or hostile message cannot make a node allocate much.
const encodingVersion = 1

// Bounds a decoder enforces.
const (
	// MaxName bounds a device's name, a ring version and a settled name (an object name's
	// parts are bounded: account, container and object together stay well below it).
	MaxName = 8 << 10
	// MaxSettle bounds the names one renewal asks about.
	MaxSettle = 1 << 16
)

// ErrBadEncoding reports bytes that are not an encoding of this package.
var ErrBadEncoding = errors.New("readlease: bad encoding")

type decoder struct{ binenc.Decoder }

func (d *decoder) fail(what string) { d.Fail(ErrBadEncoding, what) }

func (d *decoder) str(what string) string {
	n := d.Uvarint()
	if n > MaxName {
		d.fail(what + " too long")
		return ""
	}
	return string(d.Bytes(n))
}

func (d *decoder) start() { d.Version(encodingVersion, ErrBadEncoding) }

func (d *decoder) end(what string) error { return d.Finish(ErrBadEncoding, what) }

func appendVersions(b []byte, vs []Version) []byte {
	b = binary.AppendUvarint(b, uint64(len(vs)))
	for _, v := range vs {
		b = binary.AppendUvarint(b, uint64(v.Part))
		b = binenc.AppendString(binenc.AppendString(b, v.Name), v.Version)
	}
	return b
}

func (d *decoder) versions() []Version {
	n := d.Count(3)
	if n > MaxSettle {
		d.fail("too many names")
		return nil
	}
	var out []Version
	for range n {
		part := d.Uvarint()
		if part > 1<<32-1 {
			d.fail("partition")
		}
		out = append(out, Version{Part: uint32(part), Name: d.str("name"), Version: d.str("version")})
		if d.Err != nil {
			return nil
		}
	}
	return out
}

// AppendTo appends the renewal.
func (r Renewal) AppendTo(b []byte) []byte {
	b = append(b, encodingVersion)
	b = binenc.AppendString(binenc.AppendString(b, r.Holder), r.Granter)
	b = binary.AppendUvarint(b, r.Seq)
	b = binenc.AppendString(b, r.Ring)
	return appendVersions(b, r.Settle)
}

// DecodeRenewal reads what Renewal.AppendTo wrote.
func DecodeRenewal(b []byte) (Renewal, error) {
	d := decoder{binenc.Decoder{B: b}}
	d.start()
	r := Renewal{Holder: d.str("holder"), Granter: d.str("granter"), Seq: d.Uvarint(), Ring: d.str("ring")}
	r.Settle = d.versions()
	return r, d.end("renewal")
}

// AppendTo appends the grant.
func (g Grant) AppendTo(b []byte) []byte {
	b = append(b, encodingVersion)
	b = binenc.AppendString(binenc.AppendString(b, g.Holder), g.Granter)
	b = binary.AppendUvarint(b, g.Seq)
	if g.Granted {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(g.Revoked)))
	for _, p := range g.Revoked {
		b = binary.AppendUvarint(b, uint64(p))
	}
	return appendVersions(b, g.Held)
}

// DecodeGrant reads what Grant.AppendTo wrote.
func DecodeGrant(b []byte) (Grant, error) {
	d := decoder{binenc.Decoder{B: b}}
	d.start()
	g := Grant{Holder: d.str("holder"), Granter: d.str("granter"), Seq: d.Uvarint()}
	switch flag := d.Bytes(1); {
	case len(flag) == 0:
	case flag[0] == 1:
		g.Granted = true
	case flag[0] != 0:
		d.fail("granted flag")
	}
	n := d.Count(1)
	for range n {
		p := d.Uvarint()
		if p > 1<<32-1 {
			d.fail("partition")
			break
		}
		g.Revoked = append(g.Revoked, uint32(p))
	}
	g.Held = d.versions()
	return g, d.end("grant")
}

// Revocation is a proxy's request to a granter: revoke Holder's lease for Part.
type Revocation struct {
	Holder string
	Part   uint32
}

// AppendTo appends the revocation.
func (r Revocation) AppendTo(b []byte) []byte {
	b = append(b, encodingVersion)
	return binary.AppendUvarint(binenc.AppendString(b, r.Holder), uint64(r.Part))
}

// DecodeRevocation reads what Revocation.AppendTo wrote.
func DecodeRevocation(b []byte) (Revocation, error) {
	d := decoder{binenc.Decoder{B: b}}
	d.start()
	r := Revocation{Holder: d.str("holder")}
	if p := d.Uvarint(); p > 1<<32-1 {
		d.fail("partition")
	} else {
		r.Part = uint32(p)
	}
	return r, d.end("revocation")
}

// AppendWait appends a granter's answer to a revocation: how long the holder's lease may run.
func AppendWait(b []byte, wait time.Duration) []byte {
	return binary.AppendUvarint(append(b, encodingVersion), uint64(max(0, wait)))
}

// DecodeWait reads what AppendWait wrote; a wait longer than an hour is no lease's.
func DecodeWait(b []byte) (time.Duration, error) {
	d := decoder{binenc.Decoder{B: b}}
	d.start()
	w := d.Uvarint()
	if w > uint64(time.Hour) {
		d.fail("wait")
	}
	return time.Duration(w), d.end("wait")
}
