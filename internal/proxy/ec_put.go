package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy/ecstream"
)

// Writing an erasure-coded object. The body is read once, hashed (the object's ETag is the
// MD5 of its bytes, which no node sees whole) and encoded into k+m archive streams, each sent
// to its primary as an ordinary PUT; a primary that fails before its first byte is replaced by
// a handoff, which stores the same fragment index (as Swift's proxy does). A write succeeds
// when k+1 archives are durable (Swift's EC quorum: one more than decoding needs, so that an
// acknowledged object survives the loss of any one of them).
//
// Commit in two phases. An archive commits on its node only after its PUT's BeforeCommit hook
// returns (in-process, before the engine installs the data; over HTTP, before the footer is
// sent), and the hooks of one PUT return together: each waits until k+1 archives have
// arrived there, their bodies whole, and if that can no longer happen every hook fails and no
// archive commits. So a write that cannot reach its quorum leaves the version it would have
// replaced untouched on every device (an archive commit replaces the version its device holds,
// which Swift's .durable marker avoids by keeping both: here the barrier does), and the client's
// checks (Content-MD5, S3 checksums, a multipart upload still open: PutOptions.BeforeCommit)
// run once, over the whole body, before any archive can commit. What the barrier cannot
// exclude is a node failing between its hook and its commit: then fewer than k+1, possibly
// fewer than k, archives commit and the client is told the write failed.

// ecSums is what the proxy learns of the object at the end of its body, for the archives'
// hooks: its size, ETag and the system metadata the client's BeforeCommit added.
type ecSums struct {
	mu   sync.Mutex
	size int64
	etag string
	sys  map[string]string
}

// putEC stores an erasure-coded object: see above. A conditional write (If-None-Match,
// If-Match) is decided by one archive, the first reachable primary's, which alone carries the
// condition; the others commit only once it has (their hooks wait for it), as
// PutObjectInOrder's: were each archive to decide, two racing writers could each win on fewer
// than k+1 archives, both be refused, and leave no version k archives decode.
func (p *Proxy) putEC(ctx context.Context, pl *placement, name meta.ObjectName, obj meta.Object, body io.Reader, opts PutOptions) (nodeclient.PutResult, error) {
	scheme := pl.scheme
	n, need := len(pl.primaries), scheme.K+1
	if body == nil {
		body = bytes.NewReader(nil)
	}
	arcSize := int64(-1)
	if obj.Manifest != nil {
		arcSize = 0
	} else if obj.Size >= 0 {
		arcSize = scheme.ArchiveSize(obj.Size)
	}
	decider := -1
	if !opts.If.IsZero() {
		for i, t := range pl.primaries {
			if t.err == nil {
				decider = i
				break
			}
		}
		if decider < 0 {
			return nodeclient.PutResult{}, fmt.Errorf("no primary reachable to decide the condition: %w", pl.primaries[0].err)
		}
	}
	decided := make(chan struct{})
	var decision error // the decider's outcome, once decided is closed
	listing := opts.listing
	if listing == nil {
		listing = p.listingFor(name, pl)
	}
	undecided := opts.decidedGen == 0 && !sole(pl) // a plain write (nodeclient.PutOptions.Undecided)
	barrier := ecstream.NewBarrier(n, need)
	sums := &ecSums{}
	var bodyFailed atomic.Bool // no handoff can be given a body that failed
	type answer struct {
		res nodeclient.PutResult
		err error
	}
	answers := make(chan answer, n)
	// Every pipe first: a refusing decider closes them all.
	pipes := make([]*io.PipeWriter, n)
	readers := make([]*io.PipeReader, n)
	for i := range pipes {
		readers[i], pipes[i] = io.Pipe()
	}
	for i, t := range pl.primaries {
		pr := readers[i]
		arc := obj
		arc.Size = arcSize
		arc.SysMeta = maps.Clone(obj.SysMeta)
		if arc.SysMeta == nil {
			arc.SysMeta = map[string]string{}
		}
		var cond meta.Precondition
		if i == decider {
			cond = opts.If
		}
		hook := func(o *meta.Object) error {
			sums.mu.Lock()
			size, etag, sys := sums.size, sums.etag, sums.sys
			sums.mu.Unlock()
			o.SysMeta = maps.Clone(o.SysMeta)
			if o.SysMeta == nil {
				o.SysMeta = map[string]string{}
			}
			maps.Copy(o.SysMeta, sys)
			meta.ECArchive{Index: i, K: scheme.K, M: scheme.M, SegmentSize: scheme.SegmentSize, Size: size, ETag: etag, Written: obj.Timestamp}.Set(o.SysMeta)
			if err := barrier.Arrive(ctx, i); err != nil || decider < 0 || i == decider {
				return err
			}
			<-decided
			if decision != nil {
				return errDeciderRefused
			}
			return nil
		}
		put := func(t target) error {
			in := &countingReader{r: pr}
			res, err := t.client.PutObject(ctx, t.dev.Name, pl.part, name, arc, in, nodeclient.PutOptions{BeforeCommit: hook, If: cond, Containers: listing.to(t.replica), Listed: listing.listed, DecidedGen: opts.decidedGen, Undecided: undecided})
			p.noteFailure(ctx, t, err)
			if err == nil {
				answers <- answer{res: res}
				return nil
			}
			decidedAgainst := errors.Is(err, errDeciderRefused) || errors.Is(err, ecstream.ErrShort)
			if !isFinal(err) && ctx.Err() == nil && (in.n > 0 || bodyFailed.Load() || decidedAgainst) {
				return fmt.Errorf("%w (after %d bytes)", errNoHandoff{err}, in.n)
			}
			return err
		}
		go func() {
			var err error
			if i == decider {
				// No handoff decides in its place: it does not hold what the condition is on.
				if err = put(t); err != nil {
					decision = err
					for _, w := range pipes {
						w.CloseWithError(err) // refused: the others need no more of the body
					}
				}
				close(decided)
			} else {
				_, err = pl.withHandoffs(ctx, t, put)
			}
			if err != nil {
				barrier.Fail(i)
				answers <- answer{err: err}
			}
			pr.CloseWithError(errReplicaDone) // unblock the encoder if this archive stopped early
		}()
	}
	feedErr := p.encodeBody(scheme, obj, body, pipes, need, sums, opts.BeforeCommit)
	bodyFailed.Store(feedErr != nil)
	for _, w := range pipes {
		w.CloseWithError(feedErr) // nil closes with EOF: each archive's body is whole
	}
	var good []nodeclient.PutResult
	var firstErr error
	for range n {
		a := <-answers
		switch {
		case a.err == nil:
			good = append(good, a.res)
		case errors.Is(a.err, ecstream.ErrShort), errors.Is(a.err, errDeciderRefused):
		case firstErr == nil || (isAnswer(a.err) && !isAnswer(firstErr)):
			firstErr = a.err // an answer (a failed condition, a full disk) explains more
		}
	}
	if decider >= 0 && decision != nil && !errors.Is(decision, ecstream.ErrShort) {
		return nodeclient.PutResult{}, decision // refused (or failed) where the condition is decided
	}
	if feedErr != nil && !errors.Is(feedErr, ecstream.ErrShort) && !errors.Is(feedErr, io.ErrClosedPipe) {
		return nodeclient.PutResult{}, feedErr // the body's own failure explains the others'
	}
	if len(good) >= need {
		return good[0], nil
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("%d of %d fragment archives stored, need %d: %w", len(good), n, need, meta.ErrUnavailable)
	}
	return nodeclient.PutResult{}, firstErr
}

// encodeBody encodes the body into the archive pipes (ecstream.Encode) and runs the client's
// BeforeCommit once over the whole object, before any archive's body ends, so that what it
// adds reaches every archive's hook and a refusal reaches none.
func (p *Proxy) encodeBody(scheme *ec.Scheme, obj meta.Object, body io.Reader, pipes []*io.PipeWriter, need int, sums *ecSums, before func(*meta.Object) error) error {
	declared := obj.Size
	if obj.Manifest != nil {
		declared = -1
	}
	total, etag, err := ecstream.Encode(scheme, body, declared, pipes, need)
	if err != nil {
		return err
	}
	whole := obj
	whole.SysMeta = maps.Clone(obj.SysMeta)
	if obj.Manifest == nil {
		whole.Size, whole.ETag = total, etag
	}
	if before != nil {
		if err := before(&whole); err != nil {
			return err
		}
	}
	sys := map[string]string{}
	for k, v := range whole.SysMeta {
		if obj.SysMeta[k] != v {
			sys[k] = v
		}
	}
	sums.mu.Lock()
	sums.size, sums.etag, sums.sys = total, whole.ETag, meta.WithoutEC(sys)
	sums.mu.Unlock()
	return nil
}
