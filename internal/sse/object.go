package sse

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/url"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
)

// Encrypted reports whether an object (as stored, or as the proxy returns it) is encrypted.
func Encrypted(obj *meta.Object) bool { return obj.SysMeta[SysEnvelope] != "" }

// EnvelopeOf reads an encrypted object's envelope.
func EnvelopeOf(obj *meta.Object) (*Envelope, error) { return ParseEnvelope(obj.SysMeta[SysEnvelope]) }

// LayoutOf lays out an encrypted object's streams: one for a plain object (obj.Size is its
// stored size), one per segment of a multipart manifest (named by the segment's object). A
// brief manifest (Summary, no segment list) cannot be laid out.
func LayoutOf(obj *meta.Object) (*Layout, error) {
	if obj.Manifest == nil && obj.Summary != nil {
		return nil, fmt.Errorf("%w: manifest without its segment list", ErrBadLayout)
	}
	if obj.Manifest == nil {
		if enc := obj.SysMeta[SysParts]; enc != "" {
			return partsLayout(enc, obj.Size)
		}
		return NewLayout([]Part{{CipherSize: obj.Size}})
	}
	parts := make([]Part, len(obj.Manifest))
	for i, s := range obj.Manifest {
		if s.Data != nil || s.Ranged || s.SubManifest {
			return nil, fmt.Errorf("%w: segment %d is not a whole part", ErrBadLayout, i)
		}
		parts[i] = Part{Name: s.Object, CipherSize: s.Size}
	}
	return NewLayout(parts)
}

// SysParts, on an object holding an encrypted multipart object's parts one after another (the
// version store keeps a multipart null version so, as one object), lists the parts' streams —
// each part was sealed as a stream of its own, named by its stored object — so that the copy
// decrypts as its manifest did.
const SysParts = "sse-parts"

// EncodeParts is SysParts for a multipart object's manifest: "size:name" per part, names
// query-escaped, comma-separated.
func EncodeParts(manifest []meta.Segment) string {
	var b strings.Builder
	for i, s := range manifest {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(s.Size, 10))
		b.WriteByte(':')
		b.WriteString(url.QueryEscape(s.Object))
	}
	return b.String()
}

// partsLayout lays out the streams SysParts lists, which must fill the object's stored size.
func partsLayout(enc string, size int64) (*Layout, error) {
	var parts []Part
	var total int64
	for _, f := range strings.Split(enc, ",") {
		n, name, ok := strings.Cut(f, ":")
		cs, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil || cs < 0 {
			return nil, fmt.Errorf("%w: parts %q", ErrBadLayout, enc)
		}
		if name, err = url.QueryUnescape(name); err != nil {
			return nil, fmt.Errorf("%w: parts %q", ErrBadLayout, enc)
		}
		parts = append(parts, Part{Name: name, CipherSize: cs})
		total += cs
	}
	if total != size {
		return nil, fmt.Errorf("%w: parts of %d bytes in an object of %d", ErrBadLayout, total, size)
	}
	return NewLayout(parts)
}

// Served returns an encrypted object as clients see it: its plaintext size, its plaintext
// ETag when it has one, and a manifest's segments at their plaintext sizes (so that a part's
// range is found as for any object). Other objects are returned unchanged.
func Served(obj meta.Object) meta.Object {
	if !Encrypted(&obj) {
		return obj
	}
	if n, err := strconv.ParseInt(obj.SysMeta[SysPlainSize], 10, 64); err == nil && n >= 0 {
		obj.Size = n
		if obj.Summary != nil {
			s := *obj.Summary
			s.Size = n
			obj.Summary = &s
		}
	}
	if e := obj.SysMeta[SysPlainETag]; e != "" && obj.Manifest == nil && obj.Summary == nil {
		obj.ETag = e
	}
	if obj.Manifest != nil {
		if l, err := LayoutOf(&obj); err == nil {
			segs := make([]meta.Segment, len(obj.Manifest))
			for i, ps := range l.PlainSizes() {
				segs[i] = obj.Manifest[i]
				segs[i].Size = ps
			}
			obj.Manifest = segs
		}
	}
	return obj
}

// Mark adds to sys what an encrypted object stores besides its bytes: its envelope and its
// plaintext size, and its plaintext ETag if not "".
func Mark(sys map[string]string, env *Envelope, plainSize int64, plainETag string) map[string]string {
	sys = maps.Clone(sys)
	if sys == nil {
		sys = map[string]string{}
	}
	sys[SysEnvelope] = env.Encode()
	sys[SysPlainSize] = strconv.FormatInt(plainSize, 10)
	if plainETag != "" {
		sys[SysPlainETag] = plainETag
	} else {
		delete(sys, SysPlainETag)
	}
	return sys
}

// Unmark removes what Mark added (for a copy that stores the plaintext).
func Unmark(sys map[string]string) map[string]string {
	sys = maps.Clone(sys)
	delete(sys, SysEnvelope)
	delete(sys, SysPlainSize)
	delete(sys, SysPlainETag)
	return sys
}

// Opener opens a range of an object's stored bytes.
type Opener func(ctx context.Context, rng *meta.Range) (io.ReadCloser, error)

// Plaintext is an open range of an encrypted object's plaintext.
type Plaintext struct {
	io.Reader
	closer         io.Closer
	Offset, Length int64
	// Envelope is the object's, for the response headers that say how it is encrypted.
	Envelope *Envelope
}

// Close closes the stored bytes.
func (p *Plaintext) Close() error { return p.closer.Close() }

// Open opens plaintext rng (nil: all) of an encrypted object, as stored (full manifest, not
// Served), bound to b; customer is the SSE-C key a request gives. A range outside the
// plaintext is meta.ErrInvalidRange. Only the segments the range needs are read, through open.
func (k *Keyring) Open(ctx context.Context, obj *meta.Object, customer []byte, b Binding, rng *meta.Range, open Opener) (*Plaintext, error) {
	env, err := EnvelopeOf(obj)
	if err != nil {
		return nil, err
	}
	dk, err := k.OpenDataKey(ctx, env, customer, b)
	if err != nil {
		return nil, err
	}
	l, err := LayoutOf(obj)
	if err != nil {
		return nil, err
	}
	off, n := int64(0), l.PlainSize()
	if rng != nil {
		if off, n, err = rng.Resolve(l.PlainSize()); err != nil {
			return nil, err
		}
	}
	coff, cn := l.CipherRange(off, n)
	src, err := open(ctx, &meta.Range{Start: coff, End: coff + cn - 1})
	if err != nil {
		return nil, err
	}
	// The first segment is decrypted now, so that damage there is an error before the caller
	// has answered anything (later damage cuts the answer).
	d := l.newDecrypter(src, dk, off, n)
	if err := d.prime(); err != nil {
		src.Close()
		return nil, err
	}
	return &Plaintext{Reader: d, closer: src, Offset: off, Length: n, Envelope: env}, nil
}
