package proxy

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
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

// errArchivesShort fails the hooks of a PUT that cannot have k+1 archives.
var errArchivesShort = fmt.Errorf("too few fragment archives arrived whole: %w", meta.ErrUnavailable)

// ecBarrier is the rendezvous of one PUT's archive hooks.
type ecBarrier struct {
	mu          sync.Mutex
	need        int
	ready, open int
	state       []int // per archive: 0 on its way, 1 arrived, 2 failed
	done        chan struct{}
	ok          bool
}

func newBarrier(n, need int) *ecBarrier {
	return &ecBarrier{need: need, open: n, state: make([]int, n), done: make(chan struct{})}
}

// decide releases the hooks once the outcome is known; called with mu held.
func (b *ecBarrier) decide() {
	select {
	case <-b.done:
		return
	default:
	}
	switch {
	case b.ready >= b.need:
		b.ok = true
		close(b.done)
	case b.ready+b.open < b.need:
		close(b.done)
	}
}

// arrive records that archive i's body is whole, and waits for the outcome.
func (b *ecBarrier) arrive(ctx context.Context, i int) error {
	b.mu.Lock()
	if b.state[i] == 0 {
		b.state[i] = 1
		b.ready++
		b.open--
	}
	b.decide()
	b.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if !b.ok {
		return errArchivesShort
	}
	return nil
}

// fail records that archive i will not arrive.
func (b *ecBarrier) fail(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state[i] == 0 {
		b.state[i] = 2
		b.open--
		b.decide()
	}
}

// ecSums is what the proxy learns of the object at the end of its body, for the archives'
// hooks: its size, ETag and the system metadata the client's BeforeCommit added.
type ecSums struct {
	mu   sync.Mutex
	size int64
	etag string
	sys  map[string]string
}

// putEC stores an erasure-coded object: see above.
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
	listing := p.listingFor(name, pl)
	barrier := newBarrier(n, need)
	sums := &ecSums{}
	var bodyFailed atomic.Bool // no handoff can be given a body that failed
	type answer struct {
		res nodeclient.PutResult
		err error
	}
	answers := make(chan answer, n)
	pipes := make([]*io.PipeWriter, n)
	for i, t := range pl.primaries {
		pr, pw := io.Pipe()
		pipes[i] = pw
		arc := obj
		arc.Size = arcSize
		arc.SysMeta = maps.Clone(obj.SysMeta)
		if arc.SysMeta == nil {
			arc.SysMeta = map[string]string{}
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
			return barrier.arrive(ctx, i)
		}
		go func() {
			var res nodeclient.PutResult
			err := pl.withHandoffs(ctx, t, func(t target) error {
				in := &countingReader{r: pr}
				var err error
				res, err = t.client.PutObject(ctx, t.dev.Name, pl.part, name, arc, in,
					nodeclient.PutOptions{BeforeCommit: hook, If: opts.If, Container: listing(t.replica)})
				p.noteFailure(ctx, t, err)
				if err != nil && !isFinal(err) && ctx.Err() == nil && (in.n > 0 || bodyFailed.Load()) {
					return fmt.Errorf("%w (after %d bytes)", errNoHandoff{err}, in.n)
				}
				return err
			})
			if err != nil {
				barrier.fail(i)
			}
			pr.CloseWithError(errReplicaDone) // unblock the encoder if this archive stopped early
			answers <- answer{res, err}
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
		case errors.Is(a.err, errArchivesShort):
		case firstErr == nil || (isAnswer(a.err) && !isAnswer(firstErr)):
			firstErr = a.err // an answer (a failed condition, a full disk) explains more
		}
	}
	if feedErr != nil && !errors.Is(feedErr, errArchivesShort) {
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

// encodeBody reads the body (of obj.Size bytes when that is known), hashes and encodes it
// into the archive pipes, skipping archives that stopped, and runs the client's BeforeCommit
// once over the whole object before any archive body ends. It fails when fewer than need
// archives are left.
func (p *Proxy) encodeBody(scheme *ec.Scheme, obj meta.Object, body io.Reader, pipes []*io.PipeWriter, need int, sums *ecSums, before func(*meta.Object) error) error {
	h := md5.New()
	in := io.Reader(body)
	if obj.Size >= 0 && obj.Manifest == nil {
		in = io.LimitReader(body, obj.Size+1) // one byte more tells a body that is too long
	}
	alive := len(pipes)
	ws := make([]io.Writer, len(pipes))
	for i, pw := range pipes {
		ws[i] = &archiveWriter{pw: pw, alive: &alive, need: need}
	}
	total, err := scheme.Encode(io.TeeReader(in, h), ws)
	if err != nil {
		return err
	}
	switch {
	case obj.Manifest != nil:
	case obj.Size >= 0 && total > obj.Size:
		return fmt.Errorf("body of more than %d bytes: %w", obj.Size, meta.ErrBodyTooLong)
	case obj.Size >= 0 && total < obj.Size:
		return fmt.Errorf("%d of %d bytes: %w", total, obj.Size, meta.ErrIncompleteBody)
	}
	whole := obj
	whole.SysMeta = maps.Clone(obj.SysMeta)
	if obj.Manifest == nil {
		whole.Size, whole.ETag = total, hex.EncodeToString(h.Sum(nil))
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

// archiveWriter is one archive's pipe for the encoder: an archive whose PUT stopped is
// skipped, and the encoding stops when fewer than need archives are left.
type archiveWriter struct {
	pw    *io.PipeWriter
	dead  bool
	alive *int // shared by the PUT's writers, which the encoder calls in turn
	need  int
}

func (w *archiveWriter) Write(b []byte) (int, error) {
	if w.dead {
		return len(b), nil
	}
	if _, err := w.pw.Write(b); err != nil {
		w.dead = true
		*w.alive--
		if *w.alive < w.need {
			return 0, errArchivesShort
		}
	}
	return len(b), nil
}

// ecArchives encodes a small object held in memory: the body of each archive.
func ecArchives(scheme *ec.Scheme, data []byte) ([][]byte, error) {
	bufs := make([]bytes.Buffer, scheme.Fragments())
	ws := make([]io.Writer, len(bufs))
	for i := range bufs {
		ws[i] = &bufs[i]
	}
	if _, err := scheme.Encode(bytes.NewReader(data), ws); err != nil {
		return nil, err
	}
	out := make([][]byte, len(bufs))
	for i := range bufs {
		out[i] = bufs[i].Bytes()
	}
	return out, nil
}

// inOrderArchives returns, for PutObjectInOrder, each replica's share of a small object held
// in memory: its fragment archive and the archive's metadata. The client's BeforeCommit runs
// once, here, over the whole object.
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
	arcs, err := ecArchives(scheme, data)
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
