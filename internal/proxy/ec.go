package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Erasure-coded storage policies (Swift's EC policies, in Cairn's code): the primaries of an
// object's partition are its k+m fragment indexes, primary i holding fragment archive i, an
// ordinary object on the node whose bytes are the archive and whose system metadata says what
// it is a fragment of (meta.ECArchive). A handoff standing in for primary i stores archive i.
// PUTs encode (ec_put.go); reads first survey the archives the devices hold and pick the
// newest object that k of them decode, then decode from k (ec_get.go); DELETEs and POSTs go to
// every primary as for replicas, with a quorum that keeps fewer than k archives of a deleted
// object (placement.quorum). The nodes know nothing of erasure coding: an archive is verified
// against its own checksums like any object.

// ecVersion is what a survey of an object's archives found: the newest object that k of them,
// with distinct fragment indexes, decode.
type ecVersion struct {
	// obj is the archive of these bytes with the newest metadata (a POST reaches some archives
	// and not others), as stored: its size and ETag are the archive's (AsServed has the
	// object's).
	obj meta.Object
	arc meta.ECArchive
	// holders are the devices that hold an archive of these bytes, by fragment index, and
	// stamps the timestamp of each one's version.
	holders map[int][]target
	stamps  map[int][]meta.Timestamp
}

// served is the object as clients see it: its size and ETag, without what the archive says of
// itself.
func (v *ecVersion) served() meta.Object {
	o := v.obj.AsServed()
	o.SysMeta = meta.WithoutEC(o.SysMeta)
	return o
}

// newest returns a device holding the archive with the newest metadata (the one obj is).
func (v *ecVersion) newest() (target, bool) {
	for i, ts := range v.holders {
		for j, t := range ts {
			if v.stamps[i][j] == v.obj.Timestamp {
				return t, true
			}
		}
	}
	return target{}, false
}

// ecAnswer is one device's answer to a survey.
type ecAnswer struct {
	t   target
	obj meta.Object
	arc meta.ECArchive
	err error // nil: obj is an archive; meta.ErrNotFound: it holds none; else it did not answer
}

// survey asks the primaries (concurrently) which archive of an object they hold, and the
// handoffs too when a primary did not answer or the newest archive seen is not on k of them:
// a write made while primaries were down went to handoffs. It returns the newest object k
// archives decode; meta.ErrNotFound when there is none and the devices that did not answer
// could not make one up, meta.ErrUnavailable when they could.
func (p *Proxy) survey(ctx context.Context, pl *placement, name meta.ObjectName, opts nodeclient.HeadOptions) (*ecVersion, error) {
	ask := func(ts []target) []ecAnswer {
		out := make([]ecAnswer, len(ts))
		var wg sync.WaitGroup
		for i, t := range ts {
			out[i].t = t
			if t.err != nil {
				out[i].err = t.err
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := pl.call(ctx, t, true, func(ctx context.Context, t target) error {
					o, err := t.client.HeadObject(ctx, t.dev.Name, pl.part, name, opts)
					out[i].obj = o
					return err
				})
				if err == nil {
					var ok bool
					if out[i].arc, ok = out[i].obj.ECArchive(); !ok {
						// Not an archive (Swift's fragments, or a stray whole copy): it
						// decodes nothing, and says nothing of newer versions either.
						err = fmt.Errorf("%s/%s holds %q without fragment archive metadata: %w", t.dev.Node, t.dev.Name, name.Object, meta.ErrNotFound)
					}
				}
				out[i].err = err
			}()
		}
		wg.Wait()
		return out
	}
	answers := ask(pl.primaries)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if needHandoffs(answers, pl.scheme.K) {
		var hs []target
		for range pl.primaries {
			h, ok := pl.handoff(-1)
			if !ok {
				break
			}
			hs = append(hs, h)
		}
		answers = append(answers, ask(hs)...)
	}
	v, missing := decodable(answers, pl.scheme.K)
	if v != nil {
		return v, nil
	}
	unanswered := 0
	var lastErr error
	for _, a := range answers {
		if a.err != nil && !errors.Is(a.err, meta.ErrNotFound) {
			unanswered++
			lastErr = a.err
		}
	}
	if unanswered >= missing {
		return nil, fmt.Errorf("%q: %d devices did not answer, and no version is on %d others: %v: %w", name.Object, unanswered, pl.scheme.K, lastErr, meta.ErrUnavailable)
	}
	return nil, fmt.Errorf("%q: %w", name.Object, meta.ErrNotFound)
}

// needHandoffs says whether a survey of the primaries must ask the handoffs too: a primary did
// not answer, or the newest bytes any holds are on fewer than k of them.
func needHandoffs(answers []ecAnswer, k int) bool {
	var newest *ecAnswer
	for i, a := range answers {
		if a.err != nil && !errors.Is(a.err, meta.ErrNotFound) {
			return true
		}
		if a.err == nil && (newest == nil || a.arc.Written > newest.arc.Written) {
			newest = &answers[i]
		}
	}
	if newest == nil {
		return false
	}
	indexes := map[int]bool{}
	for _, a := range answers {
		if a.err == nil && a.arc.SameData(newest.arc) {
			indexes[a.arc.Index] = true
		}
	}
	return len(indexes) < k
}

// decodable picks, of the bytes the answers hold, the newest that k distinct fragment indexes
// decode. Without one, missing is the fewest more indexes any of them would need.
func decodable(answers []ecAnswer, k int) (v *ecVersion, missing int) {
	type group struct {
		arc     meta.ECArchive
		indexes map[int]bool
	}
	var groups []*group
	for _, a := range answers {
		if a.err != nil {
			continue
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.arc.SameData(a.arc) })
		if i < 0 {
			groups = append(groups, &group{arc: a.arc, indexes: map[int]bool{}})
			i = len(groups) - 1
		}
		groups[i].indexes[a.arc.Index] = true
	}
	missing = k
	var best *group
	for _, g := range groups {
		if len(g.indexes) < g.arc.K {
			missing = min(missing, g.arc.K-len(g.indexes))
			continue
		}
		if best == nil || g.arc.Written > best.arc.Written {
			best = g
		}
	}
	if best == nil {
		return nil, missing
	}
	v = &ecVersion{holders: map[int][]target{}, stamps: map[int][]meta.Timestamp{}}
	for _, a := range answers {
		if a.err != nil || !a.arc.SameData(best.arc) {
			continue
		}
		v.holders[a.arc.Index] = append(v.holders[a.arc.Index], a.t)
		v.stamps[a.arc.Index] = append(v.stamps[a.arc.Index], a.obj.Timestamp)
		if v.obj.Timestamp == 0 || a.obj.Timestamp > v.obj.Timestamp {
			v.obj, v.arc = a.obj, a.arc
		}
	}
	return v, 0
}

// ecScheme returns the code an archive was made with: the policy's, unless the archive says
// otherwise (it never should: a policy's code cannot change).
func ecScheme(policy *ec.Scheme, a meta.ECArchive) (*ec.Scheme, error) {
	if a.K == policy.K && a.M == policy.M && a.SegmentSize == policy.SegmentSize {
		return policy, nil
	}
	s, err := ec.New(a.K, a.M, a.SegmentSize)
	if err != nil {
		return nil, fmt.Errorf("archive of %d+%d fragments, segments of %d bytes: %v: %w", a.K, a.M, a.SegmentSize, err, meta.ErrCorrupt)
	}
	return s, nil
}

// headEC is HeadObject for an erasure-coded object.
func (p *Proxy) headEC(ctx context.Context, pl *placement, name meta.ObjectName, opts nodeclient.HeadOptions) (meta.Object, error) {
	v, err := p.survey(ctx, pl, name, opts)
	if err != nil {
		return meta.Object{}, err
	}
	return v.served(), nil
}

// newestEC is newestVersion for an erasure-coded object: the timestamp of the newest
// metadata of the bytes a read would decode.
func (p *Proxy) newestEC(ctx context.Context, pl *placement, name meta.ObjectName) (meta.Timestamp, error) {
	v, err := p.survey(ctx, pl, name, nodeclient.HeadOptions{Brief: true})
	if err != nil {
		return 0, err
	}
	return v.obj.Timestamp, nil
}
