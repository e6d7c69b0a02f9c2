package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// putReplicas streams one body to every replica at once and succeeds at quorum. A replica that
// fails drops out of the stream without stopping the others; one that fails before it has read
// a byte (it could not connect) is replaced by a handoff, which the stream waits for.
func (p *Proxy) putReplicas(ctx context.Context, pl *placement, name meta.ObjectName, obj meta.Object, body io.Reader, nopts func(target) nodeclient.PutOptions) (nodeclient.PutResult, error) {
	ts := pl.primaries
	if body == nil { // a manifest, or an empty object
		body = bytes.NewReader(nil)
	}
	type answer struct {
		res    nodeclient.PutResult
		landed target
		err    error
	}
	answers := make(chan answer, len(ts))
	writers := make([]*io.PipeWriter, len(ts))
	for i, t := range ts {
		pr, pw := io.Pipe()
		writers[i] = pw
		go func() {
			var res nodeclient.PutResult
			landed, err := pl.withHandoffs(ctx, t, func(t target) error {
				in := &countingReader{r: pr}
				var err error
				o := nopts(t)
				res, err = t.client.PutObject(ctx, t.dev.Name, pl.part, name, obj, in, o)
				if err != nil && o.Companion == nil {
					if own, ok := ownVersionInPlace(ctx, t, pl.part, name, obj.Timestamp, err); ok {
						res, err = own, nil
					}
				}
				p.noteFailure(ctx, t, err)
				if err != nil && !isFinal(err) && ctx.Err() == nil {
					if in.n > 0 {
						return fmt.Errorf("%w (after %d bytes)", errNoHandoff{err}, in.n)
					}
				}
				return err
			})
			pr.CloseWithError(errReplicaDone) // unblock the feeder if this replica stopped early
			answers <- answer{res, landed, pl.counted(landed, err)}
		}()
	}
	feedErr := feed(body, writers)
	for _, w := range writers {
		w.CloseWithError(feedErr) // nil closes with EOF
	}
	var good []nodeclient.PutResult
	var took []target
	var firstErr error
	for range ts {
		a := <-answers
		if a.err == nil {
			good = append(good, a.res)
			took = append(took, a.landed)
		} else if firstErr == nil || isAnswer(a.err) {
			firstErr = a.err
		}
	}
	if pl.quorate(took) {
		if err := pl.unlessHolderHas(ctx, took); err != nil {
			return nodeclient.PutResult{}, err
		}
		return good[0], nil
	}
	if firstErr == nil {
		firstErr = meta.ErrUnavailable
	}
	return nodeclient.PutResult{}, firstErr
}

var errReplicaDone = errors.New("replica stopped reading")

// ownVersionInPlace reports whether a replica that refused a PUT at ts because a version at ts
// is in place holds the PUT's own version: replication brought it there, from a replica where
// the PUT committed first, before the PUT committed on this one (a slow replica under load). A
// timestamp is one write's, so that replica holds the write and counts for its quorum; the
// client must not be told 409 for a write that is stored. (Not with a companion, which the
// refused PUT did not commit.)
func ownVersionInPlace(ctx context.Context, t target, part uint32, name meta.ObjectName, ts meta.Timestamp, err error) (nodeclient.PutResult, bool) {
	var newer *meta.NewerError
	if ts == 0 || !errors.As(err, &newer) || newer.At != ts {
		return nodeclient.PutResult{}, false
	}
	o, herr := t.client.HeadObject(ctx, t.dev.Name, part, name, nodeclient.HeadOptions{})
	if herr != nil || o.Timestamp != ts || o.Deleted {
		return nodeclient.PutResult{}, false
	}
	return nodeclient.PutResult{Object: o}, true
}

var feedBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// feed copies body to every writer still accepting data; it fails only when the body does, or
// when no writer is left.
func feed(body io.Reader, writers []*io.PipeWriter) error {
	alive := slices.Clone(writers)
	// Pooled: a fresh 256 KiB buffer per PUT cost a small object's PUT more CPU in zeroing
	// than in copying. io.Pipe's Write returns once the reader has taken every byte, so the
	// buffer is free again when feed returns.
	bp := feedBuffers.Get().(*[]byte)
	defer feedBuffers.Put(bp)
	buf := *bp
	for {
		n, err := body.Read(buf)
		if n > 0 {
			kept := alive[:0]
			for _, w := range alive {
				if _, werr := w.Write(buf[:n]); werr == nil {
					kept = append(kept, w)
				}
			}
			alive = kept
			if len(alive) == 0 {
				return errReplicaDone
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
