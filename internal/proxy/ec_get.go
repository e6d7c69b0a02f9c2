package proxy

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy/ecstream"
)

// getEC opens an erasure-coded object, or one range of it: the survey picks the bytes, k
// archives are opened over the archive range that holds the client's range, and an
// ecstream.Reader decodes them a segment at a time. A manifest is returned as its archive holds
// it (whole), for GetObject to serve its segments.
func (p *Proxy) getEC(ctx context.Context, pl *placement, name meta.ObjectName, rng *meta.Range) (*ObjectReader, error) {
	v, err := p.survey(ctx, pl, name, nodeclient.HeadOptions{Brief: true})
	if err != nil {
		return nil, err
	}
	if v.isManifest() {
		return p.getECManifest(ctx, pl, name, v)
	}
	scheme, err := ecScheme(pl.scheme, v.v.Arc)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", name.Object, err)
	}
	size := v.v.Arc.Size
	off, n := int64(0), size
	if rng != nil {
		if off, n, err = rng.Resolve(size); err != nil {
			return nil, fmt.Errorf("range of %d bytes: %w", size, err)
		}
	}
	r := ecstream.NewReader(ctx, scheme, &ecSource{p: p, pl: pl, name: name, v: v}, size, off, n)
	if err := r.Open(); err != nil {
		r.Close()
		return nil, fmt.Errorf("get %q: %w", name.Object, err)
	}
	return &ObjectReader{Object: v.served(), Offset: off, Length: n, ReadCloser: r}, nil
}

// ecSource is where an ecstream.Reader finds the archives of a surveyed version.
type ecSource struct {
	p    *Proxy
	pl   *placement
	name meta.ObjectName
	v    *ecVersion
}

func (s *ecSource) Holders(i int) int { return len(s.v.v.Holders[i]) }

func (s *ecSource) Open(ctx context.Context, i, h int, start, stop int64) (io.ReadCloser, error) {
	t := s.v.holder(i, h)
	if t.client == nil {
		return nil, t.err
	}
	o, err := t.client.GetObject(ctx, t.dev.Name, s.pl.part, s.name, &meta.Range{Start: start, End: stop})
	s.p.noteFailure(ctx, t, err)
	if err != nil {
		return nil, err
	}
	if a, ok := o.Object.ECArchive(); !ok || a.Index != i || !a.SameData(s.v.v.Arc) || o.Offset != start {
		o.Close()
		return nil, fmt.Errorf("%s/%s: archive %d changed since the survey", t.dev.Node, t.dev.Name, i)
	}
	return o.ReadCloser, nil
}

func (s *ecSource) Broke(i, h int, cause error) {
	t := s.v.holder(i, h)
	s.p.health.failed(t.dev.Node)
	s.p.log.Info("erasure-coded read moves off an archive", "object", s.name.Object, "fragment", i, "node", t.dev.Node, "device", t.dev.Name, "err", cause)
}

// getECWhole is the common read in one round trip: a whole object while every primary
// answers. The first k primaries are asked for their archives and the others for what they
// hold, all at once; when the survey these answers make picks the bytes the k archives are of,
// they are decoded as they stream in (data fragments: no arithmetic). Anything else (a
// primary down or without its archive, versions that disagree, a manifest) is left to getEC,
// which surveys first: ok is false, and nothing is left open.
func (p *Proxy) getECWhole(ctx context.Context, pl *placement, name meta.ObjectName) (r *ObjectReader, ok bool) {
	k := pl.scheme.K
	v := &ecVersion{targets: pl.primaries, answers: make([]ecstream.Answer, len(pl.primaries))}
	streams := make([]io.ReadCloser, len(pl.primaries))
	defer func() {
		if !ok {
			for _, s := range streams {
				if s != nil {
					s.Close()
				}
			}
		}
	}()
	for _, t := range pl.primaries {
		if t.err != nil {
			return nil, false
		}
	}
	var wg sync.WaitGroup
	for i, t := range pl.primaries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var o meta.Object
			err := pl.call(ctx, t, i >= k, func(ctx context.Context, t target) error {
				if i >= k {
					var err error
					o, err = t.client.HeadObject(ctx, t.dev.Name, pl.part, name, nodeclient.HeadOptions{Brief: true})
					return err
				}
				got, err := t.client.GetObject(ctx, t.dev.Name, pl.part, name, nil)
				if err == nil {
					o, streams[i] = got.Object, got.ReadCloser
				}
				return err
			})
			v.answers[i] = ecstream.NewAnswer(o, err)
		}()
	}
	wg.Wait()
	for _, a := range v.answers {
		if a.Err != nil {
			return nil, false
		}
	}
	if v.v, _ = ecstream.Decodable(v.answers, k); v.v == nil || v.isManifest() || ecstream.NeedMore(v.answers, k) {
		return nil, false
	}
	holds := make([]int, k) // which holder of archive i primary i is
	for i := range k {
		a := v.answers[i].Arc
		if a.Index != i || !a.SameData(v.v.Arc) {
			return nil, false
		}
		for h, at := range v.v.Holders[i] {
			if at == i {
				holds[i] = h
			}
		}
	}
	scheme, err := ecScheme(pl.scheme, v.v.Arc)
	if err != nil || scheme.K != k {
		return nil, false
	}
	size := v.v.Arc.Size
	er := ecstream.NewReader(ctx, scheme, &ecSource{p: p, pl: pl, name: name, v: v}, size, 0, size)
	if size == 0 {
		for i, s := range streams {
			if s != nil {
				s.Close()
				streams[i] = nil
			}
		}
		return &ObjectReader{Object: v.served(), ReadCloser: er}, true
	}
	for i := range k {
		er.Adopt(i, holds[i], streams[i])
	}
	return &ObjectReader{Object: v.served(), Length: size, ReadCloser: er}, true
}

// getECManifest reads a manifest's archive (empty bytes, the segment list in its metadata)
// from the device holding its newest metadata, or any other of the same bytes.
func (p *Proxy) getECManifest(ctx context.Context, pl *placement, name meta.ObjectName, v *ecVersion) (*ObjectReader, error) {
	order := []target{v.targets[v.v.Newest]}
	for _, hs := range v.v.Holders {
		for _, at := range hs {
			order = append(order, v.targets[at])
		}
	}
	var lastErr error
	for _, t := range order {
		if t.client == nil {
			continue
		}
		r, err := t.client.GetObject(ctx, t.dev.Name, pl.part, name, nil)
		if err != nil {
			p.noteFailure(ctx, t, err)
			lastErr = err
			continue
		}
		if a, ok := r.Object.ECArchive(); !ok || !a.SameData(v.v.Arc) || !r.Object.IsManifest() {
			r.Close() // overwritten since the survey
			lastErr = fmt.Errorf("%q changed while it was read: %w", name.Object, meta.ErrUnavailable)
			continue
		}
		r.Object.SysMeta = meta.WithoutEC(r.Object.SysMeta)
		return &ObjectReader{Object: r.Object, Offset: r.Offset, Length: r.Length, ReadCloser: r.ReadCloser}, nil
	}
	return nil, fmt.Errorf("get %q: %w", name.Object, lastErr)
}
