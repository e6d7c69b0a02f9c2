package proxy

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy/ecstream"
)

// errDeciderRefused aborts the archives of a compare-and-swap whose deciding archive did not
// commit.
var errDeciderRefused = errors.New("the deciding archive did not commit")

// putInOrderEC is PutObjectInOrder for an erasure-coded object. The first primary reachable
// decides, as for replicas, but a decision on one archive alone would be a trap: reads decode
// the version k archives hold, so a new version committed on the decider and missing from the
// others would be invisible to readers, and refuse every later swap they base on what they
// read. So every archive is sent at once, the decider's with the condition, and commits as a
// PUT's do (the barrier: k+1 bodies whole, or none commits); the others then wait, in their
// commit hooks, for the decider's commit, and commit only if it did. A swap refused by the
// decider leaves nothing anywhere; one it takes lands on k+1 archives or more, unless nodes
// fail in the instant between the two commits (then the write is reported failed).
func (p *Proxy) putInOrderEC(ctx context.Context, pl *placement, name meta.ObjectName, obj meta.Object, data []byte, opts PutOptions) (meta.Object, error) {
	scheme := pl.scheme
	bodyOf, err := inOrderArchives(scheme, obj, data, opts.BeforeCommit)
	if err != nil {
		return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
	}
	decider := -1
	for i, t := range pl.primaries {
		if t.err == nil {
			decider = i
			break
		}
	}
	if decider < 0 {
		return meta.Object{}, fmt.Errorf("put %q: no primary reachable: %w", name.Object, pl.primaries[0].err)
	}
	n, need := len(pl.primaries), scheme.K+1
	listing := p.listingFor(name, pl)
	barrier := ecstream.NewBarrier(n, need)
	decided := make(chan struct{})
	var decision error
	type answer struct {
		i   int
		res nodeclient.PutResult
		err error
	}
	answers := make(chan answer, n)
	for i, t := range pl.primaries {
		o, body := bodyOf(i)
		go func() {
			var res nodeclient.PutResult
			put := func(t target, cond meta.Precondition, hook func(*meta.Object) error) error {
				return pl.call(ctx, t, false, func(ctx context.Context, t target) error {
					var err error
					res, err = t.client.PutObject(ctx, t.dev.Name, pl.part, name, o, bytes.NewReader(body),
						nodeclient.PutOptions{BeforeCommit: hook, If: cond, Containers: listing.to(t.replica), Listed: listing.listed})
					return err
				})
			}
			var err error
			if i == decider {
				err = put(t, opts.If, func(*meta.Object) error { return barrier.Arrive(ctx, i) })
				decision = err
				close(decided)
			} else {
				_, err = pl.withHandoffs(ctx, t, func(t target) error {
					err := put(t, meta.Precondition{}, func(*meta.Object) error {
						if err := barrier.Arrive(ctx, i); err != nil {
							return err
						}
						<-decided
						if decision != nil {
							return errDeciderRefused
						}
						return nil
					})
					if errors.Is(err, errDeciderRefused) || errors.Is(err, ecstream.ErrShort) {
						return errNoHandoff{err} // decided: no other device may take it either
					}
					return err
				})
			}
			if err != nil {
				barrier.Fail(i)
			}
			answers <- answer{i, res, err}
		}()
	}
	var out nodeclient.PutResult
	written := 0
	var lastErr error
	for range n {
		a := <-answers
		switch {
		case a.i == decider && a.err == nil:
			out = a.res
			written++
		case a.i == decider:
			lastErr = a.err
		case a.err == nil, errors.Is(a.err, meta.ErrConflict):
			written++ // a newer version there was decided after this one, and built on it
		case lastErr == nil:
			lastErr = a.err
		}
	}
	if decision != nil {
		// The decider refused (a failed condition, a newer version), failed, or too few
		// archives arrived: nothing was written.
		return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, decision)
	}
	if written < need {
		return meta.Object{}, fmt.Errorf("put %q: %d of %d fragment archives: %w", name.Object, written, n, lastErr)
	}
	p.releaseSegments(ctx, name, out.Previous, &out.Object)
	if err := listing.settle(ctx, out.Object.Listed(name.Object), false); err != nil {
		return meta.Object{}, fmt.Errorf("put %q: %w", name.Object, err)
	}
	served := out.Object.AsServed()
	served.SysMeta = meta.WithoutEC(served.SysMeta)
	return served, nil
}

// inOrderArchives returns each replica's share of a small object held in memory: its fragment
// archive and the archive's metadata. The client's BeforeCommit runs once, here, over the
// whole object.
func inOrderArchives(scheme *ec.Scheme, obj meta.Object, data []byte, before func(*meta.Object) error) (func(replica int) (meta.Object, []byte), error) {
	whole := obj
	whole.SysMeta = maps.Clone(obj.SysMeta)
	sum := md5.Sum(data)
	whole.ETag = hex.EncodeToString(sum[:])
	if before != nil {
		if err := before(&whole); err != nil {
			return nil, err
		}
	}
	arcs, err := ecstream.EncodeAll(scheme, data)
	if err != nil {
		return nil, err
	}
	return func(i int) (meta.Object, []byte) {
		o := whole
		o.SysMeta = maps.Clone(meta.WithoutEC(whole.SysMeta))
		if o.SysMeta == nil {
			o.SysMeta = map[string]string{}
		}
		o.Size, o.ETag = int64(len(arcs[i])), ""
		meta.ECArchive{Index: i, K: scheme.K, M: scheme.M, SegmentSize: scheme.SegmentSize, Size: int64(len(data)), ETag: whole.ETag, Written: obj.Timestamp}.Set(o.SysMeta)
		return o, arcs[i]
	}, nil
}
