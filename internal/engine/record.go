package engine

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/cairn-store/cairn/internal/binenc"
	"github.com/cairn-store/cairn/internal/meta"
)

// The engine's keys: 'o' + uvarint-length-prefixed account and container + the object name as
// is. The length prefixes keep names containing any byte (even \x00) unambiguous, and the object
// name last keeps a container's objects in name order, next to each other and in the order of
// their listing entries. The partition is not part of the key: names that arrive in order (most
// bulk loads) then make keys in order, which the LSM flushes into tables that do not overlap, so
// point lookups and compactions stay cheap as the device fills (measured: the PUT rate of an
// ordered fill fell 13-18% by 400,000 objects with the partition first, under 2% without).
// Enumerating a partition, which replication will need, is for a secondary index to provide.
const keyPrefix = 'o'

// objectKey appends the key of name to dst.
func objectKey(dst []byte, name meta.ObjectName) []byte {
	dst = append(dst, keyPrefix)
	dst = binary.AppendUvarint(dst, uint64(len(name.Account)))
	dst = append(dst, name.Account...)
	dst = binary.AppendUvarint(dst, uint64(len(name.Container)))
	dst = append(dst, name.Container...)
	return append(dst, name.Object...)
}

// parseKey is the inverse of objectKey.
func parseKey(k []byte) (name meta.ObjectName, err error) {
	if len(k) < 1 || k[0] != keyPrefix {
		return name, fmt.Errorf("engine: bad key %q: %w", k, meta.ErrCorrupt)
	}
	d := binenc.Decoder{B: k[1:]}
	name.Account = d.Str()
	name.Container = d.Str()
	if d.Err != nil {
		return name, fmt.Errorf("engine: bad key %q: %w", k, meta.ErrCorrupt)
	}
	name.Object = string(d.B)
	return name, nil
}

// Record layout, little-endian, version 1:
//
//	crc32c(uint32, over everything after it) | version(1) | flags(1)
//	timestamp(uvarint) size(varint) etag contentType (strings: uvarint length + bytes)
//	headers usermeta sysmeta (maps: uvarint count + sorted key/value strings)
//	manifest (uvarint count; each: container object size(varint) etag, then with flagSegExt:
//	          kind(1: segRanged|segData|segSub) [offset length (varints) if ranged]
//	          [data string if data] contentType(string) timestamp(uvarint))
//	dataLen(uvarint) dataCRC(uint32: CRC32C of all the bytes, end to end)
//	inline:  the data bytes (dataLen of them), last so that decoding can alias them
//	file:    file name string, blockSize(uvarint), block count(uvarint), block CRC32Cs (uint32 each)
//
// The record CRC makes any flipped byte in metadata or inline data a detectable ErrCorrupt.
const recordVersion = 1

const (
	flagDeleted  = 1 << 0
	flagInline   = 1 << 1
	flagManifest = 1 << 2 // distinguishes an empty manifest list from none
	// flagSegExt: each manifest segment carries the extension fields (Swift SLO ranges, inline
	// data, sub-manifests). Records without it (all written before it existed, and every S3
	// multipart manifest) decode as before.
	flagSegExt = 1 << 3
	// flagSegsApart: the manifest's segment list is stored under its own key (segmentsKey), and
	// the record holds only its summary: count(uvarint) servedSize(varint) crc32c(uint32) of
	// the list's encoding.
	flagSegsApart = 1 << 4
)

// Segment kinds of the extension fields.
const (
	segRanged = 1 << 0
	segData   = 1 << 1
	segSub    = 1 << 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// record is what the engine stores under an object's key.
type record struct {
	obj     meta.Object
	dataLen int64  // stored bytes (equals obj.Size except for manifests)
	dataCRC uint32 // CRC32C of all stored bytes
	inline  []byte // the bytes when stored inline (may alias the decoded buffer)
	isFile  bool
	file    string   // data file path relative to Dir/objects
	block   int64    // block size of blockCRC
	blocks  []uint32 // CRC32C of each block of the data file
	// corrupt stands for a record that exists but does not decode (never encoded): commit
	// passes it to the write that replaces it.
	corrupt bool
	// apart: a manifest whose segment list lives under segmentsKey (see segments.go). Decoded,
	// such a record has obj.Summary and no obj.Manifest until loadSegments; apartCRC is the
	// list's checksum, apartEnc its encoding when this record is new (written in its batch).
	apart    bool
	apartCRC uint32
	apartEnc []byte
}

// encode appends the record's encoding to dst.
func (r *record) encode(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, recordVersion)
	var flags byte
	if r.obj.Deleted {
		flags |= flagDeleted
	}
	if !r.isFile {
		flags |= flagInline
	}
	if r.obj.Manifest != nil || r.apart {
		flags |= flagManifest
	}
	ext := !r.apart && slices.ContainsFunc(r.obj.Manifest, meta.Segment.Extended)
	if ext {
		flags |= flagSegExt
	}
	if r.apart {
		flags |= flagSegsApart
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(r.obj.Timestamp))
	dst = binary.AppendVarint(dst, r.obj.Size)
	dst = binenc.AppendString(dst, r.obj.ETag)
	dst = binenc.AppendString(dst, r.obj.ContentType)
	dst = binenc.AppendMap(dst, r.obj.Headers)
	dst = binenc.AppendMap(dst, r.obj.UserMeta)
	dst = binenc.AppendMap(dst, r.obj.SysMeta)
	if r.apart {
		sum := r.summary()
		dst = binary.AppendUvarint(dst, uint64(sum.Segments))
		dst = binary.AppendVarint(dst, sum.Size)
		dst = binary.LittleEndian.AppendUint32(dst, r.apartCRC)
	} else {
		dst = appendSegments(dst, r.obj.Manifest, ext)
	}
	dst = binary.AppendUvarint(dst, uint64(r.dataLen))
	dst = binary.LittleEndian.AppendUint32(dst, r.dataCRC)
	if r.isFile {
		dst = binenc.AppendString(dst, r.file)
		dst = binary.AppendUvarint(dst, uint64(r.block))
		dst = binary.AppendUvarint(dst, uint64(len(r.blocks)))
		for _, c := range r.blocks {
			dst = binary.LittleEndian.AppendUint32(dst, c)
		}
	} else {
		dst = append(dst, r.inline...)
	}
	binary.LittleEndian.PutUint32(dst[start:], crc32.Checksum(dst[start+4:], castagnoli))
	return dst
}

// decodeRecord verifies and decodes a record. The inline bytes of the result alias buf, so the
// caller must pass a buffer it owns.
func decodeRecord(buf []byte) (*record, error) {
	if len(buf) < 6 {
		return nil, fmt.Errorf("engine: record of %d bytes: %w", len(buf), meta.ErrCorrupt)
	}
	if want, got := binary.LittleEndian.Uint32(buf), crc32.Checksum(buf[4:], castagnoli); want != got {
		return nil, fmt.Errorf("engine: record checksum %08x, want %08x: %w", got, want, meta.ErrCorrupt)
	}
	if buf[4] != recordVersion {
		return nil, fmt.Errorf("engine: record version %d unknown: %w", buf[4], meta.ErrCorrupt)
	}
	flags := buf[5]
	d := binenc.Decoder{B: buf[6:]}
	r := &record{}
	r.obj.Deleted = flags&flagDeleted != 0
	r.obj.Timestamp = meta.Timestamp(d.Uvarint())
	r.obj.Size = d.Varint()
	r.obj.ETag = d.Str()
	r.obj.ContentType = d.Str()
	r.obj.Headers = d.Map()
	r.obj.UserMeta = d.Map()
	r.obj.SysMeta = d.Map()
	if flags&flagSegsApart != 0 {
		r.apart = true
		r.obj.Summary = &meta.ManifestSummary{Segments: int(d.Uvarint()), Size: d.Varint()}
		r.apartCRC = d.Uint32()
	} else if segs := decodeSegments(&d, flags&flagSegExt != 0); segs != nil || flags&flagManifest != 0 {
		r.obj.Manifest = segs
		if r.obj.Manifest == nil {
			r.obj.Manifest = []meta.Segment{}
		}
	}
	r.dataLen = int64(d.Uvarint())
	r.dataCRC = d.Uint32()
	if flags&flagInline != 0 {
		r.inline = d.Bytes(uint64(r.dataLen))
		if d.Err == nil && len(d.B) != 0 {
			d.Err = fmt.Errorf("%d trailing bytes", len(d.B))
		}
	} else {
		r.isFile = true
		r.file = d.Str()
		r.block = int64(d.Uvarint())
		n := d.Count(4)
		r.blocks = make([]uint32, n)
		for i := range r.blocks {
			r.blocks[i] = d.Uint32()
		}
		if d.Err == nil && (r.block <= 0 || int64(n) != blockCount(r.dataLen, r.block)) {
			d.Err = fmt.Errorf("%d block checksums for %d bytes", n, r.dataLen)
		}
	}
	if d.Err != nil {
		return nil, fmt.Errorf("engine: decoding record: %w: %w", d.Err, meta.ErrCorrupt)
	}
	return r, nil
}

// blockCount is the number of blocks of size block that hold n bytes.
func blockCount(n, block int64) int64 { return (n + block - 1) / block }

// appendSegments appends a segment list: uvarint count, then each segment (with the extension
// fields if ext).
func appendSegments(dst []byte, segs []meta.Segment, ext bool) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(segs)))
	for _, s := range segs {
		dst = binenc.AppendString(dst, s.Container)
		dst = binenc.AppendString(dst, s.Object)
		dst = binary.AppendVarint(dst, s.Size)
		dst = binenc.AppendString(dst, s.ETag)
		if ext {
			dst = appendSegExt(dst, &s)
		}
	}
	return dst
}

// decodeSegments is the inverse of appendSegments; nil for an empty list.
func decodeSegments(d *binenc.Decoder, ext bool) []meta.Segment {
	n := d.Count(4)
	if n == 0 {
		return nil
	}
	segs := make([]meta.Segment, n)
	for i := range segs {
		s := &segs[i]
		s.Container = d.Str()
		s.Object = d.Str()
		s.Size = d.Varint()
		s.ETag = d.Str()
		if ext {
			decodeSegExt(d, s)
		}
	}
	return segs
}

func appendSegExt(dst []byte, s *meta.Segment) []byte {
	var kind byte
	if s.Ranged {
		kind |= segRanged
	}
	if s.Data != nil {
		kind |= segData
	}
	if s.SubManifest {
		kind |= segSub
	}
	dst = append(dst, kind)
	if s.Ranged {
		dst = binary.AppendVarint(dst, s.Offset)
		dst = binary.AppendVarint(dst, s.Length)
	}
	if s.Data != nil {
		dst = binary.AppendUvarint(dst, uint64(len(s.Data)))
		dst = append(dst, s.Data...)
	}
	dst = binenc.AppendString(dst, s.ContentType)
	return binary.AppendUvarint(dst, uint64(s.Timestamp))
}

func decodeSegExt(d *binenc.Decoder, s *meta.Segment) {
	b := d.Bytes(1)
	if len(b) != 1 {
		return // d.Err is set
	}
	kind := b[0]
	if kind&^(segRanged|segData|segSub) != 0 && d.Err == nil {
		d.Err = fmt.Errorf("segment kind %#x unknown", kind)
	}
	if kind&segRanged != 0 {
		s.Ranged = true
		s.Offset = d.Varint()
		s.Length = d.Varint()
	}
	if kind&segData != 0 {
		s.Data = slices.Clone(d.Bytes(d.Uvarint()))
		if s.Data == nil {
			s.Data = []byte{}
		}
	}
	s.SubManifest = kind&segSub != 0
	s.ContentType = d.Str()
	s.Timestamp = meta.Timestamp(d.Uvarint())
}
