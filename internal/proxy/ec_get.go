package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// getEC opens an erasure-coded object, or one range of it: the survey picks the bytes, k
// archives are opened over the archive range that holds the client's range, and the reader
// decodes them a segment at a time. A manifest is returned as its archive holds it (whole),
// for GetObject to serve its segments.
func (p *Proxy) getEC(ctx context.Context, pl *placement, name meta.ObjectName, rng *meta.Range) (*ObjectReader, error) {
	v, err := p.survey(ctx, pl, name, nodeclient.HeadOptions{Brief: true})
	if err != nil {
		return nil, err
	}
	if v.obj.IsManifest() {
		return p.getECManifest(ctx, pl, name, v)
	}
	scheme, err := ecScheme(pl.scheme, v.arc)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", name.Object, err)
	}
	size := v.arc.Size
	off, n := int64(0), size
	if rng != nil {
		if off, n, err = rng.Resolve(size); err != nil {
			return nil, fmt.Errorf("range of %d bytes: %w", size, err)
		}
	}
	r := &ecReader{ctx: ctx, p: p, pl: pl, name: name, scheme: scheme, v: v, size: size, pos: off, end: off + n,
		open: make([]*archiveStream, scheme.Fragments()), tried: map[string]bool{}}
	if n > 0 {
		r.seg = off / scheme.SegmentSize
		r.last = (off + n - 1) / scheme.SegmentSize
		r.frags = make([][]byte, scheme.Fragments())
		for i := range r.frags {
			r.frags[i] = make([]byte, 0, scheme.FragmentLen(size, r.seg))
		}
		// The first k archives are opened now, so that a read that cannot be served fails
		// before the client is answered rather than in the middle of its body.
		if err := r.fill(r.seg, false); err != nil {
			r.Close()
			return nil, fmt.Errorf("get %q: %w", name.Object, err)
		}
	}
	return &ObjectReader{Object: v.served(), Offset: off, Length: n, ReadCloser: r}, nil
}

// getECManifest reads a manifest's archive (empty bytes, the segment list in its metadata)
// from the device holding its newest metadata, or any other of the same bytes.
func (p *Proxy) getECManifest(ctx context.Context, pl *placement, name meta.ObjectName, v *ecVersion) (*ObjectReader, error) {
	first, _ := v.newest()
	var lastErr error
	for _, t := range append([]target{first}, allHolders(v)...) {
		if t.client == nil {
			continue
		}
		r, err := t.client.GetObject(ctx, t.dev.Name, pl.part, name, nil)
		if err != nil {
			pl.p.noteFailure(ctx, t, err)
			lastErr = err
			continue
		}
		if a, ok := r.Object.ECArchive(); !ok || !a.SameData(v.arc) || !r.Object.IsManifest() {
			r.Close() // overwritten since the survey
			lastErr = fmt.Errorf("%q changed while it was read: %w", name.Object, meta.ErrUnavailable)
			continue
		}
		r.Object.SysMeta = meta.WithoutEC(r.Object.SysMeta)
		return &ObjectReader{Object: r.Object, Offset: r.Offset, Length: r.Length, ReadCloser: r.ReadCloser}, nil
	}
	return nil, fmt.Errorf("get %q: %w", name.Object, lastErr)
}

func allHolders(v *ecVersion) []target {
	var out []target
	for i := range v.holders {
		out = append(out, v.holders[i]...)
	}
	return out
}

// archiveStream is one archive being read, from the start of a segment to the end of the
// archive range the read needs.
type archiveStream struct {
	t target
	r io.ReadCloser
}

// ecReader decodes an erasure-coded object's range from its archives, one segment at a time:
// each segment's fragments are read from the archives open (k of them, data fragments first,
// which decode without arithmetic), and when one fails (a node dies, a checksum fails on its
// disk) the segment is read from another archive opened at the segment's start, so that the
// client sees no error while k archives of the object can be read, and never bytes that
// were not verified by the nodes' checksums.
type ecReader struct {
	ctx      context.Context
	p        *Proxy
	pl       *placement
	name     meta.ObjectName
	scheme   *ec.Scheme
	v        *ecVersion
	size     int64
	pos, end int64 // the next body byte to return, and the end of the range (exclusive)
	seg      int64 // the next segment to decode
	last     int64 // the range's last segment
	open     []*archiveStream
	tried    map[string]bool // "node/device" of archives that failed this read
	frags    [][]byte
	out      bytes.Buffer // decoded, not yet returned
	err      error
}

func (r *ecReader) Read(b []byte) (int, error) {
	for r.out.Len() == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.pos >= r.end {
			return 0, io.EOF
		}
		if err := r.next(); err != nil {
			r.err = err
			return 0, err
		}
	}
	n, _ := r.out.Read(b)
	return n, nil
}

// next decodes the next segment's part of the range into r.out.
func (r *ecReader) next() error {
	seg := r.seg
	fl := r.scheme.FragmentLen(r.size, seg)
	for i := range r.frags {
		r.frags[i] = r.frags[i][:0]
	}
	// Read the segment from the archives open, all at once.
	errs := make([]error, len(r.open))
	var wg sync.WaitGroup
	for i, s := range r.open {
		if s == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = io.ReadFull(s.r, r.frags[i][:fl])
		}()
	}
	wg.Wait()
	if err := r.ctx.Err(); err != nil {
		return err
	}
	for i, err := range errs {
		if err != nil {
			r.drop(i, err)
		} else if r.open[i] != nil {
			r.frags[i] = r.frags[i][:fl]
		}
	}
	if err := r.fill(seg, true); err != nil {
		return fmt.Errorf("get %q: %w", r.name.Object, err)
	}
	from := max(r.pos, seg*r.scheme.SegmentSize)
	to := min(r.end, (seg+1)*r.scheme.SegmentSize)
	if err := r.scheme.DecodeSegment(&r.out, r.frags, r.size, from, to-from); err != nil {
		return fmt.Errorf("get %q: %v: %w", r.name.Object, err, meta.ErrUnavailable)
	}
	r.pos, r.seg = to, seg+1
	return nil
}

// drop closes archive i after it failed, and remembers its device.
func (r *ecReader) drop(i int, cause error) {
	s := r.open[i]
	r.open[i] = nil
	s.r.Close()
	r.p.health.failed(s.t.dev.Node)
	r.p.log.Info("erasure-coded read moves off an archive", "object", r.name.Object, "fragment", i, "node", s.t.dev.Node, "device", s.t.dev.Name, "err", cause)
	r.tried[s.t.dev.Node+"/"+s.t.dev.Name] = true
}

// fill opens archives until k are open: data fragments first, which decode without
// arithmetic, then parity. Archives opened here start at segment seg; when readNow, the
// segment is being decoded and each new archive's fragment of it is read at once.
func (r *ecReader) fill(seg int64, readNow bool) error {
	fl := r.scheme.FragmentLen(r.size, seg)
	have := 0
	for _, s := range r.open {
		if s != nil {
			have++
		}
	}
	start := r.scheme.ArchiveOffset(seg)
	stop := r.scheme.ArchiveOffset(r.last) + r.scheme.FragmentLen(r.size, r.last) - 1
	var lastErr error
	for i := 0; i < r.scheme.Fragments() && have < r.scheme.K; i++ {
		if r.open[i] != nil {
			continue
		}
		for _, t := range r.v.holders[i] {
			key := t.dev.Node + "/" + t.dev.Name
			if r.tried[key] || t.client == nil {
				continue
			}
			s, err := r.openArchive(t, i, start, stop)
			if err == nil && readNow {
				if _, err = io.ReadFull(s.r, r.frags[i][:fl]); err != nil {
					s.r.Close()
					r.p.health.failed(t.dev.Node)
				} else {
					r.frags[i] = r.frags[i][:fl]
				}
			}
			if err != nil {
				r.tried[key] = true
				lastErr = err
				continue
			}
			r.open[i] = s
			have++
			break
		}
	}
	if have < r.scheme.K {
		if lastErr == nil {
			lastErr = errors.New("no other archive holds these bytes")
		}
		return fmt.Errorf("%d of %d fragment archives readable, need %d (%v): %w", have, r.scheme.Fragments(), r.scheme.K, lastErr, meta.ErrUnavailable)
	}
	return nil
}

// openArchive opens archive i on device t over archive bytes [start, stop], checking that it
// is still an archive of the bytes surveyed.
func (r *ecReader) openArchive(t target, i int, start, stop int64) (*archiveStream, error) {
	o, err := t.client.GetObject(r.ctx, t.dev.Name, r.pl.part, r.name, &meta.Range{Start: start, End: stop})
	r.p.noteFailure(r.ctx, t, err)
	if err != nil {
		return nil, err
	}
	if a, ok := o.Object.ECArchive(); !ok || a.Index != i || !a.SameData(r.v.arc) || o.Offset != start {
		o.Close()
		return nil, fmt.Errorf("%s/%s: archive %d changed since the survey", t.dev.Node, t.dev.Name, i)
	}
	return &archiveStream{t: t, r: o.ReadCloser}, nil
}

func (r *ecReader) Close() error {
	for i, s := range r.open {
		if s != nil {
			s.r.Close()
			r.open[i] = nil
		}
	}
	return nil
}
