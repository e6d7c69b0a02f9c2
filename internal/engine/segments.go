package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cairn-store/cairn/internal/binenc"
	"github.com/cairn-store/cairn/internal/meta"
)

// A manifest's segment list is kept in its record while it is short. A long one (an S3 upload
// of 10,000 parts with long key names is megabytes) is kept apart, under 'm' + the object key,
// written and removed in the batches that write and replace the record, so that the record a
// HEAD reads stays small: the record holds the list's summary (segment count, served size)
// and checksum. Reads that need the segments (GET, and the writes that replace the version and
// must release the segments it owns) load the list; a brief stat (StatBrief) does not.
const segmentsKeyPrefix = 'm'

// segmentsApartThreshold is the encoded size above which a segment list is kept apart.
const segmentsApartThreshold = 16 << 10

func segmentsKey(key []byte) []byte { return append([]byte{segmentsKeyPrefix}, key...) }

// Value under segmentsKey: crc32c(uint32, over the rest) | ext(1: 0 or 1) | segment list.

// keepSegmentsApart decides, for a new manifest record, where its segment list goes.
func (r *record) keepSegmentsApart() {
	if r.obj.Manifest == nil {
		return
	}
	ext := slices.ContainsFunc(r.obj.Manifest, meta.Segment.Extended)
	enc := []byte{0, 0, 0, 0, 0}
	if ext {
		enc[4] = 1
	}
	enc = appendSegments(enc, r.obj.Manifest, ext)
	if len(enc) <= segmentsApartThreshold {
		return
	}
	binary.LittleEndian.PutUint32(enc, crc32.Checksum(enc[4:], castagnoli))
	r.apart, r.apartEnc, r.apartCRC = true, enc, binary.LittleEndian.Uint32(enc)
}

// summary is the summary of an apart segment list, from the list when it is loaded.
func (r *record) summary() meta.ManifestSummary {
	if r.obj.Manifest == nil && r.obj.Summary != nil {
		return *r.obj.Summary
	}
	served := r.obj
	served.Summary = nil
	return meta.ManifestSummary{Segments: len(r.obj.Manifest), Size: served.AsServed().Size}
}

// loadSegments reads the segment list of an apart record into rec.obj.Manifest.
func (e *Engine) loadSegments(key []byte, rec *record) error {
	if rec == nil || !rec.apart || rec.obj.Manifest != nil {
		return nil
	}
	v, closer, err := e.cfg.DB.Get(segmentsKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("engine: segment list of %q missing: %w", key, meta.ErrCorrupt)
	}
	if err != nil {
		return storageErr("reading a segment list", err)
	}
	defer closer.Close()
	if len(v) < 5 || binary.LittleEndian.Uint32(v) != rec.apartCRC || crc32.Checksum(v[4:], castagnoli) != rec.apartCRC {
		return fmt.Errorf("engine: segment list of %q does not match its record: %w", key, meta.ErrCorrupt)
	}
	d := binenc.Decoder{B: bytes.Clone(v[5:])}
	segs := decodeSegments(&d, v[4] == 1)
	if d.Err == nil && len(d.B) != 0 {
		d.Err = fmt.Errorf("%d trailing bytes", len(d.B))
	}
	if d.Err != nil {
		return fmt.Errorf("engine: segment list of %q: %w: %w", key, d.Err, meta.ErrCorrupt)
	}
	if segs == nil {
		segs = []meta.Segment{}
	}
	rec.obj.Manifest, rec.obj.Summary = segs, nil
	return nil
}

// loadWhole is load with the segment list of a manifest kept apart. The record and the list
// are two reads: a write between them replaces both, which shows as a list that does not
// match the record, and the pair is read again. A mismatch that stays is corruption (ErrCorrupt
// with the record returned, for the caller to flag).
func (e *Engine) loadWhole(key []byte) (*record, []byte, error) {
	for attempt := 0; ; attempt++ {
		rec, raw, err := e.load(key)
		if err != nil || rec == nil || !rec.apart {
			return rec, raw, err
		}
		err = e.loadSegments(key, rec)
		if err == nil {
			return rec, raw, nil
		}
		if errors.Is(err, meta.ErrCorrupt) && attempt < 3 {
			if _, raw2, _ := e.load(key); !bytes.Equal(raw, raw2) {
				continue
			}
		}
		return rec, raw, err
	}
}

// trackSegments adds to b the segment-list writes that replacing old with rec needs.
func trackSegments(b *pebble.Batch, key []byte, rec, old *record) error {
	switch {
	case rec.apart && rec.apartEnc != nil:
		return b.Set(segmentsKey(key), rec.apartEnc, nil)
	case !rec.apart && old != nil && old.apart:
		return b.Delete(segmentsKey(key), nil)
	}
	return nil // unchanged: no list, or a metadata update that keeps the old one
}
