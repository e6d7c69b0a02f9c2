package proxy

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy/ecstream"
)

// Erasure-coded storage policies (Swift's EC policies, in Cairn's code): the primaries of an
// object's partition are its k+m fragment indexes, primary i holding fragment archive i, an
// ordinary object on the node whose bytes are the archive and whose system metadata says what
// it is a fragment of (meta.ECArchive). A handoff standing in for primary i stores archive i.
// PUTs encode (ec_put.go); reads first survey the archives the devices hold and pick the
// newest object that k of them decode, then decode from k (ec_get.go); DELETEs and POSTs go to
// every primary as for replicas, with a quorum that keeps fewer than k archives of a deleted
// object (placement.quorum). The nodes know nothing of erasure coding: an archive is verified
// against its own checksums like any object. What needs no node (the commit barrier, the
// choice of a version, the segment-wise decoding) is in ecstream.

// ecVersion is what a survey of an object's archives found: the devices asked, their answers,
// and the newest object k of them decode.
type ecVersion struct {
	targets []target
	answers []ecstream.Answer
	v       *ecstream.Version
}

// obj is the archive of the decoded bytes with the newest metadata, as stored (its size and
// ETag are the archive's; AsServed has the object's).
func (v *ecVersion) obj() meta.Object { return v.answers[v.v.Newest].Obj }

func (v *ecVersion) isManifest() bool { return v.answers[v.v.Newest].Obj.IsManifest() }

// served is the object as clients see it: its size and ETag, without what the archive says of
// itself.
func (v *ecVersion) served() meta.Object {
	o := v.obj().AsServed()
	o.SysMeta = meta.WithoutEC(o.SysMeta)
	return o
}

// holder returns the device of the h-th holder of archive i.
func (v *ecVersion) holder(i, h int) target { return v.targets[v.v.Holders[i][h]] }

// survey asks the primaries (concurrently) which archive of an object they hold, and the
// handoffs too when a primary did not answer or the newest archive seen is not on k of them:
// a write made while primaries were down went to handoffs. It returns the newest object k
// archives decode; meta.ErrNotFound when there is none and the devices that did not answer
// could not make one up (with the answers, which decode nothing: newestHeld reads them),
// meta.ErrUnavailable when they could.
func (p *Proxy) survey(ctx context.Context, pl *placement, name meta.ObjectName, opts nodeclient.HeadOptions) (*ecVersion, error) {
	ask := func(ts []target) []ecstream.Answer {
		out := make([]ecstream.Answer, len(ts))
		var wg sync.WaitGroup
		for i, t := range ts {
			if t.err != nil {
				out[i].Err = t.err
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				var o meta.Object
				err := pl.call(ctx, t, true, func(ctx context.Context, t target) error {
					var err error
					o, err = t.client.HeadObject(ctx, t.dev.Name, pl.part, name, opts)
					return err
				})
				out[i] = ecstream.NewAnswer(o, err)
			}()
		}
		wg.Wait()
		return out
	}
	v := &ecVersion{targets: pl.primaries, answers: ask(pl.primaries)}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if ecstream.NeedMore(v.answers, pl.scheme.K) {
		var hs []target
		for range pl.primaries {
			h, ok := pl.handoff(-1)
			if !ok {
				break
			}
			hs = append(hs, h)
		}
		v.targets = append(append([]target(nil), pl.primaries...), hs...)
		v.answers = append(v.answers, ask(hs)...)
	}
	var missing int
	if v.v, missing = ecstream.Decodable(v.answers, pl.scheme.K); v.v != nil {
		return v, nil
	}
	if n, last := ecstream.Unanswered(v.answers); n >= missing {
		return nil, fmt.Errorf("%q: %d devices did not answer, and no version is on %d others: %v: %w", name.Object, n, pl.scheme.K, last, meta.ErrUnavailable)
	}
	return v, fmt.Errorf("%q: %w", name.Object, meta.ErrNotFound)
}

// newestHeld is what the survey's answers carry besides the version they decode: the newest
// tombstone's time (a deletion decodes nothing) and the newest time of anything held, an
// archive of a write on fewer than k devices included.
func (v *ecVersion) newestHeld() (deleted, any meta.Timestamp) {
	for _, a := range v.answers {
		if gone := (*meta.DeletedError)(nil); errors.As(a.Err, &gone) {
			deleted = max(deleted, gone.At)
			any = max(any, gone.At)
		} else if a.Err == nil {
			any = max(any, a.Obj.Timestamp)
		}
	}
	return deleted, any
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
	return v.obj().Timestamp, nil
}
